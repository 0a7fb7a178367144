/**
 * What the CPU demos (`alfworld-gigpo`, `webshop-gigpo`, `search-gigpo`) share beside the runner's
 * phases (`runPhases`, which they run as `agentrl train` does): their flags, a budget as the phases'
 * settings, worker threads, the end-of-run summary and the word tokenizer.
 */
export { type DemoArgs, type DemoDefaults, parseDemoArgs } from './args.ts';
export { CPU_RECIPE, createTinyPolicy, type ModelBudget, SMOKE_SIZES } from './model.ts';
export {
  AFTER_WARM_START_LABEL,
  afterGigpoLabel,
  BEFORE_LABEL,
  type CurvePoint,
  type DemoBudgetBase,
  type DemoOptions,
  type DemoPhaseParts,
  type DemoResultBase,
  type DemoResultOptions,
  type DemoRun,
  demoResult,
  demoSettings,
  type PhaseClock,
  phaseClock,
  sftStopRule,
  startRun,
  threadsText,
  threadWork,
  validationCurve,
  withWorkers,
  writeResults,
} from './phases.ts';
export { budgetFields, type PresetBudget, parsedPreset, presetBudget } from './preset-budget.ts';
export { type PrintedResult, printSummary, type SummaryFormat, winsPoint } from './print.ts';
export { joinWords, splitWords, type WordStyle, WordTokenizer } from './word-tokenizer.ts';
