/**
 * A {@link RolloutEngine} on llama.cpp in-process, through node-llama-cpp's prebuilt binaries.
 * Token ids go in and come out as they are: prompts are evaluated as ids, our stop ids end a
 * response (llama.cpp's own end-of-generation tokens do not), and no text is ever tokenized by
 * llama.cpp. Each weight sync converts the trainer's checkpoint to GGUF under a new file name,
 * loads it, and only then drops the previous model, so a failed sync leaves an engine that
 * refuses to generate rather than one that samples from stale weights.
 *
 * Sampling follows llama.cpp's chain: top-k, then top-p, then temperature, then a seeded draw per
 * prompt. The reported log-prob of a token is log p under that (truncated, tempered)
 * distribution; with top-k 0 and top-p 1 it is `log softmax(logits / T)`, the tfjs decoder's
 * convention, and greedy decoding reports the untempered log-prob.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AgentRLError,
  createRng,
  type FinishReason,
  InvalidInputError,
  type RolloutEngine,
  type RolloutResult,
  type SamplingOptions,
  type WeightSnapshot,
  WeightSyncError,
} from '@agentrl/core';
import {
  type CausalLMConfig,
  LORA_BASE_FILE,
  LORA_STATE_FILE,
  type LoRABase,
} from '@agentrl/core/checkpoint';
// Types only at the top: node-llama-cpp's entry point has a top-level await, which would stop
// require() of this package on Node >= 20.19 (ERR_REQUIRE_ASYNC_MODULE); its code is imported
// when the first engine starts (sharedLlama).
import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';
import { checkpointToGguf, loraToGguf } from './convert.ts';
import type { EngineLogger, LlamaCppDevice, LlamaCppEngineOptions } from './options.ts';
import { type PromptTokenCounts, prefillSharedPrefixes } from './prefill.ts';

/**
 * The base folder of a model-tfjs LoRA checkpoint (its `lora-base.json` beside
 * `lora.safetensors`), or undefined for a checkpoint of full weights.
 */
async function loraBaseOf(dir: string): Promise<string | undefined> {
  if (!existsSync(join(dir, LORA_STATE_FILE)) || !existsSync(join(dir, LORA_BASE_FILE)))
    return undefined;
  const record = JSON.parse(await readFile(join(dir, LORA_BASE_FILE), 'utf8')) as Partial<LoRABase>;
  if (typeof record.path !== 'string') throw new Error('it names no base folder ("path")');
  return record.path;
}

/**
 * LoRA syncs on one loaded base before it is loaded afresh: node-llama-cpp frees an adapter only
 * with its model.
 */
const ADAPTERS_PER_MODEL = 16;

const GPU: Record<LlamaCppDevice, false | 'cuda' | 'vulkan' | 'metal'> = {
  cpu: false,
  cuda: 'cuda',
  vulkan: 'vulkan',
  metal: 'metal',
};

/**
 * llama.cpp's runtime, loaded once per device and thread cap. Its log is process-wide, so each
 * message goes to the loggers of every open engine.
 */
const RUNTIMES = new Map<string, Promise<Llama>>();
const LOGGERS = new Set<EngineLogger>();

function sharedLlama(device: LlamaCppDevice, threads: number | undefined): Promise<Llama> {
  const key = `${device}/${threads ?? 'auto'}`;
  let runtime = RUNTIMES.get(key);
  if (runtime === undefined) {
    runtime = import('node-llama-cpp').then(({ getLlama, LlamaLogLevel }) =>
      getLlama({
        gpu: GPU[device],
        build: 'never',
        skipDownload: true,
        progressLogs: false,
        logLevel: LlamaLogLevel.warn,
        logger: (level, message) => {
          const text = message.trim();
          if (text === '') return;
          const error = level === LlamaLogLevel.error || level === LlamaLogLevel.fatal;
          for (const logger of LOGGERS) {
            if (error) logger.warn?.(`llama.cpp: ${text}`, { level });
            else logger.info?.(`llama.cpp: ${text}`, { level });
          }
        },
        ...(threads !== undefined ? { maxThreads: threads } : {}),
      }),
    );
    RUNTIMES.set(key, runtime);
    runtime.catch(() => RUNTIMES.delete(key));
  }
  return runtime;
}

function positiveInt(field: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) {
    throw new InvalidInputError(
      `LlamaCppEngine: ${field} must be a positive integer, got ${value}`,
      { details: { field, value } },
    );
  }
  return value;
}

/** The llama.cpp engine; create it with {@link LlamaCppEngine.create}, then sync weights. */
export class LlamaCppEngine implements RolloutEngine {
  readonly name = 'llama.cpp';
  readonly device: LlamaCppDevice;
  readonly #llama: Llama;
  readonly #options: LlamaCppEngineOptions;
  readonly #workDir: string;
  readonly #ownsWorkDir: boolean;
  readonly #parallel: number;
  readonly #contextSize: number;
  #model: LlamaModel | undefined;
  #context: LlamaContext | undefined;
  #sequences: LlamaContextSequence[] = [];
  #modelPath: string | undefined;
  #config: CausalLMConfig | undefined;
  /** The base checkpoint of the loaded model when it carries LoRA adapters. */
  #baseDir: string | undefined;
  /** Adapter files loaded on the current model (node-llama-cpp frees them with the model). */
  #adapterPaths: string[] = [];
  #vocabSize = 0;
  #version: number | undefined;
  #failure: Error | undefined;
  #closed = false;
  #busy: Promise<unknown> = Promise.resolve();
  readonly #reuse: PromptTokenCounts = { evaluated: 0, reused: 0, copies: 0 };

  private constructor(
    llama: Llama,
    options: LlamaCppEngineOptions,
    workDir: string,
    ownsWorkDir: boolean,
  ) {
    this.#llama = llama;
    this.#options = options;
    this.device = options.device ?? 'cpu';
    this.#workDir = workDir;
    this.#ownsWorkDir = ownsWorkDir;
    this.#parallel = options.parallelSequences ?? 8;
    this.#contextSize = options.contextSize ?? 2048;
  }

  /**
   * Loads llama.cpp for the chosen device (never downloading or building it). Fails before any
   * work, with a `BACKEND_UNAVAILABLE` error naming the fix, when no usable binary is installed.
   */
  static async create(options: LlamaCppEngineOptions = {}): Promise<LlamaCppEngine> {
    const device = options.device ?? 'cpu';
    if (!(device in GPU)) {
      throw new InvalidInputError(
        `LlamaCppEngine: device ${JSON.stringify(device)} is not one of cpu, cuda, vulkan, metal`,
        { details: { field: 'device', value: device } },
      );
    }
    positiveInt('parallelSequences', options.parallelSequences ?? 8);
    positiveInt('contextSize', options.contextSize ?? 2048);
    if (options.threads !== undefined) positiveInt('threads', options.threads);
    const logger = options.logger;
    let llama: Llama;
    try {
      llama = await sharedLlama(device, options.threads);
    } catch (cause) {
      const fix =
        device === 'cpu'
          ? 'reinstall node-llama-cpp so that its prebuilt @node-llama-cpp/* package for this platform is present'
          : device === 'cuda'
            ? "install the CUDA toolkit (12.4+ or 13.1+) and NVIDIA driver node-llama-cpp's CUDA build needs, or use device: 'vulkan' or 'cpu'"
            : device === 'vulkan'
              ? "install a Vulkan loader and driver (libvulkan1 and your GPU's ICD), or use device: 'cpu'"
              : "Metal needs macOS on Apple silicon; use device: 'cpu' elsewhere";
      throw new AgentRLError(
        'BACKEND_UNAVAILABLE',
        `LlamaCppEngine: no usable llama.cpp ${device} binary (${cause instanceof Error ? cause.message : String(cause)}); ${fix}`,
        { cause, details: { field: 'device', value: device } },
      );
    }
    if (llama.gpu !== GPU[device]) {
      throw new AgentRLError(
        'BACKEND_UNAVAILABLE',
        `LlamaCppEngine: device ${device} was asked for, but node-llama-cpp loaded its ${llama.gpu === false ? 'cpu' : llama.gpu} build; ${device === 'metal' ? 'Metal needs macOS on Apple silicon' : `install the ${device} runtime`}, or use device: 'cpu'`,
        { details: { field: 'device', value: device, loaded: llama.gpu } },
      );
    }
    let workDir = options.workDir;
    const owns = workDir === undefined;
    if (workDir === undefined) workDir = await mkdtemp(join(tmpdir(), 'agentrl-llamacpp-'));
    else await mkdir(workDir, { recursive: true });
    logger?.info?.('llama.cpp engine ready', {
      device,
      gpu: llama.gpu,
      cpuMathCores: llama.cpuMathCores,
    });
    if (logger !== undefined) LOGGERS.add(logger);
    return new LlamaCppEngine(llama, options, workDir, owns);
  }

  get weightsVersion(): number | undefined {
    return this.#failure === undefined ? this.#version : undefined;
  }

  /**
   * Prompt tokens evaluated and reused from the KV cache since the engine was created (a copy;
   * the counts only grow).
   */
  get promptTokens(): Readonly<PromptTokenCounts> {
    return { ...this.#reuse };
  }

  /** The GGUF file the engine samples from now (undefined before the first sync). */
  get modelPath(): string | undefined {
    return this.#modelPath;
  }

  #exclusive<T>(f: () => Promise<T>): Promise<T> {
    const run = this.#busy.then(f, f);
    this.#busy = run.catch(() => undefined);
    return run;
  }

  syncWeights(snapshot: WeightSnapshot): Promise<void> {
    return this.#exclusive(() => this.#sync(snapshot));
  }

  async #sync(snapshot: WeightSnapshot): Promise<void> {
    this.#ensureOpen();
    const { version } = snapshot;
    if (!Number.isInteger(version) || version < 0) {
      throw new WeightSyncError(
        `llama.cpp: weights version must be an integer >= 0, got ${version}`,
        { details: { field: 'version', value: version } },
      );
    }
    if (this.#version !== undefined && version < this.#version) {
      throw new WeightSyncError(
        `llama.cpp: weights version ${version} is older than the current ${this.#version}; sync versions in increasing order`,
        { details: { version, current: this.#version } },
      );
    }
    let checkpointDir = snapshot.checkpointDir;
    let adapterDir = snapshot.adapterDir;
    if (adapterDir === undefined && (this.#options.loraSync ?? 'adapter') === 'adapter') {
      let base: string | undefined;
      try {
        base = await loraBaseOf(checkpointDir);
      } catch (cause) {
        this.#failure = new WeightSyncError(
          `llama.cpp: ${join(checkpointDir, LORA_BASE_FILE)} cannot be read as a LoRA base record (${cause instanceof Error ? cause.message : String(cause)}); sync the merged weights with loraSync: 'merged'`,
          { cause, details: { version, checkpointDir } },
        );
        throw this.#failure;
      }
      if (base !== undefined) {
        adapterDir = checkpointDir;
        checkpointDir = base;
      }
    }
    // A new name per file: node-llama-cpp caches LoRA adapters by path, and the OS may keep a
    // loaded path mapped.
    const stamp = `v${version}-${Date.now().toString(36)}`;
    const reuseBase =
      adapterDir !== undefined &&
      this.#model !== undefined &&
      this.#config !== undefined &&
      this.#baseDir === checkpointDir &&
      this.#adapterPaths.length < ADAPTERS_PER_MODEL;
    const modelPath = reuseBase ? this.#modelPath : join(this.#workDir, `weights-${stamp}.gguf`);
    const adapterPath =
      adapterDir === undefined ? undefined : join(this.#workDir, `adapter-${stamp}.gguf`);
    let model = reuseBase ? this.#model : undefined;
    let config = reuseBase ? this.#config : undefined;
    let context: LlamaContext | undefined;
    try {
      if (!reuseBase) {
        config = await checkpointToGguf(checkpointDir, modelPath as string, this.#options.gguf);
        model = await this.#llama.loadModel({
          modelPath: modelPath as string,
          gpuLayers: this.device === 'cpu' ? 0 : 'max',
        });
      }
      if (adapterDir !== undefined && adapterPath !== undefined)
        await loraToGguf(adapterDir, config as CausalLMConfig, adapterPath);
      const kv = this.#options.kvCacheType ?? 'F16';
      context = await (model as LlamaModel).createContext({
        sequences: this.#parallel,
        contextSize: this.#contextSize,
        flashAttention: this.#options.flashAttention ?? 'auto',
        experimentalKvCacheKeyType: kv,
        experimentalKvCacheValueType: kv,
        ...(this.#options.threads !== undefined ? { threads: this.#options.threads } : {}),
        ...(adapterPath !== undefined ? { lora: { adapters: [{ filePath: adapterPath }] } } : {}),
      });
      const sequences: LlamaContextSequence[] = [];
      for (let i = 0; i < this.#parallel; i++) sequences.push(context.getSequence());
      if (reuseBase) {
        await this.#context?.dispose();
      } else {
        await this.#release();
        this.#model = model;
        this.#modelPath = modelPath;
        this.#config = config;
        this.#baseDir = adapterDir === undefined ? undefined : checkpointDir;
      }
      if (adapterPath !== undefined) this.#adapterPaths.push(adapterPath);
      this.#context = context;
      this.#sequences = sequences;
      this.#vocabSize = (config as CausalLMConfig).vocabSize;
      this.#version = version;
      this.#failure = undefined;
      const what =
        adapterPath === undefined
          ? 'full weights'
          : reuseBase
            ? 'LoRA adapter on the loaded base'
            : 'LoRA adapter on a freshly loaded base';
      this.#options.logger?.info?.(`llama.cpp: weights version ${version} synced (${what})`, {
        version,
        path: modelPath,
        ...(adapterPath !== undefined ? { adapter: adapterPath } : {}),
      });
    } catch (cause) {
      await context?.dispose().catch(() => undefined);
      if (!reuseBase) {
        await model?.dispose().catch(() => undefined);
        if (modelPath !== undefined) await rm(modelPath, { force: true }).catch(() => undefined);
      }
      if (adapterPath !== undefined) await rm(adapterPath, { force: true }).catch(() => undefined);
      const source = adapterDir === undefined ? checkpointDir : `${adapterDir} on ${checkpointDir}`;
      this.#failure = new WeightSyncError(
        `llama.cpp: could not load weights version ${version} from ${source} (${cause instanceof Error ? cause.message : String(cause)}); the engine refuses to generate until a sync succeeds`,
        { cause, details: { version, checkpointDir: checkpointDir, adapterDir } },
      );
      throw this.#failure;
    }
  }

  async #release(): Promise<void> {
    const old = [this.#modelPath, ...this.#adapterPaths];
    await this.#context?.dispose();
    await this.#model?.dispose();
    this.#context = undefined;
    this.#model = undefined;
    this.#sequences = [];
    this.#modelPath = undefined;
    this.#config = undefined;
    this.#baseDir = undefined;
    this.#adapterPaths = [];
    for (const path of old) if (path !== undefined) await rm(path, { force: true });
  }

  #ensureOpen(): void {
    if (this.#closed) {
      throw new InvalidInputError('llama.cpp: the engine is closed; create a new one');
    }
  }

  generate(
    prompts: readonly (readonly number[])[],
    sampling: SamplingOptions,
  ): Promise<RolloutResult> {
    return this.#exclusive(() => this.#generate(prompts, sampling));
  }

  async #generate(
    prompts: readonly (readonly number[])[],
    sampling: SamplingOptions,
  ): Promise<RolloutResult> {
    this.#ensureOpen();
    if (this.#failure !== undefined) throw this.#failure;
    const model = this.#model;
    const version = this.#version;
    if (model === undefined || version === undefined) {
      throw new WeightSyncError(
        'llama.cpp: generate() called before any weights were synced; call syncWeights({ version, checkpointDir }) first',
      );
    }
    const maxNew = sampling.maxNewTokens;
    if (!Number.isInteger(maxNew) || maxNew < 1) {
      throw new InvalidInputError(
        `sampling.maxNewTokens must be a positive integer, got ${maxNew}`,
        {
          details: { field: 'maxNewTokens', value: maxNew },
        },
      );
    }
    const temperature = sampling.temperature ?? 1;
    const topP = sampling.topP ?? 1;
    const topK = sampling.topK ?? 0;
    if (!(temperature >= 0) || !Number.isFinite(temperature))
      throw new InvalidInputError(`sampling.temperature must be >= 0, got ${temperature}`, {
        details: { field: 'temperature', value: temperature },
      });
    if (!(topP > 0 && topP <= 1))
      throw new InvalidInputError(`sampling.topP must be in (0, 1], got ${topP}`, {
        details: { field: 'topP', value: topP },
      });
    if (!Number.isInteger(topK) || topK < 0)
      throw new InvalidInputError(`sampling.topK must be an integer >= 0, got ${topK}`, {
        details: { field: 'topK', value: topK },
      });
    const nVocab = this.#vocabSize;
    for (const [i, prompt] of prompts.entries()) {
      if (prompt.length === 0) {
        throw new InvalidInputError(
          `prompts[${i}] is empty; every prompt needs at least one token`,
          {
            details: { field: `prompts[${i}]` },
          },
        );
      }
      if (prompt.length + maxNew > this.#contextSize) {
        throw new InvalidInputError(
          `prompts[${i}] has ${prompt.length} tokens, and with maxNewTokens ${maxNew} it exceeds the engine's contextSize ${this.#contextSize}; raise contextSize or shorten the prompt`,
          { details: { field: 'contextSize', value: this.#contextSize, prompt: i } },
        );
      }
      for (const id of prompt) {
        if (!Number.isInteger(id) || id < 0 || id >= nVocab) {
          throw new InvalidInputError(
            `prompts[${i}] holds token id ${id}, outside the model's vocabulary of ${nVocab}`,
            { details: { field: `prompts[${i}]`, value: id } },
          );
        }
      }
    }
    const stops = new Set(sampling.stopTokenIds ?? []);
    // One seed per prompt, drawn in prompt order, so results do not depend on scheduling.
    const rng = createRng(sampling.seed ?? 0).split('llama.cpp sampling');
    const seeds = prompts.map(() => rng.int(2 ** 31));
    const withLogProbs = this.#options.logProbs ?? true;
    const tokenIds: number[][] = prompts.map(() => []);
    const logProbs: number[][] = prompts.map(() => []);
    const finishReasons: FinishReason[] = prompts.map(() => 'length');
    /** Samples prompt i's response on a sequence that already holds `held` tokens of it. */
    const sample = async (i: number, sequence: LlamaContextSequence, held: number) => {
      const out = tokenIds[i] as number[];
      const lps = logProbs[i] as number[];
      const iterator = sequence.evaluateWithMetadata(
        (prompts[i] as readonly number[]).slice(held) as Token[],
        { confidence: withLogProbs },
        {
          temperature,
          topK,
          topP,
          minP: 0,
          seed: seeds[i] as number,
          yieldEogToken: true,
        },
      );
      for await (const item of iterator) {
        out.push(item.token);
        if (withLogProbs)
          lps.push(Math.log((item as { confidence?: number }).confidence ?? Number.NaN));
        if (stops.has(item.token)) {
          finishReasons[i] = 'stop';
          break;
        }
        if (out.length >= maxNew) break;
      }
    };
    if (this.#options.prefixReuse ?? true) {
      for (let start = 0; start < prompts.length; start += this.#parallel) {
        const chunk = prompts.slice(start, start + this.#parallel);
        const held = await prefillSharedPrefixes(chunk, this.#sequences, this.#reuse);
        await Promise.all(
          chunk.map((_, k) =>
            sample(
              start + k,
              this.#sequences[held.sequence[k] as number] as LlamaContextSequence,
              held.tokens[k] as number,
            ),
          ),
        );
      }
    } else {
      let next = 0;
      const worker = async (sequence: LlamaContextSequence): Promise<void> => {
        while (next < prompts.length) {
          const i = next++;
          await sequence.clearHistory();
          this.#reuse.evaluated += (prompts[i] as readonly number[]).length;
          await sample(i, sequence, 0);
        }
      };
      await Promise.all(this.#sequences.map(worker));
    }
    return {
      tokenIds,
      ...(withLogProbs ? { logProbs } : {}),
      finishReasons,
      weightsVersion: version,
    };
  }

  /** Frees the model and the GGUF files (the temporary folder, when the engine made it). */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return this.#exclusive(async () => {
      if (this.#closed) return;
      this.#closed = true;
      if (this.#options.logger !== undefined) LOGGERS.delete(this.#options.logger);
      await this.#release();
      if (this.#ownsWorkDir) await rm(this.#workDir, { recursive: true, force: true });
    });
  }
}
