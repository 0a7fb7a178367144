/**
 * The runner's `alfworld-cpu` preset is this demo's recipe through the CLI: the same households,
 * prompt, model, warm start, RL budget and sampling as {@link FULL_BUDGET}. The runner cannot read
 * the demo (examples depend on it, not the other way), so this test holds the two together: a
 * change of the demo's default fails here until the preset follows. The vocabularies differ in
 * kind (this demo's `WordTokenizer` and the preset's `vocabularyFrom: expert`, whose prompts carry
 * the chat template's role names), and so does the response length in tokens.
 */
import { budgetFields, parsedPreset, presetBudget } from '@agentrl/example-demo-kit';
import { describe, expect, it } from 'vitest';
import { expertResponse } from './compact-prompt.ts';
import { FULL_BUDGET } from './demo.ts';
import { GENERATED } from './setup.ts';

describe("the runner's alfworld-cpu preset", () => {
  it("runs the demo's default budget: households, prompt, model, warm start, iterations, groups and temperatures", () => {
    const c = parsedPreset('alfworld-cpu');
    const b = FULL_BUDGET;
    expect(c.env.options).toEqual({ ...GENERATED, maxSteps: b.maxTurns });
    expect(c.env.valOptions).toEqual({});
    expect(c.env.prompt).toBe('compact');
    expect(presetBudget(c)).toEqual(budgetFields(b));
    expect(c.sft.responseTemplate.replace('{action}', 'look')).toBe(expertResponse('look'));
    expect(c.training.dropZeroAdvantageRows).toBe(true);
    expect(c.algorithm).toEqual({
      name: 'gigpo',
      options: { mode: 'mean_std_norm', gamma: 0.95, invalidActionPenalty: 0 },
    });
    expect(c.warmStart.source).toBe('expert');
    expect(c.finalEval.enabled).toBe(true);
  });
});
