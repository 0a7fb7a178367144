import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAgentRLError } from '@agentrl/core';
import { formatInformation, generateSearchKb, searchParser } from '@agentrl/env-search';
import { WordTokenizer } from '@agentrl/example-demo-kit';
import fc from 'fast-check';
import { describe, expect, it, onTestFinished } from 'vitest';
import { expertResponse, passagesOf } from './compact-prompt.ts';
import { runDemo, SMOKE_BUDGET } from './demo.ts';
import { envSpec, SEARCH_WORDS, trainingParts } from './setup.ts';

describe('the search-gigpo demo', () => {
  it('runs every phase on a smoke budget and ends with a report, three headline rows and exact match per data source', async () => {
    const runDir = mkdtempSync(join(tmpdir(), 'agentrl-search-demo-'));
    onTestFinished(() => rmSync(runDir, { recursive: true, force: true }));
    const sink = { write: () => true, isTTY: false } as unknown as NodeJS.WriteStream;
    const result = await runDemo({ runDir, budget: SMOKE_BUDGET, progress: sink });
    expect(result.headline.slice(0, 3).map((r) => r.episodes)).toEqual([4, 4, 4]);
    expect(result.bySource).toHaveLength(3);
    for (const { sources } of result.bySource) {
      const total = Object.values(sources).reduce((n, s) => n + s.episodes, 0);
      expect(total).toBe(4);
      for (const source of Object.keys(sources)) expect(source).toMatch(/^synthetic-/);
    }
    const headline = JSON.parse(readFileSync(join(runDir, 'headline.json'), 'utf8')) as {
      label: string;
    }[];
    expect(headline.some((r) => r.label.startsWith('EM synthetic-'))).toBe(true);
    expect(existsSync(result.reportPath)).toBe(true);
    expect(readFileSync(result.reportPath, 'utf8')).toContain('after GiGPO');
    expect(readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').length).toBe(3);
  }, 0);

  it('decodes an expert response back to the action the parser reads as valid', () => {
    const tokenizer = WordTokenizer.fromCorpus(['kelmo was born in zorvan .'], SEARCH_WORDS);
    for (const action of ['<search>kelmo</search>', '<answer>zorvan</answer>']) {
      const ids = tokenizer.encode(expertResponse(action));
      expect(searchParser(tokenizer.decode(ids, { skipSpecialTokens: true }))).toEqual({
        action,
        valid: true,
      });
    }
  });

  it('shows the passages of an information text as plain sentences', () => {
    const information = formatInformation([
      '"kelmo"\nkelmo was born in zorvan .',
      '"zorvan"\nzorvan is a town in the realm of ostra .',
    ]);
    expect(passagesOf(information)).toBe(
      'kelmo was born in zorvan . | zorvan is a town in the realm of ostra .',
    );
  });

  it('splits the training questions into disjoint parts for the warm start and RL, every question in one, demoShare of them in the first', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50 }),
        fc.double({ min: 0.05, max: 0.95, noNaN: true }),
        (seed, share) => {
          const n = generateSearchKb({ seed }).train.length;
          const { demo, rl } = trainingParts(seed, share);
          expect(demo.length).toBe(Math.round(n * share));
          expect([...demo, ...rl].sort((a, b) => a - b)).toEqual(
            Array.from({ length: n }, (_, i) => i),
          );
        },
      ),
      { numRuns: 20 },
    );
    const all = trainingParts(3, 1);
    expect(all.demo).toEqual(all.rl);
    expect(all.demo).toHaveLength(generateSearchKb({ seed: 3 }).train.length);
    for (const share of [0, 1.5, Number.NaN]) {
      let refusal: unknown;
      try {
        trainingParts(3, share);
      } catch (error) {
        refusal = error;
      }
      expect(isAgentRLError(refusal, 'BAD_CONFIG')).toBe(true);
      expect(String((refusal as Error).message)).toMatch(/^demoShare is /);
    }
  });

  it('asks the demonstrations in turn and the rollouts by a seeded draw, only from their own part', () => {
    const { demo, rl } = trainingParts(5, 0.5);
    const budget = { maxTurns: 4, topK: 1 };
    const demoTask = envSpec(5, 'train', budget, { indices: demo, order: 'cycle' }).task;
    const rlTask = envSpec(5, 'train', budget, { indices: rl, order: 'draw' }).task;
    expect(Array.from({ length: demo.length + 2 }, (_, e) => demoTask?.(e, 0))).toEqual([
      ...demo,
      demo[0],
      demo[1],
    ]);
    const drawn = Array.from({ length: 200 }, (_, g) => rlTask?.(g % 32, Math.floor(g / 32)));
    for (const q of drawn) expect(rl).toContain(q);
    expect(new Set(drawn).size).toBeGreaterThan(100);
    expect(drawn).toEqual(
      Array.from({ length: 200 }, (_, g) => rlTask?.(g % 32, Math.floor(g / 32))),
    );
    expect(envSpec(5, 'train', budget).task).toBeUndefined();
  });
});
