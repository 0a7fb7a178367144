/**
 * The rollout engine contract: what a trainer asks of the thing that generates its rollouts.
 * Prompts go in as token ids with the sampling settings of {@link SamplingOptions}; sampled token
 * ids come out, with their log-probs where the engine reports them. The trainer recomputes the
 * old log-probs with its own model in batched forwards (as verl does), so an engine's numerics
 * need not match the trainer's bit for bit; {@link logProbMismatch} measures how far they are.
 *
 * After each update the trainer hands the engine the new weights ({@link RolloutEngine.syncWeights})
 * and every generation reports the weights version it sampled from, so a rollout from a stale
 * policy is caught ({@link assertWeightsVersion}) instead of being trained on silently.
 */
import { AgentRLError, type AgentRLErrorOptions, InvalidInputError } from './errors.ts';
import type { FinishReason, Policy, SamplingOptions } from './policy.ts';

/**
 * The weights an engine should sample from. A checkpoint folder in the Hugging Face layout
 * (`config.json` plus safetensors) holds the full weights; with `adapterDir`, the weights are
 * that LoRA adapter on the unchanged base in `checkpointDir`.
 */
export interface WeightSnapshot {
  /** Policy version, increasing by at least one per update; generations report it back. */
  readonly version: number;
  /** Folder of the full (or base) weights. */
  readonly checkpointDir: string;
  /** Folder of a LoRA adapter to apply on the base, when the run trains one. */
  readonly adapterDir?: string;
}

/** What an engine returns for a batch of prompts, one entry per prompt, in order. */
export interface RolloutResult {
  /** The sampled response token ids (a stop id, when one ended the response, included). */
  readonly tokenIds: number[][];
  /**
   * log p(token) of each sampled token under the distribution the engine sampled from, where
   * the engine reports it; absent otherwise. The trainer's recomputed log-probs are the ones
   * that enter the loss either way.
   */
  readonly logProbs?: number[][];
  /** Why each response ended. */
  readonly finishReasons: FinishReason[];
  /** The {@link WeightSnapshot.version} of the weights these tokens were sampled from. */
  readonly weightsVersion: number;
}

/**
 * A generator of rollouts: token ids in, token ids out, weights synced from the trainer.
 * Packages above core implement it (an in-process decoder, llama.cpp, OpenAI-compatible servers);
 * core depends on none of them.
 */
export interface RolloutEngine {
  /** Short name for logs and run metadata (`tfjs`, `llama.cpp`, ...). */
  readonly name: string;
  /** The version of the weights the next generation samples from; undefined before any sync. */
  readonly weightsVersion: number | undefined;
  /** Generates one response per prompt with the given sampling settings. */
  generate(
    prompts: readonly (readonly number[])[],
    sampling: SamplingOptions,
  ): Promise<RolloutResult>;
  /**
   * Makes the engine sample from `snapshot` from the next generation on. Resolves only once the
   * new weights are in place; rejects with a {@link WeightSyncError} when they could not be.
   */
  syncWeights(snapshot: WeightSnapshot): Promise<void>;
  /** Releases the engine's resources; idempotent. */
  close(): Promise<void>;
}

/** The engine could not take the new weights, or sampled from other weights than asked (`WEIGHT_SYNC`). */
export class WeightSyncError extends AgentRLError {
  constructor(message: string, options?: AgentRLErrorOptions) {
    super('WEIGHT_SYNC', message, options);
  }
}

/**
 * Throws a {@link WeightSyncError} unless `result` was sampled from weights version `expected`:
 * an engine that fell behind the trainer is an error, never a silently stale policy.
 */
export function assertWeightsVersion(
  engine: string,
  result: Pick<RolloutResult, 'weightsVersion'>,
  expected: number,
): void {
  if (result.weightsVersion !== expected) {
    throw new WeightSyncError(
      `${engine}: rollouts were sampled from weights version ${result.weightsVersion}, but the trainer is at version ${expected}; call syncWeights with the current weights before generating (and check the engine's sync did not fail)`,
      { details: { engine, weightsVersion: result.weightsVersion, expected } },
    );
  }
}

/** How far an engine's log-probs are from the trainer's on the same sampled tokens. */
export interface LogProbMismatch {
  /** Mean of |engine − trainer| over every token both report (0 when there are none). */
  readonly meanAbs: number;
  /** Largest |engine − trainer| (0 when there are none). */
  readonly maxAbs: number;
  /**
   * Mean of |exp(engine) − exp(trainer)|, the probability-space difference verl logs as
   * `rollout_probs_diff_mean` (its FAQ reads a mean above 0.01 as an inference precision issue).
   */
  readonly meanAbsProb: number;
  /** Number of tokens compared. */
  readonly count: number;
}

/**
 * Compares per-token log-probs row by row. Rows must have equal lengths (the same sampled
 * tokens scored twice); a length mismatch is a caller error.
 */
export function logProbMismatch(
  engine: readonly (readonly number[])[],
  trainer: readonly (readonly number[])[],
): LogProbMismatch {
  if (engine.length !== trainer.length) {
    throw new InvalidInputError(
      `logProbMismatch: ${engine.length} engine rows but ${trainer.length} trainer rows; pass the log-probs of the same responses`,
      { details: { engineRows: engine.length, trainerRows: trainer.length } },
    );
  }
  let sumAbs = 0;
  let sumProb = 0;
  let maxAbs = 0;
  let count = 0;
  for (let r = 0; r < engine.length; r++) {
    const a = engine[r] as readonly number[];
    const b = trainer[r] as readonly number[];
    if (a.length !== b.length) {
      throw new InvalidInputError(
        `logProbMismatch: row ${r} has ${a.length} engine log-probs but ${b.length} trainer log-probs; pass the log-probs of the same responses`,
        { details: { row: r, engine: a.length, trainer: b.length } },
      );
    }
    for (let i = 0; i < a.length; i++) {
      const x = a[i] as number;
      const y = b[i] as number;
      const d = Math.abs(x - y);
      sumAbs += d;
      sumProb += Math.abs(Math.exp(x) - Math.exp(y));
      if (d > maxAbs) maxAbs = d;
      count++;
    }
  }
  return count === 0
    ? { meanAbs: 0, maxAbs: 0, meanAbsProb: 0, count: 0 }
    : { meanAbs: sumAbs / count, maxAbs, meanAbsProb: sumProb / count, count };
}

/**
 * A {@link RolloutEngine} over an in-process {@link Policy} that shares its weights with the
 * trainer (the tfjs decoder): a sync only records the version, since an update already changed
 * the weights the policy samples from.
 */
export function policyRolloutEngine(policy: Policy, name = 'tfjs'): RolloutEngine {
  let version: number | undefined;
  let closed = false;
  return {
    name,
    get weightsVersion() {
      return version;
    },
    async generate(prompts, sampling) {
      if (closed)
        throw new InvalidInputError(
          `${name}: generate() called after close(); create a new engine`,
        );
      const out = await policy.generate(prompts, sampling);
      return {
        tokenIds: out.tokenIds,
        logProbs: out.logProbs,
        finishReasons: out.finishReasons,
        weightsVersion: version ?? 0,
      };
    },
    async syncWeights(snapshot) {
      if (version !== undefined && snapshot.version < version) {
        throw new WeightSyncError(
          `${name}: weights version ${snapshot.version} is older than the current ${version}; sync versions in increasing order`,
          { details: { engine: name, version: snapshot.version, current: version } },
        );
      }
      version = snapshot.version;
    },
    async close() {
      closed = true;
    },
  };
}
