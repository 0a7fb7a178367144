import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));

describe('loading the package', () => {
  it('works through require(), because nothing in its import graph has a top-level await', () => {
    // node-llama-cpp's entry point awaits at the top level; it must only be imported lazily.
    const run = spawnSync(
      process.execPath,
      [
        '--conditions=@agentrl/source',
        '-e',
        `const m = require(${JSON.stringify(join(here, 'index.ts'))}); console.log(typeof m.LlamaCppEngine)`,
      ],
      { encoding: 'utf8' },
    );
    expect(run.stderr).not.toMatch(/ERR_REQUIRE_ASYNC_MODULE/);
    expect(run.stdout.trim()).toBe('function');
  });
});
