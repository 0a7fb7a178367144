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
