/**
 * A short prompt for small models on a CPU (`env.prompt: compact`): the task, one history record
 * (the previous observation and action), the current observation and the admissible commands
 * without `help`, about 70–90 words a step. The paper's template (`alfworldPrompt`, verl-agent's
 * `ALFWORLD_TEMPLATE`) is about 100 words longer, which a 0.4M-parameter model on two cores
 * cannot afford within a 15-minute budget (a longer prompt kept the warm start from reaching its
 * mark). The first step shows the room line of the initial observation, without its banner and
 * task.
 */
import type { PromptTemplate } from '@agentrl/core';
import { alfworldTaskDescription } from './prompt.ts';

/** The room line of the initial observation (`You are in the middle of a room…`). */
function roomLine(initial: string): string {
  const line = initial.split('\n').find((l) => l.startsWith('You are in the middle'));
  return line ?? initial;
}

/** The compact prompt: `task :`, `prev : <observation> > <action>`, `now :`, `actions : a | b`. */
export const alfworldCompactPrompt: PromptTemplate = ({
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
