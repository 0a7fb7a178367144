/**
 * Action projection (verl-agent's search `projection.py`): raw model text → `<search>q</search>`, `<answer>a</answer>` or
 * `""`, and a validity flag. Never throws.
 */
import type { ActionParser, ParsedAction } from '@agentrl/core';
import { pythonStrip } from './python-text.ts';

// Case-insensitive with Unicode case folding, as Python's re.IGNORECASE on str patterns
// (`ſ` matches `s`).
const SEARCH_OPEN = /<search>/giu;
const SEARCH_CLOSE = /<\/search>/giu;
const ANSWER_OPEN = /<answer>/giu;
const ANSWER_CLOSE = /<\/answer>/giu;

/**
 * The group of the first lazy `open(.*?)close` match (DOTALL), or null. Found in linear time:
 * the leftmost match starts at the first opening tag and ends at the first closing tag after
 * it, and when that opening tag has no closing tag after it no later one has either.
 */
function firstBlock(open: RegExp, close: RegExp, text: string): string | null {
  open.lastIndex = 0;
  const start = open.exec(text);
  if (start === null) return null;
  const contentStart = start.index + start[0].length;
  close.lastIndex = contentStart;
  const end = close.exec(text);
  if (end === null) return null;
  return text.slice(contentStart, end.index);
}

function countMatches(pattern: RegExp, text: string): number {
  pattern.lastIndex = 0;
  let count = 0;
  while (pattern.exec(text) !== null) count += 1;
  return count;
}

/** Projects one model response to the env's action and its validity. */
export function projectSearchAction(responseText: string): ParsedAction {
  const text = typeof responseText === 'string' ? responseText : String(responseText);
  // 1. Trim after the first closing tag (case-sensitive substring tests).
  let trimmed = text;
  const searchClose = text.indexOf('</search>');
  if (searchClose >= 0) trimmed = text.slice(0, searchClose + '</search>'.length);
  else {
    const answerClose = text.indexOf('</answer>');
    if (answerClose >= 0) trimmed = text.slice(0, answerClose + '</answer>'.length);
  }
  // 2. Extract: search wins over answer.
  let action = '';
  let valid = true;
  const query = firstBlock(SEARCH_OPEN, SEARCH_CLOSE, trimmed);
  if (query !== null) action = `<search>${pythonStrip(query)}</search>`;
  else {
    const answer = firstBlock(ANSWER_OPEN, ANSWER_CLOSE, trimmed);
    if (answer !== null) action = `<answer>${pythonStrip(answer)}</answer>`;
    else valid = false;
  }
  // 3. Validity on the original text; the extracted action is kept either way.
  const searches = countMatches(SEARCH_OPEN, text);
  const answers = countMatches(ANSWER_OPEN, text);
  if ((searches > 0 && answers > 0) || searches > 1 || answers > 1) valid = false;
  return { action, valid };
}

/** The env's {@link ActionParser}: {@link projectSearchAction}, hardened against any input. */
export const searchParser: ActionParser = (responseText) => {
  try {
    return projectSearchAction(responseText);
  } catch {
    // Unreachable for strings; kept so that the parser contract (never throws) holds for any
    // value a caller passes through an untyped boundary.
    return { action: '', valid: false };
  }
};
