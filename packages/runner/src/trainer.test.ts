import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { corridorSpec, meanBaselineEstimator } from '../test/helpers.ts';
import { TabularPolicy, tokenizer } from '../test/tabular-policy.ts';
import { tempDir } from '../test/temp-dir.ts';
import type { TrainerSettingsInput } from './config.ts';
import { Trainer, type TrainerEvent, type TrainerOptions } from './trainer.ts';

/** The test's options; `training` and `validation` overrides merge into the test's sections. */
function options(
  runDir: string,
  over: Omit<Partial<TrainerOptions>, 'training' | 'validation'> & {
    training?: TrainerSettingsInput['training'];
    validation?: TrainerSettingsInput['validation'];
  } = {},
): TrainerOptions {
  return {
    policy: new TabularPolicy(2),
    tokenizer,
    trainEnv: corridorSpec(),
    estimator: meanBaselineEstimator,
    runDir,
    seed: 3,
    rollout: { batchSize: 16, groupSize: 4, maxTurns: 8, maxNewTokens: 64 },
    ...over,
    training: { iterations: 6, miniBatchSize: 32, ...over.training },
    validation: { episodes: 16, every: 3, ...over.validation },
  };
}

function readMetrics(runDir: string): Record<string, number>[] {
  return readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>);
}

describe('Trainer', () => {
  it('trains the tabular policy to solve the corridor and writes metrics, samples and checkpoints', async () => {
    const runDir = tempDir('agentrl-trainer-');
    const events: TrainerEvent['type'][] = [];
    const trainer = new Trainer(
      options(runDir, { training: { iterations: 8 }, onEvent: (e) => events.push(e.type) }),
    );
    const summary = await trainer.run();
    const metrics = readMetrics(runDir);
    expect(metrics.map((m) => m.iteration)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    const first = metrics[0] as Record<string, number>;
    const last = metrics.at(-1) as Record<string, number>;
    expect(last.final).toBe(1);
    expect(last['val/success']).toBeGreaterThan((first['val/success'] as number) + 0.2);
    expect(summary.finalMetrics?.['val/success']).toBe(last['val/success']);
    for (const key of [
      'train/success',
      'train/validActionRatio',
      'stepGroups/sizeMean',
      'update/loss',
      'time/update',
      'time/rollout',
      'train/negLogProb',
      'update/keptFraction',
      'update/optimizerSteps',
      'policy/klBeforeAfter',
      'policy/absDeltaLogProb',
      'policy/entropy',
    ])
      expect(first[key]).toBeTypeOf('number');
    // Updates with signal move the policy on the rows they trained on.
    const moved = metrics.filter((m) => (m['policy/absDeltaLogProb'] ?? 0) > 0);
    expect(moved.length).toBeGreaterThan(0);
    for (const m of metrics.filter((r) => r.final !== 1))
      expect(m['update/optimizerSteps']).toBe(m['update/miniBatches']);
    expect(readdirSync(join(runDir, 'checkpoints')).sort()).toEqual([
      'iter-000007',
      'iter-000008',
      'latest.json',
    ]);
    expect(readdirSync(join(runDir, 'samples'))).toContain('val-0.json');
    expect(events).toContain('checkpoint');
  });

  it('resumes from a checkpoint to the same metrics as an uninterrupted run', async () => {
    const full = tempDir('agentrl-full-');
    await new Trainer(options(full)).run();
    const cut = tempDir('agentrl-cut-');
    // Stop after 4 iterations (checkpoint at 4), then resume to 6 with a fresh policy object.
    await new Trainer(options(cut, { training: { iterations: 4 } })).run();
    await new Trainer(options(cut)).run({ resume: true });
    const strip = (m: Record<string, number>) =>
      Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/')));
    const a = readMetrics(full).map(strip);
    const b = readMetrics(cut)
      .filter((m) => !(m.iteration === 4 && m.final === 1))
      .map(strip);
    expect(b).toEqual(a);
  });

  it('rejects a resume with another seed, naming the seed to use', async () => {
    const runDir = tempDir('agentrl-seed-');
    await new Trainer(
      options(runDir, { training: { iterations: 1 }, validation: { every: 0 } }),
    ).run();
    await expect(new Trainer(options(runDir, { seed: 4 })).run({ resume: true })).rejects.toThrow(
      /--seed 3/,
    );
  });

  it('keeps only groups with differing rewards under dynamic sampling', async () => {
    const runDir = tempDir('agentrl-dyn-');
    await new Trainer(
      options(runDir, {
        training: { iterations: 1, dynamicSampling: { enabled: true, maxTries: 3 } },
        validation: { every: 0 },
      }),
    ).run();
    const [m] = readMetrics(runDir);
    expect(m?.['dynamicSampling/tries']).toBeGreaterThanOrEqual(1);
    expect(m?.['dynamicSampling/tries']).toBeLessThanOrEqual(3);
  });

  it('rejects a key it does not take, naming the section a flat setting belongs to', () => {
    const runDir = tempDir('agentrl-keys-');
    const flat = { ...options(runDir), iterations: 8 } as TrainerOptions;
    expect(() => new Trainer(flat)).toThrow(
      /unknown key "iterations" in the trainer options: it is a setting of the training section/,
    );
    const typo = { ...options(runDir), tokeniser: tokenizer } as TrainerOptions;
    expect(() => new Trainer(typo)).toThrow(
      /unknown key "tokeniser" in the trainer options: .* did you mean "tokenizer"\?/,
    );
    expect(() => new Trainer(options(runDir, { training: { iteration: 8 } as never }))).toThrow(
      /unknown key "training\.iteration": .* did you mean "iterations"\?/,
    );
  });
});
