import type { HistoryEntry, Observation } from '@agentrl/core';
import { getEnvRegistration } from '@agentrl/core';
import { describe, expect, it } from 'vitest';
import { alfworldCompactPrompt } from './compact-prompt.ts';
import { createAlfworldEnv } from './env.ts';
import { AlfworldExpert } from './expert.ts';
import { TINY_HOUSEHOLD } from './generator.ts';
import './register.ts';

describe('alfworldCompactPrompt', () => {
  it('shows the task, the room line, then the previous step, the observation and the commands without help', async () => {
    const env = createAlfworldEnv({ source: 'generated', generator: TINY_HOUSEHOLD, maxSteps: 15 });
    const { observation: initial, info } = await env.reset({ seed: 3 });
    const task = /Your task is to: (.*)/.exec(initial.text)?.[1];
    expect(task).toBeDefined();
    const room = initial.text.split('\n').find((l) => l.startsWith('You are in the middle'));
    expect(room).toBeDefined();

    const first = alfworldCompactPrompt({
      initialObservation: initial,
      history: [],
      current: initial,
      stepIndex: 0,
      info,
    }).split('\n');
    const commands = (initial.admissibleActions ?? []).filter((a) => a !== 'help');
    expect(first).toEqual([`task : ${task}`, `now : ${room}`, `actions : ${commands.join(' | ')}`]);
    expect(first.join('\n')).not.toContain('-= Welcome');

    const action = new AlfworldExpert().act(initial.text, initial.admissibleActions ?? []);
    const step = await env.step(action);
    const current: Observation = step.observation;
    const history: HistoryEntry[] = [{ observation: initial, action }];
    const second = alfworldCompactPrompt({
      initialObservation: initial,
      history,
      current,
      stepIndex: 1,
      info: step.info,
    }).split('\n');
    expect(second[0]).toBe(`task : ${task}`);
    // The first step's observation is shown as its room line, later ones as they are.
    expect(second[1]).toBe(`prev : ${room} > ${action}`);
    expect(second.slice(2, -1).join('\n')).toBe(`now : ${current.text}`);
    expect(second.at(-1)).toBe(
      `actions : ${(current.admissibleActions ?? []).filter((a) => a !== 'help').join(' | ')}`,
    );
    await env.close();
  });

  it('is the registration\'s "compact" prompt, beside the paper\'s default', () => {
    const r = getEnvRegistration('alfworld/text-v1');
    expect(r.prompts?.compact).toBe(alfworldCompactPrompt);
    expect(r.prompt).not.toBe(alfworldCompactPrompt);
  });
});
