import { makeEnv, registerEnv } from '@agentrl/core';
import { AlfworldExpert, TINY_HOUSEHOLD } from '@agentrl/env-alfworld';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type EnvServerConfig, type EnvServerHandle, startEnvServer } from './server.ts';

const GENERATED = { source: 'generated', generator: TINY_HOUSEHOLD };

type Frame = { type: string; data: Record<string, unknown> };

/** A WebSocket client that queues every frame it receives. */
class Client {
  private readonly frames: Frame[] = [];
  private readonly waiting: ((f: Frame) => void)[] = [];
  readonly socket: WebSocket;
  readonly closed: Promise<number>;
  readonly opened: Promise<void>;

  constructor(url: string) {
    this.socket = new WebSocket(url);
    this.opened = new Promise((resolve, reject) => {
      this.socket.once('open', () => resolve());
      this.socket.once('error', reject);
    });
    this.closed = new Promise((resolve) => this.socket.once('close', (code) => resolve(code)));
    this.socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as Frame;
      const waiter = this.waiting.shift();
      if (waiter) waiter(frame);
      else this.frames.push(frame);
    });
  }

  next(): Promise<Frame> {
    const frame = this.frames.shift();
    if (frame) return Promise.resolve(frame);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async request(message: unknown): Promise<Frame> {
    await this.opened;
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
    return await this.next();
  }
}

const servers: EnvServerHandle[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(config: Partial<EnvServerConfig> = {}): Promise<EnvServerHandle> {
  const server = await startEnvServer({
    envId: 'alfworld/text-v1',
    envOptions: GENERATED,
    port: 0,
    ...config,
  });
  servers.push(server);
  return server;
}

function wsUrl(server: EnvServerHandle): string {
  return `${server.baseUrl.replace(/^http/, 'ws')}/ws`;
}

async function playExpert(client: Client, seed: number): Promise<Frame[]> {
  const replies = [await client.request({ type: 'reset', data: { seed } })];
  const expert = new AlfworldExpert();
  for (let i = 0; i < 40; i++) {
    const obs = (replies.at(-1) as Frame).data.observation as Record<string, unknown>;
    const action = expert.act(obs.text as string, obs.admissible_actions as string[]);
    const reply = await client.request({ type: 'step', data: { action } });
    replies.push(reply);
    if (reply.data.done === true) break;
  }
  return replies;
}

describe('the env server over a WebSocket', () => {
  it('plays a whole ALFWorld episode: observations carry text, admissible actions, anchor, won, metrics and info, and the expert wins', async () => {
    const server = await serve();
    const client = new Client(wsUrl(server));
    const replies = await playExpert(client, 3);
    const first = replies[0] as Frame;
    expect(first.type).toBe('observation');
    expect(first.data.reward).toBeNull();
    expect(first.data.done).toBe(false);
    const obs = first.data.observation as Record<string, unknown>;
    expect(obs.text).toContain('Your task is to: ');
    expect(obs.anchor).toBe(obs.text);
    expect((obs.admissible_actions as string[]).length).toBeGreaterThan(0);
    expect(obs.won).toBe(false);
    expect(obs.info).toMatchObject({ gamePath: 'generated:3' });
    const last = replies.at(-1) as Frame;
    expect(last.data.done).toBe(true);
    expect(last.data.reward).toBe(10); // verl-agent's ALFWorld reward: 10 on a win
    expect(last.data.observation).toMatchObject({ won: true, terminated: true, truncated: false });
    expect((last.data.observation as { metrics: Record<string, number> }).metrics.steps).toBe(
      replies.length - 1,
    );
    const state = await client.request({ type: 'state' });
    expect(state).toEqual({
      type: 'state',
      data: {
        episode_id: '1-1',
        step_count: replies.length - 1,
        env: 'alfworld/text-v1',
        seed: 3,
        task: null,
        done: true,
      },
    });
    const after = await client.request({ type: 'step', data: { action: 'look' } });
    expect(after.type).toBe('error');
    expect(after.data).toMatchObject({ code: 'EXECUTION_ERROR', agentrl_code: 'ENV_FINISHED' });
    client.socket.send(JSON.stringify({ type: 'close' }));
    expect(await client.closed).toBe(1000);
  });

  it('gives two sessions with the same seed the same episode, step for step', async () => {
    const server = await serve();
    const [a, b] = [new Client(wsUrl(server)), new Client(wsUrl(server))];
    const [ra, rb] = await Promise.all([playExpert(a, 8), playExpert(b, 8)]);
    expect(rb).toEqual(ra);
    expect(server.stats()).toMatchObject({ sessions: 2, sessionsOpened: 2 });
  });

  it('answers malformed frames with error replies and keeps serving the session', async () => {
    const server = await serve({ maxMessageBytes: 1024 });
    const client = new Client(wsUrl(server));
    const cases: [unknown, string][] = [
      ['{not json', 'INVALID_JSON'],
      ['[1, 2]', 'VALIDATION_ERROR'],
      [{ type: 'jump' }, 'UNKNOWN_TYPE'],
      [{ data: {} }, 'UNKNOWN_TYPE'],
      [{ type: 'reset', data: { seed: -1 } }, 'VALIDATION_ERROR'],
      [{ type: 'reset', data: { sed: 1 } }, 'VALIDATION_ERROR'],
      [{ type: 'reset', data: { seed: 0 }, extra: 1 }, 'VALIDATION_ERROR'],
      [{ type: 'step', data: { action: 5 } }, 'VALIDATION_ERROR'],
      [{ type: 'step' }, 'VALIDATION_ERROR'],
      [{ type: 'step', data: { action: 'look' } }, 'EXECUTION_ERROR'],
      [{ type: 'step', data: { action: 'x'.repeat(2000) } }, 'MESSAGE_TOO_LARGE'],
    ];
    for (const [message, code] of cases) {
      const reply = await client.request(message);
      expect({ message, reply: reply.type, code: reply.data.code }).toEqual({
        message,
        reply: 'error',
        code,
      });
      expect(typeof reply.data.message).toBe('string');
    }
    const misspelt = await client.request({ type: 'reset', data: { sed: 1 } });
    expect(misspelt.data.message).toContain('"sed"');
    const reset = await client.request({ type: 'reset', data: { seed: 1 } });
    expect(reset.type).toBe('observation');
  });

  it('refuses a session over the limit with CAPACITY_REACHED and serves the others', async () => {
    const server = await serve({ maxSessions: 2 });
    const a = new Client(wsUrl(server));
    const b = new Client(wsUrl(server));
    await Promise.all([a.opened, b.opened]);
    await a.request({ type: 'state' });
    await b.request({ type: 'state' });
    const c = new Client(wsUrl(server));
    const refusal = await c.next();
    expect(refusal.data).toMatchObject({
      code: 'CAPACITY_REACHED',
      active_sessions: 2,
      max_sessions: 2,
    });
    expect(await c.closed).toBe(1013);
    expect((await a.request({ type: 'reset', data: { seed: 0 } })).type).toBe('observation');
    expect(server.stats().refused).toBe(1);
  });

  it('closes a session that sends nothing for idleTimeoutS with SESSION_EXPIRED and close code 4008', async () => {
    const server = await serve({ idleTimeoutS: 1 });
    const idle = new Client(wsUrl(server));
    await idle.request({ type: 'state' });
    const expired = await idle.next();
    expect(expired.data.code).toBe('SESSION_EXPIRED');
    expect(await idle.closed).toBe(4008);
    expect(server.stats()).toMatchObject({ expired: 1 });
  });

  it('a client that vanishes mid-episode leaves the other sessions serving, and its env is released', async () => {
    const server = await serve();
    const gone = new Client(wsUrl(server));
    const stays = new Client(wsUrl(server));
    await gone.request({ type: 'reset', data: { seed: 0 } });
    gone.socket.terminate();
    await gone.closed;
    const replies = await playExpert(stays, 5);
    expect((replies.at(-1) as Frame).data.observation).toMatchObject({ won: true });
    while (server.stats().sessions > 1) await new Promise((r) => setTimeout(r, 10));
    expect(server.stats().sessions).toBe(1);
  });

  it('shuts down cleanly: open sessions get SERVER_SHUTTING_DOWN and close code 1001', async () => {
    const server = await serve();
    const client = new Client(wsUrl(server));
    await client.request({ type: 'reset', data: { seed: 0 } });
    await server.close();
    expect((await client.next()).data.code).toBe('SERVER_SHUTTING_DOWN');
    expect(await client.closed).toBe(1001);
    expect(server.stats().sessions).toBe(0);
  });

  it('answers a session whose env cannot be built with FACTORY_ERROR, closes it (4500), and keeps serving the others', async () => {
    let built = 0;
    registerEnv({
      id: 'test/fails-after-two-v1',
      description: 'builds the ALFWorld env twice, then fails',
      create: () => {
        built++;
        if (built > 2) throw new Error('out of licences');
        return makeEnv('alfworld/text-v1', GENERATED);
      },
    });
    const server = await serve({ envId: 'test/fails-after-two-v1', envOptions: {} });
    const ok = new Client(wsUrl(server)); // the second build (the first was the check at start)
    expect((await ok.request({ type: 'reset', data: { seed: 0 } })).type).toBe('observation');
    const failing = new Client(wsUrl(server));
    const frame = await failing.next();
    expect(frame.data).toMatchObject({
      code: 'FACTORY_ERROR',
      factory_name: 'test/fails-after-two-v1',
    });
    expect(frame.data.message).toContain('out of licences');
    expect(await failing.closed).toBe(4500);
    expect((await ok.request({ type: 'step', data: { action: 'look' } })).type).toBe('observation');
  });

  it('rejects a misspelt env option at start, naming the closest declared one', async () => {
    await expect(
      startEnvServer({ envId: 'alfworld/text-v1', envOptions: { sorce: 'generated' }, port: 0 }),
    ).rejects.toThrow(/"source"/);
    await expect(
      startEnvServer({ envId: 'alfworld/text-v1', port: 0, maxSesions: 3 } as EnvServerConfig),
    ).rejects.toThrow(/maxSessions/);
  });

  it('does not start when its env cannot reset (ALFWorld without its data), so /health never says healthy, naming the reason', async () => {
    const start = startEnvServer({
      envId: 'alfworld/text-v1',
      envOptions: { dataDir: '/nonexistent/alfworld-data' },
      port: 0,
    });
    await expect(start).rejects.toMatchObject({ code: 'ENV_NOT_READY' });
    await expect(start).rejects.toThrow(
      /^alfworld\/text-v1 cannot start an episode, so the server does not start: reset failed: ALFWorld data not found: .* \(or use source: 'generated'\)/,
    );
  });
});

describe('the env server over HTTP', () => {
  it('serves health, metadata, schema, OpenAPI and a JSON-RPC answer from /mcp under its base path', async () => {
    const server = await serve({ basePath: '/alfworld' });
    expect(server.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/alfworld$/);
    const get = async (path: string) => {
      const res = await fetch(`${server.baseUrl}${path}`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    expect(await get('/health')).toEqual({
      status: 200,
      body: { status: 'healthy', sessions: 0 },
    });
    const metadata = await get('/metadata');
    expect(metadata.body.name).toBe('alfworld/text-v1');
    expect(typeof metadata.body.description).toBe('string');
    const schema = await get('/schema');
    expect(Object.keys(schema.body).sort()).toEqual(['action', 'observation', 'state']);
    const openapi = (await get('/openapi.json')).body as {
      info: { version: string };
      paths: Record<string, unknown>;
    };
    expect(openapi.info.version).toBe('1.0.0');
    expect(Object.keys(openapi.paths)).toContain('/alfworld/health');
    expect(Object.keys(openapi.paths)).not.toContain('/alfworld/reset');
    const mcp = await fetch(`${server.baseUrl}/mcp`, { method: 'POST', body: '{}' });
    expect(mcp.status).toBe(200);
    expect(await mcp.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    expect((await get('/nothing')).status).toBe(404);
  });
});
