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
 * Flags: --rounds N (default 2; 0 times the generate calls alone), --threads LIST (llama.cpp threads per arm, default "1"),
 * --prefix-reuse LIST (llama.cpp arms with and without reuse of cached prompt prefixes, default
 * "on,off"), --kv F16|F32 and --flash-attention on|off|auto (llama.cpp's KV cache, default F16
 * and auto, llama.cpp's own; lists of equal length give one arm per pair), --hidden N and --layers N (a wider or
 * deeper decoder than the main job's 96 × 3, same vocabulary and workload), --checkpoint DIR
 * (start from these weights, e.g. a warm start, instead of fresh seeded ones), --seed N
 * (default 0), --context N (llama.cpp's tokens per sequence, default 2048: a cache copy between
 * sequences copies all of them), --gguf F32|F16|BF16 (llama.cpp's matrix type, default F32),
 * --json PATH (write the results there too).
 *
 * Every row reports wall time and this process's CPU time (user + system, all threads) with the
 * machine's one-minute load average, since the machine may be shared.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
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
    checkpoint: { type: 'string' },
    kv: { type: 'string' },
    'flash-attention': { type: 'string' },
    'prefix-reuse': { type: 'string' },
    context: { type: 'string' },
    gguf: { type: 'string' },
  },
});
const rounds = Number(values.rounds ?? 2);
const threadCounts = (values.threads ?? '1').split(',').map(Number);
const seed = Number(values.seed ?? 0);
const reuseModes = (values['prefix-reuse'] ?? 'on,off').split(',').map((m) => {
  if (m !== 'on' && m !== 'off') throw new Error(`--prefix-reuse ${m}: use on, off or on,off`);
  return m === 'on';
});
const contextSize = Number(values.context ?? 2048);
const ggufType = (values.gguf ?? 'F32') as 'F32' | 'F16' | 'BF16';
if (!['F32', 'F16', 'BF16'].includes(ggufType))
  throw new Error(`--gguf ${values.gguf}: use F32, F16 or BF16`);
// KV cache settings per arm: --kv and --flash-attention lists of equal length (or one item).
const kvList = (values.kv ?? 'F16').split(',');
const faList = (values['flash-attention'] ?? 'auto').split(',');
const cacheCount = Math.max(kvList.length, faList.length);
if (
  (kvList.length !== 1 && kvList.length !== cacheCount) ||
  (faList.length !== 1 && faList.length !== cacheCount)
)
  throw new Error('--kv and --flash-attention: give lists of equal length, or one item');
const caches = Array.from({ length: cacheCount }, (_, i) => {
  const kv = kvList[kvList.length === 1 ? 0 : i] as string as 'F16' | 'F32';
  const fa = faList[faList.length === 1 ? 0 : i] as string;
  if (kv !== 'F16' && kv !== 'F32') throw new Error(`--kv ${kv}: use F16 or F32`);
  if (!['on', 'off', 'auto'].includes(fa))
    throw new Error(`--flash-attention ${fa}: use on, off or auto`);
  return {
    kvCacheType: kv,
    flashAttention: fa === 'auto' ? ('auto' as const) : fa === 'on',
    label: `${kv} cache, flash attention ${fa}`,
  };
});
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
  cpuMs: number;
  load: [number, number];
  promptTokensEvaluated?: number;
  promptTokensReused?: number;
  cacheCopies?: number;
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
if (values.checkpoint !== undefined) await policy.load(values.checkpoint);
const checkpoint = join(work, 'checkpoint');
await model.save(checkpoint);
console.log(
  `model: ${budget.hidden} wide, ${budget.layers} layers, ${model.numParameters().toLocaleString('en')} parameters, ${values.checkpoint === undefined ? 'fresh seeded weights' : `weights from ${values.checkpoint}`}, vocabulary ${tokenizer.vocabSize}, tfjs backend ${backendInfo().backend}; ${availableParallelism()} cores; ${GROUPS}×${GROUP_SIZE} envs, ${MAX_TURNS} turns, ${MAX_NEW_TOKENS} new tokens at T=${TEMPERATURE}; llama.cpp ${ggufType} weights, ${caches.map((c) => c.label).join(' / ')}, ${contextSize} tokens per sequence`,
);

interface Arm {
  name: string;
  policy: () => Policy;
  engine?: LlamaCppEngine;
  sync?: (round: number) => Promise<number>;
}
const arms: Arm[] = [{ name: 'tfjs', policy: () => policy }];
for (const threads of threadCounts) {
  for (const prefixReuse of reuseModes) {
    for (const cache of caches) {
      const engine = await LlamaCppEngine.create({
        threads,
        parallelSequences: GROUPS * GROUP_SIZE,
        contextSize,
        kvCacheType: cache.kvCacheType,
        flashAttention: cache.flashAttention,
        prefixReuse,
        gguf: { tokens: tokenizer.vocab, type: ggufType },
      });
      await engine.syncWeights({ version: 0, checkpointDir: checkpoint });
      const tag = `${threads}-${prefixReuse ? 'reuse' : 'noreuse'}-${caches.indexOf(cache)}`;
      arms.push({
        name: `llama.cpp, ${threads} thread${threads === 1 ? '' : 's'}, prefix reuse ${prefixReuse ? 'on' : 'off'}${caches.length > 1 ? `, ${cache.label}` : ''}`,
        policy: () => enginePolicy(engine),
        engine,
        // What an RL iteration adds: write the updated checkpoint, convert and load it.
        sync: async (round: number) => {
          const t0 = performance.now();
          const dir = join(work, `sync-${tag}-${round}`);
          await model.save(dir);
          await engine.syncWeights({ version: round + 1, checkpointDir: dir });
          await rm(dir, { recursive: true, force: true });
          return performance.now() - t0;
        },
      });
    }
  }
}

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
    const prompt0 = arm.engine?.promptTokens;
    const load0 = loadavg()[0] as number;
    const cpu0 = process.cpuUsage();
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
    const cpu = process.cpuUsage(cpu0);
    const load1 = loadavg()[0] as number;
    const prompt1 = arm.engine?.promptTokens;
    await pool.close();
    const row: Row = {
      arm: arm.name,
      round,
      wallMs,
      cpuMs: (cpu.user + cpu.system) / 1000,
      load: [load0, load1],
      ...(prompt0 !== undefined && prompt1 !== undefined
        ? {
            promptTokensEvaluated: prompt1.evaluated - prompt0.evaluated,
            promptTokensReused: prompt1.reused - prompt0.reused,
            cacheCopies: prompt1.copies - prompt0.copies,
          }
        : {}),
      generateMs: meter.ms,
      envMs: result.envMs,
      tokens: meter.tokens,
      generateCalls: meter.calls,
      maxPromptTokens,
      ...(syncMs === undefined ? {} : { syncMs }),
    };
    rows.push(row);
    console.log(
      `round ${round} ${arm.name}: rollout ${(wallMs / 1000).toFixed(2)} s wall, ${(row.cpuMs / 1000).toFixed(2)} s CPU, load ${load0.toFixed(1)}→${load1.toFixed(1)} (generate ${(meter.ms / 1000).toFixed(2)} s, ${meter.tokens} tokens in ${meter.calls} calls, longest prompt ${maxPromptTokens}${row.promptTokensEvaluated === undefined ? '' : `, prompt tokens evaluated ${row.promptTokensEvaluated}, reused ${row.promptTokensReused} (${row.cacheCopies} cache copies)`})${syncMs === undefined ? '' : `, sync ${(syncMs / 1000).toFixed(2)} s`}`,
    );
  }
}
// One generate call alone: no environments, no prompt rendering. A fresh batch each repeat, so
// that no arm finds the prompts in its cache.
const rng = createRng(seed).split('generate-only');
const generateOnly = new Map<string, { wallMs: number; cpuMs: number }[]>();
const GENERATE_REPEATS = 5;
const generateLoads: number[] = [];
for (let r = 0; r < GENERATE_REPEATS; r++) {
  generateLoads.push(loadavg()[0] as number);
  const batch = Array.from({ length: GROUPS * GROUP_SIZE }, () =>
    Array.from({ length: 80 }, () => rng.int(tokenizer.vocabSize)),
  );
  for (const arm of arms) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await arm.policy().generate(batch, {
      maxNewTokens: MAX_NEW_TOKENS,
      temperature: TEMPERATURE,
      seed: r,
      stopTokenIds: [],
    });
    const cpu = process.cpuUsage(cpu0);
    const list = generateOnly.get(arm.name) ?? [];
    list.push({ wallMs: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 });
    generateOnly.set(arm.name, list);
  }
}
for (const arm of arms) await arm.engine?.close();
model.dispose();
await rm(work, { recursive: true, force: true });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const tfjsRows = rows.filter((r) => r.arm === 'tfjs');
const baseWall = median(tfjsRows.map((r) => r.wallMs));
const baseCpu = median(tfjsRows.map((r) => r.cpuMs));
// --rounds 0 times the generate calls alone.
if (rows.length > 0) {
  const loads = rows.flatMap((r) => r.load);
  console.log(
    `\nload average (1 min) during the phases: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
  );
  console.log(
    `\n| arm | rollout phase wall (median of ${rounds}) | CPU time | in generate | generated tokens / s | prompt tokens evaluated / reused | weight sync | speed-up vs tfjs, wall | CPU |`,
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const arm of arms) {
    const mine = rows.filter((r) => r.arm === arm.name);
    const wall = median(mine.map((r) => r.wallMs));
    const cpu = median(mine.map((r) => r.cpuMs));
    const gen = median(mine.map((r) => r.generateMs));
    const tps = median(mine.map((r) => r.tokens / (r.generateMs / 1000)));
    const prompt =
      mine[0]?.promptTokensEvaluated === undefined
        ? '—'
        : `${Math.round(median(mine.map((r) => r.promptTokensEvaluated as number))).toLocaleString('en')} / ${Math.round(median(mine.map((r) => r.promptTokensReused as number))).toLocaleString('en')}`;
    const sync =
      mine[0]?.syncMs === undefined ? '—' : s(median(mine.map((r) => r.syncMs as number)));
    console.log(
      `| ${arm.name} | ${s(wall)} | ${s(cpu)} | ${s(gen)} | ${Math.round(tps).toLocaleString('en')} | ${prompt} | ${sync} | ${(baseWall / wall).toFixed(2)}× | ${(baseCpu / cpu).toFixed(2)}× |`,
    );
  }
}
console.log(
  `\nload average (1 min) during the generate calls: ${Math.min(...generateLoads).toFixed(1)}–${Math.max(...generateLoads).toFixed(1)}`,
);
const genBase = generateOnly.get('tfjs') ?? [];
const genBaseWall = median(genBase.map((g) => g.wallMs));
const genBaseCpu = median(genBase.map((g) => g.cpuMs));
console.log(
  `\n| arm | one generate: 64 prompts × 80 tokens + 12 new, wall (median of ${GENERATE_REPEATS}) | CPU time | speed-up vs tfjs, wall | CPU |`,
);
console.log('| --- | --- | --- | --- | --- |');
for (const arm of arms) {
  const mine = generateOnly.get(arm.name) ?? [];
  const wall = median(mine.map((g) => g.wallMs));
  const cpu = median(mine.map((g) => g.cpuMs));
  console.log(
    `| ${arm.name} | ${s(wall)} | ${s(cpu)} | ${(genBaseWall / wall).toFixed(2)}× | ${(genBaseCpu / cpu).toFixed(2)}× |`,
  );
}
if (values.json !== undefined)
  await writeFile(
    values.json,
    `${JSON.stringify({ rollouts: rows, generateOnly: Object.fromEntries(generateOnly) }, null, 2)}\n`,
  );
