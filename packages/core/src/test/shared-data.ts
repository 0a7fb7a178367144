/**
 * Where the tests find their data. Two kinds, one place that knows both:
 *
 * - **Fixtures** (parity vectors, the tiny checkpoint, rendered pages): small files committed in
 *   the repository's top-level `fixtures/` folder, always present; `fixturePath('gigpo', ...)`.
 * - **Real datasets** (ALFWorld games, WebShop products, the search-QA corpus and questions): too
 *   big for the repository, fetched with `agentrl data fetch <name>`. A test finds one through
 *   `dataPath(name)` and runs only when {@link hasData} says it is there; otherwise it is skipped,
 *   with one printed line naming what is missing and the command that gets it.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DATA_LOCATIONS, missingDataFix, resolveDataDir, sharedFolder } from '../data-dir.ts';

/** The repository's root: this file is packages/core/src/test/shared-data.ts. */
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** Absolute path of the repository's `fixtures/` folder, or of `parts` inside it. */
export function fixturePath(...parts: string[]): string {
  return join(REPO_ROOT, 'fixtures', ...parts);
}

/**
 * Absolute path of the shared data folder, or of `parts` inside it: the folder named by
 * `AGENTRL_SHARED`, or else the folder `shared` that sits beside this repository's checkout. It
 * holds the real datasets under `data/<folder>` (see {@link DATASETS}).
 */
export function sharedPath(...parts: string[]): string {
  return join(
    sharedFolder({ checkout: REPO_ROOT }) ?? join(dirname(REPO_ROOT), 'shared'),
    ...parts,
  );
}

/**
 * What each real dataset is called, its folder under a data root, the variable that points the
 * env (and the tests) at another copy (both from `DATA_LOCATIONS` of `@agentrl/core/data`).
 */
export const DATASETS = {
  alfworld: { ...DATA_LOCATIONS.alfworld, title: 'ALFWorld game files' },
  webshop: { ...DATA_LOCATIONS.webshop, title: 'WebShop product files' },
  search: {
    ...DATA_LOCATIONS.search,
    // The tests' set is a small one (991 passages, 13,657 questions) built from HotpotQA,
    // NQ-open, MuSiQue and Bamboogle; Search-R1's full corpus is `agentrl data fetch search-r1`.
    title: 'search-QA test set (corpus.jsonl and questions.jsonl)',
  },
} as const;

/** A real dataset's name, as `agentrl data fetch` takes it. */
export type DatasetName = keyof typeof DATASETS;

/**
 * Absolute path of a real dataset's folder, or of `parts` inside it, where the env itself looks
 * (`resolveDataDir` of `@agentrl/core/data`): the env's own variable (`ALFWORLD_DATA`,
 * `WEBSHOP_DATA`, `SEARCH_QA_DATA`) when it is set, else `$AGENTRL_DATA/<folder>`, else
 * `data/<folder>` of the shared data folder ({@link sharedPath}) when it exists, else the user
 * cache folder's.
 */
export function dataPath(dataset: DatasetName, ...parts: string[]): string {
  return join(resolveDataDir(dataset, { checkout: REPO_ROOT }).dir, ...parts);
}

/** The line {@link hasData} prints for a group it skips (exported for its test). */
export function skipLine(dataset: DatasetName, group: string, missing: string): string {
  const { title } = DATASETS[dataset];
  return `skipped: ${group} (needs the ${title}: ${missing} is missing; ${missingDataFix(dataset, { checkout: REPO_ROOT })})`;
}

/** Options of {@link hasData}. */
export interface HasDataOptions {
  /** The files or folders the group reads (default: the dataset's folder, {@link dataPath}). */
  readonly paths?: readonly string[];
  /** Where the skip line goes (default: `console.warn`, which vitest shows under the test file). */
  readonly log?: (line: string) => void;
}

/**
 * Whether every path the group reads exists. When one does not, logs one line saying that `group`
 * is skipped, which path is missing and the command that fetches the dataset; use the result in
 * `describe.skipIf(!present)`. A test helper: printing the reason is its job.
 */
export function hasData(
  dataset: DatasetName,
  group: string,
  options: HasDataOptions = {},
): boolean {
  const paths = options.paths ?? [dataPath(dataset)];
  const missing = paths.find((path) => !existsSync(path));
  if (missing === undefined) return true;
  (options.log ?? console.warn)(skipLine(dataset, group, missing));
  return false;
}
