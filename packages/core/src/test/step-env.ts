/**
 * The part the test environments share: a `TextEnv` whose episode state lives in the caller's
 * closure, with the contract's order checks (`EpisodeLifecycle`), a step count, truncation at
 * `maxSteps` and close. The caller says what a reset and a step do to its state and how the
 * state reads.
 */
import type {
  EnvInfo,
  Observation,
  ResetOptions,
  ResetResult,
  StepResult,
  TextEnv,
} from '../env.ts';
import { EpisodeLifecycle } from '../lifecycle.ts';

/** What a test environment decides; see {@link createStepEnv}. */
export interface StepEnvParts {
  /** Steps before truncation. */
  readonly maxSteps: number;
  /** Starts an episode; may throw (a bad task) before anything changed. */
  reset(options: ResetOptions): void;
  /** Applies one action; returns its reward and whether the episode ended in the environment. */
  act(action: string): { readonly reward: number; readonly terminated: boolean };
  /** The current observation. */
  observe(): Observation;
  /** Facts about the current state; `steps` is added after them. */
  info(): EnvInfo;
}

/** A `TextEnv` of `id` driven by `parts` (see the module comment). */
export function createStepEnv(id: string, parts: StepEnvParts): TextEnv {
  const lifecycle = new EpisodeLifecycle(id);
  let steps = 0;
  const info = (): EnvInfo => ({ ...parts.info(), steps });
  const env: TextEnv = {
    id,
    async reset(options: ResetOptions): Promise<ResetResult> {
      lifecycle.beginReset();
      parts.reset(options);
      steps = 0;
      lifecycle.endReset();
      return { observation: parts.observe(), info: info() };
    },
    async step(action: string): Promise<StepResult> {
      lifecycle.beginStep();
      steps++;
      const { reward, terminated } = parts.act(action);
      const result: StepResult = {
        observation: parts.observe(),
        reward,
        terminated,
        truncated: !terminated && steps >= parts.maxSteps,
        info: info(),
      };
      lifecycle.endStep(result);
      return result;
    },
    async close(): Promise<void> {
      lifecycle.close();
    },
    async [Symbol.asyncDispose](): Promise<void> {
      await env.close();
    },
  };
  return env;
}
