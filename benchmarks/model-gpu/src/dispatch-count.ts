/**
 * Dispatches per step on the webgpu backend, counted and attributed to the tfjs kernel that issued
 * each one, at the Qwen2.5 depths and tiny widths: a dispatch count depends on the layers, the
 * micro-batches and which kernels run, not on the widths, so software Vulkan counts what a GPU
 * run will issue. Each dispatch costs host time (tens of µs on Vulkan), the floor the README's
 * host column measures; the per-layer breakdown (a model of L layers minus one of L − 1) shows
 * where a layer's dispatches go, forward and backward.
 */
import { createCausalLM, type FusedKernelsOption } from '@agentrl/model-tfjs';
import { countWebGPUDispatches } from '@agentrl/model-tfjs/internal';
import * as tf from '@tensorflow/tfjs';

/** Dispatches of one call: the total and by `kernel / program`. */
export interface DispatchCount {
  readonly total: number;
  readonly byKernel: Readonly<Record<string, number>>;
}

interface KernelCall {
  readonly kernelName?: string;
}

interface ProgramLike {
  readonly shaderKey: string;
  readonly constructor: { readonly name: string };
}

/**
 * Runs `fn` and counts its dispatches (`countWebGPUDispatches`), each attributed to the innermost
 * registered kernel running when it was issued and its program (tfjs's class or our shader key);
 * a dispatch issued outside any kernel (the KV cache's in-place writes) is named by its program.
 */
export async function countByKernel(fn: () => Promise<unknown>): Promise<DispatchCount> {
  const backend = tf.backend() as unknown as {
    runWebGPUProgram: (program: ProgramLike, ...rest: unknown[]) => unknown;
  };
  const engine = tf.engine() as unknown as { runKernelFunc: (params: KernelCall) => unknown };
  const ownRun = Object.hasOwn(backend, 'runWebGPUProgram');
  const ownKernel = Object.hasOwn(engine, 'runKernelFunc');
  const run = backend.runWebGPUProgram;
  const kernelFunc = engine.runKernelFunc;
  const stack: KernelCall[] = [];
  const byKernel: Record<string, number> = {};
  engine.runKernelFunc = (params: KernelCall) => {
    stack.push(params);
    try {
      return kernelFunc.call(engine, params);
    } finally {
      stack.pop();
    }
  };
  backend.runWebGPUProgram = (program: ProgramLike, ...rest: unknown[]) => {
    const call = [...stack].reverse().find((c) => c.kernelName !== undefined);
    const name =
      program.constructor.name !== 'Object' ? program.constructor.name : program.shaderKey;
    const key = `${call?.kernelName ?? '(no kernel)'} / ${name}`;
    byKernel[key] = (byKernel[key] ?? 0) + 1;
    return run.call(backend, program, ...rest);
  };
  try {
    const { dispatches } = await countWebGPUDispatches(fn);
    return { total: dispatches, byKernel };
  } finally {
    if (ownRun) backend.runWebGPUProgram = run;
    else delete (backend as { runWebGPUProgram?: unknown }).runWebGPUProgram;
    if (ownKernel) engine.runKernelFunc = kernelFunc;
    else delete (engine as { runKernelFunc?: unknown }).runKernelFunc;
  }
}

/** `a − b` per key (keys whose difference is 0 left out), largest first. */
export function subtractCounts(
  a: Readonly<Record<string, number>>,
  b: Readonly<Record<string, number>>,
  divisor = 1,
): Record<string, number> {
  const out: [string, number][] = [];
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const n = ((a[key] ?? 0) - (b[key] ?? 0)) / divisor;
    if (n !== 0) out.push([key, n]);
  }
  return Object.fromEntries(out.sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0])));
}

/** The model shape counted: Qwen2.5's heads and depth at tiny widths. */
export interface CountShape {
  readonly name: string;
  readonly layers: number;
  readonly heads: number;
  readonly kvHeads: number;
}

/** Qwen2.5-0.5B and -1.5B: their depth and heads (widths do not change a dispatch count). */
export const COUNT_SHAPES: readonly CountShape[] = [
  { name: 'qwen2.5-0.5b', layers: 24, heads: 14, kvHeads: 2 },
  { name: 'qwen2.5-1.5b', layers: 28, heads: 12, kvHeads: 2 },
];

/** What each step counts: the batch of the train steps and of generation. */
export const COUNT_SETUP = {
  headDim: 16,
  intermediate: 128,
  vocab: 256,
  trainRows: 8,
  prompt: 8,
  response: 8,
  /** Rows per forward/backward pass: two micro-batches, as the full step on an H100. */
  microBatch: 4,
  loraRank: 4,
  genPrompts: 4,
  genTokens: 5,
} as const;

/** Dispatches of each step of one model shape: totals and one layer's share, by kernel. */
export interface StepCounts {
  readonly shape: string;
  readonly layers: number;
  /** A full AdamW train step (`sftStep`, two micro-batches). */
  readonly train: DispatchCount;
  readonly trainPerLayer: Record<string, number>;
  /** A LoRA step (`enableLoRA`, then `sftStep`). */
  readonly lora: DispatchCount;
  readonly loraPerLayer: Record<string, number>;
  /** One decode step of generation (a generation of n tokens minus one of 1, ÷ (n − 1)). */
  readonly decode: DispatchCount;
  readonly decodePerLayer: Record<string, number>;
}

const modelConfig = (s: CountShape, layers: number) => ({
  vocab_size: COUNT_SETUP.vocab,
  hidden_size: s.heads * COUNT_SETUP.headDim,
  intermediate_size: COUNT_SETUP.intermediate,
  num_hidden_layers: layers,
  num_attention_heads: s.heads,
  num_key_value_heads: s.kvHeads,
  tie_word_embeddings: true,
});

const ids = (n: number, offset: number) =>
  Array.from({ length: n }, (_, i) => (offset + 7 * i) % COUNT_SETUP.vocab);

async function counted(step: () => Promise<unknown>): Promise<DispatchCount> {
  await step(); // pipelines compiled, optimizer state created
  return countByKernel(step);
}

/** Counts of one model of `layers` layers: train, LoRA and decode (per step). */
async function countModel(
  s: CountShape,
  layers: number,
  fusedKernels: FusedKernelsOption | undefined,
  precision: 'f32' | 'mixed',
): Promise<{ train: DispatchCount; lora: DispatchCount; decode: DispatchCount }> {
  const model = await createCausalLM(modelConfig(s, layers), {
    seed: 1,
    backend: 'webgpu',
    precision,
    ...(fusedKernels === undefined ? {} : { webgpu: { fusedKernels } }),
  });
  try {
    const samples = Array.from({ length: COUNT_SETUP.trainRows }, (_, r) => ({
      promptIds: ids(COUNT_SETUP.prompt, r),
      responseIds: ids(COUNT_SETUP.response, r + 100),
    }));
    const sft = () =>
      model.sftStep(samples, { learningRate: 1e-4, microBatchSize: COUNT_SETUP.microBatch });
    const prompts = Array.from({ length: COUNT_SETUP.genPrompts }, (_, r) =>
      ids(COUNT_SETUP.prompt, r + 200),
    );
    const generate = (n: number) => () =>
      model.generate(prompts, { maxNewTokens: n, temperature: 0, stopTokenIds: [] });
    const train = await counted(sft);
    const n = COUNT_SETUP.genTokens;
    const long = await counted(generate(n));
    const short = await counted(generate(1));
    const decode = {
      total: (long.total - short.total) / (n - 1),
      byKernel: subtractCounts(long.byKernel, short.byKernel, n - 1),
    };
    model.enableLoRA({ rank: COUNT_SETUP.loraRank });
    const lora = await counted(sft);
    return { train, lora, decode };
  } finally {
    model.dispose();
  }
}

/**
 * Counts every step of `shape` (and one layer's share, from a model one layer shallower), under
 * the training `precision` (`mixed`: loss scaling, and half-precision products where they exist).
 */
export async function countSteps(
  shape: CountShape,
  fusedKernels?: FusedKernelsOption,
  precision: 'f32' | 'mixed' = 'f32',
): Promise<StepCounts> {
  const full = await countModel(shape, shape.layers, fusedKernels, precision);
  const less = await countModel(shape, shape.layers - 1, fusedKernels, precision);
  return {
    shape: shape.name,
    layers: shape.layers,
    train: full.train,
    trainPerLayer: subtractCounts(full.train.byKernel, less.train.byKernel),
    lora: full.lora,
    loraPerLayer: subtractCounts(full.lora.byKernel, less.lora.byKernel),
    decode: full.decode,
    decodePerLayer: subtractCounts(full.decode.byKernel, less.decode.byKernel),
  };
}
