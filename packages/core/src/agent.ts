/**
 * The text-level agent contract: what a rollout loop asks of a model when it only needs text.
 * A batch of rendered prompts in, one response per prompt out. A token-in / token-out `Policy`
 * becomes one through its tokenizer's chat template (the runner's `policyAgent`); a remote
 * endpoint (`@agentrl/model-openai`) is one directly. It lives in core so that model packages
 * can implement it without depending on the runner.
 */

/** One response of a {@link RolloutAgent}. */
export interface AgentResponse {
  /** Decoded response text (special tokens skipped), what the action parser reads. */
  readonly text: string;
  /** Prompt token ids the response was generated from (empty for text-only agents). */
  readonly promptTokenIds: readonly number[];
  /** Response token ids as sampled (empty for text-only agents). */
  readonly responseTokenIds: readonly number[];
  /** Sampling log-probs of the response tokens (empty for text-only agents). */
  readonly responseLogProbs: readonly number[];
  /** The prompt was cut on the left to fit a prompt-length limit. */
  readonly promptTruncated?: boolean;
}

/**
 * Generates one response per prompt text, in prompt order; `seed` makes the batch reproducible
 * (an agent derives one seed per prompt from it).
 */
export interface RolloutAgent {
  act(prompts: readonly string[], options: { seed: number }): Promise<AgentResponse[]>;
}
