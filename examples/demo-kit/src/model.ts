/** The tiny fresh model every CPU demo trains, and the sizes of a smoke run. */
import type { Tokenizer } from '@agentrl/core';
import type { CausalLM } from '@agentrl/model-tfjs';
import { createFreshPolicy, type TfjsTrainablePolicy } from '@agentrl/model-tfjs/policy';
import { SFT_STOP_WINDOW } from '@agentrl/runner';

/** Model and optimiser settings of a run (a subset of the demo's budget). */
export interface ModelBudget {
  readonly hidden: number;
  readonly layers: number;
  readonly heads: number;
  readonly maxTurns: number;
  readonly learningRate: number;
  readonly sftLearningRate: number;
  readonly temperature: number;
  /** Weight of the low-variance KL penalty to the warm start (0: none, the policy keeps no reference). */
  readonly klLossCoef?: number;
}

/**
 * A fresh seeded Qwen2-architecture decoder (tied head, SwiGLU 3×) over `tokenizer`'s vocabulary
 * and its trainable policy: AdamW, micro-batches of 32, PPO clip 0.2, dual clip 3, no entropy
 * bonus (the recipe a PyTorch prototype of this CPU set-up trained with).
 */
export async function createTinyPolicy(
  tokenizer: Tokenizer,
  budget: ModelBudget,
  seed: number,
  maxPositions: number,
): Promise<{ model: CausalLM; policy: TfjsTrainablePolicy }> {
  return createFreshPolicy(
    { hiddenSize: budget.hidden, layers: budget.layers, heads: budget.heads, maxPositions },
    {
      vocabSize: tokenizer.vocabSize,
      eosTokenId: tokenizer.eosTokenIds[0] as number,
      seed,
      policy: {
        learningRate: budget.learningRate,
        sftLearningRate: budget.sftLearningRate,
        temperature: budget.temperature,
        microBatchSize: 32,
        loss: {
          clipRatio: 0.2,
          clipRatioC: 3,
          entropyCoeff: 0,
          klLossCoef: budget.klLossCoef ?? 0,
        },
      },
    },
  );
}

/**
 * The sizes of a smoke run, spread over a demo's full budget: every phase runs in seconds (a
 * 32-wide 1-layer model, 8 demonstrations, 4 warm-start steps, 2 iterations of 2 groups of 2,
 * 4 held-out episodes after every iteration).
 */
/**
 * What the three demos' full budgets share: the tiny decoder (96 wide, 3 layers, 4 heads), SFT
 * batches of 32 at 3e-3 with no stopping rule (`sftStopLoss` 0; a rule averages 50 steps), GiGPO on 32 groups of 4 with mini-batches of 64 at 2e-4 and no KL,
 * rollouts and validation at temperature 0.4, 480 held-out tasks. Each demo adds its own episode
 * counts, steps, turns and env settings.
 */
export const CPU_RECIPE = {
  hidden: 96,
  layers: 3,
  heads: 4,
  sftBatch: 32,
  sftLearningRate: 3e-3,
  sftStopLoss: 0,
  sftStopWindow: SFT_STOP_WINDOW,
  groups: 32,
  groupSize: 4,
  valEpisodes: 480,
  learningRate: 2e-4,
  miniBatchSize: 64,
  temperature: 0.4,
  valTemperature: 0.4,
  klLossCoef: 0,
} as const;

export const SMOKE_SIZES = {
  hidden: 32,
  layers: 1,
  demoEpisodes: 8,
  sftSteps: 4,
  sftBatch: 8,
  iterations: 2,
  groups: 2,
  groupSize: 2,
  valEpisodes: 4,
  valEvery: 1,
} as const;
