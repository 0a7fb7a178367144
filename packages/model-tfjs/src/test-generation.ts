/**
 * A check shared by the generation tests: log-probs that KV-cache generation reports for sampled
 * tokens equal those the full forward pass gives the same sequences.
 */
import { expect } from 'vitest';
import type { CausalLM } from './model/causal-lm.ts';

/** Samples `newTokens` per prompt (T = 1, `seed`) and compares with a full forward pass, 1e-4. */
export async function expectCacheMatchesFullForward(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  newTokens: number,
  seed: number,
): Promise<void> {
  const out = await model.generate(prompts, {
    maxNewTokens: newTokens,
    temperature: 1,
    seed,
    stopTokenIds: [],
  });
  const full = await model.tokenLogProbs(
    prompts.map((p, b) => [...p, ...(out.tokenIds[b] as number[])]),
  );
  prompts.forEach((p, b) => {
    const tail = (full[b] as number[]).slice(p.length - 1);
    expect(tail).toHaveLength(newTokens);
    tail.forEach((v, i) => {
      expect(Math.abs(v - ((out.logProbs[b] as number[])[i] as number))).toBeLessThan(1e-4);
    });
  });
}
