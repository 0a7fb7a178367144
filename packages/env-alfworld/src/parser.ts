/**
 * verl-agent's `alfworld_projection`: the action between the first
 * `<action>` and the first `</action>` of the lower-cased response, with format checks.
 */
import type { ActionParser, ParsedAction } from '@agentrl/core';
import { pythonStrip } from './text.ts';

const OPEN = '<action>';
const CLOSE = '</action>';
/** CJK Unified Ideographs only (U+4E00..U+9FFF), as the reference checks. */
const CJK = /[\u4e00-\u9fff]/;

/** Projects a model response to an ALFWorld command. Never throws. */
export function parseAlfworldAction(responseText: string): ParsedAction {
  const text = typeof responseText === 'string' ? responseText : String(responseText);
  const lower = text.toLowerCase();
  const start = lower.indexOf(OPEN);
  const end = lower.indexOf(CLOSE);
  if (start < 0 || end < 0) {
    // fallback: the last 30 characters (code points, as Python slices)
    const chars = Array.from(lower);
    return { action: chars.slice(-30).join(''), valid: false };
  }
  // a `</action>` before the end of `<action>` gives an empty slice, still valid (as upstream)
  const action =
    end > start + OPEN.length ? pythonStrip(lower.slice(start + OPEN.length, end)) : '';
  let valid = true;
  if (!text.includes('<think>') || !text.includes('</think>')) valid = false;
  if (CJK.test(text)) valid = false;
  return { action, valid };
}

/** The `alfworld/text-v1` action parser ({@link parseAlfworldAction}). */
export const alfworldParser: ActionParser = (responseText) => parseAlfworldAction(responseText);
