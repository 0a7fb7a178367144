import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isAgentRLError } from '@agentrl/core';
import { afterEach, describe, expect, it } from 'vitest';
import { ERROR_EXCERPT_CHARS, type PostJsonOptions, postJson } from './http.ts';

interface Received {
  readonly body: string;
  readonly headers: IncomingMessage['headers'];
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

/**
 * A loopback server whose `handle(n, res)` answers the n-th request (1-based); a handler that
 * does not end `res` leaves the request unanswered.
 */
async function serve(
  handle: (n: number, res: ServerResponse) => void,
): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      received.push({ body, headers: req.headers });
      handle(received.length, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/x`, received };
}

/** A URL on loopback where nothing listens: a port the OS gave out and then took back. */
async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return `http://127.0.0.1:${port}/v1/x`;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const fast: PostJsonOptions = { maxAttempts: 4, retryBaseMs: 1, timeoutMs: 10_000 };

async function failureOf(promise: Promise<unknown>): Promise<Error & { details?: unknown }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isAgentRLError(error) && error.code).toBe('BACKEND_FAILURE');
  return error as Error;
}

describe('postJson', () => {
  it('sends the body as JSON with the bearer token and returns the parsed reply', async () => {
    const server = await serve((_, res) => json(res, 200, { ok: true }));
    const reply = await postJson(server.url, { a: [1, 2] }, { ...fast, apiKey: 'sk-test' });
    expect(reply).toEqual({ ok: true });
    expect(server.received).toHaveLength(1);
    expect(JSON.parse(server.received[0]?.body ?? '')).toEqual({ a: [1, 2] });
    expect(server.received[0]?.headers.authorization).toBe('Bearer sk-test');
    expect(server.received[0]?.headers['content-type']).toBe('application/json');
  });

  it('returns a 2xx body that is not JSON as its text, without retrying', async () => {
    const said = "Success: LoRA adapter 'agentrl-v1' added successfully.";
    const server = await serve((_, res) => res.writeHead(200).end(said));
    expect(await postJson(server.url, {}, fast)).toBe(said);
    expect(server.received).toHaveLength(1);
  });

  it('retries HTTP 5xx, 408 and 429 with one attempt counted each, then returns the reply', async () => {
    const statuses = [503, 500, 408, 429];
    const server = await serve((n, res) =>
      n <= statuses.length
        ? json(res, statuses[n - 1] as number, { error: 'busy' })
        : json(res, 200, { n }),
    );
    let attempts = 0;
    const reply = await postJson(
      server.url,
      {},
      { ...fast, maxAttempts: 5, onAttempt: () => attempts++ },
    );
    expect(reply).toEqual({ n: 5 });
    expect(attempts).toBe(5);
  });

  it('gives up after maxAttempts failures, naming the URL, the attempts, the status and the fix', async () => {
    const server = await serve((_, res) => json(res, 503, { error: 'overloaded' }));
    const error = await failureOf(postJson(server.url, {}, { ...fast, maxAttempts: 3 }));
    expect(server.received).toHaveLength(3);
    expect(error.message).toContain(`POST ${server.url} failed after 3 attempts: HTTP 503`);
    expect(error.message).toContain('overloaded');
    expect(error.message).toMatch(/raise maxAttempts/);
    expect(error.details).toMatchObject({ url: server.url, attempts: 3, status: 503 });
  });

  it('does not retry a refusal (4xx) and names the fix for it', async () => {
    const server = await serve((n, res) =>
      json(res, n === 1 ? 401 : 400, { error: 'no such model' }),
    );
    const refused = await failureOf(postJson(server.url, {}, fast));
    expect(server.received).toHaveLength(1);
    expect(refused.message).toMatch(/HTTP 401.*set apiKey/);
    const bad = await failureOf(postJson(server.url, {}, fast));
    expect(server.received).toHaveLength(2);
    expect(bad.message).toMatch(/after 1 attempt: HTTP 400: \{"error":"no such model"\}/);
  });

  it('quotes at most ERROR_EXCERPT_CHARS characters of a failed reply', async () => {
    const server = await serve((_, res) => res.writeHead(400).end('x'.repeat(1000)));
    const error = await failureOf(postJson(server.url, {}, fast));
    expect(error.message).toContain('x'.repeat(ERROR_EXCERPT_CHARS));
    expect(error.message).not.toContain('x'.repeat(ERROR_EXCERPT_CHARS + 1));
  });

  it('retries a refused connection and then says to start the server', async () => {
    const url = await refusedUrl();
    let attempts = 0;
    const error = await failureOf(
      postJson(url, {}, { ...fast, maxAttempts: 2, onAttempt: () => attempts++ }),
    );
    expect(attempts).toBe(2);
    expect(error.message).toContain(`POST ${url} failed after 2 attempts`);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.message).toMatch(/start the server, or fix the URL/);
  });

  it('ends an unanswered attempt at its timeout and retries it', async () => {
    const server = await serve((n, res) => {
      if (n > 1) json(res, 200, { n });
    });
    expect(await postJson(server.url, {}, { ...fast, timeoutMs: 100 })).toEqual({ n: 2 });
    expect(server.received).toHaveLength(2);
  });

  it('names the timeout and the option that sets it when every attempt times out', async () => {
    const server = await serve(() => {});
    const error = await failureOf(
      postJson(
        server.url,
        {},
        { ...fast, maxAttempts: 2, timeoutMs: 100, timeoutOption: 'syncTimeoutMs' },
      ),
    );
    expect(server.received).toHaveLength(2);
    expect(error.message).toMatch(
      /after 2 attempts: no answer within 100 ms; .*raise syncTimeoutMs/,
    );
  });
});
