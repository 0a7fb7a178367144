import { createCausalLM } from '@agentrl/model-tfjs';
import { describe, expect, it } from 'vitest';
import { createRandomModel, parameterShapes, tiledNormal } from './model-factory.ts';
import { workloads } from './shapes.ts';

const configs = [...new Map(workloads('tiny').map((w) => [w.model, w.config])).values()];

describe('the fast random-weight models', () => {
  it.each(configs.map((c) => [`hidden ${c.hidden_size}, ${c.num_key_value_heads} kv heads`, c]))(
    'have createCausalLM parameter names and shapes (%s)',
    async (_, config) => {
      const exact = await createCausalLM(config, { seed: 1, backend: 'cpu' });
      const fast = await createRandomModel(config, { seed: 1, backend: 'cpu' });
      try {
        expect(fast.parameterNames()).toEqual(exact.parameterNames());
        for (const name of exact.parameterNames()) {
          expect(fast.parameterStorage(name).shape, name).toEqual(
            exact.parameterStorage(name).shape,
          );
        }
        expect(fast.numParameters()).toBe(exact.numParameters());
        const logProbs = await fast.tokenLogProbs([[1, 2, 3, 4]]);
        for (const lp of logProbs[0] ?? []) expect(Number.isFinite(lp)).toBe(true);
      } finally {
        exact.dispose();
        fast.dispose();
      }
    },
  );

  it("map the Qwen2.5 shapes onto every layer (the released models' parameter counts)", async () => {
    const count = async (name: string) => {
      const w = workloads('full').find((x) => x.name === name);
      if (w === undefined) throw new Error(`no workload ${name}`);
      const shapes = await parameterShapes(w.config, 'cpu');
      return {
        shapes,
        n: [...shapes.values()].reduce((a, s) => a + s.reduce((x, y) => x * y, 1), 0),
      };
    };
    expect((await count('qwen2.5-0.5b-train')).n).toBe(494_032_768);
    const large = await count('qwen2.5-1.5b-train');
    expect(large.n).toBe(1_543_714_304);
    expect(large.shapes.get('model.layers.27.self_attn.k_proj.weight')).toEqual([1536, 256]);
  });

  it('repeat one seeded tile', () => {
    const a = tiledNormal(200_000, 's');
    expect(a[65_536 + 7]).toBe(a[7]);
    expect(a[199_999]).toBe(a[199_999 - 3 * 65_536]);
    expect(tiledNormal(10, 's')).toEqual(a.subarray(0, 10));
  });
});
