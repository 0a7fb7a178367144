/**
 * One JSON POST to an OpenAI-compatible server with bounded retries, a timeout per attempt and
 * an error that says what failed and what to do about it: what the chat agent and the
 * completions engine send every request through.
 *
 * The rule, the same for every caller:
 * - retried: failures a second attempt may cure, i.e. no reply (connection refused or reset, a
 *   body cut off while reading it), an attempt that passed its timeout, HTTP 408, 429 and 5xx;
 *   retry k waits `retryBaseMs · 2^(k−1)`;
 * - not retried: any other status (a refusal: a bad key, an unknown model or route), and a 2xx
 *   reply whatever its body: the server answered, and the same request gets the same answer.
 *   The body comes back parsed as JSON, or as its text when it is not JSON (vLLM's LoRA routes
 *   answer in plain text); whether it has the expected shape is the caller's check.
 * - the error names the URL, the attempts, the last failure with the first
 *   {@link ERROR_EXCERPT_CHARS} characters of the server's reply, and the fix.
 */
import { AgentRLError } from '@agentrl/core';

/** How much of a failed reply's body an error quotes. */
export const ERROR_EXCERPT_CHARS = 300;

/** Options of {@link postJson}. */
export interface PostJsonOptions {
  /** Bearer token, when the server wants one. */
  readonly apiKey?: string | undefined;
  /** Attempts, the first included (1: no retry). */
  readonly maxAttempts: number;
  /** Backoff before retry k is `retryBaseMs · 2^(k−1)`. */
  readonly retryBaseMs: number;
  /** Timeout of one attempt, in ms. */
  readonly timeoutMs: number;
  /** The caller's option that sets `timeoutMs`, named in a timeout's fix. Default `'timeoutMs'`. */
  readonly timeoutOption?: string;
  /** The fetch to use. Default: global fetch. */
  readonly fetch?: typeof fetch | undefined;
  /** Called once per attempt, before it is sent (request counters). */
  readonly onAttempt?: () => void;
}

/** The headers of a JSON request, with the bearer token when there is one. */
export function jsonHeaders(apiKey: string | undefined): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  };
}

/** Statuses a retry may cure: 408, 429 and 5xx. */
function retryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** One attempt's failure: what to report, and whether another attempt may cure it. */
interface Failure {
  readonly message: string;
  readonly fix: string;
  readonly retry: boolean;
  readonly status?: number;
}

function statusFailure(status: number, text: string): Failure {
  const excerpt = text.slice(0, ERROR_EXCERPT_CHARS);
  const message = `HTTP ${status}${excerpt === '' ? '' : `: ${excerpt}`}`;
  if (retryable(status))
    return {
      message,
      status,
      retry: true,
      fix: 'the server is overloaded or failing: see its log, or raise maxAttempts / retryBaseMs',
    };
  if (status === 401 || status === 403)
    return { message, status, retry: false, fix: 'set apiKey to a key the server accepts' };
  if (status === 404 || status === 405)
    return {
      message,
      status,
      retry: false,
      fix: 'the server has no such route: check that the base URL ends in /v1 and that the server speaks the OpenAI API',
    };
  return {
    message,
    status,
    retry: false,
    fix: 'the server refused the request: its reply above says why (an unknown model name, a parameter it does not take)',
  };
}

function thrownFailure(error: unknown, options: PostJsonOptions): Failure {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return {
      message: `no answer within ${options.timeoutMs} ms`,
      retry: true,
      fix: `check that the server is up, or raise ${options.timeoutOption ?? 'timeoutMs'} for a slow one`,
    };
  const cause =
    error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return {
    message: `${error instanceof Error ? error.message : String(error)}${cause}`,
    retry: true,
    fix: 'start the server, or fix the URL',
  };
}

/**
 * POSTs `body` as JSON to `url` under the rule above; returns a 2xx reply's body (JSON, or the
 * text when it is not JSON). Throws an `AgentRLError` with code `BACKEND_FAILURE` otherwise.
 */
export async function postJson(
  url: string,
  body: unknown,
  options: PostJsonOptions,
): Promise<unknown> {
  const doFetch = options.fetch ?? fetch;
  const payload = JSON.stringify(body);
  const headers = jsonHeaders(options.apiKey);
  const attempts = Math.max(1, options.maxAttempts);
  let failure: Failure | undefined;
  let attempt = 0;
  while (attempt < attempts) {
    if (attempt > 0)
      await new Promise((r) => setTimeout(r, options.retryBaseMs * 2 ** (attempt - 1)));
    attempt++;
    options.onAttempt?.();
    try {
      const response = await doFetch(url, {
        method: 'POST',
        headers,
        body: payload,
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      const text = await response.text();
      if (response.ok) {
        try {
          return JSON.parse(text);
        } catch {
          return text;
        }
      }
      failure = statusFailure(response.status, text);
    } catch (error) {
      failure = thrownFailure(error, options);
    }
    if (!failure.retry) break;
  }
  const last = failure as Failure;
  throw new AgentRLError(
    'BACKEND_FAILURE',
    `POST ${url} failed after ${attempt} attempt${attempt === 1 ? '' : 's'}: ${last.message}; ${last.fix}`,
    {
      details: {
        url,
        attempts: attempt,
        ...(last.status !== undefined ? { status: last.status } : {}),
      },
    },
  );
}
