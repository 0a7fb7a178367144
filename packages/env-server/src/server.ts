/**
 * The env server: an HTTP server whose `/ws` upgrades to WebSocket sessions (`session.ts`) and
 * whose other routes describe it (`describe.ts`). Envs are reached only through the registry of
 * `@agentrl/core` (`makeEnv(envId, envOptions)`): import the env package first, which registers
 * its envs. Sessions are counted before their env is built, so the limit holds under a burst.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  AgentRLError,
  checkOptionKeys,
  getEnvRegistration,
  isAgentRLError,
  makeEnv,
  type TextEnv,
} from '@agentrl/core';
import { WebSocketServer } from 'ws';
import {
  mcpAnswer,
  metadataBody,
  openApiDocument,
  type ServerDescription,
  WIRE_SCHEMAS,
} from './describe.ts';
import { type EnvServerOptions, resolveServerOptions } from './options.ts';
import { CLOSE_CODES, Session } from './session.ts';
import { errorReply } from './wire.ts';

/** Where the server reports what a client cannot see (a failing env close, a session error). */
export interface EnvServerLogger {
  warn(message: string): void;
}

/** What {@link startEnvServer} serves. */
export interface EnvServerConfig extends EnvServerOptions {
  /** Registry id of the env (`alfworld/text-v1`); its package must be imported already. */
  readonly envId: string;
  /** Options of the env, checked against the registration's declared keys. */
  readonly envOptions?: Readonly<Record<string, unknown>>;
  readonly logger?: EnvServerLogger;
}

/** Counters of a running server. */
export interface EnvServerStats {
  /** Sessions open now. */
  readonly sessions: number;
  /** Sessions opened since the start. */
  readonly sessionsOpened: number;
  /** Steps answered with an observation by sessions that have ended, plus the open ones. */
  readonly steps: number;
  /** Sockets refused because the session limit was reached. */
  readonly refused: number;
  /** Sessions closed for idleness. */
  readonly expired: number;
}

/** A running server. */
export interface EnvServerHandle {
  /** `http://host:port` plus the base path: what an OpenEnv client takes as `base_url`. */
  readonly baseUrl: string;
  readonly port: number;
  stats(): EnvServerStats;
  /** Stops accepting, ends every session (close code `goingAway`), closes their envs. Idempotent. */
  close(): Promise<void>;
}

function packageVersion(): string {
  try {
    const url = new URL('../package.json', import.meta.url);
    return (JSON.parse(readFileSync(url, 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/**
 * Builds one env of `envId` and resets it (seed 0), as a session's first message would; throws
 * `ENV_NOT_READY`, with the env's own message, when either fails (its data missing). A bad
 * option key stays the registry's `BAD_CONFIG`.
 */
async function checkReset(
  envId: string,
  envOptions: Readonly<Record<string, unknown>>,
): Promise<void> {
  const { options } = getEnvRegistration(envId);
  if (options !== undefined) checkOptionKeys(envOptions, options, `the options of "${envId}"`);
  let env: TextEnv | undefined;
  try {
    env = await makeEnv(envId, envOptions);
    await env.reset({ seed: 0 });
  } catch (error) {
    throw new AgentRLError(
      'ENV_NOT_READY',
      `${envId} cannot start an episode, so the server does not start: ${env === undefined ? 'creating the env' : 'reset'} failed: ${(error as Error).message}`,
      { details: { envId, ...(isAgentRLError(error) ? { cause: error.code } : {}) }, cause: error },
    );
  } finally {
    await env?.close();
  }
}

/** Starts serving `config.envId`; resolves once listening (after one env reset at start). */
export async function startEnvServer(config: EnvServerConfig): Promise<EnvServerHandle> {
  const { envId, envOptions = {}, logger, ...serverOptions } = config;
  const options = resolveServerOptions(serverOptions);
  const registration = getEnvRegistration(envId);
  // A bad option key fails here, at start, rather than in every session; so does an env that
  // cannot start an episode (its data missing), so that /health answers only once one can.
  await checkReset(envId, envOptions);
  const description: ServerDescription = {
    envId,
    description: registration.description,
    version: packageVersion(),
  };
  const base = options.basePath;
  const warn = (message: string) => logger?.warn(message);
  const sessions = new Set<Session>();
  let nextId = 1;
  let opened = 0;
  let refused = 0;
  let expired = 0;
  let endedSteps = 0;
  let closing: Promise<void> | null = null;

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    [`GET ${base}/health`]: (_q, res) =>
      sendJson(res, 200, { status: 'healthy', sessions: sessions.size }),
    [`GET ${base}/metadata`]: (_q, res) => sendJson(res, 200, metadataBody(description)),
    [`GET ${base}/schema`]: (_q, res) =>
      sendJson(res, 200, {
        action: WIRE_SCHEMAS.action,
        observation: WIRE_SCHEMAS.observation,
        state: WIRE_SCHEMAS.state,
      }),
    [`GET ${base}/openapi.json`]: (_q, res) =>
      sendJson(res, 200, openApiDocument(description, base)),
    [`POST ${base}/mcp`]: (req, res) => {
      let body = '';
      let size = 0;
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        size += chunk.length;
        if (size <= options.maxMessageBytes) body += chunk;
      });
      req.on('end', () =>
        size > options.maxMessageBytes
          ? sendJson(res, 413, { detail: `body over ${options.maxMessageBytes} bytes` })
          : sendJson(res, 200, mcpAnswer(body)),
      );
    },
  };

  const http = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const route = routes[`${req.method} ${path}`];
    if (route) route(req, res);
    else
      sendJson(res, 404, {
        detail: `no route ${req.method} ${path}; this server has ${base}/ws, ${base}/health, ${base}/metadata, ${base}/schema, ${base}/openapi.json and POST ${base}/mcp`,
      });
  });
  http.keepAliveTimeout = 5_000;

  // Frames up to 4x the answered limit are read and refused with an error frame; larger ones
  // close the socket: the `ws` package's `maxPayload` check closes it with 1009, "message too
  // big" (`CLOSE_CODES.messageTooBig`; https://www.rfc-editor.org/rfc/rfc6455#section-7.4.1), so
  // a client cannot make the server buffer without bound.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxMessageBytes * 4,
    perMessageDeflate: false,
  });

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== `${base}/ws` || closing !== null) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    socket.on('error', () => undefined);
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', (error) => warn(`websocket: ${error.message}`));
      if (sessions.size >= options.maxSessions) {
        refused++;
        ws.send(
          errorReply(
            {
              code: 'CAPACITY_REACHED',
              message: `this server holds ${sessions.size} sessions, its limit (option maxSessions); retry later or raise --set server.maxSessions`,
            },
            { active_sessions: sessions.size, max_sessions: options.maxSessions },
          ),
        );
        ws.close(CLOSE_CODES.tryAgainLater, 'capacity reached');
        return;
      }
      opened++;
      const session: Session = new Session(
        {
          id: nextId++,
          envId,
          maxPending: options.maxPending,
          maxMessageBytes: options.maxMessageBytes,
          warn,
          channel: {
            send: (frame) => {
              if (ws.readyState === ws.OPEN) ws.send(frame);
            },
            close: (code, reason) => {
              if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING)
                ws.close(code, reason);
            },
          },
          onEnd: (s) => {
            endedSteps += s.stepsServed;
            sessions.delete(s);
          },
        },
        () => makeEnv(envId, envOptions),
      );
      sessions.add(session);
      ws.on('message', (data) => {
        const buffer = Array.isArray(data)
          ? Buffer.concat(data)
          : Buffer.isBuffer(data)
            ? data
            : Buffer.from(data);
        // Binary frames are read as UTF-8 text too (some clients send JSON that way).
        session.receive(buffer.toString('utf8'), buffer.length);
      });
      ws.on('close', () => void session.end(CLOSE_CODES.normal, 'socket closed'));
    });
  });

  // Idle sessions are swept on a timer rather than each holding one.
  const idleMs = options.idleTimeoutS * 1000;
  const sweep =
    idleMs > 0
      ? setInterval(
          () => {
            const now = performance.now();
            for (const session of sessions) {
              if (now - session.lastActive > idleMs) {
                expired++;
                void session.end(CLOSE_CODES.expired, 'idle', {
                  code: 'SESSION_EXPIRED',
                  message: `session ${session.id} sent nothing for ${options.idleTimeoutS} s (option idleTimeoutS) and was closed; open a new one`,
                });
              }
            }
          },
          Math.min(idleMs / 4, 5_000),
        )
      : undefined;
  sweep?.unref();

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  http.on('error', (error) => warn(`http: ${error.message}`));
  const port = (http.address() as AddressInfo).port;
  const hostInUrl = options.host.includes(':') ? `[${options.host}]` : options.host;

  return {
    baseUrl: `http://${hostInUrl}:${port}${base}`,
    port,
    stats: () => {
      let open = 0;
      for (const s of sessions) open += s.stepsServed;
      return {
        sessions: sessions.size,
        sessionsOpened: opened,
        steps: endedSteps + open,
        refused,
        expired,
      };
    },
    close: () => {
      closing ??= (async () => {
        if (sweep !== undefined) clearInterval(sweep);
        const stopped = new Promise<void>((r) => http.close(() => r()));
        await Promise.all(
          [...sessions].map((s) =>
            s.end(CLOSE_CODES.goingAway, 'server shutting down', {
              code: 'SERVER_SHUTTING_DOWN',
              message: 'the server is shutting down; this session is closed',
            }),
          ),
        );
        wss.close();
        http.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}
