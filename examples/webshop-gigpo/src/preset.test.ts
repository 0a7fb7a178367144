/**
 * The runner's `webshop-cpu` preset is this demo's recipe through the CLI: the same catalogue
 * size, model, warm start, RL budget and sampling as {@link FULL_BUDGET}. The runner cannot read
 * the demo (examples depend on it, not the other way), so this test holds the two together: a
 * change of the demo's default fails here until the preset follows. Only the response length
 * differs: the preset counts tokens of its own vocabulary (`<think></think><action>…</action>`,
 * ASINs whole), the demo of its word tokenizer.
 */
import { budgetFields, parsedPreset, presetBudget } from '@agentrl/example-demo-kit';
import { describe, expect, it } from 'vitest';
import { FULL_BUDGET } from './demo.ts';

describe("the runner's webshop-cpu preset", () => {
  it("runs the demo's default budget: catalogue, model, warm start, iterations, groups and temperatures", () => {
    const c = parsedPreset('webshop-cpu');
    const b = FULL_BUDGET;
    expect(c.env.options).toMatchObject({
      catalogue: {
        kind: 'synthetic',
        size: b.catalogue,
        optionGroups: b.optionGroups,
        optionValues: b.optionValues,
      },
      maxSteps: b.maxTurns,
    });
    expect(presetBudget(c)).toEqual(budgetFields(b));
    expect(c.algorithm.options).toMatchObject({ mode: 'mean_std_norm', gamma: 0.95 });
  });
});
