/**
 * `createAlfworldEnv`: the engine behind agentrl's `TextEnv` contract, over the real game files
 * or over generated households. Rollouts follow verl-agent's ALFWorld set-up: group members share
 * a game through their seed, observations are TextWorld's texts, reward 10 on a win.
 */
import {
  ConfigError,
  checkOptionKeys,
  type EnvInfo,
  EpisodeLifecycle,
  InvalidInputError,
  type Observation,
  type OptionSpec,
  type ResetOptions,
  type ResetResult,
  type StepResult,
  type TextEnv,
} from '@agentrl/core';
import { dataDirDefault } from '@agentrl/core/data';
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
  /** Directory holding `json_2.1.1` (default: {@link defaultAlfworldDataDir}). */
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

/** The keys of {@link AlfworldGeneratorOptions}, declared (nested under `generator`). */
const GENERATOR_OPTIONS = {
  seed: {
    description: 'seed of the household; the reset seed replaces it per episode',
    default: 0,
  },
  taskTypes: { description: 'task types drawn uniformly', default: 'all six' },
  storageReceptacles: {
    description: 'storage receptacles besides the ones the task needs (2 for tiny households)',
    default: [4, 38],
  },
  distractors: { description: 'distractor objects (1 for tiny households)', default: [20, 52] },
  extraTargets: {
    description: 'extra copies of the target object class (0 for tiny households)',
    default: [0, 2],
  },
  shareLocationProbability: {
    description: 'chance that a new cabinet or drawer shares the spot of an earlier one',
    default: 0.1,
  },
} as const satisfies { readonly [K in keyof Required<AlfworldGeneratorOptions>]: OptionSpec };

/**
 * The options `alfworld/text-v1` accepts, with their defaults (the registration declares them, so
 * a misspelt key fails naming the closest one). Every key of {@link AlfworldEnvOptions}.
 */
export const ALFWORLD_ENV_OPTIONS = {
  source: {
    description:
      "'real' (game files under dataDir) or 'generated' (a household from the reset seed)",
    default: 'real',
  },
  dataDir: {
    path: true,
    description: 'folder holding json_2.1.1',
    default: dataDirDefault('alfworld'),
  },
  split: { description: 'split real games are drawn from', default: 'train' },
  taskTypes: { description: 'keep only these task types', default: 'all six' },
  maxSteps: { description: 'steps before the episode is truncated (the paper: 50)', default: 50 },
  dialect: { description: 'text dialect of the engine', default: '0.4' },
  generator: {
    description: "settings of the household generator (source: 'generated')",
    options: GENERATOR_OPTIONS,
  },
  cacheSize: { description: 'parsed real games kept in memory', default: 512 },
} as const satisfies { readonly [K in keyof Required<AlfworldEnvOptions>]: OptionSpec };

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
  checkOptionKeys(options, ALFWORLD_ENV_OPTIONS, `the options of ${ALFWORLD_ENV_ID}`);
  const source = options.source ?? ALFWORLD_ENV_OPTIONS.source.default;
  if (source !== 'real' && source !== 'generated') {
    throw new ConfigError(
      `alfworld: source "${String(source)}" is unknown; use 'real' or 'generated'`,
      {
        details: { field: 'source', value: source },
      },
    );
  }
  const maxSteps = options.maxSteps ?? ALFWORLD_ENV_OPTIONS.maxSteps.default;
  if (!Number.isInteger(maxSteps) || maxSteps < 1) {
    throw new ConfigError(
      `alfworld: maxSteps ${String(maxSteps)} must be a positive integer (default 50)`,
      {
        details: { field: 'maxSteps', value: maxSteps },
      },
    );
  }
  const split = options.split ?? ALFWORLD_ENV_OPTIONS.split.default;
  const dataDir = options.dataDir ?? defaultAlfworldDataDir();
  const cacheSize = options.cacheSize ?? ALFWORLD_ENV_OPTIONS.cacheSize.default;
  const lifecycle = new EpisodeLifecycle(ALFWORLD_ENV_ID);
  let gameList: Promise<AlfworldGameEntry[]> | null = null;
  const cache = new Map<string, AlfworldGame>();
  let engine: AlfworldEngine | null = null;
  let gamePath = '';
  let steps = 0;

  const games = (): Promise<AlfworldGameEntry[]> => {
    gameList ??= listAlfworldGames({
      // Only a given folder: the default one's error names where it looked and the fetch command.
      ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
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
