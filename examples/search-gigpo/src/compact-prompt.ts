/**
 * The demo's prompt is the `compact` prompt of `search/qa-v1` (`searchCompactPrompt` of
 * `@agentrl/env-search`: the question and the passages of the last search, about 20–60 words).
 * This file adds the response the warm start teaches.
 */
export { passagesOf, searchCompactPrompt as compactPrompt } from '@agentrl/env-search';

/** The response the expert demonstrations teach: the action with spaces inside its tags. */
export function expertResponse(action: string): string {
  return action.replace(/^<(search|answer)>(.*)<\/\1>$/s, '<$1> $2 </$1>');
}
