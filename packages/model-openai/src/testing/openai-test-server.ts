/**
 * A local server speaking the OpenAI chat-completions wire format, for tests: it answers each
 * user message with `answer(content)`, and can fail the first requests (503 by default) to test
 * retries, leave the first requests unanswered to test timeouts, or send a body that is not a
 * chat completion. `GET /v1/models` lists one model, `test-model`; every other route is 404 (a
 * server without runtime LoRA loading). It records what it received.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Options of {@link startOpenAITestServer}. */
export interface OpenAITestServerOptions {
  /** The first `failFirst` requests get `failStatus`. Default 0. */
  readonly failFirst?: number;
  /** HTTP status of the failed requests. Default 503. */
  readonly failStatus?: number;
  /** The first `hangFirst` requests (after the failed ones) are never answered. Default 0. */
  readonly hangFirst?: number;
  /** A 200 body sent verbatim instead of a chat completion. */
  readonly rawReply?: string;
}

/** One request the server received. */
export interface ReceivedRequest {
  /** The parsed JSON body (`undefined` when it was not JSON). */
  readonly body: unknown;
  /** The `authorization` header, if any. */
  readonly authorization: string | undefined;
}

export interface TestServer {
  readonly baseUrl: string;
  /** Requests received so far (any path, failed and unanswered ones included). */
  readonly requests: () => number;
  /** Every request received, in arrival order. */
  readonly received: readonly ReceivedRequest[];
  close(): Promise<void>;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export async function startOpenAITestServer(
  answer: (content: string) => string,
  options: OpenAITestServerOptions = {},
): Promise<TestServer> {
  let count = 0;
  const received: ReceivedRequest[] = [];
  const failFirst = options.failFirst ?? 0;
  const hangFirst = options.hangFirst ?? 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      count++;
      const request = parseJson(body) as
        | { model?: string; messages?: { role: string; content: string }[] }
        | undefined;
      received.push({ body: request, authorization: req.headers.authorization });
      if (req.method === 'GET' && req.url === '/v1/models') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"object":"list","data":[{"id":"test-model","object":"model"}]}');
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end('{"error":"not found"}');
        return;
      }
      if (count <= failFirst) {
        res
          .writeHead(options.failStatus ?? 503, { 'content-type': 'application/json' })
          .end('{"error":"busy"}');
        return;
      }
      // Left unanswered: the client's timeout has to end it (close() drops the socket).
      if (count <= failFirst + hangFirst) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      if (options.rawReply !== undefined) {
        res.end(options.rawReply);
        return;
      }
      const content = request?.messages?.at(-1)?.content ?? '';
      res.end(
        JSON.stringify({
          id: `chatcmpl-${count}`,
          object: 'chat.completion',
          model: request?.model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: answer(content) },
              finish_reason: 'stop',
            },
          ],
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests: () => count,
    received,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
