import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  describeImportCycles,
  findFolderCycles,
  findImportCycles,
} from '../../../tools/import-cycles.ts';
import { tempDir } from './test-temp-dir.ts';

const srcDir = dirname(fileURLToPath(import.meta.url));

function sourceTree(files: Record<string, string>): string {
  const root = tempDir('agentrl-cycles-');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('import circles', () => {
  it('no file of the package imports itself back through other files', () => {
    const cycles = findImportCycles(srcDir);
    expect(describeImportCycles(cycles)).toBe('');
  });

  it('the folders are layers: none imports from a folder that imports it back', () => {
    expect(describeImportCycles(findFolderCycles(srcDir))).toBe('');
  });

  it('the folder check finds two folders that import each other, and leaves tests out', () => {
    const root = sourceTree({
      'model/model.ts': "import { run } from '../generate/run.ts';\nexport const m = run;\n",
      'generate/run.ts': "import type { C } from '../model/config.ts';\nexport const run = 1;\n",
      'model/config.ts': 'export type C = number;\n',
      'io/save.ts': "import type { C } from '../model/config.ts';\nexport const save = 1;\n",
      'model/save.test.ts': "import { save } from '../io/save.ts';\n",
    });
    const cycles = findFolderCycles(root);
    expect(cycles.map((c) => c.files)).toEqual([['generate/', 'model/']]);
    expect(cycles[0]?.loop).toEqual(['generate/', 'model/', 'generate/']);
  });

  it('the check finds a circle through folders and type-only imports, and names a loop', () => {
    const root = sourceTree({
      'model/model.ts': "import { run } from '../generate/run.ts';\nexport const m = run;\n",
      'generate/run.ts': "import type { M } from './types.ts';\nexport const run = 1;\n",
      'generate/types.ts': "export type { M } from '../model/model.ts';\n",
      'leaf.ts': "// import { m } from './model/model.ts';\nexport const leaf = 1;\n",
    });
    const cycles = findImportCycles(root);
    expect(cycles).toHaveLength(1);
    expect(cycles[0]?.files).toEqual(['generate/run.ts', 'generate/types.ts', 'model/model.ts']);
    expect(cycles[0]?.loop).toEqual([
      'generate/run.ts',
      'generate/types.ts',
      'model/model.ts',
      'generate/run.ts',
    ]);
    expect(describeImportCycles(cycles)).toContain(
      'generate/run.ts -> generate/types.ts -> model/model.ts -> generate/run.ts',
    );
  });

  it('the check passes a tree whose imports all point one way', () => {
    const root = sourceTree({
      'a.ts': "import { b } from './b.ts';\nexport const a = b;\n",
      'b.ts': "import { c } from './lib/c.ts';\nexport const b = c;\n",
      'lib/c.ts': "export const c = await import('../d.ts');\n",
      'd.ts': 'export const d = 1;\n',
    });
    expect(findImportCycles(root)).toEqual([]);
  });
});
