/**
 * Grouped rollouts, as verl-agent's rollout loop: B task groups × n members, every member of a group reset with the
 * same task and seed, all slots stepped concurrently turn by turn, finished members no longer
 * stepped. An environment that throws or does not answer within `stepTimeoutMs` ends that
 * episode (truncated), is counted and logged, and is rebuilt before the next rollout.
 */
import {
  type ActionParser,
  type EnvInfo,
  type EpisodeMetricSpec,
  type HistoryEntry,
  type Observation,
  type PromptContext,
  type PromptTemplate,
  Rng,
  type StepRecord,
  type TextEnv,
} from '@agentrl/core';
import type { RolloutAgent } from './agent.ts';
import type { Logger } from './logger.ts';

/** How the runner builds and talks to one kind of environment. */
export interface EnvSpec {
  /** Builds one environment instance (one slot). */
  readonly create: () => TextEnv | Promise<TextEnv>;
  /** Turns responses into actions. */
  readonly parser: ActionParser;
  /** Renders the user message of a step. */
  readonly prompt: PromptTemplate;
  /** Task type of an episode, from the reset info (per-type success). Default: `info.taskType`. */
  readonly taskTypeOf?: (info: EnvInfo) => string;
  /** The env's own per-episode metrics beside success (its registration's `metrics`). */
  readonly metrics?: readonly EpisodeMetricSpec[];
  /** Extra reset options (the split, for example) given to every reset. */
  readonly task?: (group: number, rolloutIndex: number) => string | number | undefined;
  /**
   * The env's expert, when its module exports one: the action to take in a state (`agentrl sft`'s
   * demonstrations, the fresh model's vocabulary episodes).
   */
  readonly expert?: (context: PromptContext) => string | Promise<string>;
}

/** Options of one grouped rollout. */
export interface RolloutOptions {
  /** Number of task groups B. */
  readonly groups: number;
  /** Members per group n. */
  readonly groupSize: number;
  /** Base env seed: group g of slot stream uses `seed + g` (so a group shares its games). */
  readonly seed: number;
  /** Which rollout of this pool this is (0, 1, ...): each draws the next game of every slot. */
  readonly rolloutIndex: number;
  /** Most turns per episode. */
  readonly maxTurns: number;
  /** Seed of the model's sampling streams for this rollout. */
  readonly samplingSeed: number;
  /** Prefix of group and trajectory ids (unique per rollout), e.g. `it3`. */
  readonly idPrefix: string;
  /** An env call slower than this truncates the episode. Default 60 000 ms. */
  readonly stepTimeoutMs?: number;
}

/** One episode of one slot, summarised. */
export interface EpisodeSummary {
  readonly groupId: string;
  readonly trajectoryId: string;
  readonly slot: number;
  readonly taskType: string;
  readonly resetSeed: number;
  readonly won: boolean;
  readonly length: number;
  readonly episodeReward: number;
  readonly validActions: number;
  /** Set when the environment failed (threw or timed out) and the episode was cut. */
  readonly envFailure?: string;
  /** The initial observation text (for the trajectory browser). */
  readonly initialObservation: string;
  /**
   * The values of the env's own metrics (`EnvSpec.metrics`) for this episode, by name, and by
   * `name/group` for a metric with `groupBy`.
   */
  readonly metrics?: Readonly<Record<string, number>>;
}

/** The values of `specs` for one episode, from its last info (then its reset info for `groupBy`). */
export function episodeMetricValues(
  specs: readonly EpisodeMetricSpec[],
  last: EnvInfo | undefined,
  reset: EnvInfo | undefined,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const spec of specs) {
    const raw = last?.[spec.infoField];
    const value = typeof raw === 'number' && Number.isFinite(raw) ? raw : raw === true ? 1 : 0;
    const scaled = value * (spec.scale ?? 1);
    out[spec.name] = scaled;
    if (spec.groupBy !== undefined) {
      const group = last?.[spec.groupBy] ?? reset?.[spec.groupBy];
      if (typeof group === 'string' || typeof group === 'number')
        out[`${spec.name}/${String(group)}`] = scaled;
    }
  }
  return out;
}

/** What a rollout produced. */
export interface RolloutResult {
  /** Step samples of active steps, trajectory-major (the order verl-agent's samples have). */
  readonly records: StepRecord[];
  /** One summary per episode that started, slot order. */
  readonly episodes: EpisodeSummary[];
  /** Environment failures (throws and timeouts) in this rollout. */
  readonly envFailures: number;
  /** Prompts cut to fit the prompt limit. */
  readonly promptTruncations: number;
  /** Milliseconds spent generating and stepping environments. */
  readonly generateMs: number;
  readonly envMs: number;
}

class EnvTimeoutError extends Error {}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EnvTimeoutError(`${what} timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The reset seed of group `group` in rollout `rolloutIndex`: the next draw of its stream. */
export function resetSeedFor(seed: number, group: number, rolloutIndex: number): number {
  return Rng.fromSeed(`${seed + group}:${rolloutIndex}`).nextUint32();
}

function defaultTaskType(info: EnvInfo): string {
  const t = info.taskType;
  return typeof t === 'string' && t.length > 0 ? t : 'all';
}

interface SlotState {
  readonly slot: number;
  readonly group: number;
  readonly groupId: string;
  readonly trajectoryId: string;
  readonly resetSeed: number;
  env: TextEnv | undefined;
  initial: Observation | undefined;
  current: Observation | undefined;
  info: EnvInfo;
  resetInfo: EnvInfo | undefined;
  /** Whether a step returned (so `info` is a step's info). */
  stepped: boolean;
  history: HistoryEntry[];
  records: StepRecord[];
  done: boolean;
  won: boolean;
  reward: number;
  valid: number;
  taskType: string;
  failure: string | undefined;
}

/**
 * A fixed set of environment slots reused across rollouts (created once, as verl-agent's env slots).
 * Close it when done.
 */
export class EnvPool {
  readonly #spec: EnvSpec;
  readonly #envs: (TextEnv | undefined)[] = [];
  readonly #logger: Logger | undefined;

  constructor(spec: EnvSpec, logger?: Logger) {
    this.#spec = spec;
    this.#logger = logger;
  }

  get spec(): EnvSpec {
    return this.#spec;
  }

  async #slotEnv(slot: number): Promise<TextEnv> {
    const existing = this.#envs[slot];
    if (existing) return existing;
    const env = await this.#spec.create();
    this.#envs[slot] = env;
    return env;
  }

  /** Drops a failed slot's env (closing it in the background) so the next rollout rebuilds it. */
  #discard(slot: number): void {
    const env = this.#envs[slot];
    this.#envs[slot] = undefined;
    if (env) env.close().catch(() => undefined);
  }

  /** Runs one grouped rollout with `agent`. */
  async rollout(agent: RolloutAgent, options: RolloutOptions): Promise<RolloutResult> {
    const { groups, groupSize, maxTurns } = options;
    const timeoutMs = options.stepTimeoutMs ?? 60_000;
    const taskTypeOf = this.#spec.taskTypeOf ?? defaultTaskType;
    const slots: SlotState[] = [];
    for (let k = 0; k < groups * groupSize; k++) {
      const group = Math.floor(k / groupSize);
      slots.push({
        slot: k,
        group,
        groupId: `${options.idPrefix}-g${group}`,
        trajectoryId: `${options.idPrefix}-g${group}-m${k % groupSize}`,
        resetSeed: resetSeedFor(options.seed, group, options.rolloutIndex),
        env: undefined,
        initial: undefined,
        current: undefined,
        info: { won: false },
        resetInfo: undefined,
        stepped: false,
        history: [],
        records: [],
        done: false,
        won: false,
        reward: 0,
        valid: 0,
        taskType: 'all',
        failure: undefined,
      });
    }
    let envFailures = 0;
    let promptTruncations = 0;
    let generateMs = 0;
    let envMs = 0;
    const fail = (s: SlotState, phase: string, error: unknown): void => {
      envFailures++;
      s.failure = `${phase}: ${error instanceof Error ? error.message : String(error)}`;
      s.done = true;
      this.#logger?.warn(
        `env slot ${s.slot} (${s.trajectoryId}) failed during ${phase}; episode truncated: ${s.failure}`,
      );
      this.#discard(s.slot);
    };

    let t0 = performance.now();
    await Promise.all(
      slots.map(async (s) => {
        try {
          s.env = await withTimeout(this.#slotEnv(s.slot), timeoutMs, 'create');
          const task = this.#spec.task?.(s.group, options.rolloutIndex);
          const reset = await withTimeout(
            s.env.reset(task === undefined ? { seed: s.resetSeed } : { seed: s.resetSeed, task }),
            timeoutMs,
            'reset',
          );
          s.initial = reset.observation;
          s.current = reset.observation;
          s.info = reset.info;
          s.resetInfo = reset.info;
          s.taskType = taskTypeOf(reset.info);
        } catch (error) {
          fail(s, 'reset', error);
        }
      }),
    );
    envMs += performance.now() - t0;

    for (let turn = 0; turn < maxTurns; turn++) {
      const active = slots.filter((s) => !s.done);
      if (active.length === 0) break;
      const prompts = active.map((s) =>
        this.#spec.prompt({
          initialObservation: s.initial as Observation,
          history: s.history,
          current: s.current as Observation,
          stepIndex: s.records.length,
          info: s.info,
        }),
      );
      t0 = performance.now();
      const responses = await agent.act(prompts, {
        seed: Rng.fromSeed(`${options.samplingSeed}:${turn}`).nextUint32(),
      });
      generateMs += performance.now() - t0;
      t0 = performance.now();
      await Promise.all(
        active.map(async (s, i) => {
          const response = responses[i];
          if (!response)
            throw new Error(
              `agent returned ${responses.length} responses for ${active.length} prompts`,
            );
          if (response.promptTruncated) promptTruncations++;
          const observation = s.current as Observation;
          const admissible = observation.admissibleActions;
          const parsed = this.#spec.parser(
            response.text,
            admissible ? { admissibleActions: admissible } : undefined,
          );
          if (parsed.valid) s.valid++;
          let reward = 0;
          let terminated = false;
          let truncated = false;
          let won = false;
          try {
            const step = await withTimeout(
              (s.env as TextEnv).step(parsed.action),
              timeoutMs,
              'step',
            );
            reward = step.reward;
            terminated = step.terminated;
            truncated = step.truncated || (!terminated && turn === maxTurns - 1);
            won = step.info.won === true;
            s.current = step.observation;
            s.info = step.info;
            s.stepped = true;
          } catch (error) {
            fail(s, 'step', error);
            truncated = true;
          }
          s.records.push({
            groupId: s.groupId,
            trajectoryId: s.trajectoryId,
            stepIndex: s.records.length,
            anchor: observation.anchor,
            reward,
            actionValid: parsed.valid,
            action: parsed.action,
            promptTokenIds: response.promptTokenIds,
            responseTokenIds: response.responseTokenIds,
            responseLogProbs: response.responseLogProbs,
            responseText: response.text,
            terminated,
            truncated,
            won,
          });
          s.history.push({ observation, action: parsed.action });
          s.reward += reward;
          s.won = won;
          if (terminated || truncated) s.done = true;
        }),
      );
      envMs += performance.now() - t0;
    }

    const records: StepRecord[] = [];
    const episodes: EpisodeSummary[] = [];
    const specs = this.#spec.metrics ?? [];
    for (const s of slots) {
      records.push(...s.records);
      if (!s.initial) {
        episodes.push({
          groupId: s.groupId,
          trajectoryId: s.trajectoryId,
          slot: s.slot,
          taskType: s.taskType,
          resetSeed: s.resetSeed,
          won: false,
          length: 0,
          episodeReward: 0,
          validActions: 0,
          envFailure: s.failure ?? 'reset failed',
          initialObservation: '',
          ...(specs.length > 0
            ? { metrics: episodeMetricValues(specs, undefined, undefined) }
            : {}),
        });
        continue;
      }
      episodes.push({
        groupId: s.groupId,
        trajectoryId: s.trajectoryId,
        slot: s.slot,
        taskType: s.taskType,
        resetSeed: s.resetSeed,
        won: s.won,
        length: s.records.length,
        episodeReward: s.reward,
        validActions: s.valid,
        ...(s.failure !== undefined ? { envFailure: s.failure } : {}),
        initialObservation: s.initial.text,
        ...(specs.length > 0
          ? {
              metrics: episodeMetricValues(specs, s.stepped ? s.info : undefined, s.resetInfo),
            }
          : {}),
      });
    }
    return { records, episodes, envFailures, promptTruncations, generateMs, envMs };
  }

  /** Closes every slot's environment. */
  async close(): Promise<void> {
    const envs = this.#envs.splice(0);
    await Promise.all(envs.map((e) => e?.close().catch(() => undefined)));
  }
}
