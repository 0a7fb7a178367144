/**
 * The `<information>` text the agent reads after a search: verl-agent's JSON-wrapped
 * form (the default, which GiGPO trained on) and Search-R1's raw form (an option).
 */
import { pythonJsonString, pythonStrip } from './python-text.ts';

/** How retrieved passages are shown to the agent. */
export type InformationFormat = 'verl-agent' | 'search-r1';

/** Text of the tool result when the retriever found nothing (verl-agent's search env). */
export const NO_RESULTS_TEXT = 'No search results found.';

/** `{"result": <text>}` exactly as Python's `json.dumps` writes it (ensure_ascii). */
export function jsonResult(text: string): string {
  return `{"result": ${pythonJsonString(text)}}`;
}

/** Wraps a tool result in the observation tags (the stripped form: no surrounding newlines). */
function wrap(json: string): string {
  return `<information>${json}</information>`;
}

/**
 * verl-agent's observation for passages in rank order: `Doc i: <stripped contents>\n` for each,
 * JSON-encoded as `{"result": …}` inside `<information>…</information>`. An empty list gives an
 * empty result (the env shows {@link formatNoResults} when a search finds nothing).
 */
export function formatInformation(passages: readonly string[]): string {
  let body = '';
  for (let i = 0; i < passages.length; i++) {
    body += `Doc ${i + 1}: ${pythonStrip(passages[i] as string)}\n`;
  }
  return wrap(jsonResult(body));
}

/** The observation of a search that found nothing. */
export function formatNoResults(): string {
  return wrap(jsonResult(NO_RESULTS_TEXT));
}

/** verl-agent's observation when the retriever failed after its retries. */
export function formatSearchError(message: string): string {
  return wrap(jsonResult(`Search error: ${message}`));
}

/**
 * Search-R1's own formatter: `Doc i(Title: <first line>) <rest>\n` per passage, the whole
 * stripped and placed raw between `\n\n<information>` and `</information>\n\n`.
 */
export function formatInformationSearchR1(passages: readonly string[]): string {
  let reference = '';
  for (let i = 0; i < passages.length; i++) {
    const lines = (passages[i] as string).split('\n');
    const title = lines[0] ?? '';
    const text = lines.slice(1).join('\n');
    reference += `Doc ${i + 1}(Title: ${title}) ${text}\n`;
  }
  return `\n\n<information>${pythonStrip(reference)}</information>\n\n`;
}
