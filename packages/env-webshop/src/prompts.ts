/**
 * verl-agent's WebShop layer (its env manager, prompts and `webshop_projection`): observation formatting, admissible actions, the two
 * prompt templates with history, and the action projection used as the package's parser.
 */
import type { ActionParser, PromptTemplate } from '@agentrl/core';
import type { ConvertedPage } from './convert.ts';
import { pyStrip } from './python-format.ts';

/** `WEBSHOP_TEMPLATE_NO_HIS`, verbatim (note U+2011 in "e‑commerce"). */
export const WEBSHOP_TEMPLATE_NO_HIS =
  "\nYou are an expert autonomous agent operating in the WebShop e\u2011commerce environment. \nYour task is to: {task_description}.\nYour current observation is: {current_observation}.\nYour admissible actions of the current situation are: \n[\n{available_actions}\n].\n\nNow it's your turn to take one action for the current step.\nYou should first reason step-by-step about the current situation, then think carefully which admissible action best advances the shopping goal. This reasoning process MUST be enclosed within <think> </think> tags. \nOnce you've finished your reasoning, you should choose an admissible action for current step and present it within <action> </action> tags.\n";

/** `WEBSHOP_TEMPLATE`, verbatim. */
export const WEBSHOP_TEMPLATE =
  "\nYou are an expert autonomous agent operating in the WebShop e\u2011commerce environment.\nYour task is to: {task_description}.\nPrior to this step, you have already taken {step_count} step(s). Below are the most recent {history_length} observations and the corresponding actions you took: {action_history}\nYou are now at step {current_step} and your current observation is: {current_observation}.\nYour admissible actions of the current situation are: \n[\n{available_actions}\n].\n\nNow it's your turn to take one action for the current step.\nYou should first reason step-by-step about the current situation, then think carefully which admissible action best advances the shopping goal. This reasoning process MUST be enclosed within <think> </think> tags. \nOnce you've finished your reasoning, you should choose an admissible action for current step and present it within <action> </action> tags.\n";

/** Above this many characters the history prompt falls back to the no-history template. */
export const MAX_PROMPT_CHARS = 13_000;

/** Python `str.format` with named fields only (values are inserted verbatim). */
function format(template: string, fields: Record<string, string | number>): string {
  return template.replace(/\{([a-z_]+)\}/g, (whole, key: string) =>
    key in fields ? String(fields[key]) : whole,
  );
}

/** The task: the third `[SEP]` part of the reset observation (after `Instruction:`). */
export function extractTask(rawObservation: string): string {
  const parts = rawObservation.split(' [SEP] ');
  return parts[1] === 'Instruction:' ? (parts[2] ?? '') : '';
}

/** The formatted observation (and GiGPO anchor): quoted parts after the task, or the raw text. */
export function formatObservation(rawObservation: string, task: string): string {
  const parts = rawObservation.split(' [SEP] ');
  const at = parts.indexOf(task);
  if (at < 0) return rawObservation;
  return parts
    .slice(at + 1)
    .map((p) => `'${p}'`)
    .join(' [SEP] ');
}

/** Admissible actions: `search[<your query>]` with a search bar, then `click[...]` per clickable. */
export function admissibleActions(
  page: Pick<ConvertedPage, 'hasSearchBar' | 'clickables'>,
): string[] {
  const out = page.hasSearchBar ? ['search[<your query>]'] : [];
  for (const c of page.clickables) out.push(`click[${c}]`);
  return out;
}

/** One earlier step as the history prompt shows it. */
export interface WebshopHistoryEntry {
  /** The formatted observation the action was taken in. */
  readonly observation: string;
  /** The projected action sent to the env. */
  readonly action: string;
}

/** Inputs of {@link buildWebshopPrompt}. */
export interface WebshopPromptInput {
  readonly task: string;
  /** The formatted current observation. */
  readonly observation: string;
  readonly admissibleActions: readonly string[];
  /** All earlier steps of the episode, oldest first. */
  readonly history: readonly WebshopHistoryEntry[];
  /** How many past steps to show (verl-agent default 2; <= 0 disables history). */
  readonly historyLength?: number;
}

/** The user prompt of one step (verl-agent's WebShop templates, verbatim). */
export function buildWebshopPrompt(input: WebshopPromptInput): string {
  const k = input.historyLength ?? 2;
  const available = input.admissibleActions.map((a) => `'${a}',`).join('\n');
  const noHistory = format(WEBSHOP_TEMPLATE_NO_HIS, {
    task_description: input.task,
    current_observation: input.observation,
    available_actions: available,
  });
  const stepCount = input.history.length;
  if (k <= 0 || stepCount === 0) return noHistory;
  const start = Math.max(0, stepCount - k);
  const shown = input.history.slice(start);
  const lines = shown.map(
    (h, i) =>
      `[Observation ${start + i + 1}: '${h.observation}', Action ${start + i + 1}: '${h.action}']`,
  );
  const withHistory = format(WEBSHOP_TEMPLATE, {
    task_description: input.task,
    step_count: stepCount,
    history_length: shown.length,
    action_history: lines.join('\n'),
    current_step: stepCount + 1,
    current_observation: input.observation,
    available_actions: available,
  });
  return withHistory.length > MAX_PROMPT_CHARS ? noHistory : withHistory;
}

/**
 * The registered prompt template: rebuilds the prompt from the anchors (formatted observations)
 * of the context. `info.task` carries the instruction.
 */
export const webshopPrompt: PromptTemplate = (context) =>
  buildWebshopPrompt({
    task: typeof context.info.task === 'string' ? context.info.task : '',
    observation: context.current.anchor,
    admissibleActions: context.current.admissibleActions ?? [],
    history: context.history.map((h) => ({ observation: h.observation.anchor, action: h.action })),
  });

const CJK = /[\u4e00-\u9fff]/;

/** verl-agent's `webshop_projection`: never throws. */
export const webshopParser: ActionParser = (responseText) => {
  const text = typeof responseText === 'string' ? responseText : String(responseText);
  const lower = text.toLowerCase();
  const start = lower.indexOf('<action>');
  const end = lower.indexOf('</action>');
  let action: string;
  let valid: boolean;
  if (start < 0 || end < 0) {
    const chars = Array.from(lower);
    action = chars.slice(-20).join('');
    valid = false;
  } else {
    action = pyStrip(end > start + 8 ? lower.slice(start + 8, end) : '');
    valid = true;
  }
  if (!text.includes('<think>') || !text.includes('</think>') || CJK.test(text)) valid = false;
  return { action, valid };
};
