/**
 * The environment contract: an async, Gymnasium-shaped text environment.
 * `terminated`, `truncated` and `info.won` are three separate facts (see "Contracts" in `docs/architecture.md`).
 */

/** What the agent is shown at a step, and the identity of the state it is in. */
export interface Observation {
  /** The text the agent is shown for this state (the environment's own words, no prompt). */
  readonly text: string;
  /**
   * The string that identifies the environment state for GiGPO's anchor-state grouping: equal
   * anchors mean the same state. Usually the raw observation text without history or prompt.
   */
  readonly anchor: string;
  /** The commands the environment accepts in this state, when it can list them. */
  readonly admissibleActions?: readonly string[];
}

/** Which episode `reset()` starts. */
export interface ResetOptions {
  /**
   * Seed of the episode. Group members that reset with the same seed and task start from the
   * same observation.
   */
  readonly seed: number;
  /**
   * The task to play: an index into the environment's task list, or a task name / path. When
   * absent the environment draws a task from `seed`.
   */
  readonly task?: string | number;
}

/** Facts about an episode that are not part of the observation. */
export interface EnvInfo {
  /** Whether the task has been achieved (not the same as `terminated`). */
  readonly won: boolean;
  /** Environment-specific facts (task type, game path, data source...), JSON-serialisable. */
  readonly [key: string]: unknown;
}

/** What `reset()` returns. */
export interface ResetResult {
  /** The initial observation. */
  readonly observation: Observation;
  /** Facts about the new episode; `won` is false. */
  readonly info: EnvInfo;
}

/** What `step()` returns. */
export interface StepResult {
  /** The observation after the action. */
  readonly observation: Observation;
  /** The environment reward for this step. */
  readonly reward: number;
  /** The episode ended inside the environment (task solved, or failed for good). */
  readonly terminated: boolean;
  /** The episode was cut off by a limit (maximum steps or turns), not by the environment. */
  readonly truncated: boolean;
  /** Facts about the step; `won` says whether the task has been achieved. */
  readonly info: EnvInfo;
}

/**
 * An async text environment. Calls are sequential per instance: await each before the next.
 * Stepping a finished episode rejects with `ENV_FINISHED`; using a closed env rejects with
 * `ENV_CLOSED`; `close()` may be called any number of times.
 */
export interface TextEnv extends AsyncDisposable {
  /** The registry id of this environment (`alfworld/text-v1`), for messages and logs. */
  readonly id: string;
  /** Starts a new episode. */
  reset(options: ResetOptions): Promise<ResetResult>;
  /** Applies an action (already parsed from the model's text) and advances one step. */
  step(action: string): Promise<StepResult>;
  /** Releases resources (processes, browsers, files). Idempotent. */
  close(): Promise<void>;
}

/** What an {@link ActionParser} makes of a model response. */
export interface ParsedAction {
  /** The action to send to `env.step()` (may be the raw text when the response was invalid). */
  readonly action: string;
  /** Whether the response followed the required format (drives the invalid-action penalty). */
  readonly valid: boolean;
}

/**
 * Turns raw model text into an action. Never throws, whatever the input (the conformance kit
 * feeds it 10,000 random and adversarial strings).
 */
export type ActionParser = (responseText: string, context?: ActionParserContext) => ParsedAction;

/** What a parser may consult besides the text. */
export interface ActionParserContext {
  /** The admissible actions of the current state, when the environment lists them. */
  readonly admissibleActions?: readonly string[];
}

/** One earlier step, as prompt templates see it. */
export interface HistoryEntry {
  /** The observation the action was taken in. */
  readonly observation: Observation;
  /** The parsed action that was sent to the environment. */
  readonly action: string;
}

/** Everything a prompt template may use to render the prompt of one step. */
export interface PromptContext {
  /** The observation returned by `reset()`. */
  readonly initialObservation: Observation;
  /** All earlier steps of the episode, oldest first (templates keep the last k they need). */
  readonly history: readonly HistoryEntry[];
  /** The observation the agent acts on now. */
  readonly current: Observation;
  /** 0-based index of the step about to be taken. */
  readonly stepIndex: number;
  /** The `info` of the latest reset or step (task type, question...). */
  readonly info: EnvInfo;
}

/** Renders the user message of one step (the chat template is applied by the model side). */
export type PromptTemplate = (context: PromptContext) => string;
