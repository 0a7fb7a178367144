/**
 * What the rollout loop asks of a model: a batch of rendered prompts in, one response per prompt
 * out (`RolloutAgent`, a contract of `@agentrl/core`). `policyAgent` wraps a token-in / token-out
 * `Policy` with its tokenizer's chat template (as verl-agent prompts: a single user message,
 * generation prompt added); `@agentrl/model-openai` sends the same message over HTTP.
 */
import type {
  AgentResponse,
  Policy,
  RolloutAgent,
  SamplingOptions,
  Tokenizer,
} from '@agentrl/core';

export type { AgentResponse, RolloutAgent };

/** Options of {@link policyAgent}. */
export interface PolicyAgentOptions {
  /** Sampling options; the seed is supplied per turn by the rollout loop. */
  readonly sampling: Omit<SamplingOptions, 'seed'>;
  /**
   * Longest prompt in tokens; longer prompts keep their last `maxPromptTokens` tokens and are
   * counted as truncated. Default: no limit.
   */
  readonly maxPromptTokens?: number;
}

/** What {@link rolloutAgentOptions} reads of a run's `rollout` settings. */
export interface RolloutSamplingSettings {
  readonly maxNewTokens: number;
  readonly topP: number;
  readonly topK: number;
  readonly maxPromptTokens?: number | undefined;
}

/**
 * The {@link PolicyAgentOptions} of a run's `rollout` settings at `temperature`: the rollout's
 * own for training rollouts, `validation.temperature` for held-out episodes and `agentrl eval`.
 */
export function rolloutAgentOptions(
  rollout: RolloutSamplingSettings,
  temperature: number,
): PolicyAgentOptions {
  return {
    sampling: {
      maxNewTokens: rollout.maxNewTokens,
      temperature,
      topP: rollout.topP,
      topK: rollout.topK,
    },
    ...(rollout.maxPromptTokens !== undefined ? { maxPromptTokens: rollout.maxPromptTokens } : {}),
  };
}

/** A {@link RolloutAgent} over a token-in / token-out policy and its tokenizer. */
export function policyAgent(
  policy: Policy,
  tokenizer: Tokenizer,
  options: PolicyAgentOptions,
): RolloutAgent {
  const stopTokenIds = options.sampling.stopTokenIds ?? tokenizer.eosTokenIds;
  return {
    async act(prompts, { seed }) {
      const truncated: boolean[] = [];
      const ids = prompts.map((content) => {
        const full = tokenizer.applyChatTemplate([{ role: 'user', content }], {
          addGenerationPrompt: true,
        });
        const max = options.maxPromptTokens;
        const cut = max !== undefined && full.length > max;
        truncated.push(cut);
        return cut ? full.slice(full.length - (max as number)) : full;
      });
      const result = await policy.generate(ids, { ...options.sampling, stopTokenIds, seed });
      return ids.map((promptTokenIds, i) => {
        const responseTokenIds = result.tokenIds[i] ?? [];
        return {
          text: tokenizer.decode(responseTokenIds, { skipSpecialTokens: true }),
          promptTokenIds,
          responseTokenIds,
          responseLogProbs: result.logProbs[i] ?? [],
          promptTruncated: truncated[i] ?? false,
        };
      });
    },
  };
}
