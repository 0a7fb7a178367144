/**
 * Where the tests find the project's shared fixtures and data (parity vectors, tiny checkpoints,
 * ALFWorld games, WebShop and search-QA data): the folder named by `AGENTRL_SHARED`, or else the
 * folder `shared` that sits beside this repository's checkout. One place knows it, so a test
 * names only what it reads (`sharedPath('fixtures', 'qwen2-tiny')`).
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root: this file is packages/core/src/test/shared-data.ts. */
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** Absolute path of the shared folder, or of `parts` inside it. */
export function sharedPath(...parts: string[]): string {
  const root = process.env.AGENTRL_SHARED ?? join(dirname(REPO_ROOT), 'shared');
  return join(root, ...parts);
}
