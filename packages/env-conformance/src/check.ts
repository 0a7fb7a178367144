/**
 * `checkEnv`: the rules every agentrl environment follows, as a plain async function that
 * returns findings (no test framework needed). The vitest suite `describeEnvConformance` runs
 * the same rules, one test each; scripts and other runners call `checkEnv` directly.
 *
 * The rules are those of the `TextEnv` contract (`docs/architecture.md`): group members that
 * start from the same seed and task must see the same thing (GiGPO groups their steps by anchor
 * state, arXiv 2505.10978 Eq. 6), episodes end, a finished or closed env refuses further use with
 * a typed error, and the action parser never throws on model output.
 */
import {
  type ActionParser,
  createRng,
  isAgentRLError,
  type Observation,
  type ResetOptions,
  type Rng,
  type StepResult,
  type TextEnv,
} from '@agentrl/core';
import { fixedAdversarialStrings, randomAdversarialString } from './adversarial.ts';

/** The rules, in the order `checkEnv` runs them. */
export const ENV_RULES = [
  'identical-starts',
  'episode-ends',
  'finished-rejects-step',
  'close',
  'stable-anchors',
  'observation-shape',
  'observation-size',
  'step-result-shape',
  'not-won-after-reset',
  'parser-never-throws',
] as const;

/** One rule of {@link ENV_RULES}. */
export type EnvRule = (typeof ENV_RULES)[number];

/** What each rule asserts (the README's table and the test names read this). */
export const ENV_RULE_DESCRIPTIONS: Readonly<Record<EnvRule, string>> = {
  'identical-starts':
    'the same seed and task give the same initial observation, in two instances and after a second reset() of one instance',
  'episode-ends': 'an episode driven by chooseAction ends within maxEpisodeSteps',
  'finished-rejects-step':
    'step() after the episode ended rejects with ENV_FINISHED and a message that says to reset',
  close:
    'close() twice is fine, Symbol.asyncDispose exists, and reset() after close rejects with ENV_CLOSED',
  'stable-anchors':
    'replaying the same actions from the same reset gives the same anchors and texts',
  'observation-shape':
    'observation text and anchor are strings; admissibleActions, when present, is an array of strings',
  'observation-size': 'every observation text is at most maxObservationChars long',
  'step-result-shape':
    'rewards are finite numbers; terminated, truncated and info.won are booleans',
  'not-won-after-reset': 'info.won is false right after reset()',
  'parser-never-throws':
    'the action parser returns {action: string, valid: boolean} and never throws on adversarial and random strings',
};

/** One broken rule: which, and what was seen. */
export interface EnvFinding {
  readonly rule: EnvRule;
  readonly message: string;
}

/** Options of {@link checkEnv}. */
export interface EnvCheckOptions {
  /** A name for the env (usually its id); seeds the parser fuzzing. Default `"env"`. */
  readonly name?: string;
  /** The env's action parser (fuzzed). */
  readonly parser: ActionParser;
  /** Resets to check (seed, task). Default: seeds 0 and 1 without a task. */
  readonly resets?: readonly ResetOptions[];
  /**
   * Picks the action sent at each step while driving an episode. Default: a random admissible
   * action (or `"look"` when the env lists none).
   */
  readonly chooseAction?: (observation: Observation, rng: Rng) => string;
  /** Steps to drive an episode before the check reports that it never ends. Default 200. */
  readonly maxEpisodeSteps?: number;
  /** Largest allowed observation text, in UTF-16 code units. Default 20,000. */
  readonly maxObservationChars?: number;
  /** Random parser inputs (after the fixed adversarial ones). Default 10,000. */
  readonly parserFuzzRuns?: number;
  /** Only these rules (default: all of {@link ENV_RULES}). */
  readonly rules?: readonly EnvRule[];
}

/** Builds a fresh environment; the check closes every instance it builds. */
export type EnvFactory = () => TextEnv | Promise<TextEnv>;

const defaultChooseAction = (observation: Observation, rng: Rng): string => {
  const actions = observation.admissibleActions;
  return actions && actions.length > 0 ? rng.pick(actions) : 'look';
};

/** Findings of one check run; each rule is reported at most once (its first failure). */
class Findings {
  readonly list: EnvFinding[] = [];
  add(rule: EnvRule, message: string): void {
    if (!this.list.some((f) => f.rule === rule)) this.list.push({ rule, message });
  }
  has(rule: EnvRule): boolean {
    return this.list.some((f) => f.rule === rule);
  }
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 80));
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  return String(value);
}

function inspectObservation(
  observation: Observation,
  where: string,
  maxChars: number,
  findings: Findings,
): void {
  if (typeof observation?.text !== 'string') {
    findings.add(
      'observation-shape',
      `${where}: observation.text is ${describeValue(observation?.text)}, not a string`,
    );
    return;
  }
  if (typeof observation.anchor !== 'string') {
    findings.add(
      'observation-shape',
      `${where}: observation.anchor is ${describeValue(observation.anchor)}, not a string`,
    );
  }
  const admissible = observation.admissibleActions;
  if (
    admissible !== undefined &&
    (!Array.isArray(admissible) || admissible.some((a) => typeof a !== 'string'))
  ) {
    findings.add(
      'observation-shape',
      `${where}: observation.admissibleActions is not an array of strings`,
    );
  }
  if (observation.text.length > maxChars) {
    findings.add(
      'observation-size',
      `${where}: observation.text is ${observation.text.length} characters, over the limit of ${maxChars}`,
    );
  }
}

function inspectStepResult(
  result: StepResult,
  where: string,
  maxChars: number,
  findings: Findings,
): void {
  inspectObservation(result.observation, where, maxChars, findings);
  if (typeof result.reward !== 'number' || !Number.isFinite(result.reward)) {
    findings.add(
      'step-result-shape',
      `${where}: reward is ${describeValue(result.reward)}, not a finite number`,
    );
  }
  for (const key of ['terminated', 'truncated'] as const) {
    if (typeof result[key] !== 'boolean') {
      findings.add(
        'step-result-shape',
        `${where}: ${key} is ${describeValue(result[key])}, not a boolean`,
      );
    }
  }
  if (typeof result.info?.won !== 'boolean') {
    findings.add(
      'step-result-shape',
      `${where}: info.won is ${describeValue(result.info?.won)}, not a boolean`,
    );
  }
}

interface Episode {
  readonly observations: Observation[];
  readonly actions: string[];
  readonly ended: boolean;
}

interface Settings {
  readonly resets: readonly ResetOptions[];
  readonly choose: (observation: Observation, rng: Rng) => string;
  readonly maxSteps: number;
  readonly maxChars: number;
}

async function driveEpisode(
  env: TextEnv,
  reset: ResetOptions,
  settings: Settings,
  findings: Findings,
  script?: readonly string[],
): Promise<Episode> {
  const rng = createRng(`conformance:${reset.seed}:${String(reset.task)}`);
  const label = `reset(${JSON.stringify(reset)})`;
  const first = await env.reset(reset);
  inspectObservation(first.observation, label, settings.maxChars, findings);
  if (first.info?.won !== false) {
    findings.add(
      'not-won-after-reset',
      `${label}: info.won is ${describeValue(first.info?.won)}, expected false`,
    );
  }
  const observations = [first.observation];
  const actions: string[] = [];
  let current = first.observation;
  const limit = script ? script.length : settings.maxSteps;
  for (let i = 0; i < limit; i++) {
    const action = script ? (script[i] as string) : settings.choose(current, rng);
    actions.push(action);
    const result = await env.step(action);
    inspectStepResult(
      result,
      `${label}, step ${i + 1} (${JSON.stringify(action)})`,
      settings.maxChars,
      findings,
    );
    observations.push(result.observation);
    current = result.observation;
    if (result.terminated || result.truncated) return { observations, actions, ended: true };
  }
  return { observations, actions, ended: false };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return await promise.then(
    () => undefined,
    (e: unknown) => e ?? new Error('rejected with nothing'),
  );
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The rules that need the env (all but the parser's). */
type EnvRuleCheck = (
  withEnv: <T>(use: (env: TextEnv) => Promise<T>) => Promise<T>,
  factory: EnvFactory,
  settings: Settings,
  findings: Findings,
) => Promise<void>;

const identicalStarts: EnvRuleCheck = async (withEnv, _factory, settings, findings) => {
  for (const reset of settings.resets) {
    const label = `reset(${JSON.stringify(reset)})`;
    const a = await withEnv((env) => env.reset(reset));
    const b = await withEnv((env) => env.reset(reset));
    if (!sameJson(a.observation, b.observation)) {
      findings.add(
        'identical-starts',
        `${label} in two instances gave different observations: ${describeValue(a.observation.text)} and ${describeValue(b.observation.text)}`,
      );
      return;
    }
    const again = await withEnv(async (env) => {
      await env.reset(reset);
      return await env.reset(reset);
    });
    if (!sameJson(again.observation, a.observation)) {
      findings.add(
        'identical-starts',
        `${label} a second time on the same instance gave a different observation: ${describeValue(again.observation.text)}`,
      );
      return;
    }
  }
};

const episodeEndsAndFinishes: EnvRuleCheck = async (withEnv, _factory, settings, findings) => {
  await withEnv(async (env) => {
    const episode = await driveEpisode(env, settings.resets[0] as ResetOptions, settings, findings);
    if (!episode.ended) {
      findings.add(
        'episode-ends',
        `the episode did not end within ${settings.maxSteps} steps: give the env a step limit or raise maxEpisodeSteps`,
      );
      return;
    }
    const error = await rejection(env.step(episode.actions.at(-1) ?? 'look'));
    if (!isAgentRLError(error, 'ENV_FINISHED')) {
      findings.add(
        'finished-rejects-step',
        `step() after the episode ended gave ${error === undefined ? 'a result' : describeValue(error)}, expected an ENV_FINISHED error`,
      );
    } else if (!/reset/.test(error.message)) {
      findings.add(
        'finished-rejects-step',
        `the ENV_FINISHED message does not say to reset: ${describeValue(error.message)}`,
      );
    }
  });
};

const closes: EnvRuleCheck = async (_withEnv, factory, settings, findings) => {
  const env = await factory();
  try {
    await env.reset(settings.resets[0] as ResetOptions);
    await env.close();
    await env.close();
  } catch (error) {
    findings.add('close', `close() twice threw ${describeValue(error)}`);
    return;
  }
  if (typeof env[Symbol.asyncDispose] !== 'function') {
    findings.add('close', 'the env has no Symbol.asyncDispose method (for `await using`)');
    return;
  }
  await env[Symbol.asyncDispose]();
  const error = await rejection(env.reset(settings.resets[0] as ResetOptions));
  if (!isAgentRLError(error, 'ENV_CLOSED')) {
    findings.add(
      'close',
      `reset() after close() gave ${error === undefined ? 'a result' : describeValue(error)}, expected an ENV_CLOSED error`,
    );
  }
};

const stableAnchors: EnvRuleCheck = async (withEnv, _factory, settings, findings) => {
  for (const reset of settings.resets) {
    const first = await withEnv((env) => driveEpisode(env, reset, settings, findings));
    const replay = await withEnv((env) =>
      driveEpisode(env, reset, settings, findings, first.actions),
    );
    for (let i = 0; i < first.observations.length; i++) {
      const a = first.observations[i] as Observation;
      const b = replay.observations[i];
      if (b === undefined || a.anchor !== b.anchor || a.text !== b.text) {
        findings.add(
          'stable-anchors',
          `reset(${JSON.stringify(reset)}) replayed with the same actions differs at step ${i}: anchor ${describeValue(a.anchor)} then ${describeValue(b?.anchor)}`,
        );
        return;
      }
    }
  }
};

function checkParser(
  parser: ActionParser,
  fuzzRuns: number,
  seedName: string,
  findings: Findings,
): void {
  const rng = createRng(`parser-fuzz:${seedName}`);
  const inputs = fixedAdversarialStrings();
  for (let i = 0; i < fuzzRuns; i++) inputs.push(randomAdversarialString(rng));
  for (const input of inputs) {
    const shown = `${JSON.stringify(input.slice(0, 200))} (length ${input.length})`;
    let parsed: ReturnType<ActionParser>;
    try {
      parsed = parser(input);
    } catch (error) {
      findings.add(
        'parser-never-throws',
        `the parser threw on input ${shown}: ${describeValue(error)}`,
      );
      return;
    }
    if (typeof parsed?.action !== 'string' || typeof parsed.valid !== 'boolean') {
      findings.add(
        'parser-never-throws',
        `the parser returned ${JSON.stringify(parsed)} on input ${shown}, not {action: string, valid: boolean}`,
      );
      return;
    }
  }
}

/** Which check covers which rules (one episode drive serves several shape rules). */
const ENV_CHECKS: readonly { readonly rules: readonly EnvRule[]; readonly run: EnvRuleCheck }[] = [
  { rules: ['identical-starts'], run: identicalStarts },
  {
    rules: [
      'episode-ends',
      'finished-rejects-step',
      'observation-shape',
      'observation-size',
      'step-result-shape',
      'not-won-after-reset',
    ],
    run: episodeEndsAndFinishes,
  },
  { rules: ['close'], run: closes },
  { rules: ['stable-anchors'], run: stableAnchors },
];

/**
 * Checks an environment against the rules and returns what it breaks (an empty list when it
 * conforms). `env` builds a fresh instance each time it is called; every instance is closed.
 * A rule whose check throws an unexpected error is reported with that error.
 */
export async function checkEnv(env: EnvFactory, options: EnvCheckOptions): Promise<EnvFinding[]> {
  const wanted = new Set<EnvRule>(options.rules ?? ENV_RULES);
  const settings: Settings = {
    resets: options.resets ?? [{ seed: 0 }, { seed: 1 }],
    choose: options.chooseAction ?? defaultChooseAction,
    maxSteps: options.maxEpisodeSteps ?? 200,
    maxChars: options.maxObservationChars ?? 20_000,
  };
  const findings = new Findings();
  const withEnv = async <T>(use: (instance: TextEnv) => Promise<T>): Promise<T> => {
    const instance = await env();
    try {
      return await use(instance);
    } finally {
      await instance.close();
    }
  };
  for (const check of ENV_CHECKS) {
    if (!check.rules.some((r) => wanted.has(r))) continue;
    try {
      await check.run(withEnv, env, settings, findings);
    } catch (error) {
      const rule = check.rules.find((r) => wanted.has(r)) as EnvRule;
      findings.add(rule, `the check threw ${describeValue(error)}`);
    }
  }
  if (wanted.has('parser-never-throws')) {
    checkParser(options.parser, options.parserFuzzRuns ?? 10_000, options.name ?? 'env', findings);
  }
  return findings.list.filter((f) => wanted.has(f.rule));
}
