/**
 * The CPU demo's short prompt: task + one history record + current observation + admissible
 * list, ~70–90 words (a longer prompt kept the warm start from reaching its mark in the budget). The paper's verbatim template (`alfworldPrompt`) is ~100 words
 * longer, which a 0.4M-parameter model on 2 cores cannot afford within the 15-minute budget.
 */
import type { PromptTemplate } from '@agentrl/core';
import { alfworldTaskDescription } from '@agentrl/env-alfworld';

/** The room line of the initial observation (banner and task removed). */
function roomLine(initial: string): string {
  const line = initial.split('\n').find((l) => l.startsWith('You are in the middle'));
  return line ?? initial;
}

export const compactPrompt: PromptTemplate = ({
  initialObservation,
  history,
  current,
  stepIndex,
}) => {
  const task = alfworldTaskDescription(initialObservation.text);
  const now = stepIndex === 0 ? roomLine(current.text) : current.text;
  const lines = [`task : ${task}`];
  const last = history.at(-1);
  if (last) {
    const obs = history.length === 1 ? roomLine(last.observation.text) : last.observation.text;
    lines.push(`prev : ${obs} > ${last.action}`);
  }
  lines.push(`now : ${now}`);
  const actions = (current.admissibleActions ?? []).filter((a) => a !== 'help');
  lines.push(`actions : ${actions.join(' | ')}`);
  return lines.join('\n');
};

/** The response the expert demonstrations teach: the paper's tags around the action. */
export function expertResponse(action: string): string {
  return `<think> </think> <action> ${action} </action>`;
}
