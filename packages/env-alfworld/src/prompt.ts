/**
 * verl-agent's ALFWorld prompt templates (`ALFWORLD_TEMPLATE`, `ALFWORLD_TEMPLATE_NO_HIS`) and
 * the rendering of its step memory, reproduced string for string.
 */
import type { HistoryEntry, PromptContext, PromptTemplate } from '@agentrl/core';
import { pythonStrip } from './text.ts';

const TAIL =
  "Your admissible actions of the current situation are: [{admissible_actions}].\n\nNow it's your turn to take an action.\nYou should first reason step-by-step about the current situation. This reasoning process MUST be enclosed within <think> </think> tags. \nOnce you've finished your reasoning, you should choose an admissible action for current step and present it within <action> </action> tags.\n";

/** `ALFWORLD_TEMPLATE_NO_HIS`, verbatim. */
export const ALFWORLD_TEMPLATE_NO_HISTORY =
  '\nYou are an expert agent operating in the ALFRED Embodied Environment.\nYour current observation is: {current_observation}\n' +
  TAIL;

/** `ALFWORLD_TEMPLATE`, verbatim. */
export const ALFWORLD_TEMPLATE =
  '\nYou are an expert agent operating in the ALFRED Embodied Environment. Your task is to: {task_description}\nPrior to this step, you have already taken {step_count} step(s). Below are the most recent {history_length} observations and the corresponding actions you took: {action_history}\nYou are now at step {current_step} and your current observation is: {current_observation}\n' +
  TAIL;

const TASK_MARKER = 'Your task is to: ';

/** The task description: the text after the first `Your task is to: `, stripped. */
export function alfworldTaskDescription(initialObservation: string): string {
  const at = initialObservation.indexOf(TASK_MARKER);
  return at < 0 ? '' : pythonStrip(initialObservation.slice(at + TASK_MARKER.length));
}

/** The admissible list as the prompt shows it: `help` dropped, quoted, joined by `\n `. */
export function formatAdmissibleActions(actions: readonly string[]): string {
  return actions
    .filter((a) => a !== 'help')
    .map((a) => `'${a}'`)
    .join('\n ');
}

/** The last `historyLength` records rendered as `[Observation N: '...', Action N: '...']`. */
export function formatAlfworldHistory(
  history: readonly { readonly observation: string; readonly action: string }[],
  historyLength: number,
): { text: string; count: number } {
  const taken = historyLength > 0 ? history.slice(-historyLength) : [];
  const start = history.length - taken.length;
  const text = taken
    .map(
      (r, j) =>
        `[Observation ${start + j + 1}: '${r.observation}', Action ${start + j + 1}: '${r.action}']`,
    )
    .join('\n');
  return { text, count: taken.length };
}

/** Substitutes `{name}` fields in one pass (Python `str.format` with no other braces). */
function format(template: string, fields: Record<string, string>): string {
  return template.replace(/\{([a-z_]+)\}/g, (whole, name: string) => fields[name] ?? whole);
}

/** Everything the two templates need, as plain strings. */
export interface AlfworldPromptInput {
  /** The initial observation (the task description is taken from it). */
  readonly initialObservation: string;
  /** Earlier steps, oldest first: the observation each action was taken in and the projected action. */
  readonly history: readonly { readonly observation: string; readonly action: string }[];
  /** The observation the agent acts on now. */
  readonly currentObservation: string;
  /** The env's admissible commands now (`help` is dropped here). */
  readonly admissibleActions: readonly string[];
  /** History length k (verl-agent's `env.history_length`, default 2). */
  readonly historyLength?: number;
}

/** Renders the user message of one step exactly as verl-agent does. */
export function renderAlfworldPrompt(input: AlfworldPromptInput): string {
  const historyLength = input.historyLength ?? 2;
  const admissible = formatAdmissibleActions(input.admissibleActions);
  if (input.history.length === 0 || historyLength <= 0) {
    return format(ALFWORLD_TEMPLATE_NO_HISTORY, {
      current_observation: input.currentObservation,
      admissible_actions: admissible,
    });
  }
  const { text, count } = formatAlfworldHistory(input.history, historyLength);
  return format(ALFWORLD_TEMPLATE, {
    task_description: alfworldTaskDescription(input.initialObservation),
    step_count: String(input.history.length),
    history_length: String(count),
    action_history: text,
    current_step: String(input.history.length + 1),
    current_observation: input.currentObservation,
    admissible_actions: admissible,
  });
}

/** Options of {@link createAlfworldPrompt}. */
export interface AlfworldPromptOptions {
  /** How many earlier steps the prompt shows (default 2, as the paper's run). */
  readonly historyLength?: number;
}

/** A `PromptTemplate` for `alfworld/text-v1` with history length k. */
export function createAlfworldPrompt(options: AlfworldPromptOptions = {}): PromptTemplate {
  const historyLength = options.historyLength ?? 2;
  return (context: PromptContext) =>
    renderAlfworldPrompt({
      initialObservation: context.initialObservation.text,
      history: context.history.map((h: HistoryEntry) => ({
        observation: h.observation.text,
        action: h.action,
      })),
      currentObservation: context.current.text,
      admissibleActions: context.current.admissibleActions ?? [],
      historyLength,
    });
}

/** The default `alfworld/text-v1` prompt (history length 2). */
export const alfworldPrompt: PromptTemplate = createAlfworldPrompt();
