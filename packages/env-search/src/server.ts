/**
 * A retrieval server speaking Search-R1's and verl-agent's `POST /retrieve` wire formats
 * (`retrieval_server.py` in both), serving any {@link Retriever} (our BM25 index, typically). Binds to loopback unless told
 * otherwise; request size, query count and `topk` are bounded; bad bodies get 400 naming the field.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '@agentrl/core';
import { z } from 'zod';
import { Bm25Index, createBm25Retriever } from './bm25.ts';
import { createDenseRetriever, DenseIndex } from './dense.ts';
import type { RetrievedPassage, Retriever } from './retriever.ts';

/** Options of {@link serve}. */
export interface ServeOptions {
  /** What answers the queries (or give `index`). */
  readonly retriever?: Retriever;
  /** An index to serve (BM25 or dense), when no `retriever` is given. */
  readonly index?: Bm25Index | DenseIndex;
  /** TCP port; 0 picks a free one. Default 8000 (upstream's). */
  readonly port?: number;
  /** Interface to bind. Default `127.0.0.1` (upstream binds all interfaces; we do not). */
  readonly host?: string;
  /** `topk` when a request gives none. Default 3. */
  readonly defaultTopK?: number;
  /** Largest `topk` accepted. Default 100. */
  readonly maxTopK?: number;
  /** Largest number of queries in one request. Default 1,024. */
  readonly maxQueries?: number;
  /** Largest request body. Default 1 MiB. */
  readonly maxBodyBytes?: number;
}

/** A running server. */
export interface RetrievalServer {
  /** `http://host:port/retrieve`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Stops listening and drops open connections. Idempotent. */
  close(): Promise<void>;
}

class BadRequest extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

function requestSchema(maxTopK: number, maxQueries: number) {
  return z
    .object({
      queries: z.array(z.string()).max(maxQueries).optional(),
      query: z.string().optional(),
      topk: z.number().int().min(1).max(maxTopK).nullable().optional(),
      return_scores: z.boolean().optional(),
    })
    .refine((body) => (body.queries === undefined) !== (body.query === undefined), {
      message: 'give exactly one of "queries" (a list of strings) or "query" (a string)',
      path: ['queries'],
    });
}

async function readBody(request: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) throw new BadRequest(413, `request body larger than ${limit} bytes`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

function render(passage: RetrievedPassage, withScores: boolean): unknown {
  const document = { id: passage.id, contents: passage.contents };
  return withScores ? { document, score: passage.score } : document;
}

/** Starts a retrieval server; resolves once it listens. */
export async function serve(options: ServeOptions): Promise<RetrievalServer> {
  const retriever =
    options.retriever ??
    (options.index instanceof Bm25Index
      ? createBm25Retriever(options.index)
      : options.index instanceof DenseIndex
        ? createDenseRetriever(options.index)
        : undefined);
  if (retriever === undefined) {
    throw new ConfigError('serve: give retriever or index (from loadIndex / loadDenseIndex)', {
      details: { field: 'retriever' },
    });
  }
  const host = options.host ?? '127.0.0.1';
  const defaultTopK = options.defaultTopK ?? 3;
  const maxTopK = options.maxTopK ?? 100;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const schema = requestSchema(maxTopK, options.maxQueries ?? 1024);
  if (!Number.isInteger(defaultTopK) || defaultTopK < 1 || defaultTopK > maxTopK) {
    throw new ConfigError(
      `serve: defaultTopK must be an integer in [1, maxTopK=${maxTopK}], got ${defaultTopK}`,
      {
        details: { field: 'defaultTopK', value: defaultTopK },
      },
    );
  }

  const server = createServer((request, response) => {
    void (async () => {
      try {
        const path = (request.url ?? '').split('?')[0];
        if (path !== '/retrieve') throw new BadRequest(404, `no route ${path}; POST /retrieve`);
        if (request.method !== 'POST') throw new BadRequest(405, 'use POST /retrieve');
        const text = await readBody(request, maxBodyBytes);
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          throw new BadRequest(
            400,
            'body is not JSON; send {"queries": [...], "topk": 3, "return_scores": true}',
          );
        }
        const parsed = schema.safeParse(value);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          throw new BadRequest(
            400,
            `field "${issue?.path.join('.') || 'body'}": ${issue?.message ?? 'invalid'}`,
          );
        }
        const body = parsed.data;
        const queries = body.queries ?? [body.query ?? ''];
        const topK = body.topk ?? defaultTopK;
        const results = await retriever.search(queries, topK);
        const withScores = body.return_scores === true;
        send(response, 200, {
          result: results.map((list) => list.map((p) => render(p, withScores))),
        });
      } catch (error) {
        if (error instanceof BadRequest) send(response, error.status, { error: error.message });
        else send(response, 500, { error: error instanceof Error ? error.message : String(error) });
      }
    })();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8000, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${address.port}/retrieve`,
    host: address.address,
    port: address.port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
