import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  type ActionParser,
  EpisodeLifecycle,
  type Observation,
  type StepResult,
  type TextEnv,
} from '@agentrl/core';
import { CORRIDOR_ENV_ID, corridorParser, createCorridorEnv } from '@agentrl/core/test';
import { describe, expect, it } from 'vitest';
import { checkEnv, ENV_RULES, type EnvRule } from './check.ts';

/** One defect per rule; {@link toyEnv} has none of them unless asked. */
type Defect =
  | 'different-starts'
  | 'never-ends'
  | 'steps-after-end'
  | 'close-twice-throws'
  | 'anchors-drift'
  | 'numeric-anchor'
  | 'huge-text'
  | 'nan-reward'
  | 'won-at-reset';

/** Resets of `different-starts` toys so far (what makes their first observations differ). */
let toyStarts = 0;
/** Anchors handed out by `anchors-drift` toys so far (a counter shared across instances). */
let driftingAnchor = 0;

/**
 * A three-cell track written for this test: `forward` moves one cell, the last cell wins, five
 * steps truncate. `defect` breaks exactly one rule of the kit.
 */
function toyEnv(defect?: Defect): TextEnv {
  const lifecycle = new EpisodeLifecycle('test/toy-v1');
  let cell = 0;
  let steps = 0;
  let ended = false;
  let closes = 0;
  const observe = (): Observation => {
    const text = `You are in cell ${cell} of 3.`;
    let anchor: string = text;
    if (defect === 'anchors-drift' && steps > 0) anchor = `${text} #${driftingAnchor++}`;
    if (defect === 'numeric-anchor' && steps > 0) anchor = cell as unknown as string;
    return {
      text: defect === 'huge-text' && steps > 0 ? text.repeat(2_000) : text,
      anchor,
      admissibleActions: ['forward', 'wait'],
    };
  };
  const env: TextEnv = {
    id: 'test/toy-v1',
    async reset({ seed }) {
      lifecycle.beginReset();
      cell = 0;
      steps = 0;
      ended = false;
      lifecycle.endReset();
      const observation = observe();
      if (defect === 'different-starts') {
        toyStarts++;
        return {
          observation: { ...observation, text: `${observation.text} (start ${toyStarts})` },
          info: { won: false, seed },
        };
      }
      return { observation, info: { won: defect === 'won-at-reset', seed } };
    },
    async step(action) {
      if (defect === 'steps-after-end' && ended) {
        return {
          observation: observe(),
          reward: 0,
          terminated: true,
          truncated: false,
          info: { won: true },
        };
      }
      lifecycle.beginStep();
      steps++;
      if (action === 'forward') cell++;
      if (defect === 'never-ends') cell = Math.min(cell, 1);
      const won = cell >= 2;
      const result: StepResult = {
        observation: observe(),
        reward: defect === 'nan-reward' ? Number.NaN : won ? 10 : 0,
        terminated: defect === 'never-ends' ? false : won,
        truncated: defect === 'never-ends' ? false : !won && steps >= 5,
        info: { won },
      };
      ended = result.terminated || result.truncated;
      lifecycle.endStep(result);
      return result;
    },
    async close() {
      closes++;
      if (defect === 'close-twice-throws' && closes > 1) throw new Error('already closed');
      lifecycle.close();
    },
    async [Symbol.asyncDispose]() {
      await env.close();
    },
  };
  return env;
}

const toyParser: ActionParser = (text) => ({ action: text.trim(), valid: text.trim() !== '' });
const throwingParser: ActionParser = (text) => {
  if (text.length === 0) throw new Error('empty model output');
  return { action: text, valid: true };
};

/** For each rule, a broken environment (or parser) that must make the kit report that rule. */
const BROKEN: Record<EnvRule, { defect?: Defect; parser?: ActionParser; what: string }> = {
  'identical-starts': { defect: 'different-starts', what: 'the first observation counts resets' },
  'episode-ends': { defect: 'never-ends', what: 'no step limit and no reachable goal' },
  'finished-rejects-step': {
    defect: 'steps-after-end',
    what: 'step() after the end returns a result',
  },
  close: { defect: 'close-twice-throws', what: 'a second close() throws' },
  'stable-anchors': { defect: 'anchors-drift', what: 'anchors carry a running counter' },
  'observation-shape': { defect: 'numeric-anchor', what: 'the anchor is a number after a step' },
  'observation-size': { defect: 'huge-text', what: 'observations of 56,000 characters' },
  'step-result-shape': { defect: 'nan-reward', what: 'the reward is NaN' },
  'not-won-after-reset': { defect: 'won-at-reset', what: 'info.won is true right after reset' },
  'parser-never-throws': { parser: throwingParser, what: 'the parser throws on empty output' },
};

describe('checkEnv', () => {
  it('finds nothing wrong with a conforming environment', async () => {
    expect(await checkEnv(() => toyEnv(), { name: 'toy', parser: toyParser })).toEqual([]);
    const corridor = await checkEnv(() => createCorridorEnv({ length: 4, maxSteps: 12 }), {
      name: CORRIDOR_ENV_ID,
      parser: corridorParser,
      resets: [{ seed: 0 }, { seed: 3, task: 5 }],
      parserFuzzRuns: 500,
    });
    expect(corridor).toEqual([]);
  });

  it('has a broken environment below for every rule it checks', () => {
    expect(Object.keys(BROKEN).sort()).toEqual([...ENV_RULES].sort());
  });

  for (const rule of ENV_RULES) {
    const broken = BROKEN[rule];
    it(`rejects an environment that breaks ${rule} (${broken.what})`, async () => {
      const findings = await checkEnv(() => toyEnv(broken.defect), {
        name: `toy with ${rule} broken`,
        parser: broken.parser ?? toyParser,
        parserFuzzRuns: 200,
      });
      const found = findings.find((f) => f.rule === rule);
      expect(found, JSON.stringify(findings)).toBeDefined();
      expect(found?.message.length).toBeGreaterThan(10);
      const only = await checkEnv(() => toyEnv(broken.defect), {
        name: `toy with ${rule} broken`,
        parser: broken.parser ?? toyParser,
        parserFuzzRuns: 200,
        rules: [rule],
      });
      expect(only.map((f) => f.rule)).toEqual([rule]);
    });
  }

  it('reports each broken rule once, with what it saw', async () => {
    const findings = await checkEnv(() => toyEnv('nan-reward'), {
      parser: toyParser,
      parserFuzzRuns: 10,
    });
    expect(findings).toEqual([
      {
        rule: 'step-result-shape',
        message: expect.stringMatching(
          /step 1 \("(forward|wait)"\): reward is NaN, not a finite number/,
        ),
      },
    ]);
  });

  it('runs in plain Node, without vitest, through the ./check entry', () => {
    const script = `
      import { corridorParser, createCorridorEnv } from '@agentrl/core/test';
      import { checkEnv } from '@agentrl/env-conformance/check';
      const findings = await checkEnv(() => createCorridorEnv({ length: 3, maxSteps: 8 }), {
        parser: corridorParser,
        parserFuzzRuns: 50,
      });
      process.stdout.write(JSON.stringify(findings));
    `;
    const r = spawnSync(
      process.execPath,
      ['--conditions=@agentrl/source', '--input-type=module', '-e', script],
      { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
  });
});
