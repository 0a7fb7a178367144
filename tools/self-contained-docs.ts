/**
 * References a reader of a published package cannot follow: a path into the `shared/docs` folder
 * that sits beside the repository (never part of the repo or of an npm tarball), or a `§` section
 * pointer into some document. Scanned: every package's `src/` (test files, `*.test.ts`, left out:
 * tests may read data from beside the repo) and every package README. Used by the runner's test
 * (`findOutsideDocReferences(repoRoot)`) and by `pnpm lint` (`node tools/self-contained-docs.ts`),
 * which exits non-zero and lists each file and line it finds.
 *
 * Written in erasable TypeScript only, so Node runs it as it is.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { filesUnder } from './source-files.ts';

/** What counts as a reference outside the repo: `../shared/docs` (any depth of `../`) or `§`. */
const OUTSIDE_REFERENCE = /\.\.\/shared\/docs|§/;

/** One offending line: the file (relative to the repo root, `/`-separated), its 1-based line. */
export interface OutsideDocReference {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

/** Non-test TypeScript files under `dir` (recursively), absolute paths, sorted. */
function sourceFiles(dir: string): string[] {
  return filesUnder(
    dir,
    (name) => /\.(ts|tsx|mts|cts)$/.test(name) && !/\.test\.(ts|tsx|mts|cts)$/.test(name),
  );
}

/** The files scanned under `repoRoot`: `packages/<name>/src/**` (non-test) and `packages/<name>/README.md`. */
export function scannedFiles(repoRoot: string): string[] {
  const packagesDir = join(repoRoot, 'packages');
  if (!existsSync(packagesDir)) return [];
  return readdirSync(packagesDir)
    .sort()
    .flatMap((name) => {
      const pkg = join(packagesDir, name);
      if (!statSync(pkg).isDirectory()) return [];
      const src = join(pkg, 'src');
      const readme = join(pkg, 'README.md');
      return [
        ...(existsSync(readme) ? [readme] : []),
        ...(existsSync(src) && statSync(src).isDirectory() ? sourceFiles(src) : []),
      ];
    });
}

/** Every line of the scanned files that refers outside the repo (none: an empty list). */
export function findOutsideDocReferences(repoRoot: string): OutsideDocReference[] {
  const root = resolve(repoRoot);
  const found: OutsideDocReference[] = [];
  for (const path of scannedFiles(root)) {
    const lines = readFileSync(path, 'utf8').split('\n');
    lines.forEach((text, k) => {
      if (OUTSIDE_REFERENCE.test(text))
        found.push({ file: relative(root, path).split('\\').join('/'), line: k + 1, text });
    });
  }
  return found;
}

/** A readable report: one `file:line: text` per reference. */
export function describeOutsideDocReferences(found: readonly OutsideDocReference[]): string {
  return found.map((r) => `${r.file}:${r.line}: ${r.text.trim()}`).join('\n');
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const found = findOutsideDocReferences(repoRoot);
  if (found.length > 0) {
    process.stderr.write(
      `references outside the repo (\`../shared/docs\` or \`§\`); cite the paper, the upstream file or a page under docs/ instead:\n${describeOutsideDocReferences(found)}\n`,
    );
    process.exitCode = 1;
  } else {
    process.stdout.write(
      `self-contained-docs: no reference outside the repo in ${scannedFiles(repoRoot).length} files\n`,
    );
  }
}
