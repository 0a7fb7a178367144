/**
 * A small deterministic text environment for tests: a corridor of cells with an exit at one end.
 * States repeat across trajectories (the same cell gives the same text), so anchors group.
 */
import type { ActionParser, PromptTemplate, TextEnv } from '../env.ts';
import { ConfigError } from '../errors.ts';
import { Rng } from '../rng.ts';
import { createStepEnv } from './step-env.ts';

/** Options of {@link createCorridorEnv}. */
export interface CorridorEnvOptions {
  /** Number of cells (≥ 2). Default 5. */
  readonly length?: number;
  /** Steps before truncation. Default 10. */
  readonly maxSteps?: number;
  /** Reward on reaching the exit. Default 10 (as ALFWorld). */
  readonly winReward?: number;
}

/** Id under which the corridor registers in tests. */
export const CORRIDOR_ENV_ID = 'test/corridor-v1';

type Direction = 'east' | 'west';

/** Builds a corridor environment. The task (0…2·length−1) picks the exit side and start cell. */
export function createCorridorEnv(options: CorridorEnvOptions = {}): TextEnv {
  const length = options.length ?? 5;
  const maxSteps = options.maxSteps ?? 10;
  const winReward = options.winReward ?? 10;
  if (!Number.isInteger(length) || length < 2) {
    throw new ConfigError(`corridor: length must be an integer >= 2, got ${length}`, {
      details: { field: 'length', value: length },
    });
  }
  if (!Number.isInteger(maxSteps) || maxSteps < 1) {
    throw new ConfigError(`corridor: maxSteps must be a positive integer, got ${maxSteps}`, {
      details: { field: 'maxSteps', value: maxSteps },
    });
  }
  let cell = 0;
  let exit: Direction = 'east';
  let won = false;
  return createStepEnv(CORRIDOR_ENV_ID, {
    maxSteps,
    reset({ seed, task }) {
      const taskCount = 2 * length;
      let taskIndex: number;
      if (task === undefined) taskIndex = Rng.fromSeed(seed).int(taskCount);
      else if (typeof task === 'number' && Number.isInteger(task) && task >= 0 && task < taskCount)
        taskIndex = task;
      else
        throw new ConfigError(
          `corridor: task must be an integer in [0, ${taskCount}), got ${String(task)}`,
          {
            details: { field: 'task', value: task },
          },
        );
      exit = taskIndex < length ? 'east' : 'west';
      cell = taskIndex % length;
      won = false;
    },
    act(action) {
      let reward = 0;
      const command = action.trim().toLowerCase();
      if (command === 'go east' || command === 'go west') {
        const dir: Direction = command === 'go east' ? 'east' : 'west';
        const atExit = dir === exit && (dir === 'east' ? cell === length - 1 : cell === 0);
        if (atExit) {
          won = true;
          reward = winReward;
        } else if (dir === 'east' && cell < length - 1) cell++;
        else if (dir === 'west' && cell > 0) cell--;
      }
      return { reward, terminated: won };
    },
    observe() {
      const text = won
        ? 'You walk through the exit. You are outside.'
        : `You are in cell ${cell + 1} of ${length}. The exit is to the ${exit}.`;
      const admissibleActions: string[] = [];
      if (!won) {
        if (cell < length - 1 || exit === 'east') admissibleActions.push('go east');
        if (cell > 0 || exit === 'west') admissibleActions.push('go west');
        admissibleActions.push('wait');
      }
      return { text, anchor: text, admissibleActions };
    },
    info: () => ({ won, cell, exit }),
  });
}

const ACTION_TAG = /<action>([\s\S]*?)<\/action>/gi;

/** Parser of the corridor: the last `<action>…</action>` block, trimmed and lower-cased. */
export const corridorParser: ActionParser = (text) => {
  if (typeof text !== 'string') return { action: '', valid: false };
  let last: string | undefined;
  for (const match of text.matchAll(ACTION_TAG)) last = match[1];
  if (last === undefined) return { action: text.slice(-30).trim().toLowerCase(), valid: false };
  const action = last.trim().toLowerCase();
  return { action, valid: action.length > 0 };
};

/** Prompt of the corridor: task, the last two steps and the admissible actions. */
export const corridorPrompt: PromptTemplate = ({ history, current }) => {
  const lines = ['Reach the exit of the corridor.'];
  for (const entry of history.slice(-2))
    lines.push(`[${entry.observation.text}] -> ${entry.action}`);
  lines.push(`Now: ${current.text}`);
  lines.push(`Actions: ${(current.admissibleActions ?? []).join(', ')}`);
  lines.push('Answer with <action>...</action>.');
  return lines.join('\n');
};
