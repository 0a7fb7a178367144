/**
 * The prompt templates of the search env, string for string: verl-agent's
 * per-step prompt with a compact history (what GiGPO trained with) and Search-R1's single-chat
 * prompt (an alternative id).
 */
import type { PromptContext, PromptTemplate } from '@agentrl/core';

const INSTRUCTIONS =
  "Now it's your turn to respond for the current step.\n" +
  'You should first conduct reasoning process. This process MUST be enclosed within <think> </think> tags. \n' +
  'After completing your reasoning, choose only one of the following actions (do not perform both):\n' +
  '(1) If you find you lack some knowledge, you can call a search engine to get more external information using format: <search> your query </search>.\n' +
  '(2) If you have enough knowledge to answer the question confidently, provide your final answer within <answer> </answer> tags, without detailed illustrations. For example, <answer>Beijing</answer>.\n';

/** verl-agent's first-step prompt (also used when the history length is 0). */
export function renderFirstStepPrompt(question: string): string {
  return (
    '\nYou are an expert agent tasked with answering the given question step-by-step.\n' +
    `Your question: ${question}\n\n${INSTRUCTIONS}`
  );
}

/** verl-agent's prompt for later steps, around an already rendered history block. */
export function renderHistoryPrompt(
  question: string,
  stepCount: number,
  memoryContext: string,
): string {
  return (
    '\nYou are an expert agent tasked with answering the given question step-by-step.\n' +
    `Your question: ${question}\n\n` +
    `Prior to this step, you have already taken ${stepCount} step(s). Below is the interaction history where <search> </search> wrapped your past search queries and <information> </information> wrapped the corresponding search results returned by the external search engine. History:\n` +
    `${memoryContext}\n\n${INSTRUCTIONS}`
  );
}

/** One past step as the history block shows it: the projected action and its observation. */
export interface SearchHistoryStep {
  /** The projected action (`<search>…</search>`, `<answer>…</answer>` or `""`). */
  readonly action: string;
  /** The observation the action produced (`<information>…</information>` or `""`). */
  readonly observation: string;
}

/**
 * The history block: the last `historyLength` steps, oldest first, each rendered as
 * `Step n:<action> <observation>\n` with n counted over the whole episode, joined by `\n`.
 */
export function renderHistory(steps: readonly SearchHistoryStep[], historyLength: number): string {
  const start = Math.max(0, steps.length - Math.max(0, historyLength));
  const entries: string[] = [];
  for (let i = start; i < steps.length; i++) {
    const step = steps[i] as SearchHistoryStep;
    entries.push(`Step ${i + 1}:${step.action} ${step.observation}\n`);
  }
  return entries.join('\n');
}

/** Search-R1's single-chat prompt (not what GiGPO used). */
export function renderSearchR1Prompt(question: string): string {
  return (
    'Answer the given question. You must conduct reasoning inside <think> and </think> first every time you get new information. ' +
    'After reasoning, if you find you lack some knowledge, you can call a search engine by <search> query </search> and it will return the top searched results between <information> and </information>. ' +
    'You can search as many times as your want. If you find no further external knowledge needed, you can directly provide the answer inside <answer> and </answer>, without detailed illustrations. ' +
    `For example, <answer> Beijing </answer>. Question: ${question}\n`
  );
}

/** Which prompt an agent gets. */
export type SearchTemplateId = 'verl-agent' | 'search-r1';

/** Options of {@link createSearchPrompt}. */
export interface SearchPromptOptions {
  /** Steps shown in the history block. Default 4 (the reference run). */
  readonly historyLength?: number;
  /** Default `'verl-agent'`. */
  readonly template?: SearchTemplateId;
}

/**
 * The env's {@link PromptTemplate}. The question is the reset observation; the observation each
 * past action produced is the observation the next step was taken in (or the current one).
 */
export function createSearchPrompt(options: SearchPromptOptions = {}): PromptTemplate {
  const historyLength = options.historyLength ?? 4;
  const template = options.template ?? 'verl-agent';
  return (context: PromptContext): string => {
    const question = context.initialObservation.text;
    if (template === 'search-r1') return renderSearchR1Prompt(question);
    if (context.stepIndex === 0 || historyLength <= 0 || context.history.length === 0) {
      return renderFirstStepPrompt(question);
    }
    const steps: SearchHistoryStep[] = context.history.map((entry, i) => ({
      action: entry.action,
      observation: (context.history[i + 1]?.observation ?? context.current).text,
    }));
    return renderHistoryPrompt(question, context.stepIndex, renderHistory(steps, historyLength));
  };
}

/** The default prompt of `search/qa-v1`: verl-agent's template with a 4-step history. */
export const searchPrompt: PromptTemplate = createSearchPrompt();
