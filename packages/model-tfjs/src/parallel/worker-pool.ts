/**
 * Data parallelism over worker threads: one wasm backend runs on one core, so a
 * train step's micro-batches are split between the calling thread and N workers, each holding a
 * copy of the weights; workers return gradient sums, the calling thread adds them, applies AdamW
 * and sends the new weights back. Generation splits the prompts the same way; sampling streams are
 * per row, so results do not depend on the number of workers.
 */
import { Worker } from 'node:worker_threads';
import { AgentRLError, type GenerationResult, type SamplingOptions } from '@agentrl/core';
import type { CausalLMConfig } from '@agentrl/core/checkpoint';
import {
  type WasmSwitches,
  type WebGPUSwitches,
  wasmSwitches,
  webgpuSwitches,
} from '../backends/switches.ts';
import type { ParameterStore } from '../decoder/parameter-store.ts';
import type { GradientJob, WorkerGradients } from '../train/samples.ts';

/** What the calling thread sends to a worker. */
export type WorkerCommand =
  | { readonly type: 'weights'; readonly weights: Float32Array[] }
  | { readonly type: 'gradients'; readonly job: GradientJob }
  | {
      readonly type: 'generate';
      readonly prompts: number[][];
      readonly sampling: SamplingOptions;
      readonly rowOffset: number;
    };

/** A command with its request id. */
export type WorkerRequest = WorkerCommand & { readonly id: number };

/** What a worker answers. */
export type WorkerResponse =
  | { readonly id: number; readonly ok: true; readonly result: unknown }
  | { readonly id: number; readonly ok: false; readonly error: string };

/** Data the worker starts from. */
export interface WorkerInit {
  readonly configRaw: Readonly<Record<string, unknown>>;
  readonly backend: string;
  readonly names: string[];
  readonly shapes: number[][];
  readonly weights: Float32Array[];
  /** The kernel switches of the calling thread's backend, so a worker computes the same way. */
  readonly wasm: WasmSwitches;
  readonly webgpu: WebGPUSwitches;
}

function workerEntry(): { url: URL; execArgv: string[] } {
  const here = import.meta.url;
  // Running from TypeScript sources (tests, benchmarks): the worker needs the source condition.
  if (here.endsWith('.ts'))
    return { url: new URL('./worker.ts', here), execArgv: ['--conditions=@agentrl/source'] };
  return { url: new URL('../worker.js', here), execArgv: [] };
}

async function readWeights(store: ParameterStore): Promise<Float32Array[]> {
  return Promise.all(
    store.variables().map(async (v) => Float32Array.from((await v.data()) as Float32Array)),
  );
}

/** A fixed set of worker threads holding copies of one model (the train steps' `GradientWorkers`). */
export class WorkerPool {
  readonly size: number;
  readonly #workers: Worker[];
  readonly #pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  #nextId = 0;

  private constructor(workers: Worker[]) {
    this.#workers = workers;
    this.size = workers.length;
    for (const w of workers) {
      w.on('message', (msg: WorkerResponse) => {
        const p = this.#pending.get(msg.id);
        if (p === undefined) return;
        this.#pending.delete(msg.id);
        if (msg.ok) p.resolve(msg.result);
        else p.reject(new AgentRLError('BACKEND_FAILURE', `model worker failed: ${msg.error}`));
      });
      w.on('error', (error) => {
        for (const p of this.#pending.values())
          p.reject(
            new AgentRLError('BACKEND_FAILURE', `model worker crashed: ${error.message}`, {
              cause: error,
            }),
          );
        this.#pending.clear();
      });
    }
  }

  /** Starts `size` workers, each with a copy of the model's current weights. */
  static async start(
    model: {
      readonly config: CausalLMConfig;
      readonly backend: string;
      readonly parameters: ParameterStore;
    },
    size: number,
  ): Promise<WorkerPool> {
    const { url, execArgv } = workerEntry();
    const variables = model.parameters.variables();
    const weights = await readWeights(model.parameters);
    const workers = Array.from({ length: size }, () => {
      const workerData: WorkerInit = {
        configRaw: model.config.raw,
        backend: model.backend,
        names: model.parameters.names(),
        shapes: variables.map((v) => [...v.shape]),
        weights,
        wasm: wasmSwitches(),
        webgpu: webgpuSwitches(),
      };
      return new Worker(url, { workerData, execArgv });
    });
    const pool = new WorkerPool(workers);
    // A round trip proves every worker loaded its model before the pool is used.
    await Promise.all(workers.map((_, i) => pool.#call(i, { type: 'weights', weights })));
    return pool;
  }

  #call(index: number, request: WorkerCommand, transfer: ArrayBuffer[] = []): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      (this.#workers[index] as Worker).postMessage({ ...request, id }, transfer);
    });
  }

  /** Gradient sums of `job` computed on worker `index`. */
  async gradients(index: number, job: GradientJob): Promise<WorkerGradients> {
    return (await this.#call(index, { type: 'gradients', job })) as WorkerGradients;
  }

  /** Generation of a slice of the batch on worker `index`; `rowOffset` keeps sampling streams per row. */
  async generate(
    index: number,
    prompts: number[][],
    sampling: SamplingOptions,
    rowOffset: number,
  ): Promise<GenerationResult> {
    return (await this.#call(index, {
      type: 'generate',
      prompts,
      sampling,
      rowOffset,
    })) as GenerationResult;
  }

  /** Sends the current weights to every worker. */
  async syncWeights(store: ParameterStore): Promise<void> {
    const weights = await readWeights(store);
    await Promise.all(
      this.#workers.map((_, i) => {
        const copy = i === this.size - 1 ? weights : weights.map((w) => w.slice());
        return this.#call(
          i,
          { type: 'weights', weights: copy },
          copy.map((w) => w.buffer as ArrayBuffer),
        );
      }),
    );
  }

  /** Stops every worker. */
  async terminate(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
