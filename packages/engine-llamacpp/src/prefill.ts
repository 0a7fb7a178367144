/**
 * Carries out a {@link planPrefixReuse} plan on node-llama-cpp's context sequences: keeps or
 * copies the cached prefixes the plan found, evaluates the rest of each prompt but its last token,
 * and counts the prompt tokens evaluated, reused and copied.
 */
import type { LlamaContextSequence, Token } from 'node-llama-cpp';
import { planPrefixReuse } from './prefix.ts';

/** Prompt tokens a `LlamaCppEngine` evaluated, and those it reused from its KV cache. */
export interface PromptTokenCounts {
  /** Prompt tokens run through the model. */
  evaluated: number;
  /** Prompt tokens found in a sequence's cache already (its own, or copied from another). */
  reused: number;
  /** KV cache copies between sequences. */
  copies: number;
}

/** node-llama-cpp's sequence-to-sequence cache copy (internal in 3.22, used by its own decision contexts). */
interface CopyableSequence {
  _copyStateFromOtherSequence?(
    other: LlamaContextSequence,
    upToTokenIndex: number,
  ): Promise<boolean>;
}

/**
 * Evaluates all but the last token of each prompt on the sequences `planPrefixReuse` gives them,
 * keeping or copying the cached prefixes it found; returns each prompt's sequence and the number of
 * its tokens the sequence then holds. A copy node-llama-cpp cannot make falls back to evaluating
 * the whole prefix.
 */
export async function prefillSharedPrefixes(
  prompts: readonly (readonly number[])[],
  sequences: readonly LlamaContextSequence[],
  counts: PromptTokenCounts,
): Promise<{ sequence: readonly number[]; tokens: readonly number[] }> {
  const plan = planPrefixReuse(
    prompts,
    sequences.map((s) => s.contextTokens as readonly number[]),
  );
  const tokens = prompts.map((p) => p.length - 1);
  const rounds = Math.max(0, ...plan.round);
  for (let round = 0; round <= rounds; round++) {
    await Promise.all(
      prompts.map(async (prompt, i) => {
        if (plan.round[i] !== round) return;
        const sequence = sequences[plan.sequence[i] as number] as LlamaContextSequence;
        const parent = plan.parent[i] as number;
        let from = plan.reused[i] as number;
        if (parent === -1) {
          if (sequence.nextTokenIndex > from)
            await sequence.eraseContextTokenRanges([{ start: from, end: sequence.nextTokenIndex }]);
        } else {
          const source = sequences[plan.sequence[parent] as number] as LlamaContextSequence;
          const copy = (sequence as unknown as CopyableSequence)._copyStateFromOtherSequence;
          const copied =
            copy !== undefined && (await copy.call(sequence, source, from).catch(() => false));
          if (copied) counts.copies++;
          else {
            await sequence.clearHistory();
            from = 0;
          }
        }
        if (sequence.nextTokenIndex !== from) {
          await sequence.clearHistory();
          from = 0;
        }
        counts.reused += from;
        counts.evaluated += prompt.length - from;
        if (prompt.length - 1 > from)
          await sequence.evaluateWithoutGeneratingNewTokens(
            prompt.slice(from, prompt.length - 1) as Token[],
          );
      }),
    );
  }
  return { sequence: plan.sequence, tokens };
}
