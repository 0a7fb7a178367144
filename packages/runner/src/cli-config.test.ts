import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { corridorConfig, runCli } from '../test/cli.ts';
import { tempDir } from '../test/temp-dir.ts';
import { resolveConfig } from './cli.ts';
import type { RunConfig } from './config.ts';
import { PRESETS } from './presets.ts';

function withoutBaseDir(config: RunConfig): Omit<RunConfig, 'baseDir'> {
  const { baseDir: _, ...rest } = config;
  return rest;
}

describe('agentrl config', () => {
  it('lists the presets by name', async () => {
    const r = await runCli(['config', 'list']);
    expect(r.code).toBe(0);
    expect(r.out.trim().split('\n')).toEqual(Object.keys(PRESETS));
  });

  it('prints each CPU preset resolved as YAML that train -c reads back to the same config', async () => {
    const dir = tempDir('agentrl-show-');
    // The paper presets name a model folder, which a config must have (and this clone has not).
    for (const preset of Object.keys(PRESETS).filter((p) => p.endsWith('-cpu'))) {
      const r = await runCli(['config', 'show', '--preset', preset, '--set', 'seed=7']);
      expect(r.code, r.err).toBe(0);
      const file = join(dir, `${preset}.yaml`);
      writeFileSync(file, r.out);
      expect(withoutBaseDir(resolveConfig({ config: file }))).toEqual(
        withoutBaseDir(resolveConfig({ preset, set: ['seed=7'] })),
      );
    }
  });

  it('trains from the config it printed', async () => {
    const dir = tempDir('agentrl-show-');
    const source = corridorConfig(dir, '');
    const shown = await runCli(['config', 'show', '-c', source, '--iterations', '1']);
    expect(shown.code, shown.err).toBe(0);
    const file = join(dir, 'shown.yaml');
    writeFileSync(file, shown.out);
    expect(withoutBaseDir(resolveConfig({ config: file }))).toEqual(
      withoutBaseDir(resolveConfig({ config: source, iterations: '1' })),
    );
    const r = await runCli(['train', '-c', file]);
    expect(r.code, r.err).toBe(0);
  });

  it('names --preset and --config when show is given neither, and the subcommands for another one', async () => {
    const show = await runCli(['config', 'show']);
    expect(show.code).toBe(2);
    expect(show.err).toMatch(
      /\[USAGE\].*--preset <name> \(one of .*alfworld-cpu.*\) or --config <file>/,
    );
    const other = await runCli(['config', 'print']);
    expect(other.code).toBe(2);
    expect(other.err).toMatch(/use `agentrl config list` or `agentrl config show --preset NAME`/);
  });
});
