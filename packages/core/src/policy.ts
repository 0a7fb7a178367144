/**
 * The policy contract: batched, token-in / token-out. Decoded text is for display and parsing;
 * training uses the token ids and log-probs returned here, never a re-tokenization.
 */

/** How to sample a response. */
export interface SamplingOptions {
  /** Maximum number of new tokens per response. */
  readonly maxNewTokens: number;
  /** Softmax temperature; 0 means greedy. Default 1. */
  readonly temperature?: number;
  /** Nucleus sampling mass in (0, 1]; 1 disables. Default 1. */
  readonly topP?: number;
  /** Keep only the k most likely tokens; 0 disables. Default 0. */
  readonly topK?: number;
  /** Token ids that end a response (EOS included); the stop id is part of the response. */
  readonly stopTokenIds?: readonly number[];
  /** Seed of the sampling stream: the same seed and prompts give the same tokens. */
  readonly seed?: number;
}

/** Why a response ended. */
export type FinishReason = 'stop' | 'length';

/** What a policy returns for a batch of prompts, one entry per prompt, in order. */
export interface GenerationResult {
  /** The response token ids. */
  readonly tokenIds: number[][];
  /** log p(token) under the distribution that was sampled from, one per response token. */
  readonly logProbs: number[][];
  /** Why each response ended. */
  readonly finishReasons: FinishReason[];
}

/** A batched, token-in / token-out policy. */
export interface Policy {
  /** Generates one response per prompt. */
  generate(
    prompts: readonly (readonly number[])[],
    sampling: SamplingOptions,
  ): Promise<GenerationResult>;
}

/** Text ↔ token ids, with the chat template of the model. */
export interface Tokenizer {
  /** Token ids of `text`, without special tokens. */
  encode(text: string): number[];
  /** Text of `ids`; special tokens are dropped when `skipSpecialTokens` is true. */
  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean }): string;
  /** Prompt token ids for a chat: the messages rendered through the model's chat template. */
  applyChatTemplate(
    messages: readonly ChatMessage[],
    options?: { addGenerationPrompt?: boolean },
  ): number[];
  /** Id of the end-of-sequence token(s) that stop generation. */
  readonly eosTokenIds: readonly number[];
  /** Vocabulary size (embedding rows the model needs at least). */
  readonly vocabSize: number;
}

/** One chat message. */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** One PPO mini-batch, as plain data (rows = step samples). */
export interface TrainBatch {
  readonly promptTokenIds: readonly (readonly number[])[];
  readonly responseTokenIds: readonly (readonly number[])[];
  /** Sampling log-probs of the response tokens (the PPO "old" log-probs). */
  readonly oldLogProbs: readonly (readonly number[])[];
  /** One advantage per row, broadcast to the row's tokens by the model side. */
  readonly advantages: readonly number[];
  /**
   * One advantage per response token of each row (PPO with a critic: GAE's whitened advantages);
   * when present, the model side uses these instead of broadcasting `advantages`.
   */
  readonly tokenAdvantages?: readonly (readonly number[])[];
}

/** One supervised batch: prompt ids and the target response ids (EOS included). */
export interface SftBatch {
  readonly promptTokenIds: readonly (readonly number[])[];
  readonly responseTokenIds: readonly (readonly number[])[];
}

/** Per-token scores of response tokens under the current weights (one value per response token). */
export interface ResponseScores {
  /** Log-probs at the rollout temperature (comparable with the sampling log-probs). */
  readonly logProbs: readonly (readonly number[])[];
  /** Entropies (nats) of the full next-token distribution at the same positions, when known. */
  readonly entropies?: readonly (readonly number[])[];
}

/**
 * A policy a trainer can update: generation plus an update step and persistence. Metrics
 * returned by `trainStep` (loss, gradNorm before clipping, pgClipfrac, ppoKl, entropyLoss,
 * numTensors...) are averaged over mini-batches and logged by the trainer under `update/`.
 * Declared here, beside {@link Policy}, so that a model package implements it without depending
 * on the runner.
 */
export interface TrainablePolicy extends Policy {
  trainStep(batch: TrainBatch): Promise<Record<string, number>>;
  sftStep?(batch: SftBatch): Promise<Record<string, number>>;
  /**
   * Scores responses under the current weights. When present, the trainer scores the rows of each
   * update after it and logs how far the policy moved (`policy/…` metrics).
   */
  scoreResponses?(batch: SftBatch): Promise<ResponseScores>;
  /**
   * A critic (value model) for PPO with GAE: a separate copy of this policy's current weights with
   * a scalar value head and its own optimizer. A trainer calls it once, before the first update,
   * when its estimator needs a critic.
   */
  createCritic?(options: CriticOptions): Promise<Critic>;
  /** Writes weights and optimizer state into the (existing, empty) folder `dir`. */
  save(dir: string): Promise<void>;
  /** Restores what {@link TrainablePolicy.save} wrote. */
  load(dir: string): Promise<void>;
}

/** Settings of a critic's optimizer and loss (a run config's PPO options). */
export interface CriticOptions {
  readonly learningRate: number;
  /** AdamW decoupled weight decay. */
  readonly weightDecay: number;
  /** Global gradient-norm clip; a non-finite norm skips the step. */
  readonly maxGradNorm: number;
  /** Clip range c of the clipped value loss: predictions clipped to old value ± c. */
  readonly cliprangeValue: number;
  /** Rows per forward/backward pass (gradients accumulated). Default: all rows of a step. */
  readonly microBatchSize?: number;
  /**
   * Aggregation of the value loss (`token-mean`, `seq-mean-token-mean`, `seq-mean-token-sum`,
   * `seq-mean-token-sum-norm`). Default: the policy's own.
   */
  readonly lossAggMode?: string;
  /** Seed of the value head's initialisation. */
  readonly seed: number;
}

/** One critic mini-batch, as plain data (rows = step samples). */
export interface CriticTrainBatch extends SftBatch {
  /**
   * Per row, the positions the loss covers, in order from the state before the first response
   * token: the old values V (what the returns were computed with), the returns G and the mask.
   * A row has at most one more position than response tokens (the state after the last one).
   */
  readonly oldValues: readonly (readonly number[])[];
  readonly returns: readonly (readonly number[])[];
  readonly mask: readonly (readonly number[])[];
}

/**
 * A value model a trainer updates beside the policy (PPO with GAE). `values` gives, for each row
 * of L response tokens, L + 1 values: V of the state before each response token (read at the
 * position before it, the last prompt token for the first) and of the state after the last one.
 * `trainStep` takes one optimizer step on the clipped value loss; `save` / `load` persist the
 * weights and optimizer state in a folder of their own.
 */
export interface Critic {
  values(batch: SftBatch): Promise<number[][]>;
  trainStep(batch: CriticTrainBatch): Promise<Record<string, number>>;
  /** Writes weights and optimizer state into the (existing, empty) folder `dir`. */
  save(dir: string): Promise<void>;
  /** Restores what {@link Critic.save} wrote. */
  load(dir: string): Promise<void>;
  /** Frees what the critic holds (optional). */
  dispose?(): void;
}
