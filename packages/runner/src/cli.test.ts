import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../test/cli.ts';
import { tempDir } from '../test/temp-dir.ts';
import { ESTIMATOR_NAMES } from './estimators.ts';

const fixture = (name: string) => new URL(`../test/fixtures/${name}`, import.meta.url).pathname;

function writeConfig(dir: string, body: string): string {
  const path = join(dir, 'run.yaml');
  writeFileSync(path, body);
  return path;
}

const BASE = (dir: string) => `
runDir: ${join(dir, 'run')}
env: { id: test/corridor-v1, module: ${fixture('corridor-env.ts')} }
model: { backend: module, module: ${fixture('tabular-model.ts')} }
rollout: { batchSize: 16, groupSize: 4, maxTurns: 8, maxNewTokens: 64 }
`;

describe('agentrl config errors', () => {
  it('rejects an unknown key, naming it and the fix, before any work', async () => {
    const dir = tempDir('agentrl-cfg-');
    const config = writeConfig(dir, `${BASE(dir)}training: { iterations: 2, learningRat: 0.1 }\n`);
    const r = await runCli(['train', '-c', config]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/unknown key "training.learningRat": remove it or check its spelling/);
    expect(existsSync(join(dir, 'run'))).toBe(false);
  });

  it('rejects a misspelt estimator option, naming algorithm.options and the closest key, before any work', async () => {
    const dir = tempDir('agentrl-cfg-');
    const config = writeConfig(
      dir,
      `${BASE(dir)}algorithm: { name: gigpo, options: { mode: mean_norm, stepAdvantageW: 0 } }\n`,
    );
    const r = await runCli(['train', '-c', config]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /unknown key "algorithm\.options\.stepAdvantageW": remove it or check its spelling; did you mean "stepAdvantageWeight"\?/,
    );
    expect(existsSync(join(dir, 'run'))).toBe(false);
  });

  it('rejects a misspelt env option (maxStpes), naming env.options and the closest key, before any work', async () => {
    const dir = tempDir('agentrl-cfg-');
    const config = writeConfig(
      dir,
      BASE(dir)
        .replace(
          'env: { id: test/corridor-v1, module: ',
          'env: { id: alfworld/text-v1, options: { source: generated, maxStpes: 5 }, module: ',
        )
        .replace(fixture('corridor-env.ts'), "'@agentrl/env-alfworld'") +
        'algorithm: { name: grpo }\n',
    );
    const r = await runCli(['train', '-c', config]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /unknown key "env\.options\.maxStpes": remove it or check its spelling; did you mean "maxSteps"\?/,
    );
    expect(existsSync(join(dir, 'run'))).toBe(false);
  });

  it('rejects a batch that is not divisible by the group size, suggesting sizes that are', async () => {
    const dir = tempDir('agentrl-cfg-');
    const config = writeConfig(dir, BASE(dir).replace('batchSize: 16', 'batchSize: 18'));
    const r = await runCli(['train', '-c', config]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /rollout.batchSize \(18\) is not divisible by rollout.groupSize \(4\): use a multiple of 4 such as 16 or 20/,
    );
    expect(existsSync(join(dir, 'run'))).toBe(false);
  });

  it('rejects a missing model folder, naming the field and the resolved path', async () => {
    const dir = tempDir('agentrl-cfg-');
    const config = writeConfig(
      dir,
      BASE(dir).replace('backend: module,', 'backend: module, path: ./no-such-model,'),
    );
    const r = await runCli(['eval', '-c', config]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /model.path: folder "\.\/no-such-model" does not exist .*put the model files there or fix the path/,
    );
  });

  it('rejects a wrong enum and a wrong type with the allowed values', async () => {
    const dir = tempDir('agentrl-cfg-');
    const config = writeConfig(dir, `${BASE(dir)}algorithm: { name: dqn }\n`);
    const r = await runCli(['train', '-c', config, '--set', 'rollout.temperature=hot']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      new RegExp(`algorithm.name: .*${ESTIMATOR_NAMES.map((n) => `"${n}"`).join(', ')}`),
    );
    expect(r.err).toMatch(/rollout.temperature: /);
  });

  it('prints usage for no command', async () => {
    const r = await runCli([]);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/agentrl <command>/);
  });
});

describe('agentrl help, version and flag errors', () => {
  it('describes one command on `<command> --help`, listing only its own flags', async () => {
    const train = await runCli(['train', '--help']);
    expect(train.code).toBe(0);
    expect(train.out).toMatch(/^Usage: agentrl train/);
    expect(train.out).toMatch(/--resume +continue the run/);
    expect(train.out).not.toMatch(/--checkpoint/);
    // The estimators and their options come from @agentrl/algorithms' registry.
    for (const name of ['gigpo', 'grpo', 'rloo'])
      expect(train.out).toMatch(new RegExp(`^  ${name} `, 'm'));
    expect(train.out).toMatch(/stepAdvantageWeight \(1\)/);
    expect(train.out).toMatch(
      /^Config reference .*: docs\/config-reference\.md in the repository/m,
    );
    const evaluate = await runCli(['eval', '-h']);
    expect(evaluate.out).toMatch(/^Usage: agentrl eval/);
    expect(evaluate.out).toMatch(/--checkpoint DIR/);
    expect(evaluate.out).not.toMatch(/--resume/);
    const report = await runCli(['report', '--help']);
    expect(report.out).toMatch(/^Usage: agentrl report RUN_DIR/);
    expect(report.out).not.toBe(train.out);
  });

  it('lists the commands on plain `--help`', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const command of ['train', 'eval', 'sft', 'report']) {
      expect(r.out).toMatch(new RegExp(`^  ${command} `, 'm'));
    }
  });

  it('prints the version of the runner package on --version', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    const r = await runCli(['--version']);
    expect(r.code).toBe(0);
    expect(r.out).toBe(`agentrl ${pkg.version}\n`);
  });

  it('names the closest valid flag for a mistyped one, before any work', async () => {
    const r = await runCli(['train', '--iteratons', '3']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/unknown option "--iteratons"; did you mean "--iterations"\?/);
    const sft = await runCli(['sft', '--demo', 'x.jsonl']);
    expect(sft.err).toMatch(/did you mean "--demos"\?/);
  });

  it('names the command that takes a flag given to another one', async () => {
    const r = await runCli(['eval', '--resume']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/unknown option "--resume"; it is an option of agentrl train/);
  });

  it('names the closest command for a mistyped one', async () => {
    const r = await runCli(['trian']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/unknown command "trian"; did you mean "train"\?/);
  });

  it('runs the same CLI through the package bin', () => {
    const bin = fileURLToPath(new URL('../bin/agentrl.js', import.meta.url));
    const r = spawnSync(process.execPath, [bin, 'train', '--help'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Usage: agentrl train/);
  });

  it('ignores the `--` that pnpm passes through, before or after the command', async () => {
    const r = await runCli(['--', 'report', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: agentrl report/);
    const after = await runCli(['train', '--', '--help']);
    expect(after.code).toBe(0);
    expect(after.out).toMatch(/^Usage: agentrl train/);
  });
});

describe('agentrl train, sft and report', () => {
  it('trains from a config with flag overrides and writes the run folder', async () => {
    const dir = tempDir('agentrl-cli-');
    const config = writeConfig(
      dir,
      `${BASE(dir)}algorithm: { name: grpo }\nvalidation: { every: 2, episodes: 8 }\n`,
    );
    const r = await runCli([
      'train',
      '-c',
      config,
      '--iterations',
      '3',
      '--seed',
      '5',
      '--set',
      'training.miniBatchSize=16',
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/report: .*report.html/);
    const resolved = JSON.parse(readFileSync(join(dir, 'run', 'config.resolved.json'), 'utf8'));
    expect(resolved.seed).toBe(5);
    expect(resolved.config.training.iterations).toBe(3);
    expect(resolved.config.training.miniBatchSize).toBe(16);
    expect(resolved.versions['@agentrl/runner']).toBeTypeOf('string');
    const lines = readFileSync(join(dir, 'run', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(lines).toHaveLength(4);
  });

  it('warm-starts from the env module expert and saves the model', async () => {
    const dir = tempDir('agentrl-sft-');
    const config = writeConfig(dir, `${BASE(dir)}sft: { episodes: 6, steps: 5, batchSize: 4 }\n`);
    const r = await runCli(['sft', '-c', config]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/expert won 6\/6 episodes/);
    expect(existsSync(join(dir, 'run', 'sft', 'model', 'table.json'))).toBe(true);
  });

  it('stops the warm start once the mean loss of the last sft.stopWindow steps reaches sft.stopLoss, one metrics line per step taken', async () => {
    const dir = tempDir('agentrl-sft-stop-');
    const config = writeConfig(
      dir,
      `${BASE(dir)}sft: { episodes: 6, steps: 400, batchSize: 4, stopLoss: 0.5, stopWindow: 5 }\n`,
    );
    const r = await runCli(['sft', '-c', config]);
    expect(r.code, r.err).toBe(0);
    const losses = readFileSync(join(dir, 'run', 'sft', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { loss: number }).loss);
    expect(losses.length).toBeLessThan(400);
    const meanOfLast = (n: number) => losses.slice(n - 5, n).reduce((a, b) => a + b, 0) / 5;
    expect(meanOfLast(losses.length)).toBeLessThanOrEqual(0.5);
    for (let n = 5; n < losses.length; n++) expect(meanOfLast(n)).toBeGreaterThan(0.5);
    expect(existsSync(join(dir, 'run', 'sft', 'model', 'table.json'))).toBe(true);
  });

  it('writes the report of a run folder', async () => {
    const dir = tempDir('agentrl-rep-');
    mkdirSync(join(dir, 'run'));
    writeFileSync(join(dir, 'run', 'metrics.jsonl'), '{"iteration":0,"val/success":0.5}\n');
    const r = await runCli(['report', join(dir, 'run')]);
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, 'run', 'report.html'), 'utf8')).toMatch(/<svg/);
  });
});
