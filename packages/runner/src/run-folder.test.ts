import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { alfworldTrain, corridorConfig, readMetrics, runCli, TINY_ALFWORLD } from '../test/cli.ts';
import { tempDir } from '../test/temp-dir.ts';

/** Trains the corridor run for one iteration; returns its config file and run folder. */
async function trainedRun(prefix: string): Promise<{ config: string; run: string }> {
  const dir = tempDir(prefix);
  const config = corridorConfig(dir);
  const r = await runCli(['train', '-c', config]);
  expect(r.code, r.err).toBe(0);
  return { config, run: join(dir, 'run') };
}

describe('a run folder describes itself', () => {
  it('evaluates a checkpoint given alone, with the config its run folder saved', async () => {
    const { run } = await trainedRun('agentrl-self-');
    const checkpoint = join(run, 'checkpoints', 'iter-000001');
    const r = await runCli(['eval', '--checkpoint', checkpoint, '--episodes', '3']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(new RegExp(`success \\d/3 = .* on ${checkpoint}`));
    const written = JSON.parse(readFileSync(join(run, 'eval.json'), 'utf8'));
    expect(written.source).toBe(checkpoint);
  });

  it('evaluates the latest checkpoint of a run folder given alone with --run-dir', async () => {
    const { run } = await trainedRun('agentrl-self-');
    const r = await runCli(['eval', '--run-dir', run, '--episodes', '2']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/on .*checkpoints\/iter-000001/);
  });

  it('resumes a run from its folder alone, flags overriding its saved config', async () => {
    const { run } = await trainedRun('agentrl-self-');
    const r = await runCli(['train', '--resume', '--run-dir', run, '--iterations', '2']);
    expect(r.code, r.err).toBe(0);
    expect(readMetrics(run).map((m) => m.iteration)).toEqual([0, 1]);
  });

  it('warm-starts from a run folder alone with its saved config', async () => {
    const { run } = await trainedRun('agentrl-self-');
    const r = await runCli(['sft', '--run-dir', run, '--set', 'sft.steps=2']);
    expect(r.code, r.err).toBe(0);
    expect(existsSync(join(run, 'sft', 'model', 'table.json'))).toBe(true);
  });

  it('says a folder without a saved config is no run folder and names --config and --preset', async () => {
    const dir = tempDir('agentrl-self-');
    const r = await runCli(['eval', '--run-dir', dir]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/\[NOT_A_RUN\].*holds no config\.resolved\.json/);
    expect(r.err).toMatch(/--config <file> or --preset <name>/);
  });
});

describe('agentrl eval of a checkpoint', () => {
  it('takes the model of the checkpoint over the preset, so a checkpoint of another run evaluates', async () => {
    const other = join(tempDir('agentrl-other-'), 'run');
    // A model of another size than the preset's: its weights do not fit the preset's model.
    const trained = await runCli([
      ...alfworldTrain(other, '--iterations', '1', ...TINY_ALFWORLD),
      '--set',
      'model.options.architecture.hiddenSize=16',
    ]);
    expect(trained.code, trained.err).toBe(0);
    const checkpoint = join(other, 'checkpoints', 'iter-000001');
    const r = await runCli([
      'eval',
      '--preset',
      'alfworld-cpu',
      '--checkpoint',
      checkpoint,
      '--episodes',
      '2',
      '--set',
      'rollout.maxTurns=2',
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).not.toMatch(/copyWeightsFrom/);
    expect(r.out).toMatch(new RegExp(`success \\d/2 .* on ${checkpoint}`));
    expect(existsSync(join(other, 'eval.json'))).toBe(true);
  });

  it('refuses a --run-dir other than the checkpoint run, naming the conflict and the fix', async () => {
    const { config, run } = await trainedRun('agentrl-ckpt-');
    const elsewhere = tempDir('agentrl-elsewhere-');
    const r = await runCli([
      'eval',
      '-c',
      config,
      '--run-dir',
      elsewhere,
      '--checkpoint',
      join(run, 'checkpoints', 'iter-000001'),
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/\[BAD_CONFIG\].*belongs to the run folder .*: drop --run-dir/);
  });

  it('says a missing checkpoint does not exist and lists the checkpoints of its run', async () => {
    const { config, run } = await trainedRun('agentrl-ckpt-');
    const missing = join(run, 'checkpoints', 'iter-000009');
    for (const args of [
      ['eval', '--checkpoint', missing],
      ['eval', '-c', config, '--checkpoint', missing],
    ]) {
      const r = await runCli(args);
      expect(r.code).toBe(1);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(
        new RegExp(
          `\\[NOT_FOUND\\]: --checkpoint ${missing}: the checkpoint folder .* does not exist; the run ${run} has ${join(run, 'checkpoints', 'iter-000001')}: pass one of them`,
        ),
      );
    }
  });

  it('names --run-dir when --checkpoint is given a run folder', async () => {
    const { run } = await trainedRun('agentrl-ckpt-');
    const r = await runCli(['eval', '--checkpoint', run]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /is a run folder, not one of its checkpoints: pass --run-dir .* \(its latest checkpoint\)/,
    );
  });

  it('says so when the run folder of a missing checkpoint does not exist either', async () => {
    const dir = tempDir('agentrl-ckpt-');
    const r = await runCli(['eval', '--checkpoint', join(dir, 'gone', 'checkpoints', 'iter-1')]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /\[NOT_FOUND\].*does not exist; its run folder .*gone does not exist either/,
    );
  });
});

describe('agentrl train over a run folder', () => {
  it('refuses --resume on a folder with nothing to resume, naming --run-dir and dropping --resume', async () => {
    const dir = tempDir('agentrl-resume-');
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const r = await runCli(['train', '-c', corridorConfig(dir), '--resume', '--run-dir', empty]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /\[NOTHING_TO_RESUME\]: --resume: nothing to resume in .*empty: it holds no checkpoint .*--run-dir DIR, or drop --resume/,
    );
    expect(existsSync(join(empty, 'metrics.jsonl'))).toBe(false);
  });

  it('refuses --resume --run-dir of a folder that holds no run, given no config, as nothing to resume', async () => {
    const dir = tempDir('agentrl-resume-');
    const r = await runCli(['train', '--resume', '--run-dir', dir]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /\[NOTHING_TO_RESUME\]: --resume: nothing to resume in .*: it holds no run .*--run-dir DIR, or start a new run with --preset <name> or --config <file>/,
    );
  });

  it('refuses to overwrite a run folder unless --force or --resume, naming both', async () => {
    const { config, run } = await trainedRun('agentrl-exists-');
    const before = readFileSync(join(run, 'metrics.jsonl'), 'utf8');
    const r = await runCli(['train', '-c', config]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /\[RUN_EXISTS\]: run folder .* already holds a run \(checkpoints, metrics\.jsonl.*continue it with --resume, start it over with --force/,
    );
    expect(readFileSync(join(run, 'metrics.jsonl'), 'utf8')).toBe(before);
  });

  it('refuses --resume with --force, which contradict each other, naming both', async () => {
    const { config } = await trainedRun('agentrl-both-');
    const r = await runCli(['train', '-c', config, '--resume', '--force']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /\[USAGE\]: --resume and --force contradict each other.*give one of them/,
    );
  });

  it("starts a run over with --force, removing the old checkpoints and the old phases' files", async () => {
    const { config, run } = await trainedRun('agentrl-force-');
    mkdirSync(join(run, 'checkpoints', 'iter-000009'));
    // What an earlier run's phases left (this config has no final evaluation, so none is rewritten).
    for (const name of ['headline.json', 'phases.json', 'timings.json', 'sft-loss.json'])
      writeFileSync(join(run, name), '{"stale": true}\n');
    const r = await runCli(['train', '-c', config, '--force']);
    expect(r.code, r.err).toBe(0);
    expect(existsSync(join(run, 'checkpoints', 'iter-000009'))).toBe(false);
    for (const name of ['headline.json', 'phases.json', 'timings.json', 'sft-loss.json'])
      expect(existsSync(join(run, name)), name).toBe(false);
    expect(existsSync(join(run, 'checkpoints', 'iter-000001'))).toBe(true);
  });
});

describe('agentrl report of a folder', () => {
  it('refuses a folder that holds no run, naming the folder train wrote', async () => {
    const dir = tempDir('agentrl-report-');
    const r = await runCli(['report', dir]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /\[NOT_A_RUN\]: .* holds no metrics\.jsonl.*give the folder `agentrl train` wrote/,
    );
    expect(existsSync(join(dir, 'report.html'))).toBe(false);
  });
});
