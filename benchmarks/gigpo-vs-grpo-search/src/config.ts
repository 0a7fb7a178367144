/**
 * The search-QA benchmark: its budget is the search demo's recipe (examples/search-gigpo,
 * `FULL_BUDGET`), imported so the two cannot drift apart; its env the demo's generated knowledge
 * base (one per seed), trained on the training questions and validated on the held-out ones. Two
 * arms, GRPO and GiGPO as the paper runs it on search-QA (anchor states grouped by similarity at
 * 0.9), each from the same saved warm start per seed. The jobs, the driver and the summary are the
 * kit's (`@agentrl-bench/gigpo-vs-grpo-kit`); the summary counts exact match per data source
 * (single-hop, two-hop) beside exact match over all questions.
 */
import { SYNTHETIC_MULTIHOP, SYNTHETIC_SINGLE } from '@agentrl/env-search';
import {
  createTinyAgent,
  FULL_BUDGET as DEMO_BUDGET,
  envSpec,
  expertPolicy,
  expertResponse,
} from '@agentrl/example-search-gigpo';
import {
  type Benchmark,
  type BenchTaskType,
  benchBudgets,
  type PaperReference,
  resolveBench,
} from '@agentrl-bench/gigpo-vs-grpo-kit';

/** The arms: the baseline and GiGPO with similar anchors grouped (the kit's `ARMS`). */
export const SEARCH_ARMS: readonly string[] = ['grpo', 'gigpo-sim0.9'];

/**
 * Ten seeds the search demo has never run (its README's runs used 0, 7, 11–13 and 40–48), each a
 * knowledge base and a model initialisation of its own.
 */
export const SEARCH_SEEDS: readonly number[] = Array.from({ length: 10 }, (_, i) => 200 + i);

/**
 * The demo's fields this benchmark does not carry in its budget: the similarity threshold is the
 * GiGPO arm's (`gigpo-sim0.9`, so GRPO has none); `demoShare` is 1 in the demo (demonstrations and
 * RL both ask every training question, as here); `ppoEpochs` is 1 in the demo, the trainer's
 * default, which the kit's jobs use. The package's test holds the demo to those values.
 */
const {
  similarity: _similarity,
  demoShare: _demoShare,
  ppoEpochs: _ppoEpochs,
  ...DEMO_FIELDS
} = DEMO_BUDGET;

/** The demo's per-turn token limit (`runDemo` in examples/search-gigpo/src/demo.ts passes 6). */
const MAX_NEW_TOKENS = 6;

const KIT_BUDGETS = benchBudgets(DEMO_FIELDS, { maxNewTokens: MAX_NEW_TOKENS }, {});

/**
 * The budgets: the demo's recipe (decoder, warm start with its stopping rule, 800 iterations of
 * 32 groups × 4, temperatures, 4 turns, top-1 passage) with its per-turn limit of 6 tokens and its
 * invalid-action penalty of 0.01 (the paper's search setting; the kit's default is none),
 * validated on 96 held-out questions five times (every 200 iterations); the smoke run with the
 * demo kit's smoke sizes; the long one with three times the iterations (the kit's
 * `benchBudgets`).
 */
export const BUDGETS = {
  full: { ...KIT_BUDGETS.full, invalidActionPenalty: DEMO_BUDGET.invalidActionPenalty },
  smoke: { ...KIT_BUDGETS.smoke, invalidActionPenalty: DEMO_BUDGET.invalidActionPenalty },
  long: { ...KIT_BUDGETS.long, invalidActionPenalty: DEMO_BUDGET.invalidActionPenalty },
};
export const FULL_BUDGET = BUDGETS.full;

/** The data sources as the table's first columns: exact match on each, as the demo reports them. */
export const DATA_SOURCES: readonly BenchTaskType[] = [
  { name: SYNTHETIC_SINGLE, label: 'EM single-hop' },
  { name: SYNTHETIC_MULTIHOP, label: 'EM two-hop' },
];

/**
 * The paper's search-QA number printed beside ours: GiGPO's exact match averaged over its seven QA
 * test sets with Qwen2.5-3B-Instruct, as the paper's abstract states it (47.2 with 7B). The
 * paper's GRPO row and per-dataset cells are not carried.
 */
export const PAPER_SEARCH_QA: PaperReference = {
  source:
    "Feng et al. 2025, arXiv 2505.10978 (v3), search-augmented QA, Qwen2.5-3B-Instruct, GiGPO's average exact match over seven QA test sets, checked against the paper's abstract; GRPO's row not carried",
  rows: { 'gigpo-sim0.9': { success: 42.1 } },
};

/** The benchmark: the seed's generated knowledge base, the demo's tiny agent, compact prompt and expert. */
export const SEARCH: Benchmark<typeof FULL_BUDGET> = {
  workload: () =>
    'a generated search-QA knowledge base per seed (320 people, 64 towns, BM25, top-1 passage, 4 turns); every training question for demonstrations and RL, held-out question g for held-out episode g (96 for the validations, 480 for the final evaluation)',
  subject: 'a generated search-QA knowledge base',
  heldOutNoun: 'questions',
  budgets: BUDGETS,
  warmFields: ['topK'],
  taskTypes: DATA_SOURCES,
  successLabel: 'EM (all)',
  paper: PAPER_SEARCH_QA,
  paperTable: 'search-augmented QA table',
  arms: SEARCH_ARMS,
  seeds: SEARCH_SEEDS,
  agent: (budget, seed) => createTinyAgent(budget, seed),
  trainEnv: (budget, seed) => envSpec(seed, 'train', budget),
  heldOutEnv: (budget, seed) => envSpec(seed, 'test', budget),
  expert: () => expertPolicy,
  formatResponse: expertResponse,
};

/** The benchmark with the budget of this process (`BENCH_SMOKE`, `BENCH_BUDGET`, `BENCH_SET`). */
export const BENCH = resolveBench(SEARCH);
