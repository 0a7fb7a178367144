/**
 * What the GiGPO-against-GRPO benchmarks share (`benchmarks/gigpo-vs-grpo-*`): a benchmark names
 * its budgets and its env (`Benchmark`); the kit resolves the budget from the environment, runs the
 * jobs (warm start, one job per arm, final evaluation) as processes two at a time, resumes, and
 * writes the paired summary.
 */
export {
  ARMS,
  type BenchAgent,
  type BenchBudget,
  type BenchBudgetOf,
  type BenchMetric,
  type Benchmark,
  type BudgetName,
  benchBudgets,
  budgetName,
  comparableBudget,
  FINAL_EVAL_EPISODES,
  type ResolvedBench,
  resolveBench,
  SEEDS,
  warmRecipe,
  withOverrides,
} from './config.ts';
export {
  alreadyDone,
  type BenchPaths,
  benchJobs,
  type DriverArgs,
  type Job,
  parseDriverArgs,
  runBench,
  runInOrder,
} from './driver.ts';
export {
  type JobSpec,
  PHASES,
  parseJobArgs,
  runJob,
  runJobCli,
  type ValidationPoint,
} from './job.ts';
export { summaryMarkdown } from './markdown.ts';
export { summarize } from './results.ts';
export { meanStd, type PairedDifference, pairedDifference } from './stats.ts';
export { type BenchSummary, readSummary, type SummarySpec } from './summarize.ts';
