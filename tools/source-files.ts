/**
 * The files under a folder that the repository's checks read (`import-cycles.ts`,
 * `self-contained-docs.ts`): walked recursively, `node_modules` and `dist` skipped.
 *
 * Written in erasable TypeScript only, so Node runs it as it is.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Files under `dir` whose name passes `keep`, as absolute paths, sorted. */
export function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path, keep));
    else if (keep(name)) out.push(path);
  }
  return out;
}
