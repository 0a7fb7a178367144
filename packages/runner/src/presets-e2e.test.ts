/**
 * The `alfworld-cpu` preset end to end through the CLI entry, with a tiny budget: a fresh model
 * and word vocabulary over generated households, the expert warm start, GiGPO iterations,
 * checkpoints, the headline and the report, then
 * `sft` (expert warm start), `eval --checkpoint` and `report` on the same run folder.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshRunDir, readMetrics, runCli } from '../test/cli.ts';

const TINY = [
  '--set',
  'rollout.batchSize=4',
  '--set',
  'rollout.groupSize=2',
  '--set',
  'rollout.maxTurns=4',
  '--set',
  'validation.every=1',
  '--set',
  'validation.episodes=2',
  '--set',
  'model.options.architecture.vocabularyEpisodes=4',
  '--set',
  'model.options.architecture.hiddenSize=32',
  '--set',
  'model.options.architecture.layers=1',
];

describe('the alfworld-cpu preset through the CLI', () => {
  it('trains a fresh tiny model, then warm-starts, evaluates a checkpoint and reports', {
    timeout: 60_000,
  }, async () => {
    const runDir = freshRunDir('agentrl-preset-');
    const train = await runCli([
      'train',
      '--preset',
      'alfworld-cpu',
      '--run-dir',
      runDir,
      '--iterations',
      '2',
      ...TINY,
      // The preset's expert warm start, at a tiny budget.
      ...['--set', 'sft.episodes=4', '--set', 'sft.steps=2', '--set', 'sft.batchSize=4'],
    ]);
    expect(train.code, train.err).toBe(0);
    expect(train.err).toMatch(/fresh model written to .*model-init/);
    expect(train.out).toMatch(/report: .*report\.html/);
    expect(train.out).toMatch(/headline: .*headline\.json/);

    const metrics = readMetrics(runDir);
    expect(metrics.length).toBeGreaterThanOrEqual(2);
    expect(metrics.some((m) => m['val/success'] !== undefined)).toBe(true);
    expect(readFileSync(join(runDir, 'report.html'), 'utf8')).toMatch(/<html/i);
    const resolved = JSON.parse(readFileSync(join(runDir, 'config.resolved.json'), 'utf8'));
    expect(resolved.config.env.options.source).toBe('generated');
    expect(resolved.config.training.iterations).toBe(2);
    // The model module's facts are kept with the run: backend (wasm here) and parameter count.
    expect(resolved.model.backend).toBe('wasm');
    expect(resolved.model.parameters).toBeGreaterThan(0);
    for (const f of ['config.json', 'model.safetensors', 'tokenizer.json'])
      expect(existsSync(join(runDir, 'model-init', f)), f).toBe(true);
    const checkpoints = readdirSync(join(runDir, 'checkpoints')).filter((d) =>
      d.startsWith('iter-'),
    );
    expect(checkpoints.length).toBeGreaterThan(0);
    const checkpoint = join(runDir, 'checkpoints', checkpoints.sort().at(-1) as string);
    expect(existsSync(join(checkpoint, 'model', 'model.safetensors'))).toBe(true);

    const sft = await runCli([
      'sft',
      '--preset',
      'alfworld-cpu',
      '--run-dir',
      runDir,
      '--set',
      'sft.episodes=2',
      '--set',
      'sft.steps=2',
      '--set',
      'sft.batchSize=4',
      ...TINY,
    ]);
    expect(sft.code, sft.err).toBe(0);
    expect(sft.err).toMatch(/expert won \d+\/2 episodes/);
    expect(existsSync(join(runDir, 'sft', 'model', 'model.safetensors'))).toBe(true);

    const evaluation = await runCli([
      'eval',
      '--preset',
      'alfworld-cpu',
      '--run-dir',
      runDir,
      '--checkpoint',
      checkpoint,
      '--episodes',
      '2',
      ...TINY,
    ]);
    expect(evaluation.code, evaluation.err).toBe(0);
    expect(evaluation.out).toMatch(/success \d\/2 = /);
    expect(JSON.parse(readFileSync(join(runDir, 'eval.json'), 'utf8')).success.n).toBe(2);

    const report = await runCli(['report', runDir]);
    expect(report.code, report.err).toBe(0);
  });
});
