import { describe, expect, expectTypeOf, it } from 'vitest';
import type { AgentResponse, RolloutAgent } from './index.ts';

describe('RolloutAgent', () => {
  it('is met by a text-only agent that answers each prompt in order', async () => {
    const echo: RolloutAgent = {
      act: async (prompts, { seed }) =>
        prompts.map((p, i) => ({
          text: `${p}#${seed + i}`,
          promptTokenIds: [],
          responseTokenIds: [],
          responseLogProbs: [],
        })),
    };
    const responses = await echo.act(['a', 'b'], { seed: 7 });
    expect(responses.map((r) => r.text)).toEqual(['a#7', 'b#8']);
    expectTypeOf(responses).toEqualTypeOf<AgentResponse[]>();
    expectTypeOf<AgentResponse['promptTruncated']>().toEqualTypeOf<boolean | undefined>();
  });
});
