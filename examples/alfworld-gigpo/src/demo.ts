/**
 * The main job: a tiny decoder learns generated ALFWorld households on CPU. Held-out success is
 * measured before the warm start, after the supervised warm start on expert demonstrations, and
 * after GiGPO, each with a Wilson interval; the run ends with `report.html`. The phases are the
 * runner's (`runPhases`, what `agentrl train` runs); this file holds the budget and the env's parts.
 */
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
import { createConsoleProgress, runPhases, writeRunInfo } from '@agentrl/runner';
import { expertResponse } from './compact-prompt.ts';
import { createTinyAgent, envSpec, expertPolicy, GENERATED } from './setup.ts';

/** Sizes and settings of one demo run (the kit's fields; ALFWorld adds none). */
export type DemoBudget = DemoBudgetBase;

/**
 * The measured CPU recipe (README "Findings"): a warm start long enough that a quarter of the
 * held-out games are won (so most groups hold both wins and losses), then GiGPO on 32 distinct
 * games per iteration (groups of 4; 16 gained less on held-out games), several AdamW steps per
 * iteration (mini-batches of 64 rows) at 2e-4, rollouts at the validation temperature 0.4, for 32
 * iterations (the held-out curve still rose after 16: README "Measured"). Held-out success is
 * measured on 480 games (intervals about 8 points wide instead of 18 with 96) after the warm
 * start and every 8 iterations.
 */
export const FULL_BUDGET: DemoBudget = {
  ...CPU_RECIPE,
  name: 'full',
  demoEpisodes: 400,
  sftSteps: 480,
  iterations: 32,
  valEvery: 8,
  maxTurns: 15,
};

/** A tiny budget that exercises every phase in seconds (CI smoke run): the kit's smoke sizes. */
export const SMOKE_BUDGET: DemoBudget = {
  ...FULL_BUDGET,
  ...SMOKE_SIZES,
  name: 'smoke',
  maxTurns: 4,
};

/** Options of {@link runDemo}. */
export type DemoOptions = KitOptions<DemoBudget>;

/** What the demo measured. */
export interface DemoResult extends DemoResultBase {
  /** Held-out wins at every validation; iteration 0 is right after the warm start. */
  readonly curve: CurvePoint[];
}

/** Runs the whole demo. */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const { budget: b, seed, stream, say, clock } = await startRun(options, FULL_BUDGET);
  const { tokenizer, model, policy } = await createTinyAgent(b, seed);
  return withWorkers(model, options.workers, async (workers) => {
    // The backend model-tfjs chose and, on webgpu, the adapter: logged and kept in the run info.
    const compute = backendInfo();
    const adapter = compute.adapter;
    say(
      `agentrl demo (${b.name}): ${model.numParameters().toLocaleString('en')} parameters, vocabulary ${tokenizer.vocabSize}, backend ${model.backend}${adapter ? ` (${describeAdapter(adapter)})` : ''}, ${threadsText(workers)}`,
    );
    await writeRunInfo(options.runDir, {
      command: 'alfworld-gigpo demo',
      seed,
      config: {
        budget: b,
        env: { ...GENERATED, maxSteps: b.maxTurns },
        prompt: 'compact',
        vocabulary: tokenizer.vocab,
      },
      model: JSON.parse(
        JSON.stringify({ parameters: model.numParameters(), workers, ...compute }),
      ) as Record<string, unknown>,
    });
    clock.lap('setup');

    const spec = envSpec(b.maxTurns);
    const phases = await runPhases({
      settings: demoSettings(b, {
        seed,
        runDir: options.runDir,
        maxNewTokens: 12,
        invalidActionPenalty: 0,
      }),
      policy,
      tokenizer,
      trainEnv: spec,
      expert: expertPolicy(),
      formatResponse: expertResponse,
      progress: createConsoleProgress(b.iterations, stream),
      say,
      clock,
      title: 'agentrl: GiGPO on tiny generated ALFWorld households',
    });
    const result = demoResult({ phases, model, tokenizer, workers });
    return result;
  });
}
