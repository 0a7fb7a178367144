import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BUNDLED_VERSION, packageVersions } from './run-info.ts';

describe('package versions in run metadata', () => {
  it('lists the runner and the @agentrl packages it resolves', () => {
    const versions = packageVersions();
    expect(versions['@agentrl/runner']).toMatch(/^\d+\.\d+\.\d+/);
    expect(versions['@agentrl/core']).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('records a bundled run (no package.json beside the code) instead of failing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentrl-bundle-'));
    try {
      expect(packageVersions(pathToFileURL(`${dir}/`))).toEqual({
        '@agentrl/runner': BUNDLED_VERSION,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
