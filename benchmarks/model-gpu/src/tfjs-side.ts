/**
 * The TensorFlow.js side: each workload on @agentrl/model-tfjs with the webgpu backend, timed by
 * wall clock (every step ends in a GPU sync or a read-back), with its dispatch count, summed
 * kernel time from timestamp queries (a separate, instrumented run) and peak buffer bytes.
 */
import { createRng, type Rng } from '@agentrl/core';
import {
  type CausalLM,
  createCausalLM,
  type FusedKernelsOption,
  type ModelLogger,
  measureWebGPUMemory,
  selectBackend,
  webgpuBindingLimit,
  withStreamingBackprop,
} from '@agentrl/model-tfjs';
import { countWebGPUDispatches } from '@agentrl/model-tfjs/internal';
import * as tf from '@tensorflow/tfjs';
import {
  type KernelProfile,
  kernelProfile,
  kernelTime,
  releaseFreeBuffers,
  syncGpu,
} from './gpu-metrics.ts';
import { createRandomModel } from './model-factory.ts';
import { microBatchSize, type Workload, workloadTokens } from './shapes.ts';

export interface TfjsResult {
  /** Median wall time of one step (ms). */
  readonly ms: number;
  readonly msAll: readonly number[];
  readonly tokens: number;
  readonly tokensPerSecond: number;
  /** Compute dispatches of one step (`countWebGPUDispatches`; generate: the whole generation). */
  readonly dispatches: number;
  /** generate: dispatches per decoding step (the whole generation ÷ new tokens). */
  readonly dispatchesPerToken?: number;
  /** Bytes read back from the GPU in one step (`countWebGPUDispatches`). */
  readonly readBytes: number;
  /**
   * Host time issuing the step's kernels (`countWebGPUDispatches`' `hostMs`: tfjs's engine and
   * the backend's recording, inside outermost kernel calls) and its share of that step's wall
   * time: the host-side bound on the step, whatever the GPU's speed.
   */
  readonly hostMs: number;
  readonly hostFraction: number;
  /** Summed kernel time of one step from timestamp queries, or null with the reason. */
  readonly kernelMs: number | null;
  readonly kernelTimeNote?: string;
  /** kernelMs / ms: the share of the step the GPU spends in kernels. */
  readonly busyFraction: number | null;
  /** The timed run's dispatches grouped by kernel, shapes and flags (with kernel time only). */
  readonly profile?: KernelProfile;
  readonly peakInUseBytes: number;
  readonly peakPoolBytes: number;
  readonly microBatchSize?: number;
  readonly parameters: number;
  readonly trainableParameters: number;
  /** Time to create the model with random weights (ms), on the workload that created it. */
  readonly createMs?: number;
}

export interface TfjsOptions {
  readonly repeats: number;
  /** Measure kernel time with timestamp queries (an extra instrumented run per workload). */
  readonly kernelTiming: boolean;
  /** `tiled` (default): fast tiled random weights; `exact`: `createCausalLM`'s own draw. */
  readonly init?: 'tiled' | 'exact';
  readonly logger?: ModelLogger;
  /** The webgpu set-up's fused-kernel switches (default: the model package's). */
  readonly fusedKernels?: FusedKernelsOption;
  /** Training precision of the set-up (default `f32`; `mixed`: half-precision matmul inputs). */
  readonly precision?: 'f32' | 'mixed';
  /** Progress lines (stderr in the CLI). */
  readonly progress?: (line: string) => void;
}

const ids = (n: number, vocab: number, rng: Rng): number[] =>
  Array.from({ length: n }, () => rng.int(vocab));

function causalMask(T: number): tf.Tensor4D {
  const data = new Float32Array(T * T);
  for (let t = 0; t < T; t++) for (let s = t + 1; s < T; s++) data[t * T + s] = -1e9;
  return tf.tensor4d(data, [1, 1, T, T]);
}

/** The step function of a workload on `model`, and what it needs disposed afterwards. */
function stepOf(
  w: Workload,
  model: CausalLM,
  rng: Rng,
): { step: () => Promise<void>; dispose: () => void; microBatchSize?: number } {
  const V = w.config.vocab_size;
  switch (w.kind) {
    case 'block-forward':
    case 'block-forward-backward': {
      const B = w.batch;
      const T = w.seqLen ?? 1;
      const input = tf.tensor2d(ids(B * T, V, rng), [B, T], 'int32');
      const positions = Int32Array.from({ length: B * T }, (_, i) => i % T);
      const mask = causalMask(T);
      const dy = tf.randomNormal([B * T, w.config.hidden_size], 0, 1, 'float32', 3);
      const inputs = { ids: input, positions, mask };
      const dispose = () => tf.dispose([input, mask, dy]);
      if (w.kind === 'block-forward') {
        return {
          step: async () => {
            const h = tf.tidy(() => model.forward({ ...inputs, inference: true }).hidden);
            await syncGpu();
            h.dispose();
          },
          dispose,
        };
      }
      return {
        step: async () => {
          // The backward pass as the train steps run it (freeing gradients as it goes).
          const { value, grads } = withStreamingBackprop(() =>
            tf.variableGrads(
              () => tf.sum(tf.mul(model.forward(inputs).hidden, dy)) as tf.Scalar,
              model.trainableVariables(),
            ),
          );
          await syncGpu();
          tf.dispose([value, ...Object.values(grads)]);
        },
        dispose,
      };
    }
    case 'train':
    case 'lora': {
      if (w.kind === 'lora') {
        model.enableLoRA({
          rank: w.loraRank ?? 16,
          ...(w.loraAlpha === undefined ? {} : { alpha: w.loraAlpha }),
        });
      }
      const P = w.promptLen ?? 1;
      const R = w.responseLen ?? 1;
      const samples = Array.from({ length: w.batch }, () => ({
        promptIds: ids(P, V, rng),
        responseIds: ids(R, V, rng),
      }));
      const mb = w.microBatchSize ?? microBatchSize(w, webgpuBindingLimit() ?? 2_147_483_644);
      return {
        step: async () => {
          await model.sftStep(samples, { learningRate: 1e-5, microBatchSize: mb });
        },
        dispose: () => {},
        microBatchSize: mb,
      };
    }
    case 'generate': {
      const prompts = Array.from({ length: w.batch }, () => ids(w.promptLen ?? 1, V, rng));
      const n = w.newTokens ?? 1;
      return {
        step: async () => {
          const out = await model.generate(prompts, {
            maxNewTokens: n,
            temperature: 0,
            stopTokenIds: [],
          });
          const produced = out.tokenIds.reduce((a, t) => a + t.length, 0);
          if (produced !== w.batch * n) {
            throw new Error(`generate produced ${produced} tokens, expected ${w.batch * n}`);
          }
        },
        dispose: () => {},
      };
    }
  }
}

/** The median (mean of the middle two for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  if (s.length === 0) return Number.NaN;
  return s.length % 2 === 1
    ? (s[mid] as number)
    : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/**
 * Runs the workloads in order on the webgpu backend; workloads of one `model` share the
 * instance (LoRA last: it freezes the base). `onResult` gets each result (or error) as it ends.
 */
export async function runTfjsWorkloads(
  list: readonly Workload[],
  options: TfjsOptions,
  onResult: (w: Workload, result: TfjsResult | { error: string }) => void,
): Promise<void> {
  let current: { name: string; model: CausalLM } | undefined;
  const say = options.progress ?? (() => {});
  const drop = () => {
    current?.model.dispose();
    current = undefined;
    if (tf.getBackend() === 'webgpu') releaseFreeBuffers();
  };
  for (const w of list) {
    let created: number | undefined;
    try {
      if (current?.name !== w.model) {
        drop();
        const t0 = performance.now();
        say(`tfjs: creating ${w.model} (random weights)`);
        current = {
          name: w.model,
          model: await (options.init === 'exact' ? createCausalLM : createRandomModel)(w.config, {
            seed: 1,
            backend: 'webgpu',
            ...(options.logger ? { logger: options.logger } : {}),
          }),
        };
        created = performance.now() - t0;
      }
      // Creating a model sets the backend up with the default switches: state this run's again.
      await selectBackend({
        backend: 'webgpu',
        precision: options.precision ?? 'f32',
        ...(options.fusedKernels === undefined
          ? {}
          : { webgpu: { fusedKernels: options.fusedKernels } }),
      });
      const model = current.model;
      const { step, dispose, microBatchSize: mb } = stepOf(w, model, createRng(`${w.name}`));
      try {
        // Peak buffer bytes from the warm-up to the end of the kernel timing.
        const measured = await measureWebGPUMemory(async () => {
          say(`tfjs: ${w.name}: warm-up`);
          await step();
          const times: number[] = [];
          let dispatches = 0;
          let readBytes = 0;
          let hostMs = 0;
          let hostFraction = 0;
          for (let i = 0; i < options.repeats; i++) {
            const t0 = performance.now();
            if (i === 0) ({ dispatches, readBytes, hostMs } = await countWebGPUDispatches(step));
            else await step();
            times.push(performance.now() - t0);
            if (i === 0) hostFraction = hostMs / (times[0] as number);
          }
          const ms = median(times);
          let kernel: { kernelMs: number | null; note?: string; profile?: KernelProfile } = {
            kernelMs: null,
            note: 'not measured (--no-kernel-time)',
          };
          if (options.kernelTiming) {
            say(`tfjs: ${w.name}: kernel time (timestamp queries)`);
            const k = await kernelTime(step);
            kernel =
              k.kernelMs === null
                ? { kernelMs: null, note: k.reason }
                : {
                    kernelMs: k.kernelMs,
                    note: `${k.kernels} timed kernels`,
                    profile: kernelProfile(k.dispatches, ms),
                  };
          }
          return { times, ms, dispatches, readBytes, hostMs, hostFraction, kernel };
        });
        const { times, ms, dispatches, readBytes, hostMs, hostFraction, kernel } = measured.result;
        const peak = { inUse: measured.peakInUseBytes, pool: measured.peakPoolBytes };
        const tokens = workloadTokens(w);
        onResult(w, {
          ms,
          msAll: times,
          tokens,
          tokensPerSecond: (tokens / ms) * 1000,
          dispatches,
          ...(w.kind === 'generate' ? { dispatchesPerToken: dispatches / (w.newTokens ?? 1) } : {}),
          readBytes,
          hostMs,
          hostFraction,
          kernelMs: kernel.kernelMs,
          ...(kernel.note === undefined ? {} : { kernelTimeNote: kernel.note }),
          busyFraction: kernel.kernelMs === null ? null : kernel.kernelMs / ms,
          ...(kernel.profile === undefined ? {} : { profile: kernel.profile }),
          peakInUseBytes: peak.inUse,
          peakPoolBytes: peak.pool,
          ...(mb === undefined ? {} : { microBatchSize: mb }),
          parameters: model.numParameters(),
          trainableParameters: model
            .trainableVariables()
            .reduce((a: number, v: tf.Variable) => a + v.size, 0),
          ...(created === undefined ? {} : { createMs: created }),
        });
      } finally {
        dispose();
      }
    } catch (error) {
      onResult(w, { error: error instanceof Error ? error.message : String(error) });
      drop();
    }
    const next = list[list.indexOf(w) + 1];
    if (next === undefined || next.model !== w.model) drop();
    else if (tf.getBackend() === 'webgpu') releaseFreeBuffers();
  }
  drop();
}
