/**
 * `createAlfworldEnv`: the engine behind agentrl's `TextEnv` contract, over the real game files
 * or over generated households. Rollouts follow verl-agent's ALFWorld set-up: group members share
 * a game through their seed, observations are TextWorld's texts, reward 10 on a win.
 */
import {
  ConfigError,
  type EnvInfo,
  EpisodeLifecycle,
  InvalidInputError,
  type Observation,
  type ResetOptions,
  type ResetResult,
  type StepResult,
  type TextEnv,
} from '@agentrl/core';
import {
  type AlfworldGameEntry,
  type AlfworldSplit,
  defaultAlfworldDataDir,
  listAlfworldGames,
  pickAlfworldGame,
} from './data.ts';
import { type AlfworldDialect, AlfworldEngine } from './engine.ts';
import { type AlfworldGame, type AlfworldTaskType, loadAlfworldGame } from './game.ts';
import { type AlfworldGeneratorOptions, generateAlfworldGame } from './generator.ts';

/** The registry id. */
export const ALFWORLD_ENV_ID = 'alfworld/text-v1';

/** Reward of the winning step (verl-agent: `10 · won`). */
export const ALFWORLD_WIN_REWARD = 10;

/** Options of {@link createAlfworldEnv}. */
export interface AlfworldEnvOptions {
  /**
   * Where games come from: `'real'` (default) reads `game.tw-pddl` files from `dataDir`;
   * `'generated'` builds a fresh synthetic household from the reset seed (no data needed).
   */
  readonly source?: 'real' | 'generated';
  /** Directory holding `json_2.1.1` (default: `$ALFWORLD_DATA`, else `../shared/data/alfworld`). */
  readonly dataDir?: string;
  /** Split to draw real games from (default `'train'`). */
  readonly split?: AlfworldSplit;
  /** Keep only these task types (default: all six). */
  readonly taskTypes?: readonly AlfworldTaskType[];
  /** Steps before the episode is truncated (default 50, as the paper). */
  readonly maxSteps?: number;
  /** Text dialect (default `'0.4'`). */
  readonly dialect?: AlfworldDialect;
  /** Generator settings for `source: 'generated'` (`taskTypes` above is applied too). */
  readonly generator?: AlfworldGeneratorOptions;
  /** Parsed real games kept in memory (default 512). */
  readonly cacheSize?: number;
}

/** What `info` carries at every reset and step. */
export interface AlfworldEnvInfo extends EnvInfo {
  readonly won: boolean;
  readonly taskType: AlfworldTaskType;
  /** The game file's path (`generated:<seed>` for generated households). */
  readonly gamePath: string;
  /** Steps taken in this episode. */
  readonly steps: number;
}

function observation(text: string, admissible: readonly string[]): Observation {
  return { text, anchor: text, admissibleActions: admissible };
}

/** Builds an ALFWorld `TextEnv` (`alfworld/text-v1`). */
export function createAlfworldEnv(options: AlfworldEnvOptions = {}): TextEnv {
  const source = options.source ?? 'real';
  if (source !== 'real' && source !== 'generated') {
    throw new ConfigError(
      `alfworld: source "${String(source)}" is unknown; use 'real' or 'generated'`,
      {
        details: { field: 'source', value: source },
      },
    );
  }
  const maxSteps = options.maxSteps ?? 50;
  if (!Number.isInteger(maxSteps) || maxSteps < 1) {
    throw new ConfigError(
      `alfworld: maxSteps ${String(maxSteps)} must be a positive integer (default 50)`,
      {
        details: { field: 'maxSteps', value: maxSteps },
      },
    );
  }
  const split = options.split ?? 'train';
  const dataDir = options.dataDir ?? defaultAlfworldDataDir();
  const cacheSize = options.cacheSize ?? 512;
  const lifecycle = new EpisodeLifecycle(ALFWORLD_ENV_ID);
  let gameList: Promise<AlfworldGameEntry[]> | null = null;
  const cache = new Map<string, AlfworldGame>();
  let engine: AlfworldEngine | null = null;
  let gamePath = '';
  let steps = 0;

  const games = (): Promise<AlfworldGameEntry[]> => {
    gameList ??= listAlfworldGames({
      dataDir,
      split,
      ...(options.taskTypes ? { taskTypes: options.taskTypes } : {}),
    }).then((list) => {
      if (list.length === 0) {
        throw new ConfigError(
          `alfworld: no games in ${dataDir} for split "${split}" and task types ${String(options.taskTypes ?? 'all')}`,
          { details: { field: 'taskTypes', value: options.taskTypes } },
        );
      }
      return list;
    });
    return gameList;
  };

  const loadReal = async (reset: ResetOptions): Promise<AlfworldGame> => {
    const path = pickAlfworldGame(await games(), reset).path;
    const cached = cache.get(path);
    if (cached) return cached;
    const game = await loadAlfworldGame(path);
    if (cache.size >= cacheSize) cache.delete(cache.keys().next().value as string);
    cache.set(path, game);
    return game;
  };

  const loadGenerated = (reset: ResetOptions): AlfworldGame => {
    const seed = typeof reset.task === 'number' ? reset.task : reset.seed;
    return generateAlfworldGame({
      ...options.generator,
      ...(options.taskTypes && !options.generator?.taskTypes
        ? { taskTypes: options.taskTypes }
        : {}),
      seed,
    }).game;
  };

  const info = (won: boolean): AlfworldEnvInfo => ({
    won,
    taskType: (engine as AlfworldEngine).game.goal.taskType,
    gamePath,
    steps,
  });

  return {
    id: ALFWORLD_ENV_ID,
    async reset(reset: ResetOptions): Promise<ResetResult> {
      lifecycle.beginReset();
      if (!Number.isFinite(reset?.seed)) {
        throw new InvalidInputError(
          `alfworld: reset seed ${String(reset?.seed)} must be a finite number`,
          {
            details: { field: 'seed', value: reset?.seed },
          },
        );
      }
      const game = source === 'real' ? await loadReal(reset) : loadGenerated(reset);
      engine = new AlfworldEngine(game, options.dialect ? { dialect: options.dialect } : {});
      gamePath = game.path;
      steps = 0;
      const start = engine.reset();
      lifecycle.endReset();
      return {
        observation: observation(start.observation, start.admissibleCommands),
        info: info(false),
      };
    },
    async step(action: string): Promise<StepResult> {
      lifecycle.beginStep();
      const e = engine as AlfworldEngine;
      const result = e.step(typeof action === 'string' ? action : String(action));
      steps++;
      const terminated = result.won;
      const truncated = !terminated && steps >= maxSteps;
      const out: StepResult = {
        observation: observation(result.observation, result.admissibleCommands),
        reward: result.won ? ALFWORLD_WIN_REWARD : 0,
        terminated,
        truncated,
        info: info(result.won),
      };
      lifecycle.endStep(out);
      return out;
    },
    async close(): Promise<void> {
      if (lifecycle.close()) {
        engine = null;
        cache.clear();
      }
    },
    async [Symbol.asyncDispose](): Promise<void> {
      await this.close();
    },
  };
}
