/**
 * Validation of a {@link StepBatch} and its translation into dense integer indices:
 * every estimator works on `Int32Array` group / trajectory indices, never on strings.
 */
import {
  ConfigError,
  checkOptionKeys,
  InvalidInputError,
  type OptionSpec,
  type OptionsSchema,
  type StepBatch,
} from '@agentrl/core';

/** How the episode-level population of a group is formed. */
export type EpisodeStatistics = 'per-step-sample' | 'per-trajectory';

/** A validated batch with dense indices. */
export interface IndexedBatch {
  readonly batch: StepBatch;
  /** Number of rows. */
  readonly n: number;
  /** Dense task-group index of each row (0.. by first appearance). */
  readonly groupIndex: Int32Array;
  readonly groupCount: number;
  /** Dense trajectory index of each row (keyed by `trajectoryId`, as the reference's `traj_uid`). */
  readonly trajectoryIndex: Int32Array;
  readonly trajectoryCount: number;
  /** True when every trajectory's rows are contiguous (trajectory-major batches). */
  readonly trajectoriesContiguous: boolean;
  /** True when every task group's rows are contiguous. */
  readonly groupsContiguous: boolean;
  /** The columns as typed arrays. */
  /** `batch.stepIndices`, checked (non-negative integers). */
  readonly stepIndices: ArrayLike<number>;
  /** `batch.envRewards`, checked (finite). */
  readonly rewards: ArrayLike<number>;
  /** 1 where the action was invalid. */
  readonly invalid: Uint8Array;
}

const FIELDS = [
  'groupIds',
  'trajectoryIds',
  'stepIndices',
  'anchors',
  'envRewards',
  'actionValid',
] as const;

/**
 * Checks the batch (equal column lengths, finite rewards, integer step indices ≥ 0) and interns its ids. `needAnchors` is false for the
 * estimators that do not read anchors (GRPO, RLOO), which then accept any anchors column.
 */
export function indexBatch(batch: StepBatch, needAnchors: boolean): IndexedBatch {
  if (typeof batch !== 'object' || batch === null) {
    throw new InvalidInputError(`batch must be a StepBatch object; got ${String(batch)}`, {
      details: { field: 'batch' },
    });
  }
  for (const field of FIELDS) {
    const column: unknown = batch[field];
    if (
      column === null ||
      (typeof column !== 'object' && typeof column !== 'string') ||
      typeof (column as { length?: unknown }).length !== 'number'
    ) {
      throw new InvalidInputError(
        `batch.${field} must be an array with one entry per step sample; got ${String(column)}`,
        { details: { field } },
      );
    }
  }
  const n = batch.groupIds.length;
  for (const field of FIELDS) {
    const length = batch[field].length;
    if (length !== n) {
      throw new InvalidInputError(
        `batch.${field} has ${length} entries but batch.groupIds has ${n}; every column needs one entry per step sample`,
        { details: { field, length, expected: n } },
      );
    }
  }
  const { groupIds, trajectoryIds, stepIndices, envRewards, actionValid, anchors } = batch;
  // One tight loop per column; the messages are built in cold helpers.
  // The columns are read in place afterwards (no copies: at 1M rows every copied column is
  // 4-8 MB more for the garbage collector).
  for (let i = 0; i < n; i++) {
    const r = envRewards[i];
    if (typeof r !== 'number' || !Number.isFinite(r)) badRow('envRewards', i, r, 'a finite number');
  }
  for (let i = 0; i < n; i++) {
    const s = stepIndices[i];
    if (typeof s !== 'number' || !Number.isInteger(s) || s < 0) {
      badRow('stepIndices', i, s, 'a non-negative integer');
    }
  }
  const invalid = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const valid = actionValid[i];
    if (valid === false) invalid[i] = 1;
    else if (valid !== true) badRow('actionValid', i, valid, 'a boolean');
  }
  if (needAnchors) {
    for (let i = 0; i < n; i++) {
      if (typeof anchors[i] !== 'string')
        badRow('anchors', i, anchors[i], 'a string (the anchor observation)');
    }
  }
  const groups = intern(groupIds, 'groupIds');
  const trajectories = intern(trajectoryIds, 'trajectoryIds');
  // Ids are numbered by first appearance, so rows are trajectory-contiguous exactly when each
  // index equals the previous one or the next new one.
  const trajectoriesContiguous = contiguous(trajectories.index);
  const groupsContiguous = contiguous(groups.index);
  return {
    batch,
    n,
    groupIndex: groups.index,
    groupCount: groups.count,
    trajectoryIndex: trajectories.index,
    trajectoryCount: trajectories.count,
    trajectoriesContiguous,
    groupsContiguous,
    stepIndices,
    rewards: envRewards,
    invalid,
  };
}

/** Whether first-appearance ids form contiguous runs (each id is the previous one or the next). */
function contiguous(index: Int32Array): boolean {
  for (let i = 1; i < index.length; i++) {
    const d = (index[i] as number) - (index[i - 1] as number);
    if (d !== 0 && d !== 1) return false;
  }
  return true;
}

function badRow(field: string, index: number, value: unknown, expected: string): never {
  throw new InvalidInputError(
    `batch.${field}[${index}] must be ${expected}; got ${String(value)}`,
    {
      details: { field, index, value },
    },
  );
}

/** Dense ids by first appearance. Consecutive equal ids (the common layout) skip the map. */
function intern(ids: ArrayLike<string>, field: string): { index: Int32Array; count: number } {
  const n = ids.length;
  const index = new Int32Array(n);
  const seen = new Map<string, number>();
  let last: string | undefined;
  let lastIndex = -1;
  for (let i = 0; i < n; i++) {
    const id = ids[i] as string;
    if (id === last) {
      index[i] = lastIndex;
      continue;
    }
    if (typeof id !== 'string') {
      throw new InvalidInputError(`batch.${field}[${i}] must be a string; got ${String(id)}`, {
        details: { field, index: i },
      });
    }
    let k = seen.get(id);
    if (k === undefined) {
      k = seen.size;
      seen.set(id, k);
    }
    index[i] = k;
    last = id;
    lastIndex = k;
  }
  return { index, count: seen.size };
}

/** A finite number option, or its default. */
export function numberOption(value: unknown, fallback: number, field: string): number {
  // null reads as absent, so options that went through JSON (None → null) keep their defaults.
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new ConfigError(`${field} must be a finite number; got ${String(value)}`, {
      details: { field, value },
    });
  }
  return value;
}

/** A boolean option, or its default. */
export function booleanOption(value: unknown, fallback: boolean, field: string): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') {
    throw new ConfigError(`${field} must be true or false; got ${String(value)}`, {
      details: { field, value },
    });
  }
  return value;
}

/** The options every estimator shares; each estimator's schema lists them beside its own. */
export const SHARED_OPTIONS = {
  invalidActionPenalty: {
    description:
      'c subtracted from the episode score (and, in GiGPO, the step return) of rows with an invalid action; 0 disables',
    default: 0.1,
  },
  epsilon: { description: 'ε added to the group standard deviation', default: 1e-6 },
  episodeStatistics: {
    description:
      "population of a task group's statistics: 'per-step-sample' (every row, the reference's) or 'per-trajectory' (one per trajectory, the paper's Eq. 3)",
    default: 'per-step-sample',
  },
} as const satisfies Record<string, OptionSpec>;

/** The invalid-action penalty coefficient c ≥ 0 (default 0.1, 0 disables). */
export function penaltyOption(value: unknown): number {
  const c = numberOption(
    value,
    SHARED_OPTIONS.invalidActionPenalty.default,
    'invalidActionPenalty',
  );
  if (c < 0) {
    throw new ConfigError(`invalidActionPenalty must be >= 0 (0 disables the penalty); got ${c}`, {
      details: { field: 'invalidActionPenalty', value: c },
    });
  }
  return c;
}

/** ε ≥ 0 added to σ (default 1e-6). */
export function epsilonOption(value: unknown): number {
  const eps = numberOption(value, SHARED_OPTIONS.epsilon.default, 'epsilon');
  if (eps < 0) {
    throw new ConfigError(`epsilon must be >= 0; got ${eps}`, {
      details: { field: 'epsilon', value: eps },
    });
  }
  return eps;
}

/** The episode-statistics population (default `'per-step-sample'`, the reference's). */
export function episodeStatisticsOption(value: unknown): EpisodeStatistics {
  if (value === undefined || value === null) return SHARED_OPTIONS.episodeStatistics.default;
  if (value === 'per-step-sample' || value === 'per-trajectory') return value;
  throw new ConfigError(
    `episodeStatistics must be 'per-step-sample' or 'per-trajectory'; got ${JSON.stringify(value)}`,
    { details: { field: 'episodeStatistics', value } },
  );
}

/**
 * Options must be an object (or absent, where allowed) whose keys `schema` declares: a misspelt
 * key fails naming the closest declared one (`where` says whose options they are).
 */
export function optionsObject<T extends object>(
  options: T | undefined,
  required: boolean,
  schema: OptionsSchema,
  where: string,
): Partial<T> {
  if (options === undefined && !required) return {};
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError(`options must be an object; got ${String(options)}`, {
      details: { field: 'options' },
    });
  }
  checkOptionKeys(options, schema, where);
  return options;
}
