/**
 * Supervised warm start from expert demonstrations: play episodes with an expert, keep the won
 * ones as (prompt, response) pairs rendered through the same prompt template as RL, and fit the
 * policy to them with its `sftStep`.
 */
import {
  ConfigError,
  type EnvInfo,
  type HistoryEntry,
  type Observation,
  type PromptContext,
  Rng,
  type Tokenizer,
  type TrainablePolicy,
} from '@agentrl/core';
import type { Logger } from './logger.ts';
import { type EnvSpec, resetSeedFor } from './rollout.ts';

/** One demonstration: the prompt text and the response the model should produce. */
export interface Demonstration {
  readonly prompt: string;
  readonly response: string;
}

/** An expert: the action to take in a state, from what the prompt template sees. */
export type Expert = (context: PromptContext) => string | Promise<string>;

/** Options of {@link collectDemonstrations}. */
export interface CollectOptions {
  readonly env: EnvSpec;
  readonly expert: Expert;
  /** Episodes to play (won ones are kept). */
  readonly episodes: number;
  /** Seed of the demonstration games (keep it apart from training and validation seeds). */
  readonly seed: number;
  readonly maxTurns: number;
  /** The response text for an action, e.g. `<think>…</think><action>{a}</action>`. */
  readonly formatResponse: (action: string, context: PromptContext) => string;
}

/** Plays expert episodes and returns the demonstrations of the won ones. */
export async function collectDemonstrations(
  options: CollectOptions,
): Promise<{ demonstrations: Demonstration[]; episodes: number; wins: number }> {
  const demonstrations: Demonstration[] = [];
  let wins = 0;
  const env = await options.env.create();
  try {
    for (let e = 0; e < options.episodes; e++) {
      const task = options.env.task?.(e, 0);
      const seed = resetSeedFor(options.seed, e, 0);
      const reset = await env.reset(task === undefined ? { seed } : { seed, task });
      const initial: Observation = reset.observation;
      let current = initial;
      let info: EnvInfo = reset.info;
      const history: HistoryEntry[] = [];
      const episode: Demonstration[] = [];
      let won = false;
      for (let turn = 0; turn < options.maxTurns; turn++) {
        const context: PromptContext = {
          initialObservation: initial,
          history: [...history],
          current,
          stepIndex: turn,
          info,
        };
        const action = await options.expert(context);
        episode.push({
          prompt: options.env.prompt(context),
          response: options.formatResponse(action, context),
        });
        const step = await env.step(action);
        history.push({ observation: current, action });
        current = step.observation;
        info = step.info;
        if (step.terminated || step.truncated) {
          won = step.info.won === true;
          break;
        }
      }
      if (won) {
        wins++;
        demonstrations.push(...episode);
      }
    }
  } finally {
    await env.close();
  }
  return { demonstrations, episodes: options.episodes, wins };
}

/**
 * When a warm start may stop before its last step: once the mean loss of the last `window` steps
 * is at or below `meanLoss`. A model whose loss falls late (a knowledge base, say, where it learns
 * to copy a name from the prompt only after many steps) then trains on, and one whose loss falls
 * early stops there, instead of every run taking the same number of steps.
 */
export interface SftStopRule {
  /** The mean loss at or below which the warm start stops. */
  readonly meanLoss: number;
  /** Steps the mean is taken over (the warm start runs at least this many). */
  readonly window: number;
}

/** Steps a stopping rule averages the loss over unless told otherwise. */
export const SFT_STOP_WINDOW = 50;

/** Options of {@link runSft}. */
export interface SftOptions {
  readonly policy: TrainablePolicy;
  readonly tokenizer: Tokenizer;
  readonly demonstrations: readonly Demonstration[];
  /** Steps to take; with {@link SftOptions.stopWhen}, the most steps. */
  readonly steps: number;
  readonly batchSize: number;
  readonly seed: number;
  /**
   * Prompts longer than this keep their last tokens, as rollouts do (`rollout.maxPromptTokens`).
   * Default: no limit.
   */
  readonly maxPromptTokens?: number;
  /**
   * The model's positions: a demonstration longer than this (prompt after `maxPromptTokens`,
   * response and EOS) is refused before any step, naming the option that shortens it.
   */
  readonly maxSequenceTokens?: number;
  /** Stop before `steps` once the loss has fallen this far (default: take every step). */
  readonly stopWhen?: SftStopRule;
  /** Called after each step with its metrics (loss...). */
  readonly onStep?: (step: number, metrics: Record<string, number>) => void;
  readonly logger?: Logger;
}

/** Tokenizes demonstrations: chat-template prompt ids, response ids with EOS appended. */
export function tokenizeDemonstrations(
  tokenizer: Tokenizer,
  demonstrations: readonly Demonstration[],
): { promptTokenIds: number[][]; responseTokenIds: number[][] } {
  const eos = tokenizer.eosTokenIds[0];
  return {
    promptTokenIds: demonstrations.map((d) =>
      tokenizer.applyChatTemplate([{ role: 'user', content: d.prompt }], {
        addGenerationPrompt: true,
      }),
    ),
    responseTokenIds: demonstrations.map((d) => [
      ...tokenizer.encode(d.response),
      ...(eos === undefined ? [] : [eos]),
    ]),
  };
}

/**
 * The mean loss of the last `window` steps of `history`: NaN while fewer steps were taken or where
 * one of them has no loss, so that a stopping rule never applies there.
 */
export function meanLossOfLast(history: readonly Record<string, number>[], window: number): number {
  if (history.length < window) return Number.NaN;
  let sum = 0;
  for (let i = history.length - window; i < history.length; i++)
    sum += history[i]?.loss ?? Number.NaN;
  return sum / window;
}

/** Refuses a stopping rule that could never apply or is not a number. */
function checkStopRule(rule: SftStopRule): void {
  if (!(Number.isFinite(rule.meanLoss) && rule.meanLoss > 0))
    throw new ConfigError(
      `stopWhen.meanLoss is ${rule.meanLoss}: use a positive loss, e.g. 0.25, or leave stopWhen out to take every step`,
      { details: { field: 'stopWhen.meanLoss', value: rule.meanLoss } },
    );
  if (!(Number.isInteger(rule.window) && rule.window >= 1))
    throw new ConfigError(
      `stopWhen.window is ${rule.window}: use a whole number of steps of at least 1, e.g. 50`,
      { details: { field: 'stopWhen.window', value: rule.window } },
    );
}

/**
 * Fits the policy to the demonstrations: `steps` batches drawn with a seeded shuffle, or fewer
 * where `stopWhen` ends the warm start once its loss has fallen. Returns every step's metrics (its
 * length is the number of steps taken).
 */
export async function runSft(options: SftOptions): Promise<Record<string, number>[]> {
  const { policy, demonstrations, stopWhen } = options;
  if (stopWhen !== undefined) checkStopRule(stopWhen);
  if (!policy.sftStep)
    throw new ConfigError(
      'the model has no sftStep: use a model backend that supports supervised training',
      {
        details: { field: 'model.backend' },
      },
    );
  if (demonstrations.length === 0)
    throw new ConfigError(
      'no demonstrations to train on: the expert won no episode; raise sft.episodes',
      {
        details: { field: 'sft.episodes' },
      },
    );
  const ids = tokenizeDemonstrations(options.tokenizer, demonstrations);
  const maxPrompt = options.maxPromptTokens;
  if (maxPrompt !== undefined)
    ids.promptTokenIds = ids.promptTokenIds.map((p) =>
      p.length > maxPrompt ? p.slice(p.length - maxPrompt) : p,
    );
  const limit = options.maxSequenceTokens;
  if (limit !== undefined) {
    const lengths = ids.promptTokenIds.map(
      (p, i) => p.length + (ids.responseTokenIds[i] as number[]).length,
    );
    const longest = lengths.reduce((best, n, i) => (n > (lengths[best] as number) ? i : best), 0);
    const tokens = lengths[longest] as number;
    if (tokens > limit) {
      const response = (ids.responseTokenIds[longest] as number[]).length;
      const over = lengths.filter((n) => n > limit).length;
      const longestResponse = Math.max(...ids.responseTokenIds.map((r) => r.length));
      const suggested = Math.max(1, limit - longestResponse);
      throw new ConfigError(
        `demonstration ${longest} has ${tokens} tokens (prompt ${tokens - response} + response ${response}), above the model's ${limit} positions (${over} of ${lengths.length} demonstrations are): set rollout.maxPromptTokens to at most ${suggested} (--set rollout.maxPromptTokens=${suggested}) to keep each prompt's last tokens, as rollouts do, or use a model with more positions`,
        {
          details: { field: 'rollout.maxPromptTokens', value: maxPrompt, tokens, limit },
        },
      );
    }
  }
  const rng = Rng.fromSeed(`sft:${options.seed}`);
  let order: number[] = [];
  const history: Record<string, number>[] = [];
  for (let step = 0; step < options.steps; step++) {
    const batch: number[] = [];
    while (batch.length < Math.min(options.batchSize, demonstrations.length)) {
      if (order.length === 0) {
        order = demonstrations.map((_, i) => i);
        for (let i = order.length - 1; i > 0; i--) {
          const j = rng.int(i + 1);
          [order[i], order[j]] = [order[j] as number, order[i] as number];
        }
      }
      batch.push(order.pop() as number);
    }
    const metrics = await policy.sftStep({
      promptTokenIds: batch.map((i) => ids.promptTokenIds[i] as number[]),
      responseTokenIds: batch.map((i) => ids.responseTokenIds[i] as number[]),
    });
    history.push(metrics);
    options.onStep?.(step, metrics);
    if (stopWhen !== undefined && meanLossOfLast(history, stopWhen.window) <= stopWhen.meanLoss)
      break;
  }
  return history;
}
