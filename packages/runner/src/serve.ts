/**
 * `agentrl serve`: the llama.cpp engine (`@agentrl/engine-llamacpp`) behind the subset of the
 * OpenAI-compatible wire that `OpenAICompletionsEngine` (`@agentrl/model-openai`) uses, on the
 * loopback interface only. It is a stand-in for vLLM / SGLang on a machine without them, and what
 * the tests run the client against, so the client meets a real engine through real HTTP.
 *
 * Routes (each as vLLM or SGLang names it):
 * - `GET /v1/models`: the name of the weights served now;
 * - `POST /v1/completions`: `prompt` as token ids (one list, or a list of lists), `max_tokens`,
 *   `temperature`, `top_p`, `top_k` (-1 or 0: off), `seed`, `stop_token_ids`, `logprobs`,
 *   `return_token_ids`, `return_tokens_as_token_ids`; `text` is always empty (no tokenizer here);
 * - `POST /v1/load_lora_adapter {lora_name, lora_path}`: a PEFT adapter folder on the base its
 *   `base_model_name_or_path` names when that is a checkpoint folder, else on the one given at
 *   start; the adapter becomes the served model (one at a time), `/v1/unload_lora_adapter`;
 * - `POST /update_weights_from_disk {model_path}`: full weights from a checkpoint folder.
 * Requests run one at a time on the engine. `ignore_eos` is accepted and has no effect: the
 * engine only stops on `stop_token_ids`.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError, checkOptionKeys, type RolloutEngine } from '@agentrl/core';
import type { Logger } from './logger.ts';

/** Options of {@link startServe}. */
export interface ServeOptions {
  /** Checkpoint folder served from the start (and the base of LoRA adapters). */
  readonly checkpoint?: string;
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  readonly port?: number;
  /** Name of the base weights at `/v1/models`. Default `'agentrl'`. */
  readonly modelName?: string;
  /** Options of `LlamaCppEngine.create` (device, threads, contextSize, ...). */
  readonly engineOptions?: Readonly<Record<string, unknown>>;
  readonly logger?: Logger;
}

/** A running `agentrl serve`. */
export interface ServeHandle {
  /** `http://127.0.0.1:<port>/v1`. */
  readonly baseUrl: string;
  close(): Promise<void>;
}

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((ok, fail) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => ok(body));
    req.on('error', fail);
  });
}

function isIds(x: unknown): x is number[] {
  return Array.isArray(x) && x.every((t) => Number.isInteger(t) && (t as number) >= 0);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Starts the server; resolves once it listens and the start checkpoint (if any) is loaded. */
export async function startServe(options: ServeOptions = {}): Promise<ServeHandle> {
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`--port ${port} is not a port; use 0 (a free port) to 65535`, {
      details: { field: 'port', value: port },
    });
  let mod: typeof import('@agentrl/engine-llamacpp');
  try {
    mod = await import('@agentrl/engine-llamacpp');
  } catch (cause) {
    throw new ConfigError(
      'agentrl serve runs llama.cpp, but @agentrl/engine-llamacpp cannot be imported; install it beside @agentrl/runner (npm i @agentrl/engine-llamacpp)',
      { cause },
    );
  }
  const engineOptions = options.engineOptions ?? {};
  checkOptionKeys(engineOptions, mod.LLAMACPP_ENGINE_OPTIONS, 'agentrl serve --set');
  const logger = options.logger;
  const engine: RolloutEngine = await mod.LlamaCppEngine.create({
    ...(engineOptions as Parameters<typeof mod.LlamaCppEngine.create>[0]),
    ...(logger !== undefined
      ? { logger: { info: (m) => logger.info(m), warn: (m) => logger.warn(m) } }
      : {}),
  });
  const baseName = options.modelName ?? 'agentrl';
  let base = options.checkpoint !== undefined ? resolve(options.checkpoint) : undefined;
  let served: string | undefined;
  let adapter: string | undefined;
  let version = 0;
  try {
    if (base !== undefined) {
      await engine.syncWeights({ version: ++version, checkpointDir: base });
      served = baseName;
    }
  } catch (error) {
    await engine.close();
    throw error;
  }

  // One request at a time on the engine.
  let queue: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };

  const completions = async (body: Record<string, unknown>): Promise<unknown> => {
    if (served === undefined)
      throw new HttpError(
        400,
        'no weights are loaded; start with --checkpoint DIR or POST /update_weights_from_disk',
      );
    if (body.model !== undefined && body.model !== served)
      throw new HttpError(404, `The model \`${String(body.model)}\` does not exist.`);
    const prompt = body.prompt;
    const prompts = isIds(prompt)
      ? [prompt]
      : Array.isArray(prompt) && prompt.length > 0 && prompt.every(isIds)
        ? (prompt as number[][])
        : undefined;
    if (prompts === undefined)
      throw new HttpError(
        400,
        'prompt must be token ids (a list of ints, or a list of such lists)',
      );
    const maxTokens = Number(body.max_tokens ?? 16);
    const topK = Number(body.top_k ?? -1);
    const stop = body.stop_token_ids ?? [];
    if (!isIds(stop)) throw new HttpError(400, 'stop_token_ids must be a list of token ids');
    const out = await engine.generate(prompts, {
      maxNewTokens: maxTokens,
      temperature: Number(body.temperature ?? 1),
      topP: Number(body.top_p ?? 1),
      topK: Math.max(topK, 0),
      stopTokenIds: stop,
      seed: Number(body.seed ?? 0),
    });
    const asIds = body.return_tokens_as_token_ids === true;
    return {
      id: `cmpl-${Date.now()}`,
      object: 'text_completion',
      created: Math.floor(Date.now() / 1000),
      model: served,
      choices: out.tokenIds.map((ids, i) => ({
        index: i,
        text: '',
        ...(body.return_token_ids === true ? { token_ids: ids } : {}),
        logprobs:
          body.logprobs === undefined || body.logprobs === null
            ? null
            : {
                tokens: ids.map((t) => (asIds ? `token_id:${t}` : String(t))),
                token_logprobs: out.logProbs?.[i] ?? ids.map(() => null),
                top_logprobs: null,
                text_offset: ids.map(() => 0),
              },
        finish_reason: out.finishReasons[i],
      })),
      usage: {
        prompt_tokens: prompts.reduce((s, p) => s + p.length, 0),
        completion_tokens: out.tokenIds.reduce((s, t) => s + t.length, 0),
      },
    };
  };

  const loadLoRA = async (body: Record<string, unknown>): Promise<unknown> => {
    const name = body.lora_name;
    const path = body.lora_path;
    if (typeof name !== 'string' || typeof path !== 'string')
      throw new HttpError(400, 'lora_name and lora_path are required');
    if (name === served || name === baseName)
      throw new HttpError(400, `The lora adapter '${name}' has already been loaded.`);
    // The adapter's own base when it names a checkpoint folder (a model-tfjs LoRA run's), else
    // the base served from the start.
    const named = await readFile(join(resolve(path), 'adapter_config.json'), 'utf8')
      .then((t) => (JSON.parse(t) as { base_model_name_or_path?: unknown }).base_model_name_or_path)
      .catch(() => undefined);
    const adapterBase =
      typeof named === 'string' && existsSync(join(named, 'config.json')) ? named : base;
    if (adapterBase === undefined)
      throw new HttpError(
        400,
        'no base weights to apply an adapter on; start agentrl serve with --checkpoint DIR',
      );
    const { peftToLora } = await import('@agentrl/model-openai');
    const dir = await mkdtemp(join(tmpdir(), 'agentrl-serve-lora-'));
    try {
      await peftToLora(resolve(path), dir);
      await engine.syncWeights({ version: ++version, checkpointDir: adapterBase, adapterDir: dir });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    base = adapterBase;
    served = name;
    adapter = name;
    return `Success: LoRA adapter '${name}' added successfully.`;
  };

  const unloadLoRA = async (body: Record<string, unknown>): Promise<unknown> => {
    if (typeof body.lora_name !== 'string') throw new HttpError(400, 'lora_name is required');
    // Only the latest adapter is held; an older name is already gone.
    if (body.lora_name === adapter) {
      await engine.syncWeights({ version: ++version, checkpointDir: base as string });
      served = baseName;
      adapter = undefined;
    }
    return `Success: LoRA adapter '${body.lora_name}' removed successfully.`;
  };

  const updateFromDisk = async (body: Record<string, unknown>): Promise<unknown> => {
    if (typeof body.model_path !== 'string') throw new HttpError(400, 'model_path is required');
    const dir = resolve(body.model_path);
    await engine.syncWeights({ version: ++version, checkpointDir: dir });
    base = dir;
    served = baseName;
    adapter = undefined;
    return { success: true, message: `loaded ${dir}`, num_paused_requests: 0 };
  };

  const routes: Record<string, (body: Record<string, unknown>) => Promise<unknown>> = {
    'POST /v1/completions': completions,
    'POST /v1/load_lora_adapter': loadLoRA,
    'POST /v1/unload_lora_adapter': unloadLoRA,
    'POST /update_weights_from_disk': updateFromDisk,
  };

  const server = createServer((req, res) => {
    void (async () => {
      const key = `${req.method} ${req.url}`;
      const text = await readBody(req);
      if (key === 'GET /v1/models') {
        send(res, 200, {
          object: 'list',
          // The base name before any weights are loaded too, as the name to sync them under.
          data: [{ id: served ?? baseName, object: 'model', owned_by: 'agentrl' }],
        });
        return;
      }
      const route = routes[key];
      if (route === undefined) {
        send(res, 404, { detail: 'Not Found' });
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
        if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error();
      } catch {
        send(res, 400, { object: 'error', message: 'the body is not a JSON object', code: 400 });
        return;
      }
      try {
        send(res, 200, await exclusive(() => route(body)));
      } catch (error) {
        const status = error instanceof HttpError ? error.status : 500;
        const message = error instanceof Error ? error.message : String(error);
        if (status === 500) logger?.warn(`agentrl serve: ${key} failed: ${message}`);
        send(res, status, { object: 'error', message, code: status });
      }
    })();
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => ok());
  });
  const address = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${address.port}/v1`,
    close: async () => {
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      await queue;
      await engine.close();
    },
  };
}
