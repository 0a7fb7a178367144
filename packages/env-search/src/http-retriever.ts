/**
 * A {@link Retriever} that calls a Search-R1 or verl-agent retrieval server (`POST /retrieve`,
 * either wire format) with upstream's timeout and bounded retries: linear back-off on
 * 500/502/503/504, connection errors and timeouts; any other failure ends at once.
 */
import { AgentRLError, ConfigError, type ErrorCode } from '@agentrl/core';
import { z } from 'zod';
import { checkTopK } from './bm25.ts';
import type { SearchLogger } from './logger.ts';
import type { RetrievedPassage, Retriever } from './retriever.ts';

/** Options of {@link createHttpRetriever}. */
export interface HttpRetrieverOptions {
  /** Full URL of the endpoint, e.g. `http://127.0.0.1:8000/retrieve`. */
  readonly url: string;
  /**
   * `'queries'` sends one batch per call (Search-R1); `'query'` sends one request per query
   * (verl-agent's body). Default `'queries'`.
   */
  readonly body?: 'queries' | 'query';
  /** Per-request timeout. Default 60,000 ms (the reference config). */
  readonly timeoutMs?: number;
  /** Attempts per request, the first included. Default 10 (the reference). */
  readonly maxAttempts?: number;
  /** Back-off unit: attempt n waits n × this before the next. Default 1,000 ms (the reference). */
  readonly retryDelayMs?: number;
  /** The fetch implementation. Default the global `fetch`. */
  readonly fetch?: typeof fetch;
  readonly logger?: SearchLogger;
}

/** Why a retrieval request failed after its retries (`TIMEOUT`, `BACKEND_FAILURE` or `PROTOCOL`). */
export class RetrievalError extends AgentRLError {
  constructor(code: ErrorCode, message: string, details: Readonly<Record<string, unknown>> = {}) {
    super(code, message, { details });
  }
}

const documentSchema = z.object({
  id: z.union([z.string(), z.number()]).optional(),
  contents: z.string(),
});
const itemSchema = z.union([
  z.object({ document: documentSchema, score: z.number().optional() }),
  documentSchema,
]);
const responseSchema = z.object({ result: z.array(z.array(itemSchema)) });

const RETRIABLE_STATUS = new Set([500, 502, 503, 504]);

function toPassage(item: z.infer<typeof itemSchema>, rank: number): RetrievedPassage {
  if ('document' in item) {
    return {
      id: item.document.id === undefined ? String(rank) : String(item.document.id),
      contents: item.document.contents,
      score: item.score ?? 0,
    };
  }
  return {
    id: item.id === undefined ? String(rank) : String(item.id),
    contents: item.contents,
    score: 0,
  };
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new ConfigError(
      `createHttpRetriever: ${name} must be an integer >= 1, got ${String(value)}`,
      {
        details: { field: name, value },
      },
    );
  }
  return value;
}

/** Creates the HTTP retriever. */
export function createHttpRetriever(options: HttpRetrieverOptions): Retriever {
  let url: URL;
  try {
    url = new URL(options.url);
  } catch (cause) {
    throw new ConfigError(
      `createHttpRetriever: url ${JSON.stringify(options.url)} is not a URL; pass e.g. "http://127.0.0.1:8000/retrieve"`,
      {
        cause,
        details: { field: 'url', value: options.url },
      },
    );
  }
  const bodyKind = options.body ?? 'queries';
  const timeoutMs = positiveInteger('timeoutMs', options.timeoutMs ?? 60_000);
  const maxAttempts = positiveInteger('maxAttempts', options.maxAttempts ?? 10);
  const retryDelayMs = options.retryDelayMs ?? 1000;
  const doFetch = options.fetch ?? fetch;
  let closed = false;
  const inFlight = new Set<AbortController>();

  async function attempt(
    payload: unknown,
  ): Promise<{ status: number; statusText: string; text: string }> {
    const controller = new AbortController();
    inFlight.add(controller);
    const timer = setTimeout(() => controller.abort(new Error('timeout')), timeoutMs);
    try {
      const response = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(payload),
        signal: controller.signal,
      });
      const text = await response.text();
      return { status: response.status, statusText: response.statusText, text };
    } finally {
      clearTimeout(timer);
      inFlight.delete(controller);
    }
  }

  // Upstream reports the last error after its retries as "API Call Failed: <error>".
  const failed = (error: RetrievalError): RetrievalError =>
    new RetrievalError(error.code, `API Call Failed: ${error.message}`, error.details);

  async function post(payload: unknown): Promise<z.infer<typeof responseSchema>> {
    let last: RetrievalError | undefined;
    for (let n = 1; n <= maxAttempts; n++) {
      if (closed) throw new RetrievalError('ABORTED', 'the HTTP retriever was closed');
      let retry = false;
      try {
        const { status, statusText, text } = await attempt(payload);
        if (RETRIABLE_STATUS.has(status)) {
          last = new RetrievalError(
            'BACKEND_FAILURE',
            `API Request Error: Server Error (${status}) on attempt ${n}/${maxAttempts}`,
            { status, url: url.href },
          );
          retry = true;
        } else if (status < 200 || status >= 300) {
          throw failed(
            new RetrievalError(
              'BACKEND_FAILURE',
              `API Request Error: ${status} ${status < 500 ? 'Client' : 'Server'} Error: ${statusText} for url: ${url.href}`,
              { status, url: url.href },
            ),
          );
        } else {
          let value: unknown;
          try {
            value = JSON.parse(text);
          } catch (cause) {
            throw failed(
              new RetrievalError(
                'PROTOCOL',
                `API Response JSON Decode Error: ${String(cause)}, Response: ${text.slice(0, 200)}`,
                { url: url.href },
              ),
            );
          }
          const parsed = responseSchema.safeParse(value);
          if (!parsed.success) {
            throw failed(
              new RetrievalError(
                'PROTOCOL',
                `API Response Error: ${url.href} did not answer {"result": [[{"document": {"contents"}}]]} (${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? ''})`,
                { url: url.href },
              ),
            );
          }
          return parsed.data;
        }
      } catch (error) {
        if (error instanceof RetrievalError) throw error;
        const timedOut =
          error instanceof Error &&
          (error.name === 'AbortError' ||
            error.name === 'TimeoutError' ||
            String(error.message).includes('timeout'));
        const message =
          error instanceof Error
            ? error.cause instanceof Error
              ? `${error.message} (${error.cause.message})`
              : error.message
            : String(error);
        last = timedOut
          ? new RetrievalError(
              'TIMEOUT',
              `Timeout Error: no answer from ${url.href} within ${timeoutMs} ms (attempt ${n}/${maxAttempts})`,
              { url: url.href },
            )
          : new RetrievalError(
              'BACKEND_FAILURE',
              `Connection Error: ${message} (attempt ${n}/${maxAttempts})`,
              { url: url.href },
            );
        retry = true;
      }
      if (retry && n < maxAttempts) {
        options.logger?.info(
          `${last?.message ?? 'retrieval failed'}; retrying in ${retryDelayMs * n} ms`,
        );
        await new Promise((resolve) => setTimeout(resolve, retryDelayMs * n));
      }
    }
    throw failed(last ?? new RetrievalError('BACKEND_FAILURE', 'retrieval failed'));
  }

  return {
    async search(queries, topK) {
      checkTopK(topK);
      if (queries.length === 0) return [];
      if (bodyKind === 'queries') {
        const data = await post({ queries, topk: topK, return_scores: true });
        if (data.result.length !== queries.length) {
          throw new RetrievalError(
            'PROTOCOL',
            `${url.href} answered ${data.result.length} result lists for ${queries.length} queries`,
            { url: url.href },
          );
        }
        return data.result.map((list) => list.slice(0, topK).map(toPassage));
      }
      const out: RetrievedPassage[][] = [];
      for (const query of queries) {
        const data = await post({ query, topk: topK, return_scores: true });
        out.push((data.result[0] ?? []).slice(0, topK).map(toPassage));
      }
      return out;
    },
    async close() {
      closed = true;
      for (const controller of inFlight) controller.abort(new Error('closed'));
    },
  };
}
