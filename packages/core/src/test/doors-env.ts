/**
 * A learning check for trainers: a row of locked rooms where exactly one word (the key) opens the
 * door of every room; any other word leaves the agent where it is. Only passing the last door pays
 * (`winReward`, as ALFWorld's sparse win), so a policy learns the key only from its own rollouts.
 *
 * States recur — within an episode (a wrong word keeps the same room, same text) and across the
 * members of a group (everyone starts in room 1) — so GiGPO's anchor-state groups hold several
 * steps with different actions and returns. There is one task; `seed` and `task` change nothing.
 * A policy that says a random word of a vocabulary of V words opens a door with chance about 1/V
 * per step; the optimal policy wins in `rooms` steps.
 */
import type { ActionParser, PromptTemplate, TextEnv } from '../env.ts';
import { ConfigError } from '../errors.ts';
import { createStepEnv } from './step-env.ts';

/** Options of {@link createDoorsEnv}. */
export interface DoorsEnvOptions {
  /** Rooms to pass (≥ 1). Default 2. */
  readonly rooms?: number;
  /** The words the agent may say (admissible actions), lower case. Default red, green, blue, gold. */
  readonly words?: readonly string[];
  /** The one word that opens a door; one of `words`. Default the last word. */
  readonly key?: string;
  /** Steps before truncation. Default 3 per room. */
  readonly maxSteps?: number;
  /** Reward on passing the last door. Default 10 (as ALFWorld). */
  readonly winReward?: number;
}

/** Id of the doors environment in tests. */
export const DOORS_ENV_ID = 'test/doors-v1';

/** Default words of {@link createDoorsEnv}; the key is the last. */
export const DOORS_WORDS = ['red', 'green', 'blue', 'gold'] as const;

/** Builds the doors environment (see the module comment). */
export function createDoorsEnv(options: DoorsEnvOptions = {}): TextEnv {
  const rooms = options.rooms ?? 2;
  const words = options.words ?? DOORS_WORDS;
  const key = options.key ?? (words.at(-1) as string);
  const maxSteps = options.maxSteps ?? 3 * rooms;
  const winReward = options.winReward ?? 10;
  if (!Number.isInteger(rooms) || rooms < 1) {
    throw new ConfigError(`doors: rooms must be a positive integer, got ${rooms}`, {
      details: { field: 'rooms', value: rooms },
    });
  }
  if (!Number.isInteger(maxSteps) || maxSteps < rooms) {
    throw new ConfigError(
      `doors: maxSteps must be an integer >= rooms (${rooms}), got ${maxSteps}; with fewer steps no episode can be won`,
      { details: { field: 'maxSteps', value: maxSteps } },
    );
  }
  if (!words.includes(key)) {
    throw new ConfigError(
      `doors: key ${JSON.stringify(key)} is not one of the words [${words.join(', ')}]; pick a key among them`,
      { details: { field: 'key', value: key } },
    );
  }
  let room = 0;
  let won = false;
  return createStepEnv(DOORS_ENV_ID, {
    maxSteps,
    reset() {
      room = 0;
      won = false;
    },
    act(action) {
      let reward = 0;
      if (action.trim().toLowerCase() === key) {
        room++;
        if (room === rooms) {
          won = true;
          reward = winReward;
        }
      }
      return { reward, terminated: won };
    },
    observe() {
      const text = won ? 'you are outside' : `room ${room + 1} of ${rooms}`;
      return { text, anchor: text, admissibleActions: won ? [] : [...words] };
    },
    info: () => ({ won, room }),
  });
}

/** Parser of the doors: the response's first word, lower-cased; an empty response is invalid. */
export const doorsParser: ActionParser = (text) => {
  if (typeof text !== 'string') return { action: '', valid: false };
  const action = (text.trim().split(/\s+/)[0] ?? '').toLowerCase();
  return { action, valid: action.length > 0 };
};

/** Prompt of the doors: the room and the words (no history: the room alone decides). */
export const doorsPrompt: PromptTemplate = ({ current }) =>
  `${current.text}: ${(current.admissibleActions ?? []).join(' ')}`;
