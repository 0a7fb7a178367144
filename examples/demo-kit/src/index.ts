/**
 * What the CPU demos (`alfworld-gigpo`, `webshop-gigpo`, `search-gigpo`) share: their flags, the
 * phases they run in the same order, the end-of-run summary and the word tokenizer.
 */
export { type DemoArgs, type DemoDefaults, parseDemoArgs } from './args.ts';
export { CPU_RECIPE, createTinyPolicy, type ModelBudget, SMOKE_SIZES } from './model.ts';
export {
  AFTER_WARM_START_LABEL,
  afterGigpoLabel,
  BEFORE_LABEL,
  type BeforeOptions,
  beforeRow,
  type CurvePoint,
  type DemoBudgetBase,
  type DemoOptions,
  type DemoResultBase,
  type DemoRun,
  evaluateBefore,
  type FinishOptions,
  finishRun,
  type GigpoOptions,
  type GigpoRun,
  type PhaseClock,
  phaseClock,
  runGigpo,
  sftStopRule,
  startRun,
  threadsText,
  threadWork,
  validationCurve,
  validationRow,
  validationsToReport,
  type WarmStartOptions,
  type WarmStartResult,
  warmStart,
  withWorkers,
  writeResults,
} from './phases.ts';
export { type PrintedResult, printSummary, type SummaryFormat, winsPoint } from './print.ts';
export { joinWords, splitWords, type WordStyle, WordTokenizer } from './word-tokenizer.ts';
