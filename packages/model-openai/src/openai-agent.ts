/**
 * An OpenAI-compatible chat-completions client as a `RolloutAgent` (`@agentrl/core`): the
 * paper's prompt as a single user message, bounded concurrency, each request sent by `postJson`
 * (`http.ts`: retries with exponential backoff, a timeout per attempt). For scoring prompting
 * baselines (vLLM, Ollama, any server speaking the wire format).
 */
import { type AgentResponse, AgentRLError, ConfigError, type RolloutAgent } from '@agentrl/core';
import { z } from 'zod';
import { postJson } from './http.ts';

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
    const reply = await postJson(
      this.#url,
      {
        model: o.model,
        messages: [{ role: 'user', content }],
        temperature: o.temperature ?? 0.4,
        top_p: o.topP ?? 1,
        max_tokens: o.maxTokens ?? 512,
        seed,
      },
      {
        apiKey: o.apiKey,
        maxAttempts: o.maxAttempts ?? 4,
        retryBaseMs: o.retryBaseMs ?? 500,
        timeoutMs: o.timeoutMs ?? 120_000,
        fetch: o.fetch,
        onAttempt: () => this.requests++,
      },
    );
    const parsed = responseSchema.safeParse(reply);
    if (!parsed.success)
      throw new AgentRLError(
        'BACKEND_FAILURE',
        `${this.#url}: the reply is not a chat completion (${parsed.error.message}); point model.baseUrl at a server that speaks the OpenAI chat API`,
        { details: { url: this.#url } },
      );
    return parsed.data.choices[0]?.message.content ?? '';
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
