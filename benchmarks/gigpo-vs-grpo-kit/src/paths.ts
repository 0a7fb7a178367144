/**
 * Where a job's files are in a benchmark's output folder, and what an arm's files say it trained
 * with: `seed-N/warm/` (warm start), `seed-N/<arm>.json` and `seed-N/<arm>/` (an arm's result
 * and run folder), `seed-N/eval.json` (the final evaluation). The two-arm runs' file names
 * (`LEGACY_ARM_NAMES`) are read as the arms they were.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AlgorithmEntry, comparableBudget, LEGACY_ARM_NAMES } from './config.ts';

/** A seed's folder. */
export const seedDir = (out: string, seed: number): string => join(out, `seed-${seed}`);

/** A seed's warm start record. */
export const warmFile = (out: string, seed: number): string =>
  join(seedDir(out, seed), 'warm', 'warm.json');

/** A seed's final evaluation (`eval.json`, or `eval-N.json` at another size: `evalStems`). */
export const evalFile = (out: string, seed: number, stem = 'eval'): string =>
  join(seedDir(out, seed), `${stem}.json`);

/** The name an arm's files have in a seed's folder: its own, or the two-arm runs' if only those exist. */
export function armFileName(out: string, seed: number, arm: string): string {
  const legacy = LEGACY_ARM_NAMES[arm];
  if (legacy === undefined || existsSync(join(seedDir(out, seed), `${arm}.json`))) return arm;
  return existsSync(join(seedDir(out, seed), `${legacy}.json`)) ? legacy : arm;
}

/** An arm's result file (`seed-N/<arm>.json`). */
export const armFile = (out: string, seed: number, arm: string): string =>
  join(seedDir(out, seed), `${armFileName(out, seed, arm)}.json`);

/** An arm's run folder (the trainer's metrics and checkpoints). */
export const armRunDir = (out: string, seed: number, arm: string): string =>
  join(seedDir(out, seed), armFileName(out, seed, arm));

/** The entry of `arm` in an `eval.json`'s results (under the two-arm runs' name if that is where it is). */
export function evalEntry<T>(results: Readonly<Record<string, T>>, arm: string): T | undefined {
  const legacy = LEGACY_ARM_NAMES[arm];
  return results[arm] ?? (legacy === undefined ? undefined : results[legacy]);
}

/** A JSON file's content, or undefined when the file is not there. */
export function readJsonIfThere<T>(file: string): T | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : undefined;
}

/**
 * The algorithm an arm's result file says it trained with: its `algorithm`, or (the two-arm runs)
 * its `estimator` with the budget's invalid-action penalty, which the job added to it.
 */
export function recordedAlgorithm(saved: {
  readonly algorithm?: AlgorithmEntry;
  readonly estimator?: AlgorithmEntry;
  readonly budget?: { readonly invalidActionPenalty?: number };
}): AlgorithmEntry | undefined {
  if (saved.algorithm !== undefined) return saved.algorithm;
  if (saved.estimator === undefined) return undefined;
  return {
    name: saved.estimator.name,
    options: {
      ...saved.estimator.options,
      invalidActionPenalty: saved.budget?.invalidActionPenalty ?? 0,
    },
  };
}

/** An algorithm entry as entries are compared by: option keys in name order. */
export function comparableAlgorithm(entry: AlgorithmEntry | undefined): string {
  if (entry === undefined) return 'none';
  const options = Object.fromEntries(
    Object.entries(entry.options).sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  return JSON.stringify({ name: entry.name, options });
}

/**
 * The job files of an output folder (`seed-N/<arm>.json`, `seed-N/eval.json`; none if the folder is
 * not there) whose recorded budget is not `budget`: the jobs a run on `budget` would not keep.
 * Empty when every committed job resumes on it.
 */
export function jobsOffBudget(out: string, budget: unknown): string[] {
  if (!existsSync(out)) return [];
  const wanted = comparableBudget(budget);
  return readdirSync(out, { recursive: true, encoding: 'utf8' })
    .filter((f) => /^seed-\d+[\\/][^\\/]+\.json$/.test(f))
    .filter((f) => {
      const saved = JSON.parse(readFileSync(join(out, f), 'utf8')) as { budget?: unknown };
      return comparableBudget(saved.budget) !== wanted;
    });
}
