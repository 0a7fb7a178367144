/**
 * `pnpm --filter @agentrl-bench/rollout-engines bench` — the main job's rollout phase with the
 * tfjs decoder and with llama.cpp in-process, in the same run: the example's default budget
 * (96-wide 3-layer decoder, word-level vocabulary, 8 groups × 8 generated ALFWorld households,
 * 15 turns, 12 new tokens per turn at temperature 0.7), the same weights, games and sampling
 * seeds. Each round plays one rollout phase per arm, arms interleaved so that a busy machine
 * hurts them alike. For llama.cpp the weight sync of an RL iteration (save the checkpoint,
 * convert it to GGUF, load it) is timed too. Then one generate call alone, without
 * environments: 64 prompts of 80 seeded tokens, 12 new tokens, repeated (median reported).
 *
 * Flags: --rounds N (default 2), --threads LIST (llama.cpp threads per arm, default "1"),
 * --hidden N and --layers N (a wider or deeper decoder than the main job's 96 × 3, same
 * vocabulary and workload), --seed N (default 0), --json PATH (write the results there too).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  createRng,
  dropArgsSeparator,
  type GenerationResult,
  type Policy,
  type SamplingOptions,
} from '@agentrl/core';
import { LlamaCppEngine } from '@agentrl/engine-llamacpp';
import { createTinyAgent, envSpec, FULL_BUDGET } from '@agentrl/example-alfworld-gigpo';
import { backendInfo } from '@agentrl/model-tfjs';
import { EnvPool, policyAgent } from '@agentrl/runner';

const { values } = parseArgs({
  args: dropArgsSeparator(process.argv.slice(2)),
  options: {
    rounds: { type: 'string' },
    threads: { type: 'string' },
    seed: { type: 'string' },
    hidden: { type: 'string' },
    layers: { type: 'string' },
    json: { type: 'string' },
  },
});
const rounds = Number(values.rounds ?? 2);
const threadCounts = (values.threads ?? '1').split(',').map(Number);
const seed = Number(values.seed ?? 0);
const GROUPS = FULL_BUDGET.groups;
const GROUP_SIZE = FULL_BUDGET.groupSize;
const MAX_TURNS = FULL_BUDGET.maxTurns;
const MAX_NEW_TOKENS = 12; // the demo's Trainer setting
const TEMPERATURE = FULL_BUDGET.temperature;

/** Counts the tokens a policy generates and the time spent in `generate`. */
class Meter implements Policy {
  tokens = 0;
  calls = 0;
  ms = 0;
  readonly inner: Policy;
  constructor(inner: Policy) {
    this.inner = inner;
  }
  async generate(
    prompts: readonly (readonly number[])[],
    sampling: SamplingOptions,
  ): Promise<GenerationResult> {
    const t0 = performance.now();
    const out = await this.inner.generate(prompts, sampling);
    this.ms += performance.now() - t0;
    this.calls++;
    for (const row of out.tokenIds) this.tokens += row.length;
    return out;
  }
}

/** The engine as a token-in / token-out policy (log-probs are always reported here). */
function enginePolicy(engine: LlamaCppEngine): Policy {
  return {
    async generate(prompts, sampling) {
      const out = await engine.generate(prompts, sampling);
      return {
        tokenIds: out.tokenIds,
        logProbs: out.logProbs ?? out.tokenIds.map((row) => row.map(() => 0)),
        finishReasons: out.finishReasons,
      };
    },
  };
}

interface Row {
  arm: string;
  round: number;
  wallMs: number;
  generateMs: number;
  envMs: number;
  tokens: number;
  generateCalls: number;
  maxPromptTokens: number;
  syncMs?: number;
}

const work = await mkdtemp(join(tmpdir(), 'rollout-engines-'));
const budget = {
  ...FULL_BUDGET,
  hidden: Number(values.hidden ?? FULL_BUDGET.hidden),
  layers: Number(values.layers ?? FULL_BUDGET.layers),
};
const { tokenizer, model, policy } = await createTinyAgent(budget, seed);
const checkpoint = join(work, 'checkpoint');
await model.save(checkpoint);
console.log(
  `model: ${budget.hidden} wide, ${budget.layers} layers, ${model.numParameters().toLocaleString('en')} parameters, vocabulary ${tokenizer.vocabSize}, tfjs backend ${backendInfo().backend}; ${availableParallelism()} cores; ${GROUPS}×${GROUP_SIZE} envs, ${MAX_TURNS} turns, ${MAX_NEW_TOKENS} new tokens at T=${TEMPERATURE}`,
);

const engines = new Map<number, LlamaCppEngine>();
for (const threads of threadCounts) {
  const engine = await LlamaCppEngine.create({
    threads,
    parallelSequences: GROUPS * GROUP_SIZE,
    contextSize: 2048,
    gguf: { tokens: tokenizer.vocab },
  });
  await engine.syncWeights({ version: 0, checkpointDir: checkpoint });
  engines.set(threads, engine);
}

const arms: { name: string; policy: () => Policy; sync?: (round: number) => Promise<number> }[] = [
  { name: 'tfjs', policy: () => policy },
  ...threadCounts.map((threads) => ({
    name: `llama.cpp, ${threads} thread${threads === 1 ? '' : 's'}`,
    policy: () => enginePolicy(engines.get(threads) as LlamaCppEngine),
    // What an RL iteration adds: write the updated checkpoint, convert and load it.
    sync: async (round: number) => {
      const t0 = performance.now();
      const dir = join(work, `sync-${threads}-${round}`);
      await model.save(dir);
      await (engines.get(threads) as LlamaCppEngine).syncWeights({
        version: round + 1,
        checkpointDir: dir,
      });
      await rm(dir, { recursive: true, force: true });
      return performance.now() - t0;
    },
  })),
];

const rows: Row[] = [];
for (let round = 0; round < rounds; round++) {
  for (const arm of arms) {
    const syncMs = arm.sync === undefined ? undefined : await arm.sync(round);
    const meter = new Meter(arm.policy());
    let maxPromptTokens = 0;
    const agent = policyAgent(meter, tokenizer, {
      sampling: { maxNewTokens: MAX_NEW_TOKENS, temperature: TEMPERATURE },
    });
    const measured = {
      act: async (prompts: readonly string[], options: { seed: number }) => {
        const out = await agent.act(prompts, options);
        for (const r of out) maxPromptTokens = Math.max(maxPromptTokens, r.promptTokenIds.length);
        return out;
      },
    };
    const pool = new EnvPool(envSpec(MAX_TURNS));
    const t0 = performance.now();
    const result = await pool.rollout(measured, {
      groups: GROUPS,
      groupSize: GROUP_SIZE,
      seed,
      rolloutIndex: round,
      maxTurns: MAX_TURNS,
      samplingSeed: 1000 + round,
      idPrefix: `r${round}`,
    });
    const wallMs = performance.now() - t0;
    await pool.close();
    const row: Row = {
      arm: arm.name,
      round,
      wallMs,
      generateMs: meter.ms,
      envMs: result.envMs,
      tokens: meter.tokens,
      generateCalls: meter.calls,
      maxPromptTokens,
      ...(syncMs === undefined ? {} : { syncMs }),
    };
    rows.push(row);
    console.log(
      `round ${round} ${arm.name}: rollout ${(wallMs / 1000).toFixed(2)} s (generate ${(meter.ms / 1000).toFixed(2)} s, ${meter.tokens} tokens in ${meter.calls} calls, longest prompt ${maxPromptTokens})${syncMs === undefined ? '' : `, sync ${(syncMs / 1000).toFixed(2)} s`}`,
    );
  }
}
// One generate call alone: no environments, no prompt rendering.
const rng = createRng(seed).split('generate-only');
const batch = Array.from({ length: GROUPS * GROUP_SIZE }, () =>
  Array.from({ length: 80 }, () => rng.int(tokenizer.vocabSize)),
);
const generateOnly = new Map<string, number[]>();
const GENERATE_REPEATS = 5;
for (let r = 0; r < GENERATE_REPEATS; r++) {
  for (const arm of arms) {
    const t0 = performance.now();
    await arm.policy().generate(batch, {
      maxNewTokens: MAX_NEW_TOKENS,
      temperature: TEMPERATURE,
      seed: r,
      stopTokenIds: [],
    });
    const list = generateOnly.get(arm.name) ?? [];
    list.push(performance.now() - t0);
    generateOnly.set(arm.name, list);
  }
}
for (const engine of engines.values()) await engine.close();
model.dispose();
await rm(work, { recursive: true, force: true });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const base = median(rows.filter((r) => r.arm === 'tfjs').map((r) => r.wallMs));
console.log(
  `\n| arm | rollout phase (median of ${rounds}) | in generate | generated tokens / s | weight sync | rollout speed-up vs tfjs |`,
);
console.log('| --- | --- | --- | --- | --- | --- |');
for (const arm of arms) {
  const mine = rows.filter((r) => r.arm === arm.name);
  const wall = median(mine.map((r) => r.wallMs));
  const gen = median(mine.map((r) => r.generateMs));
  const tps = median(mine.map((r) => r.tokens / (r.generateMs / 1000)));
  const sync =
    mine[0]?.syncMs === undefined
      ? '—'
      : `${(median(mine.map((r) => r.syncMs as number)) / 1000).toFixed(2)} s`;
  console.log(
    `| ${arm.name} | ${(wall / 1000).toFixed(2)} s | ${(gen / 1000).toFixed(2)} s | ${Math.round(tps).toLocaleString('en')} | ${sync} | ${(base / wall).toFixed(2)}× |`,
  );
}
const genBase = median(generateOnly.get('tfjs') ?? []);
console.log(
  `\n| arm | one generate: 64 prompts × 80 tokens + 12 new (median of ${GENERATE_REPEATS}) | speed-up vs tfjs |`,
);
console.log('| --- | --- | --- |');
for (const arm of arms) {
  const ms = median(generateOnly.get(arm.name) ?? []);
  console.log(`| ${arm.name} | ${(ms / 1000).toFixed(2)} s | ${(genBase / ms).toFixed(2)}× |`);
}
if (values.json !== undefined)
  await writeFile(
    values.json,
    `${JSON.stringify({ rollouts: rows, generateOnly: Object.fromEntries(generateOnly) }, null, 2)}\n`,
  );
