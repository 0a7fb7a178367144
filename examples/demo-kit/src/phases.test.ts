import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConsoleProgress } from '@agentrl/runner';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CPU_RECIPE, createTinyPolicy, SMOKE_SIZES } from './model.ts';
import { type DemoBudgetBase, warmStart } from './phases.ts';
import { WordTokenizer } from './word-tokenizer.ts';

const STYLE = { tags: ['action'], glueBefore: [], glueAfter: [] };
const DEMONSTRATIONS = [
  { prompt: 'you are in the hall . go where ?', response: '<action> north </action>' },
  { prompt: 'you are in the yard . go where ?', response: '<action> south </action>' },
];

/** A smoke-sized budget with `fields` over it. */
const budget = (fields: Partial<DemoBudgetBase>): DemoBudgetBase => ({
  ...CPU_RECIPE,
  ...SMOKE_SIZES,
  name: 'test',
  maxTurns: 1,
  sftSteps: 12,
  ...fields,
});

/** The warm start of a fresh tiny model on the two demonstrations, and its `sft-loss.json`. */
async function warmStartOf(b: DemoBudgetBase) {
  const runDir = mkdtempSync(join(tmpdir(), 'agentrl-demo-kit-warm-'));
  onTestFinished(() => rmSync(runDir, { recursive: true, force: true }));
  const tokenizer = WordTokenizer.fromCorpus(
    DEMONSTRATIONS.flatMap((d) => [d.prompt, d.response]),
    STYLE,
  );
  const { policy } = await createTinyPolicy(tokenizer, b, 3, 32);
  const sink = { write: () => true, isTTY: false } as unknown as NodeJS.WriteStream;
  const result = await warmStart({
    policy,
    tokenizer,
    demonstrations: DEMONSTRATIONS,
    budget: b,
    seed: 3,
    runDir,
    progress: createConsoleProgress(1, sink),
  });
  const losses = JSON.parse(readFileSync(join(runDir, 'sft-loss.json'), 'utf8')) as number[];
  return { result, losses };
}

describe('the warm start', () => {
  it('takes every step of sftSteps without a stopping rule (sftStopLoss 0)', async () => {
    const { result, losses } = await warmStartOf(budget({ sftStopLoss: 0 }));
    expect(result.steps).toBe(12);
    expect(result.stopped).toBe(false);
    expect(losses).toHaveLength(12);
  }, 0);

  it('stops after sftStopWindow steps once their mean loss is at most sftStopLoss, and reports that mean', async () => {
    const { result, losses } = await warmStartOf(budget({ sftStopLoss: 1e6, sftStopWindow: 3 }));
    expect(result).toMatchObject({ steps: 3, stopped: true });
    expect(losses).toHaveLength(3);
    expect(result.meanLoss).toBeCloseTo(losses.reduce((a, b) => a + b, 0) / 3, 10);
  }, 0);
});
