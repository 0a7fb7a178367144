/**
 * A {@link RolloutEngine} on OpenAI-compatible servers (vLLM, SGLang, `agentrl serve`): each
 * prompt goes as token ids to `/v1/completions` (one request per prompt, each with its own seed,
 * spread round-robin over the servers with bounded concurrency, retries with backoff and a
 * timeout), and the sampled token ids and their log-probs come back (`return_token_ids`, or
 * `token_id:<id>` strings with `return_tokens_as_token_ids`).
 *
 * Weight sync, on every server, before the next generation:
 * - a LoRA checkpoint of the model package (`lora.safetensors` beside `lora-base.json`) is
 *   written as a PEFT adapter folder and loaded with `POST /v1/load_lora_adapter` under a new
 *   name per version (`<adapterPrefix>-v<version>`); generations then name that adapter as
 *   their model, and the previous adapter is unloaded;
 * - a full-weight checkpoint is reloaded with `POST /update_weights_from_disk` (SGLang's route);
 *   vLLM has no such route, so full-weight runs on vLLM fail at the preflight, naming LoRA.
 * Adapter folders and checkpoints are read by the server from the paths sent: the servers must
 * see the trainer's file system (the same machine, or a shared folder as `syncDir`).
 *
 * `create` makes one preflight request per server (`GET /v1/models`) and probes the sync route
 * the run needs with an empty body (a server that has the route rejects the body; one without it
 * answers 404), so an unreachable server or one without runtime LoRA loading fails before any
 * work with an error naming the fix.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  AgentRLError,
  ConfigError,
  createRng,
  type FinishReason,
  InvalidInputError,
  type OptionsSchema,
  type RolloutEngine,
  type RolloutResult,
  type SamplingOptions,
  type WeightSnapshot,
  WeightSyncError,
} from '@agentrl/core';
import { LORA_BASE_FILE, LORA_STATE_FILE, type LoRABase } from '@agentrl/core/checkpoint';
import { z } from 'zod';
import { ERROR_EXCERPT_CHARS, jsonHeaders, postJson } from './http.ts';
import { loraToPeft } from './peft.ts';

/** How the trainer's weights reach the servers. */
export type OpenAIWeightSync = 'lora' | 'disk';

/** Options of {@link OpenAICompletionsEngine.create}. */
export interface OpenAICompletionsEngineOptions {
  /** Base URLs ending in `/v1`, e.g. `http://127.0.0.1:8000/v1`; requests are spread across them. */
  readonly baseUrls: readonly string[];
  /** Model name of the base weights; default the first id each server lists at `/v1/models`. */
  readonly model?: string;
  /**
   * `'lora'`: LoRA adapters through `/v1/load_lora_adapter` (vLLM, SGLang, `agentrl serve`);
   * `'disk'`: full weights through `/update_weights_from_disk` (SGLang, `agentrl serve`).
   */
  readonly weightSync: OpenAIWeightSync;
  /** Adapter names are `<adapterPrefix>-v<version>`. Default `'agentrl'`. */
  readonly adapterPrefix?: string;
  /** Folder the PEFT adapters are written to, readable by the servers. Default a temporary folder. */
  readonly syncDir?: string;
  /** Bearer token, when the servers want one (read it from the environment). */
  readonly apiKey?: string;
  /** Requests in flight at once, over all servers. Default 16. */
  readonly concurrency?: number;
  /** Attempts per request (first try included). Default 4. */
  readonly maxAttempts?: number;
  /** Backoff before retry k is `retryBaseMs · 2^(k−1)`. Default 500 ms. */
  readonly retryBaseMs?: number;
  /** Timeout of one completion request. Default 120 000 ms. */
  readonly timeoutMs?: number;
  /** Timeout of one weight-sync request (a server loads the weights in it). Default 600 000 ms. */
  readonly syncTimeoutMs?: number;
  /** The fetch to use. Default: global fetch. */
  readonly fetch?: typeof fetch;
}

/** The keys of {@link OpenAICompletionsEngineOptions} a run config may set, with their defaults. */
export const OPENAI_ENGINE_OPTIONS: OptionsSchema = {
  baseUrls: {
    description:
      'server base URLs ending in /v1 (e.g. http://127.0.0.1:8000/v1); requests are spread across them',
  },
  model: { description: 'model name of the base weights', default: 'the first id of /v1/models' },
  weightSync: {
    description:
      "'lora' (adapters through /v1/load_lora_adapter) or 'disk' (full weights through /update_weights_from_disk)",
    default: "'lora' for a LoRA run, else 'disk'",
  },
  adapterPrefix: { description: 'adapter names are <prefix>-v<version>', default: 'agentrl' },
  syncDir: {
    description: 'folder for the PEFT adapters, readable by the servers',
    default: 'a temporary folder',
  },
  concurrency: { description: 'requests in flight at once, over all servers', default: 16 },
  maxAttempts: { description: 'attempts per request, the first included', default: 4 },
  retryBaseMs: { description: 'backoff before retry k is retryBaseMs * 2^(k-1)', default: 500 },
  timeoutMs: { description: 'timeout of one completion request', default: 120_000 },
  syncTimeoutMs: { description: 'timeout of one weight-sync request', default: 600_000 },
};

/** The server-side fix for a missing sync route, by sync kind. */
const SYNC_FIX: Record<OpenAIWeightSync, string> = {
  lora: 'start vLLM with --enable-lora --max-lora-rank <rank> and the environment variable VLLM_ALLOW_RUNTIME_LORA_UPDATING=True (SGLang: --enable-lora), or use agentrl serve',
  disk: 'full-weight sync needs a server with /update_weights_from_disk (SGLang, agentrl serve); on vLLM train a LoRA adapter instead (model.options.lora)',
};

const SYNC_ROUTE: Record<OpenAIWeightSync, string> = {
  lora: '/load_lora_adapter',
  disk: '/update_weights_from_disk',
};

const completionSchema = z.object({
  choices: z
    .array(
      z.object({
        token_ids: z.array(z.number().int()).nullable().optional(),
        finish_reason: z.string().nullable().optional(),
        logprobs: z
          .object({
            tokens: z.array(z.string()).nullable().optional(),
            token_logprobs: z.array(z.number().nullable()).nullable().optional(),
          })
          .nullable()
          .optional(),
      }),
    )
    .min(1),
});

const modelsSchema = z.object({ data: z.array(z.object({ id: z.string() })) });

/**
 * The base folder a model-tfjs LoRA checkpoint names in its `lora-base.json` (the model
 * package's record of the unmerged base), or undefined. It goes to the PEFT config's
 * `base_model_name_or_path`, as PEFT records the base it trained on.
 */
async function loraBaseOf(dir: string): Promise<string | undefined> {
  try {
    const record = JSON.parse(await readFile(join(dir, LORA_BASE_FILE), 'utf8')) as Partial<
      Record<keyof LoRABase, unknown>
    >;
    return typeof record.path === 'string' ? resolve(dir, record.path) : undefined;
  } catch {
    return undefined;
  }
}

/** The root of a `/v1` base URL (SGLang's weight routes live there). */
function rootOf(baseUrl: string): string {
  return baseUrl.replace(/\/v1$/, '');
}

export class OpenAICompletionsEngine implements RolloutEngine {
  readonly name = 'openai';
  readonly #o: OpenAICompletionsEngineOptions;
  readonly #urls: string[];
  readonly #models: string[];
  readonly #syncDir: string;
  readonly #ownsSyncDir: boolean;
  #version: number | undefined;
  #adapter: string | undefined;
  #adapterDir: string | undefined;
  #failed: string | undefined;
  #closed = false;
  /** Requests sent, retries included (for logs and tests). */
  requests = 0;

  private constructor(
    options: OpenAICompletionsEngineOptions,
    urls: string[],
    models: string[],
    syncDir: string,
    ownsSyncDir: boolean,
  ) {
    this.#o = options;
    this.#urls = urls;
    this.#models = models;
    this.#syncDir = syncDir;
    this.#ownsSyncDir = ownsSyncDir;
  }

  /** Checks every server (reachable, lists a model, has the sync route) and returns the engine. */
  static async create(options: OpenAICompletionsEngineOptions): Promise<OpenAICompletionsEngine> {
    const urls = [...(options.baseUrls ?? [])].map((u) => u.replace(/\/+$/, ''));
    if (urls.length === 0)
      throw new ConfigError(
        'rollout.engine.options.baseUrls is empty; set it to the server URLs ending in /v1, e.g. ["http://127.0.0.1:8000/v1"]',
        { details: { field: 'rollout.engine.options.baseUrls', value: options.baseUrls } },
      );
    for (const url of urls)
      if (!/^https?:\/\/.+\/v1$/.test(url))
        throw new ConfigError(
          `rollout.engine.options.baseUrls has "${url}"; a base URL starts with http:// or https:// and ends in /v1`,
          { details: { field: 'rollout.engine.options.baseUrls', value: url } },
        );
    if (options.weightSync !== 'lora' && options.weightSync !== 'disk')
      throw new ConfigError(
        `rollout.engine.options.weightSync is ${JSON.stringify(options.weightSync)}; use 'lora' or 'disk'`,
        { details: { field: 'rollout.engine.options.weightSync', value: options.weightSync } },
      );
    const doFetch = options.fetch ?? fetch;
    const headers = jsonHeaders(options.apiKey);
    const models: string[] = [];
    for (const url of urls) {
      let listed: string | undefined;
      try {
        const response = await doFetch(`${url}/models`, {
          headers,
          signal: AbortSignal.timeout(options.timeoutMs ?? 120_000),
        });
        const text = await response.text();
        if (!response.ok)
          throw new Error(`HTTP ${response.status}: ${text.slice(0, ERROR_EXCERPT_CHARS)}`);
        listed = modelsSchema.parse(JSON.parse(text)).data[0]?.id;
      } catch (cause) {
        throw new ConfigError(
          `rollout.engine.options.baseUrls: ${url}/models did not answer (${cause instanceof Error ? cause.message : String(cause)}); start the server (vllm serve, or agentrl serve) or fix the URL`,
          { cause, details: { field: 'rollout.engine.options.baseUrls', value: url } },
        );
      }
      const model = options.model ?? listed;
      if (model === undefined)
        throw new ConfigError(
          `${url}/models lists no model; set rollout.engine.options.model to the served model's name`,
          { details: { field: 'rollout.engine.options.model', value: url } },
        );
      models.push(model);
      const route = `${options.weightSync === 'lora' ? url : rootOf(url)}${SYNC_ROUTE[options.weightSync]}`;
      let status: number;
      try {
        const response = await doFetch(route, {
          method: 'POST',
          headers,
          body: '{}',
          signal: AbortSignal.timeout(options.timeoutMs ?? 120_000),
        });
        await response.text();
        status = response.status;
      } catch (cause) {
        throw new ConfigError(
          `rollout.engine.options.baseUrls: ${route} did not answer (${cause instanceof Error ? cause.message : String(cause)}); ${SYNC_FIX[options.weightSync]}`,
          { cause, details: { field: 'rollout.engine.options.baseUrls', value: url } },
        );
      }
      if (status === 404 || status === 405)
        throw new ConfigError(
          `rollout.engine.options.weightSync is '${options.weightSync}', but ${url} has no ${SYNC_ROUTE[options.weightSync]} (HTTP ${status}); ${SYNC_FIX[options.weightSync]}`,
          {
            details: {
              field: 'rollout.engine.options.weightSync',
              value: options.weightSync,
              url,
            },
          },
        );
    }
    const ownsSyncDir = options.syncDir === undefined;
    const syncDir =
      options.syncDir !== undefined
        ? resolve(options.syncDir)
        : await mkdtemp(join(tmpdir(), 'agentrl-openai-engine-'));
    await mkdir(syncDir, { recursive: true });
    return new OpenAICompletionsEngine(options, urls, models, syncDir, ownsSyncDir);
  }

  get weightsVersion(): number | undefined {
    return this.#version;
  }

  /** The name generations send as `model`: the current adapter, or the base model. */
  modelFor(server: number): string {
    return this.#adapter ?? (this.#models[server] as string);
  }

  /**
   * POSTs `body` through `postJson` under the timeout option named (a generation's or a weight
   * sync's), with retries unless `retries` is false; returns the reply.
   */
  #post(
    url: string,
    body: unknown,
    timeout: 'timeoutMs' | 'syncTimeoutMs',
    retries = true,
  ): Promise<unknown> {
    const o = this.#o;
    return postJson(url, body, {
      apiKey: o.apiKey,
      maxAttempts: retries ? (o.maxAttempts ?? 4) : 1,
      retryBaseMs: o.retryBaseMs ?? 500,
      timeoutMs: timeout === 'timeoutMs' ? (o.timeoutMs ?? 120_000) : (o.syncTimeoutMs ?? 600_000),
      timeoutOption: timeout,
      fetch: o.fetch,
      onAttempt: () => this.requests++,
    });
  }

  async #complete(
    server: number,
    prompt: readonly number[],
    sampling: SamplingOptions,
    seed: number,
  ): Promise<{ tokenIds: number[]; logProbs: number[] | undefined; finish: FinishReason }> {
    const url = `${this.#urls[server] as string}/completions`;
    const reply = await this.#post(
      url,
      {
        model: this.modelFor(server),
        prompt: [...prompt],
        max_tokens: sampling.maxNewTokens,
        temperature: sampling.temperature ?? 1,
        top_p: sampling.topP ?? 1,
        // vLLM and SGLang read -1 as "no top-k".
        top_k: (sampling.topK ?? 0) > 0 ? sampling.topK : -1,
        seed,
        stop_token_ids: [...(sampling.stopTokenIds ?? [])],
        // Only our stop ids end a response, as with the in-process engines.
        ignore_eos: true,
        skip_special_tokens: false,
        logprobs: 0,
        return_token_ids: true,
        return_tokens_as_token_ids: true,
      },
      'timeoutMs',
    );
    const parsed = completionSchema.safeParse(reply);
    if (!parsed.success)
      throw new AgentRLError(
        'BACKEND_FAILURE',
        `${url}: the reply is not a completion (${parsed.error.message})`,
        { details: { url } },
      );
    const choice = parsed.data.choices[0] as z.infer<typeof completionSchema>['choices'][number];
    let tokenIds = choice.token_ids ?? undefined;
    if (tokenIds === undefined && choice.logprobs?.tokens != null) {
      const ids = choice.logprobs.tokens.map((t) => /^token_id:(\d+)$/.exec(t)?.[1]);
      if (ids.every((id) => id !== undefined)) tokenIds = ids.map(Number);
    }
    if (tokenIds === undefined)
      throw new AgentRLError(
        'BACKEND_FAILURE',
        `${url} returned no token ids; use a server that honours return_token_ids (vLLM >= 0.10.2, agentrl serve) or return_tokens_as_token_ids with logprobs`,
        { details: { url } },
      );
    const lp = choice.logprobs?.token_logprobs;
    const logProbs =
      lp != null && lp.length === tokenIds.length && lp.every((x) => x !== null)
        ? (lp as number[])
        : undefined;
    return {
      tokenIds,
      logProbs,
      finish: choice.finish_reason === 'length' ? 'length' : 'stop',
    };
  }

  async generate(
    prompts: readonly (readonly number[])[],
    sampling: SamplingOptions,
  ): Promise<RolloutResult> {
    if (this.#closed)
      throw new InvalidInputError('openai: generate() called after close(); create a new engine');
    if (this.#failed !== undefined)
      throw new WeightSyncError(
        `openai: the last weight sync failed (${this.#failed}); sync again before generating`,
      );
    if (this.#version === undefined)
      throw new InvalidInputError(
        'openai: generate() called before any weights were synced; call syncWeights first',
      );
    const version = this.#version;
    // One seed per prompt, drawn in prompt order, so results do not depend on scheduling.
    const rng = createRng(sampling.seed ?? 0).split('openai sampling');
    const seeds = prompts.map(() => rng.int(2 ** 31));
    const tokenIds: number[][] = new Array(prompts.length);
    const logProbs: (number[] | undefined)[] = new Array(prompts.length);
    const finishReasons: FinishReason[] = new Array(prompts.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < prompts.length) {
        const i = next++;
        const out = await this.#complete(
          i % this.#urls.length,
          prompts[i] as readonly number[],
          sampling,
          seeds[i] as number,
        );
        tokenIds[i] = out.tokenIds;
        logProbs[i] = out.logProbs;
        finishReasons[i] = out.finish;
      }
    };
    const workers = Math.max(1, Math.min(this.#o.concurrency ?? 16, prompts.length));
    await Promise.all(Array.from({ length: workers }, worker));
    if (this.#version !== version)
      throw new WeightSyncError(
        `openai: weights changed from version ${version} to ${this.#version} during a generation; sync only between generations`,
      );
    const complete = logProbs.every((l) => l !== undefined);
    return {
      tokenIds,
      ...(complete ? { logProbs: logProbs as number[][] } : {}),
      finishReasons,
      weightsVersion: version,
    };
  }

  async syncWeights(snapshot: WeightSnapshot): Promise<void> {
    if (this.#closed)
      throw new InvalidInputError(
        'openai: syncWeights() called after close(); create a new engine',
      );
    if (this.#version !== undefined && snapshot.version < this.#version)
      throw new WeightSyncError(
        `openai: weights version ${snapshot.version} is older than the current ${this.#version}; sync versions in increasing order`,
        { details: { version: snapshot.version, current: this.#version } },
      );
    this.#failed = undefined;
    try {
      if (this.#o.weightSync === 'lora') await this.#syncLoRA(snapshot);
      else await this.#syncDisk(snapshot);
      this.#version = snapshot.version;
    } catch (cause) {
      this.#failed = cause instanceof Error ? cause.message : String(cause);
      throw cause instanceof WeightSyncError
        ? cause
        : new WeightSyncError(
            `openai: weights version ${snapshot.version} could not be synced: ${this.#failed}`,
            { cause, details: { version: snapshot.version } },
          );
    }
  }

  async #syncLoRA(snapshot: WeightSnapshot): Promise<void> {
    const source = snapshot.adapterDir ?? snapshot.checkpointDir;
    if (!existsSync(join(source, LORA_STATE_FILE)))
      throw new WeightSyncError(
        `openai: ${source} holds no ${LORA_STATE_FILE}, but weightSync is 'lora'; train a LoRA adapter (model.options.lora) or sync full weights with weightSync: 'disk' on a server that supports it`,
        { details: { checkpointDir: source } },
      );
    const name = `${this.#o.adapterPrefix ?? 'agentrl'}-v${snapshot.version}`;
    const dir = join(this.#syncDir, name);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    await loraToPeft(source, dir, (await loraBaseOf(source)) ?? this.#models[0]);
    await Promise.all(
      this.#urls.map((url) =>
        this.#post(
          `${url}/load_lora_adapter`,
          { lora_name: name, lora_path: dir },
          'syncTimeoutMs',
        ),
      ),
    );
    const previous = this.#adapter;
    const previousDir = this.#adapterDir;
    this.#adapter = name;
    this.#adapterDir = dir;
    if (previous !== undefined) {
      await Promise.all(
        this.#urls.map((url) =>
          this.#post(`${url}/unload_lora_adapter`, { lora_name: previous }, 'syncTimeoutMs'),
        ),
      );
      if (previousDir !== undefined) await rm(previousDir, { recursive: true, force: true });
    }
  }

  async #syncDisk(snapshot: WeightSnapshot): Promise<void> {
    if (snapshot.adapterDir !== undefined)
      throw new WeightSyncError(
        "openai: the snapshot is a LoRA adapter, but weightSync is 'disk'; set rollout.engine.options.weightSync to 'lora'",
      );
    const replies = await Promise.all(
      this.#urls.map((url) =>
        this.#post(
          `${rootOf(url)}/update_weights_from_disk`,
          { model_path: resolve(snapshot.checkpointDir), weight_version: String(snapshot.version) },
          'syncTimeoutMs',
          false,
        ),
      ),
    );
    for (const [i, reply] of replies.entries()) {
      const r = reply as { success?: unknown; message?: unknown };
      if (r.success === false)
        throw new WeightSyncError(
          `openai: ${this.#urls[i]} refused the weights in ${snapshot.checkpointDir}: ${String(r.message)}`,
        );
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsSyncDir) await rm(this.#syncDir, { recursive: true, force: true });
  }
}
