/**
 * Writes a benchmark's summary: `results.json` (the data) and `results.md` (the README's tables);
 * `results-N.*` for a final evaluation on another number of episodes than the budget's.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchBudget, ResolvedBench } from './config.ts';
import { summaryMarkdown } from './markdown.ts';
import { type BenchSummary, readSummary } from './summarize.ts';

/**
 * Summarizes the runs of `seeds` and `arms` in `from` (one output folder, or several that do not
 * share seeds) into `destination`/results.json and results.md (the resolved `resultsStem`).
 */
export async function summarize<B extends BenchBudget>(
  resolved: ResolvedBench<B>,
  from: string | readonly string[],
  destination: string,
  seeds: readonly number[],
  arms: readonly string[],
): Promise<{ summary: BenchSummary; markdown: string }> {
  const spec = {
    ...resolved.bench,
    workload: resolved.bench.workload(resolved.budget),
    budget: resolved.budget,
    finalEvalEpisodes: resolved.finalEvalEpisodes,
    evalStem: resolved.evalStem,
  };
  const summary = readSummary(spec, from, seeds, arms);
  await writeFile(
    join(destination, `${resolved.resultsStem}.json`),
    `${JSON.stringify(summary, null, 2)}\n`,
  );
  const markdown = summaryMarkdown(summary, spec);
  await writeFile(join(destination, `${resolved.resultsStem}.md`), `${markdown}\n`);
  return { summary, markdown };
}
