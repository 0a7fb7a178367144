/**
 * A run folder describes itself: `config.resolved.json` holds the config it ran with, so that
 * `agentrl eval`, `sft` and `train --resume` need only the folder (or a checkpoint in it), and
 * `train` refuses to overwrite a run it did not mean to. These functions read a folder's layout
 * (`checkpoints/iter-NNNNNN`, `metrics.jsonl`, `config.resolved.json`) and say what is wrong
 * with it in a line that names the fix.
 */
import { accessSync, constants, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { notWritableError, RunFolderError, UsageError } from './cli-errors.ts';

/** The file a run folder keeps its config in (written by `writeRunInfo`). */
export const RUN_CONFIG_FILE = 'config.resolved.json';

/** What `agentrl train` writes into a run folder (and `--force` removes before a fresh start). */
export const TRAINING_OUTPUTS = [
  'checkpoints',
  'metrics.jsonl',
  'samples',
  'report.html',
  'engine-weights',
  'headline.json',
  'phases.json',
  'timings.json',
  'sft-loss.json',
] as const;

function isDir(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

/**
 * The run folder a checkpoint path lies in: `<run>/checkpoints/<name>` (or its `model/`), or
 * `<run>/sft/model`; undefined for a folder elsewhere.
 */
export function runFolderOfCheckpoint(checkpoint: string): string | undefined {
  let dir = resolve(checkpoint);
  if (basename(dir) === 'model' && basename(dirname(dir)) === 'sft') return dirname(dirname(dir));
  if (basename(dir) === 'model') dir = dirname(dir);
  return basename(dirname(dir)) === 'checkpoints' ? dirname(dirname(dir)) : undefined;
}

/** Whether `dir` is a run folder (it holds `config.resolved.json` or `checkpoints/`). */
export function isRunFolder(dir: string): boolean {
  return existsSync(join(dir, RUN_CONFIG_FILE)) || isDir(join(dir, 'checkpoints'));
}

/** The checkpoint folders of a run (`iter-NNNNNN`), oldest first. */
export function checkpointNames(runDir: string): string[] {
  const root = join(runDir, 'checkpoints');
  if (!isDir(root)) return [];
  return readdirSync(root)
    .filter((n) => /^iter-\d+$/.test(n) && isDir(join(root, n)))
    .sort();
}

/** The config saved in a run folder, or undefined when it holds none. */
export function savedRunConfig(runDir: string): Record<string, unknown> | undefined {
  const path = join(runDir, RUN_CONFIG_FILE);
  if (!existsSync(path)) return undefined;
  let info: { config?: unknown };
  try {
    info = JSON.parse(readFileSync(path, 'utf8')) as { config?: unknown };
  } catch (error) {
    throw new RunFolderError(
      'NOT_A_RUN',
      `${path} does not parse (${(error as Error).message}); give --config <file> or --preset <name> instead of the run folder's config`,
      { details: { field: RUN_CONFIG_FILE, value: path }, cause: error },
    );
  }
  const config = info.config;
  return config !== null && typeof config === 'object' && !Array.isArray(config)
    ? (config as Record<string, unknown>)
    : undefined;
}

/**
 * The config saved in `runDir`, or a {@link RunFolderError} naming what is missing: the folder,
 * or its `config.resolved.json`. `command` is the command line that needed it.
 */
export function requireSavedConfig(runDir: string, command: string): Record<string, unknown> {
  if (!isDir(runDir))
    throw new RunFolderError(
      'NOT_FOUND',
      `${command}: the run folder ${runDir} does not exist; give the folder \`agentrl train\` wrote (--run-dir DIR), or a config with --config <file> or --preset <name>`,
      { details: { field: '--run-dir', value: runDir } },
    );
  const saved = savedRunConfig(runDir);
  if (saved === undefined)
    throw new RunFolderError(
      'NOT_A_RUN',
      `${command}: ${runDir} holds no ${RUN_CONFIG_FILE}, so it is not a run folder agentrl wrote; give the folder \`agentrl train\` wrote, or a config with --config <file> or --preset <name>`,
      { details: { field: '--run-dir', value: runDir } },
    );
  return saved;
}

/**
 * Throws when the checkpoint folder `path` does not exist, naming the checkpoints its run folder
 * holds (or that the run folder itself is missing).
 */
export function checkCheckpointExists(path: string): void {
  const dir = resolve(path);
  if (isDir(dir)) return;
  const run = runFolderOfCheckpoint(dir);
  let where = '';
  if (run !== undefined && isDir(run)) {
    const names = checkpointNames(run);
    where =
      names.length > 0
        ? `; the run ${run} has ${names.map((n) => join(run, 'checkpoints', n)).join(', ')}: pass one of them`
        : `; the run ${run} has no checkpoint yet (train it, or pass --checkpoint of another run)`;
  } else if (run !== undefined) where = `; its run folder ${run} does not exist either`;
  throw new RunFolderError(
    'NOT_FOUND',
    `--checkpoint ${path}: the checkpoint folder ${dir} does not exist${where || '; pass a checkpoints/iter-NNNNNN folder of a run'}`,
    { details: { field: '--checkpoint', value: path } },
  );
}

/** The training outputs (`metrics.jsonl`, `checkpoints/`, ...) `runDir` holds already. */
export function trainingOutputsIn(runDir: string): string[] {
  return TRAINING_OUTPUTS.filter((name) => existsSync(join(runDir, name)));
}

/**
 * Checks that `train` may use `runDir`: with `resume`, it must hold a checkpoint
 * (`hasCheckpoint`); without, it must hold no run unless `force`, which removes the old run's
 * outputs (the fresh model in `model-init/` and `sft/` are kept).
 */
export async function prepareTrainFolder(
  runDir: string,
  options: { readonly resume: boolean; readonly force: boolean; readonly hasCheckpoint: boolean },
): Promise<void> {
  if (options.resume && options.force)
    throw new UsageError(
      '--resume and --force contradict each other: --resume continues the run in --run-dir, --force starts it over; give one of them',
      { details: { field: '--force' } },
    );
  const outputs = trainingOutputsIn(runDir);
  if (options.resume) {
    if (options.hasCheckpoint) return;
    throw new RunFolderError(
      'NOTHING_TO_RESUME',
      `--resume: nothing to resume in ${runDir}: it holds no checkpoint (checkpoints/latest.json)${outputs.includes('metrics.jsonl') ? ' (its run stopped before the first one: start it over with --force instead of --resume)' : ''}; give the folder of the run to continue with --run-dir DIR, or drop --resume to start a new run`,
      { details: { field: '--resume', value: runDir } },
    );
  }
  if (outputs.length === 0) return;
  if (!options.force)
    throw new RunFolderError(
      'RUN_EXISTS',
      `run folder ${runDir} already holds a run (${outputs.join(', ')}); continue it with --resume, start it over with --force (deletes ${TRAINING_OUTPUTS.join(', ')}), or pick a new folder with --run-dir DIR`,
      { details: { field: '--run-dir', value: runDir, found: outputs } },
    );
  for (const name of outputs) await rm(join(runDir, name), { recursive: true, force: true });
}

/** Creates `runDir` and checks it can be written, else a one-line error naming it and `--run-dir`. */
export async function ensureWritableFolder(runDir: string): Promise<void> {
  try {
    await mkdir(runDir, { recursive: true });
    accessSync(runDir, constants.W_OK);
  } catch (error) {
    throw notWritableError(error, runDir, '--run-dir');
  }
}
