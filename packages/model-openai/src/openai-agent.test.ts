import { AgentRLError, isAgentRLError } from '@agentrl/core';
import { describe, expect, it } from 'vitest';
import { OpenAICompatibleAgent, type OpenAICompatibleOptions } from './openai-agent.ts';
import { startOpenAITestServer, type TestServer } from './testing/openai-test-server.ts';

/** An agent on `server` with model `m` and 1 ms retry backoff, plus `options`. */
function retryingAgent(
  server: TestServer,
  options: Partial<OpenAICompatibleOptions> = {},
): OpenAICompatibleAgent {
  return new OpenAICompatibleAgent({
    baseUrl: server.baseUrl,
    model: 'm',
    retryBaseMs: 1,
    ...options,
  });
}

/** Runs `run` against a started test server and closes the server whatever happens. */
async function withServer(
  started: Promise<TestServer>,
  run: (server: TestServer) => Promise<void>,
): Promise<void> {
  const server = await started;
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

/** A fixed rule: go towards the exit named in the prompt, except wait in cell 2. */
function rule(prompt: string): string {
  const now = /Now: You are in cell (\d+) of \d+\. The exit is to the (east|west)/.exec(prompt);
  if (!now) return 'no idea';
  return now[1] === '2' ? '<action>wait</action>' : `<action>go ${now[2]}</action>`;
}

const prompt = (cell: number, side: string) =>
  `Now: You are in cell ${cell} of 4. The exit is to the ${side}.`;

/** The rejection of `promise`, which must reject. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

describe('OpenAICompatibleAgent', () => {
  it('answers each prompt in order with the text the server sent, one user message each', async () => {
    await withServer(startOpenAITestServer(rule), async (server) => {
      const prompts = [prompt(1, 'east'), prompt(2, 'east'), prompt(3, 'west'), 'hello'];
      const agent = new OpenAICompatibleAgent({
        baseUrl: `${server.baseUrl}/`,
        model: 'scripted',
        concurrency: 3,
      });
      const responses = await agent.act(prompts, { seed: 10 });
      expect(responses.map((r) => r.text)).toEqual(prompts.map(rule));
      expect(responses[0]).toEqual({
        text: '<action>go east</action>',
        promptTokenIds: [],
        responseTokenIds: [],
        responseLogProbs: [],
      });
      expect(agent.requests).toBe(4);
      const bodies = server.received.map((r) => r.body as Record<string, unknown>);
      const byContent = new Map(
        bodies.map((b) => [(b.messages as { content: string }[])[0]?.content, b]),
      );
      prompts.forEach((p, i) => {
        expect(byContent.get(p)).toEqual({
          model: 'scripted',
          messages: [{ role: 'user', content: p }],
          temperature: 0.4,
          top_p: 1,
          max_tokens: 512,
          seed: 10 + i,
        });
      });
    });
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    await withServer(
      startOpenAITestServer(() => 'ok'),
      async (server) => {
        let inFlight = 0;
        let maxInFlight = 0;
        const counting: typeof fetch = async (input, init) => {
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          try {
            return await fetch(input, init);
          } finally {
            inFlight--;
          }
        };
        const agent = new OpenAICompatibleAgent({
          baseUrl: server.baseUrl,
          model: 'm',
          concurrency: 3,
          fetch: counting,
        });
        const responses = await agent.act(['a', 'b', 'c', 'd', 'e', 'f', 'g'], { seed: 0 });
        expect(responses).toHaveLength(7);
        expect(maxInFlight).toBe(3);
        expect(server.requests()).toBe(7);
      },
    );
  });

  it('sends the bearer token from its options, and none without one', async () => {
    await withServer(
      startOpenAITestServer(() => 'ok'),
      async (server) => {
        const options = { baseUrl: server.baseUrl, model: 'm' };
        await new OpenAICompatibleAgent({ ...options, apiKey: 'sk-test' }).act(['a'], { seed: 0 });
        await new OpenAICompatibleAgent(options).act(['b'], { seed: 0 });
        expect(server.received.map((r) => r.authorization)).toEqual(['Bearer sk-test', undefined]);
      },
    );
  });

  it('retries a busy server with backoff and then succeeds', async () => {
    await withServer(
      startOpenAITestServer(() => '<action>wait</action>', { failFirst: 2 }),
      async (server) => {
        const agent = retryingAgent(server);
        const [r] = await agent.act(['hello'], { seed: 0 });
        expect(r?.text).toBe('<action>wait</action>');
        expect(agent.requests).toBe(3);
      },
    );
  });

  it.each([408, 429, 500])('retries HTTP %i', async (status) => {
    await withServer(
      startOpenAITestServer(() => 'ok', { failFirst: 1, failStatus: status }),
      async (server) => {
        const agent = retryingAgent(server);
        const [r] = await agent.act(['hello'], { seed: 0 });
        expect(r?.text).toBe('ok');
        expect(agent.requests).toBe(2);
      },
    );
  });

  it('gives up after the last attempt with the status in the message', async () => {
    await withServer(
      startOpenAITestServer(() => '', { failFirst: 100 }),
      async (server) => {
        const agent = retryingAgent(server, { maxAttempts: 2 });
        const error = await rejectionOf(agent.act(['hello'], { seed: 0 }));
        expect(error).toBeInstanceOf(AgentRLError);
        expect(isAgentRLError(error) && error.code).toBe('BACKEND_FAILURE');
        expect((error as Error).message).toMatch(/HTTP 503/);
        expect(agent.requests).toBe(2);
        expect(server.requests()).toBe(2);
      },
    );
  });

  it('does not retry a refusal (HTTP 401) and says why it failed', async () => {
    await withServer(
      startOpenAITestServer(() => 'ok', { failFirst: 1, failStatus: 401 }),
      async (server) => {
        const agent = retryingAgent(server);
        const error = await rejectionOf(agent.act(['hello'], { seed: 0 }));
        expect(isAgentRLError(error) && error.code).toBe('BACKEND_FAILURE');
        expect((error as Error).message).toMatch(/HTTP 401/);
        expect(agent.requests).toBe(1);
      },
    );
  });

  it('does not retry a reply that is not a chat completion', async () => {
    await withServer(
      startOpenAITestServer(() => 'ok', { rawReply: '{"choices":[]}' }),
      async (server) => {
        const agent = retryingAgent(server);
        const error = await rejectionOf(agent.act(['hello'], { seed: 0 }));
        expect(isAgentRLError(error) && error.code).toBe('BACKEND_FAILURE');
        expect((error as Error).message).toMatch(/not a chat completion/);
        expect(agent.requests).toBe(1);
      },
    );
  });

  it('does not retry a reply that is not JSON, naming the URL', async () => {
    await withServer(
      startOpenAITestServer(() => 'ok', { rawReply: '<html>a proxy page</html>' }),
      async (server) => {
        const agent = retryingAgent(server);
        const error = await rejectionOf(agent.act(['hello'], { seed: 0 }));
        expect(isAgentRLError(error) && error.code).toBe('BACKEND_FAILURE');
        expect((error as Error).message).toContain(
          `${server.baseUrl}/chat/completions: the reply is not a chat completion`,
        );
        expect(agent.requests).toBe(1);
      },
    );
  });

  it('ends an unanswered request at its timeout and retries it', async () => {
    await withServer(
      startOpenAITestServer(() => 'ok', { hangFirst: 1 }),
      async (server) => {
        const agent = retryingAgent(server, { timeoutMs: 100 });
        const [r] = await agent.act(['hello'], { seed: 0 });
        expect(r?.text).toBe('ok');
        expect(agent.requests).toBe(2);
      },
    );
  });

  it('fails with the timeout in the message when every attempt times out', async () => {
    await withServer(
      startOpenAITestServer(() => 'ok', { hangFirst: 100 }),
      async (server) => {
        const agent = retryingAgent(server, { maxAttempts: 2, timeoutMs: 100 });
        const error = await rejectionOf(agent.act(['hello'], { seed: 0 }));
        expect(isAgentRLError(error) && error.code).toBe('BACKEND_FAILURE');
        expect((error as Error).message).toMatch(/timeout/i);
        expect(agent.requests).toBe(2);
      },
    );
  });

  it('refuses a base URL that is not http(s), naming the field', () => {
    expect(() => new OpenAICompatibleAgent({ baseUrl: 'localhost:8000/v1', model: 'm' })).toThrow(
      expect.objectContaining({ code: 'BAD_CONFIG', message: expect.stringMatching(/baseUrl/) }),
    );
  });
});
