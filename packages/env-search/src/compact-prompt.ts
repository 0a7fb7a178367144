/**
 * A short prompt for tiny models (the `compact` prompt of `search/qa-v1`): the question, and after
 * a search the passages it returned as plain sentences, about 20–60 words. verl-agent's template
 * (`searchPrompt`) adds about 120 words of instructions and the JSON-escaped `<information>` text
 * of up to four past steps, which a tiny CPU model cannot afford. The env, its parser, anchors
 * and rewards are the same whichever prompt is used.
 */
import type { PromptTemplate } from '@agentrl/core';

/**
 * The passages of an `<information>` observation as plain sentences: the JSON text decoded, the
 * `Doc i:` markers and each passage's title line dropped, passages separated by `|`. Text that is
 * not such an observation (an answer's feedback) comes back unchanged.
 */
export function passagesOf(information: string): string {
  const match = /^<information>([\s\S]*)<\/information>$/.exec(information.trim());
  if (match === null) return information;
  const raw = match[1] as string;
  let body: string;
  try {
    body = String((JSON.parse(raw) as { result?: unknown }).result ?? '');
  } catch {
    body = raw;
  }
  return body
    .split(/Doc \d+: /)
    .map((doc) => doc.split('\n').slice(1).join(' ').trim() || doc.trim())
    .filter((doc) => doc.length > 0)
    .join(' | ');
}

/** The `compact` prompt of the search env (see the module comment). */
export const searchCompactPrompt: PromptTemplate = ({ initialObservation, current, stepIndex }) => {
  const lines = [`question : ${initialObservation.text}`];
  if (stepIndex > 0) lines.push(`info : ${passagesOf(current.text) || 'none'}`);
  return lines.join('\n');
};
