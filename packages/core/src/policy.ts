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
  /** Writes weights and optimizer state into the (existing, empty) folder `dir`. */
  save(dir: string): Promise<void>;
  /** Restores what {@link TrainablePolicy.save} wrote. */
  load(dir: string): Promise<void>;
}
