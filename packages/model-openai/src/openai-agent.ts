/**
 * An OpenAI-compatible chat-completions client as a `RolloutAgent` (`@agentrl/core`): the
 * paper's prompt as a single user message, bounded concurrency, retries with exponential backoff,
 * a timeout per request. For scoring prompting baselines (vLLM, Ollama, any server speaking the
 * wire format).
 */
import { type AgentResponse, AgentRLError, ConfigError, type RolloutAgent } from '@agentrl/core';
import { z } from 'zod';

/** Options of {@link OpenAICompatibleAgent}. */
export interface OpenAICompatibleOptions {
  /** Base URL ending before `/chat/completions`, e.g. `http://127.0.0.1:8000/v1`. */
  readonly baseUrl: string;
  /** Model name sent in each request. */
  readonly model: string;
  /** Bearer token, when the server wants one (read it from the environment, never a config file). */
  readonly apiKey?: string;
  readonly temperature?: number;
  readonly topP?: number;
  readonly maxTokens?: number;
  /** Requests in flight at once. Default 8. */
  readonly concurrency?: number;
  /** Attempts per request (first try included). Default 4. */
  readonly maxAttempts?: number;
  /** Backoff before retry k is `retryBaseMs · 2^(k−1)`. Default 500 ms. */
  readonly retryBaseMs?: number;
  /** Timeout of one request. Default 120 000 ms. */
  readonly timeoutMs?: number;
  /** The fetch to use (tests). Default: global fetch. */
  readonly fetch?: typeof fetch;
}

const responseSchema = z.object({
  choices: z
    .array(z.object({ message: z.object({ content: z.string().nullable().optional() }) }))
    .min(1),
});

/** Errors a retry may cure: network failures, timeouts, 408, 429 and 5xx. */
function retryable(status: number | undefined): boolean {
  return status === undefined || status === 408 || status === 429 || status >= 500;
}

export class OpenAICompatibleAgent implements RolloutAgent {
  readonly #o: OpenAICompatibleOptions;
  readonly #url: string;
  /** Requests sent, retries included (for logs and tests). */
  requests = 0;

  constructor(options: OpenAICompatibleOptions) {
    if (!/^https?:\/\//.test(options.baseUrl))
      throw new ConfigError(
        `model.baseUrl "${options.baseUrl}" must start with http:// or https://`,
        {
          details: { field: 'model.baseUrl', value: options.baseUrl },
        },
      );
    this.#o = options;
    this.#url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  }

  async #complete(content: string, seed: number): Promise<string> {
    const o = this.#o;
    const attempts = o.maxAttempts ?? 4;
    const doFetch = o.fetch ?? fetch;
    let lastError = '';
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1)
        await new Promise((r) => setTimeout(r, (o.retryBaseMs ?? 500) * 2 ** (attempt - 2)));
      this.requests++;
      let status: number | undefined;
      try {
        const response = await doFetch(this.#url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}),
          },
          body: JSON.stringify({
            model: o.model,
            messages: [{ role: 'user', content }],
            temperature: o.temperature ?? 0.4,
            top_p: o.topP ?? 1,
            max_tokens: o.maxTokens ?? 512,
            seed,
          }),
          signal: AbortSignal.timeout(o.timeoutMs ?? 120_000),
        });
        status = response.status;
        const text = await response.text();
        if (!response.ok) {
          lastError = `HTTP ${response.status}: ${text.slice(0, 200)}`;
          if (!retryable(status)) break;
          continue;
        }
        const parsed = responseSchema.safeParse(JSON.parse(text));
        if (!parsed.success) {
          lastError = `the reply is not a chat completion: ${parsed.error.message}`;
          break;
        }
        return parsed.data.choices[0]?.message.content ?? '';
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
      }
    }
    throw new AgentRLError(
      'BACKEND_FAILURE',
      `chat completion at ${this.#url} failed: ${lastError}`,
      {
        details: { url: this.#url },
      },
    );
  }

  async act(prompts: readonly string[], { seed }: { seed: number }): Promise<AgentResponse[]> {
    const out: AgentResponse[] = new Array(prompts.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < prompts.length) {
        const i = next++;
        const text = await this.#complete(prompts[i] as string, seed + i);
        out[i] = { text, promptTokenIds: [], responseTokenIds: [], responseLogProbs: [] };
      }
    };
    const workers = Math.max(1, Math.min(this.#o.concurrency ?? 8, prompts.length));
    await Promise.all(Array.from({ length: workers }, worker));
    return out;
  }
}
