/**
 * Import circles inside a package: files of `src/` that import each other in a loop, through
 * relative imports (type-only imports included: a circle of types is still two files that cannot
 * be read, moved or tested one without the other). Used by a package's test
 * (`findImportCycles(srcDir)`) and, over every workspace package, by `pnpm lint`
 * (`node tools/import-cycles.ts`), which exits non-zero and lists each circle it finds.
 *
 * Written in erasable TypeScript only, so Node runs it as it is.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { filesUnder } from './source-files.ts';

/** Source files under `dir` (recursively), absolute paths, sorted. */
function sourceFiles(dir: string): string[] {
  return filesUnder(dir, (name) => /\.(ts|tsx|mts)$/.test(name) && !name.endsWith('.d.ts'));
}

/** Comments removed (strings kept), so an import in a comment draws no edge. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\/|(^|[^:'"`\\])\/\/.*$/gm, (_m, keep: string | undefined) =>
    typeof keep === 'string' ? keep : '',
  );
}

const SPECIFIER =
  /(?:^|[\s;}])(?:import|export)\s+(?:type\s+)?(?:[^'"`;]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** The relative specifiers a file imports (static, re-exports, side-effect and `import()`). */
export function relativeImports(text: string): string[] {
  const found: string[] = [];
  for (const m of withoutComments(text).matchAll(SPECIFIER)) {
    const spec = m[1] ?? m[2];
    if (spec !== undefined) found.push(spec);
  }
  return found;
}

function resolveSpecifier(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  const candidates = [
    base,
    base.replace(/\.js$/, '.ts'),
    `${base}.ts`,
    `${base}.tsx`,
    join(base, 'index.ts'),
  ];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

/** File -> the files it imports, both relative to `srcDir`. */
export function importGraph(srcDir: string): Map<string, string[]> {
  const root = resolve(srcDir);
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(root)) {
    const targets = new Set<string>();
    for (const spec of relativeImports(readFileSync(file, 'utf8'))) {
      const target = resolveSpecifier(file, spec);
      if (target !== undefined && !relative(root, target).startsWith('..'))
        targets.add(relative(root, target));
    }
    graph.set(relative(root, file), [...targets].sort());
  }
  return graph;
}

/** Strongly connected components (Tarjan), each sorted, in a stable order. */
function components(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      out.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/** The shortest loop from `start` back to itself inside `members` (breadth-first). */
function loopThrough(
  graph: ReadonlyMap<string, readonly string[]>,
  members: ReadonlySet<string>,
  start: string,
): string[] {
  const parent = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift() as string;
    for (const w of graph.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(parent.get(path[0] as string) as string);
        return [...path, start];
      }
      if (!parent.has(w)) {
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/** One import circle: every file that takes part, and one loop through them as an example. */
export interface ImportCycle {
  readonly files: readonly string[];
  readonly loop: readonly string[];
}

/** The import circles among the files of `srcDir` (none: an empty list). */
export function findImportCycles(srcDir: string): ImportCycle[] {
  const graph = importGraph(srcDir);
  return components(graph)
    .filter((c) => c.length > 1 || (graph.get(c[0] as string) ?? []).includes(c[0] as string))
    .map((files) => ({ files, loop: loopThrough(graph, new Set(files), files[0] as string) }));
}

/**
 * The import circles among the top-level parts of `srcDir`: each folder directly under it counts as
 * one part (its files together), each file beside them as itself; tests (`*.test.ts`) are left
 * out, since a test may exercise several layers at once. A package whose folders are its layers
 * has none: every folder imports only from the folders below it.
 */
export function findFolderCycles(srcDir: string): ImportCycle[] {
  const part = (file: string) => (file.includes('/') ? `${file.split('/')[0]}/` : file);
  const parts = new Map<string, Set<string>>();
  for (const [file, targets] of importGraph(srcDir)) {
    if (file.endsWith('.test.ts')) continue;
    const from = part(file);
    const set = parts.get(from) ?? new Set<string>();
    for (const target of targets) if (part(target) !== from) set.add(part(target));
    parts.set(from, set);
  }
  const graph = new Map([...parts].map(([k, v]) => [k, [...v].sort()] as const));
  return components(graph)
    .filter((c) => c.length > 1)
    .map((files) => ({ files, loop: loopThrough(graph, new Set(files), files[0] as string) }));
}

/** A readable report of `cycles` (one block per circle). */
export function describeImportCycles(cycles: readonly ImportCycle[]): string {
  return cycles
    .map(
      (c, k) =>
        `circle ${k + 1}: ${c.files.length} files: ${c.files.join(', ')}\n  for example ${c.loop.join(' -> ')}`,
    )
    .join('\n');
}

/** `src/` of every workspace package (packages/*, examples/*, benchmarks/*) under `repoRoot`. */
export function workspaceSourceDirs(repoRoot: string): string[] {
  return ['packages', 'examples', 'benchmarks'].flatMap((group) => {
    const dir = join(repoRoot, group);
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .sort()
      .map((name) => join(dir, name, 'src'))
      .filter((src) => existsSync(src) && statSync(src).isDirectory());
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const dirs = process.argv.length > 2 ? process.argv.slice(2) : workspaceSourceDirs(repoRoot);
  let failed = false;
  for (const dir of dirs) {
    const cycles = findImportCycles(dir);
    if (cycles.length === 0) continue;
    failed = true;
    process.stderr.write(
      `import circles in ${relative(repoRoot, resolve(dir))}:\n${describeImportCycles(cycles)}\n`,
    );
  }
  if (failed) process.exitCode = 1;
  else process.stdout.write(`import-cycles: no circle in ${dirs.length} source folders\n`);
}
