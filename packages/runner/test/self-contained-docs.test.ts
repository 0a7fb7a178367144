import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  describeOutsideDocReferences,
  findOutsideDocReferences,
} from '../../../tools/self-contained-docs.ts';
import { tempDir } from './temp-dir.ts';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

function repoTree(files: Record<string, string>): string {
  const root = tempDir('agentrl-docs-');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('self-contained docs', () => {
  it('no package source or README refers to ../shared/docs or to a § section', () => {
    expect(describeOutsideDocReferences(findOutsideDocReferences(repoRoot))).toBe('');
  });

  it('the check names each offending file and line, in sources and READMEs', () => {
    const root = repoTree({
      'packages/a/README.md': '# a\n\nSee ../shared/docs/specs/x.md.\n',
      'packages/a/src/x.ts': '// fine\n/** as in ../../shared/docs/house-style.md */\n',
      'packages/b/src/deep/y.ts': 'export const y = 1;\n// per spec §4.2\n',
    });
    expect(findOutsideDocReferences(root)).toEqual([
      { file: 'packages/a/README.md', line: 3, text: 'See ../shared/docs/specs/x.md.' },
      {
        file: 'packages/a/src/x.ts',
        line: 2,
        text: '/** as in ../../shared/docs/house-style.md */',
      },
      { file: 'packages/b/src/deep/y.ts', line: 2, text: '// per spec §4.2' },
    ]);
    expect(describeOutsideDocReferences(findOutsideDocReferences(root))).toContain(
      'packages/b/src/deep/y.ts:2: // per spec §4.2',
    );
  });

  it('the check leaves test files, data paths beside the repo and other folders alone', () => {
    const root = repoTree({
      'packages/a/src/x.test.ts': "const f = '../shared/docs/specs/x.md'; // §1\n",
      'packages/a/src/data.ts': "export const dir = '../shared/data/alfworld';\n",
      'packages/a/test/z.ts': '// §2\n',
      'docs/notes.md': '§3\n',
    });
    expect(findOutsideDocReferences(root)).toEqual([]);
  });
});
