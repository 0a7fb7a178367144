import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));

/** Package specifiers reached from `entry` through its relative imports (static and dynamic). */
function externalImports(entry: string): Set<string> {
  const seen = new Set<string>();
  const external = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(?\s*)'([^']+)'/g)) {
      const specifier = match[1] as string;
      if (specifier.startsWith('.')) visit(join(dirname(file), specifier));
      else external.add(specifier);
    }
  };
  visit(join(here, entry));
  return external;
}

describe('entry points', () => {
  it('the main entry point reaches no tensor library, so the advantages install without tfjs', () => {
    const reached = [...externalImports('index.ts')];
    expect(reached.filter((s) => s.startsWith('@tensorflow/'))).toEqual([]);
    expect(reached.every((s) => s.startsWith('@agentrl/core'))).toBe(true);
  });

  it('the losses entry point is where @tensorflow/tfjs-core comes in', () => {
    expect(externalImports('losses.ts').has('@tensorflow/tfjs-core')).toBe(true);
  });

  it('package.json maps each entry point to the file checked above', () => {
    const manifest = JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8'));
    expect(manifest.exports['.']['@agentrl/source']).toBe('./src/index.ts');
    expect(manifest.exports['./losses']['@agentrl/source']).toBe('./src/losses.ts');
    expect(manifest.peerDependenciesMeta['@tensorflow/tfjs-core'].optional).toBe(true);
  });
});
