/**
 * What the GiGPO-against-GRPO benchmarks share (`benchmarks/gigpo-vs-grpo-*`): a benchmark names
 * its budgets and its env (`Benchmark`); the kit resolves the budget from the environment, runs the
 * jobs (warm start, one job per arm of `ARMS` that `--arms` picks, by default the benchmark's
 * `arms` or the paper's Table 1 rows, final evaluation) as processes
 * two at a time, resumes, and writes the summary laid out as the paper's Table 1.
 */
export {
  type AlgorithmEntry,
  ARMS,
  type ArmRefusal,
  type ArmSpec,
  BASELINE_ARM,
  type BenchAgent,
  type BenchBudget,
  type BenchBudgetOf,
  type BenchMetric,
  type Benchmark,
  type BenchTaskType,
  BUDGET_NAMES,
  type BudgetName,
  benchBudgets,
  budgetName,
  checkArms,
  comparableBudget,
  defaultArmsOf,
  FINAL_EVAL_EPISODES,
  LEGACY_ARM_NAMES,
  type PaperReference,
  type ResolvedBench,
  resolveBench,
  resolvedAlgorithm,
  SEEDS,
  TABLE_1_ARMS,
  TABLE_ITERATIONS,
  tableBudget,
  type WarmRecipe,
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
  runJobs,
} from './driver.ts';
export {
  armRefusal,
  defaultArms,
  type JobSpec,
  PHASES,
  parseArms,
  parseJobArgs,
  processSeconds,
  runJob,
  runJobCli,
  type ValidationPoint,
} from './job.ts';
export { summaryMarkdown } from './markdown.ts';
export { jobsOffBudget } from './paths.ts';
export { summarize } from './results.ts';
export {
  type MeanInterval,
  meanStd,
  type PairedDifference,
  pairedDifference,
  tInterval,
  wilsonInterval,
} from './stats.ts';
export {
  type BenchSummary,
  type FinalRecord,
  type JobTime,
  type PhaseTime,
  type ResultsTable,
  readSummary,
  type SummarySpec,
  seedFolders,
} from './summarize.ts';
