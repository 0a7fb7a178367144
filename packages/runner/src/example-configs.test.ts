/**
 * The commented run configs of `examples/configs/` are the CPU presets: each file, read through the
 * CLI's config loader, is exactly its preset's resolved config (the run folder aside, which a
 * file resolves from its own folder), so a preset changed without its file fails here.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { resolveConfig } from './cli.ts';
import type { RunConfig } from './config.ts';
import { PRESETS } from './presets.ts';

const EXAMPLES = fileURLToPath(new URL('../../../examples/configs/', import.meta.url));

const FILES = {
  'alfworld.yaml': 'alfworld-cpu',
  'webshop.yaml': 'webshop-cpu',
  'search.yaml': 'search-cpu',
} as const;

/** The config without the fields that depend on where it was read from. */
function pathFree(config: RunConfig): Omit<RunConfig, 'baseDir' | 'runDir'> {
  const { baseDir: _, runDir: __, ...rest } = config;
  return rest;
}

describe('example configs', () => {
  for (const [file, preset] of Object.entries(FILES)) {
    const path = `${EXAMPLES}${file}`;

    it(`examples/configs/${file} parses to the ${preset} preset's resolved config`, () => {
      expect(
        pathFree(resolveConfig({ config: path })),
        `examples/configs/${file} differs from --preset ${preset}: bring the file in line with src/presets.ts (\`pnpm agentrl config show --preset ${preset}\` prints the preset resolved)`,
      ).toEqual(pathFree(resolveConfig({ preset })));
      const raw = parse(readFileSync(path, 'utf8')) as { runDir?: unknown };
      expect(raw.runDir).toBe(PRESETS[preset]?.runDir);
    });

    it(`examples/configs/${file} comments every section and every key it sets at the top level`, () => {
      const lines = readFileSync(path, 'utf8').split('\n');
      const uncommented = lines.flatMap((line, i) => {
        const key = /^([A-Za-z]+):/.exec(line)?.[1];
        if (key === undefined) return [];
        const commented = line.includes(' # ') || (lines[i - 1] ?? '').startsWith('#');
        return commented ? [] : [key];
      });
      expect(uncommented).toEqual([]);
      const keys = Object.keys(parse(readFileSync(path, 'utf8')) as object);
      expect(keys).toEqual(Object.keys(resolveConfig({ preset })).filter((k) => k !== 'baseDir'));
    });
  }
});
