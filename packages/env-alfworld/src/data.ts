/**
 * Finding games on disk in upstream's layout:
 * `<dataDir>/json_2.1.1/<split>/<task type>-<...>/<trial>/game.tw-pddl`.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, createRng, DataError, InvalidInputError } from '@agentrl/core';
import { missingDataFix, resolveDataDir } from '@agentrl/core/data';
import { ALFWORLD_TASK_TYPES, type AlfworldTaskType } from './game.ts';

/** The benchmark splits. */
export const ALFWORLD_SPLITS = ['train', 'valid_seen', 'valid_unseen'] as const;

/** One of the benchmark splits. */
export type AlfworldSplit = (typeof ALFWORLD_SPLITS)[number];

/** A game file found on disk. */
export interface AlfworldGameEntry {
  /** Path of the `game.tw-pddl` file. */
  readonly path: string;
  /** The split directory it was found in. */
  readonly split: AlfworldSplit;
  /** Task type from the task directory's name. */
  readonly taskType: AlfworldTaskType;
}

/**
 * The default data directory, as `resolveDataDir` of `@agentrl/core/data` finds it:
 * `$ALFWORLD_DATA` when set, else `$AGENTRL_DATA/alfworld`, else `data/alfworld` of a source
 * checkout's shared folder where that exists, else `alfworld` in the user cache folder (where
 * `agentrl data fetch alfworld` puts the games; `~/.cache/agentrl/alfworld` on Linux).
 */
export function defaultAlfworldDataDir(): string {
  return resolveDataDir('alfworld').dir;
}

/** Task type named by a task directory (`pick_two_obj_and_place-Candle-None-Drawer-427`). */
export function taskTypeOfDirectory(name: string): AlfworldTaskType | null {
  const head = name.split('-')[0] ?? '';
  return (ALFWORLD_TASK_TYPES as readonly string[]).includes(head)
    ? (head as AlfworldTaskType)
    : null;
}

/** Options of {@link listAlfworldGames}. */
export interface ListAlfworldGamesOptions {
  /** Data directory holding `json_2.1.1`; default {@link defaultAlfworldDataDir}. */
  readonly dataDir?: string;
  readonly split: AlfworldSplit;
  /** Keep only these task types (default: all six). */
  readonly taskTypes?: readonly AlfworldTaskType[];
}

/** Every game of a split, sorted by path. Rejects with `BAD_CONFIG` when the split is absent. */
export async function listAlfworldGames(
  options: ListAlfworldGamesOptions,
): Promise<AlfworldGameEntry[]> {
  const { split } = options;
  if (!(ALFWORLD_SPLITS as readonly string[]).includes(split)) {
    throw new ConfigError(
      `split "${String(split)}" is not an ALFWorld split; use one of ${ALFWORLD_SPLITS.join(', ')}`,
      { details: { field: 'split', value: split } },
    );
  }
  const dataDir = options.dataDir ?? defaultAlfworldDataDir();
  const root = join(dataDir, 'json_2.1.1', split);
  if (!existsSync(root)) {
    const fix =
      options.dataDir !== undefined
        ? 'the dataDir option must name the folder holding json_2.1.1 (`agentrl data fetch alfworld` downloads it; without dataDir, ALFWORLD_DATA or the default folder is read)'
        : `${missingDataFix('alfworld')}, or pass dataDir`;
    throw new ConfigError(
      `ALFWorld data not found: ${root} does not exist; ${fix} (or use source: 'generated')`,
      { details: { field: 'dataDir', value: dataDir } },
    );
  }
  const wanted = new Set<string>(options.taskTypes ?? ALFWORLD_TASK_TYPES);
  const out: AlfworldGameEntry[] = [];
  for (const taskDir of (await readdir(root)).sort()) {
    const taskType = taskTypeOfDirectory(taskDir);
    if (taskType === null || !wanted.has(taskType)) continue;
    let trials: string[];
    try {
      trials = (await readdir(join(root, taskDir))).sort();
    } catch (cause) {
      throw new DataError(`ALFWorld data: cannot list ${join(root, taskDir)}`, { cause });
    }
    for (const trial of trials) {
      const path = join(root, taskDir, trial, 'game.tw-pddl');
      if (existsSync(path)) out.push({ path, split, taskType });
    }
  }
  return out;
}

/**
 * The game a reset plays: `task` as an index into `games` or (part of) a path, else a draw from
 * `seed` (the same seed gives the same game, so group members share it, as in verl-agent where
 * env slot k of a group is seeded `env.seed + group`).
 */
export function pickAlfworldGame(
  games: readonly AlfworldGameEntry[],
  reset: { readonly seed: number; readonly task?: string | number },
): AlfworldGameEntry {
  if (typeof reset.task === 'number') {
    const game = Number.isInteger(reset.task) ? games[reset.task] : undefined;
    if (!game) {
      throw new InvalidInputError(
        `alfworld: task index ${reset.task} is out of range; use 0..${games.length - 1}`,
        {
          details: { field: 'task', value: reset.task },
        },
      );
    }
    return game;
  }
  if (typeof reset.task === 'string') {
    const wanted = reset.task;
    const found =
      games.find((g) => g.path === wanted) ?? games.find((g) => g.path.includes(wanted));
    if (!found) {
      throw new InvalidInputError(`alfworld: no game matches task "${wanted}"`, {
        details: { field: 'task', value: wanted },
      });
    }
    return found;
  }
  return games[createRng(reset.seed).int(games.length)] as AlfworldGameEntry;
}
