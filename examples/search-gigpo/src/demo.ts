/**
 * The search-QA demo: a tiny decoder learns to search a generated knowledge base and answer, on
 * CPU. Held-out success (exact match) is measured before the warm start, after the supervised
 * warm start on expert demonstrations, and after GiGPO, each with a Wilson interval and split
 * by data source (single-hop, two-hop); the run ends with `report.html` and `headline.json`.
 * The phases are the runner's (`runPhases`, what `agentrl train` runs); this file holds the budget and the
 * knowledge base's parts.
 */
import { generateSearchKb } from '@agentrl/env-search';
import {
  CPU_RECIPE,
  type CurvePoint,
  type DemoBudgetBase,
  type DemoResultBase,
  demoResult,
  demoSettings,
  type DemoOptions as KitOptions,
  SMOKE_SIZES,
  startRun,
  threadsText,
  withWorkers,
} from '@agentrl/example-demo-kit';
import { backendInfo, describeAdapter } from '@agentrl/model-tfjs';
import {
  createConsoleProgress,
  type HeadlineRow,
  type Metrics,
  runPhases,
  writeResults,
  writeRunInfo,
} from '@agentrl/runner';
import { expertResponse } from './compact-prompt.ts';
import { createTinyAgent, envSpec, expertPolicy, knowledgeBase, trainingParts } from './setup.ts';

/** Sizes and settings of one demo run: the kit's fields (`maxTurns` is the paper's 4) and search's. */
export interface DemoBudget extends DemoBudgetBase {
  /** Passes over an iteration's rows. */
  readonly ppoEpochs: number;
  /** Passages per search (the paper's 3; 1 here, see the README). */
  readonly topK: number;
  /** GiGPO's similarity grouping threshold (the paper's 0.9; 0: exact anchors). */
  readonly similarity: number;
  /** Invalid-action penalty of the reward (the paper's 0.01). */
  readonly invalidActionPenalty: number;
  /**
   * Share of the training questions the warm start's demonstrations come from; GiGPO's rollouts
   * ask the rest, questions the warm start never saw (1: both phases ask all of them).
   */
  readonly demoShare: number;
}

/** The measured CPU recipe (README "Measured"). */
export const FULL_BUDGET: DemoBudget = {
  ...CPU_RECIPE,
  name: 'full',
  demoEpisodes: 1200,
  // The warm start runs until the mean loss of its last 50 steps is at most 0.25 (the model has
  // learnt to copy the question's subject into its search), at most 1,500 steps.
  sftSteps: 1500,
  sftStopLoss: 0.25,
  iterations: 800,
  valEvery: 100,
  ppoEpochs: 1,
  maxTurns: 4,
  topK: 1,
  similarity: 0.9,
  invalidActionPenalty: 0.01,
  demoShare: 1,
};

/** A tiny budget that exercises every phase in seconds (CI smoke run): the kit's smoke sizes. */
export const SMOKE_BUDGET: DemoBudget = {
  ...FULL_BUDGET,
  ...SMOKE_SIZES,
  name: 'smoke',
};

/** Options of {@link runDemo}. */
export type DemoOptions = KitOptions<DemoBudget>;

/** Held-out wins per data source. */
export type SourceTally = Record<string, { wins: number; episodes: number }>;

/** What the demo measured. */
export interface DemoResult extends DemoResultBase {
  /** Exact match per data source before the warm start, after it and after RL. */
  readonly bySource: { label: string; sources: SourceTally }[];
  /** Held-out wins at every validation; iteration 0 is right after the warm start. */
  readonly curve: CurvePoint[];
}

/**
 * Wins per data source of a validation: its per-type success rates times the number of held-out
 * questions of each source it asked (episode g asks held-out question g, so the counts are known).
 */
function tallyFromMetrics(
  metrics: Record<string, number>,
  episodesBySource: Record<string, number>,
): SourceTally {
  const out: SourceTally = {};
  for (const [source, episodes] of Object.entries(episodesBySource)) {
    const rate = metrics[`val/success/${source}`];
    if (rate !== undefined) out[source] = { wins: Math.round(rate * episodes), episodes };
  }
  return out;
}

/** Runs the whole demo. */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const { budget: b, seed, stream, say, clock } = await startRun(options, FULL_BUDGET);
  const kb = generateSearchKb(knowledgeBase(seed));
  const asked = Array.from(
    { length: b.valEpisodes },
    (_, g) => kb.test[g % kb.test.length] as (typeof kb.test)[number],
  );
  const episodesBySource: Record<string, number> = {};
  for (const q of asked) episodesBySource[q.dataSource] = (episodesBySource[q.dataSource] ?? 0) + 1;

  const { tokenizer, model, policy } = await createTinyAgent(b, seed);
  return withWorkers(model, options.workers, async (workers) => {
    const compute = backendInfo();
    const adapter = compute.adapter;
    say(
      `agentrl search demo (${b.name}): knowledge base ${kb.entities.length} entities, ${kb.train.length} training and ${kb.test.length} held-out questions; ${model.numParameters().toLocaleString('en')} parameters, vocabulary ${tokenizer.vocabSize}, backend ${model.backend}${adapter ? ` (${describeAdapter(adapter)})` : ''}, ${threadsText(workers)}`,
    );
    await writeRunInfo(options.runDir, {
      command: 'search-gigpo demo',
      seed,
      config: {
        budget: b,
        env: { generator: knowledgeBase(seed), maxTurns: b.maxTurns, topK: b.topK },
        prompt: 'compact',
        vocabulary: tokenizer.vocab,
      },
      model: JSON.parse(
        JSON.stringify({ parameters: model.numParameters(), workers, ...compute }),
      ) as Record<string, unknown>,
    });
    clock.lap('setup');

    const envBudget = { maxTurns: b.maxTurns, topK: b.topK };
    const parts = trainingParts(seed, b.demoShare);
    // A share of 1: both phases play every training question, through one spec.
    const everyQuestion = b.demoShare === 1 ? envSpec(seed, 'train', envBudget) : undefined;
    const demoSpec =
      everyQuestion ?? envSpec(seed, 'train', envBudget, { indices: parts.demo, order: 'cycle' });
    const trainSpec =
      everyQuestion ?? envSpec(seed, 'train', envBudget, { indices: parts.rl, order: 'draw' });
    const valSpec = envSpec(seed, 'test', envBudget);
    if (b.demoShare !== 1)
      say(
        `demonstrations from ${parts.demo.length} of the ${kb.train.length} training questions; RL asks the other ${parts.rl.length}`,
      );
    const phases = await runPhases({
      settings: demoSettings(b, {
        seed,
        runDir: options.runDir,
        maxNewTokens: 6,
        invalidActionPenalty: b.invalidActionPenalty,
        ...(b.similarity > 0 ? { similarityThreshold: b.similarity } : {}),
        ppoEpochs: b.ppoEpochs,
      }),
      policy,
      tokenizer,
      trainEnv: trainSpec,
      valEnv: valSpec,
      demoEnv: demoSpec,
      expert: expertPolicy,
      formatResponse: expertResponse,
      progress: createConsoleProgress(b.iterations, stream),
      say,
      clock,
      // Exact match per data source has rows of its own, after the three overall rows.
      rowMetrics: () => undefined,
      title: 'agentrl: GiGPO on search-QA over a generated knowledge base',
    });

    // The rows of the headline with the metrics they came from (the evaluation before the warm
    // start is tallied from its episodes).
    const beforeSources: SourceTally = {};
    for (const e of phases.before?.result.episodes ?? []) {
      const entry = beforeSources[e.taskType] ?? { wins: 0, episodes: 0 };
      entry.episodes += 1;
      if (e.won) entry.wins += 1;
      beforeSources[e.taskType] = entry;
    }
    const [beforeRow, ...validated] = phases.headline as [HeadlineRow, ...HeadlineRow[]];
    const validations: (Metrics | undefined)[] = [
      phases.metrics.find((m) => m['val/wins'] !== undefined && m.iteration === 0),
      phases.summary.finalMetrics,
    ];
    const bySource: { label: string; sources: SourceTally }[] = [
      { label: beforeRow.label, sources: beforeSources },
      ...validated.map((row, i) => ({
        label: row.label,
        sources: tallyFromMetrics(validations[i] ?? {}, episodesBySource),
      })),
    ];
    const headline: HeadlineRow[] = [...phases.headline];
    for (const { label, sources } of bySource) {
      for (const [source, tally] of Object.entries(sources).sort()) {
        headline.push({ label: `EM ${source}, ${label}`, ...tally });
      }
    }
    await writeResults(options.runDir, {
      title: 'agentrl: GiGPO on search-QA over a generated knowledge base',
      headline,
      seconds: phases.seconds,
    });
    const result = { ...demoResult({ phases, model, tokenizer, workers }), headline };
    return {
      ...result,
      bySource,
    };
  });
}
