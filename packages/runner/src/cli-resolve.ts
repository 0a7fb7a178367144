import { resolve } from 'node:path';
import { ConfigError, closestName } from '@agentrl/core';
import { UsageError } from './cli-errors.ts';
import type { FlagName, Flags } from './cli-flags.ts';
import {
  applyOverride,
  configBaseDir,
  mergeConfig,
  parseOverride,
  parseRunConfig,
  type RunConfig,
  readConfigFile,
  trainingSchema,
  validationSchema,
  withoutNulls,
} from './config.ts';
import { PRESETS } from './presets.ts';
import { requireSavedConfig } from './run-folder.ts';

/**
 * A run folder's part in a config: `all`, its saved config is the base (no --config or --preset
 * given); `model`, the model section comes from it (the run of an evaluated checkpoint), over
 * the preset's and the file's. Either way the config's `runDir` is `dir`.
 */
export interface RunFolderLayer {
  readonly dir: string;
  readonly saved: Record<string, unknown> | undefined;
  readonly use: 'all' | 'model';
}

/**
 * Preset → config file (or a run folder's saved config) → flags, then validation (before any
 * work).
 */
export function resolveConfig(flags: Flags, run?: RunFolderLayer): RunConfig {
  let preset: Record<string, unknown> | undefined;
  if (flags.preset !== undefined && run?.use !== 'all') {
    preset = PRESETS[flags.preset] as Record<string, unknown> | undefined;
    if (!preset) {
      const near = closestName(flags.preset, Object.keys(PRESETS));
      throw new ConfigError(
        `--preset "${flags.preset}" is unknown${near ? `; did you mean "${near}"?` : ''} Use one of ${Object.keys(PRESETS).join(', ')}, or --config <file>`,
        { details: { field: '--preset', value: flags.preset } },
      );
    }
  }
  const file =
    flags.config === undefined || run?.use === 'all' ? undefined : readConfigFile(flags.config);
  const base: Record<string, unknown> | undefined =
    run?.use === 'all' && run.saved !== undefined ? { ...run.saved, runDir: run.dir } : undefined;
  const sets = [...(flags.set ?? [])];
  if (flags.seed !== undefined) sets.push(`seed=${flags.seed}`);
  if (flags.iterations !== undefined) sets.push(`training.iterations=${flags.iterations}`);
  if (flags['run-dir'] !== undefined) sets.push(`runDir=${resolve(flags['run-dir'])}`);
  if (flags.split !== undefined) sets.push(`validation.split=${flags.split}`);
  if (flags.episodes !== undefined) sets.push(`validation.episodes=${flags.episodes}`);
  if (flags['base-url'] !== undefined) {
    sets.push('model.backend=openai', `model.baseUrl=${flags['base-url']}`);
  }
  if (flags['model-name'] !== undefined) sets.push(`model.name=${flags['model-name']}`);
  // An env's module and options belong to its id: a layer (preset, then config file) whose
  // env.id a later layer replaces contributes no env settings.
  let envId = envIdOf(base) ?? envIdOf(file) ?? envIdOf(preset);
  for (const s of sets) {
    const { keys, value } = parseOverride(s);
    if (keys.join('.') === 'env.id' && typeof value === 'string') envId = value;
    if (keys.join('.') === 'env' && envIdOf({ env: value }) !== undefined)
      envId = envIdOf({ env: value });
  }
  let raw: Record<string, unknown> = {};
  for (const layer of [preset, file, base]) {
    if (layer === undefined) continue;
    const own = envIdOf(layer);
    raw = mergeConfig(raw, own !== undefined && own !== envId ? withoutEnv(layer) : layer);
  }
  if (run !== undefined) {
    // The checkpoint wins: its run's model (architecture, tokenizer folder) and its run folder.
    if (run.use === 'model' && run.saved?.model !== undefined) raw.model = run.saved.model;
    raw.runDir = run.dir;
  }
  for (const s of sets) raw = applyOverride(raw, s);
  const baseDir =
    base !== undefined && typeof base.baseDir === 'string'
      ? base.baseDir
      : configBaseDir(flags.config);
  return parseRunConfig(withoutNulls(raw), baseDir);
}

/**
 * The number flags, checked before they become config values: a negative number is taken for a
 * value here (`--iterations -1`), and each must be a whole number in the range its config key
 * takes.
 */
export function checkNumberFlags(flags: Flags): void {
  for (const [flag, key, min] of NUMBER_FLAGS) {
    const text = flags[flag];
    if (text === undefined) continue;
    const n = Number(text);
    if (text.trim() === '' || !Number.isInteger(n) || (min !== undefined && n < min))
      throw new UsageError(
        `--${flag} ${text}: give a whole number${min !== undefined ? ` of at least ${min}` : ''} (it sets ${key})`,
        { details: { field: `--${flag}`, value: text } },
      );
  }
}

function envIdOf(layer: Record<string, unknown> | undefined): string | undefined {
  const env = layer?.env as { id?: unknown } | undefined;
  return typeof env?.id === 'string' ? env.id : undefined;
}

/** A config layer without its env settings (`env.stepTimeoutMs`, not the env's own, is kept). */
function withoutEnv(layer: Record<string, unknown>): Record<string, unknown> {
  const { env, ...rest } = layer;
  const timeout = (env as { stepTimeoutMs?: unknown }).stepTimeoutMs;
  return timeout === undefined ? rest : { ...rest, env: { stepTimeoutMs: timeout } };
}

/**
 * The config of `command` when neither --config nor --preset is given: the saved config of the
 * run folder `runDir`, else an error naming both ways to give one.
 */
export function runFolderConfig(
  command: string,
  flags: Flags,
  runDir: string | undefined,
  alternatives: string,
): RunConfig {
  if (runDir === undefined)
    throw new UsageError(
      `agentrl ${command} needs a config: ${alternatives}--preset <name> (one of ${Object.keys(PRESETS).join(', ')}) or --config <file> (YAML or JSON; \`agentrl config show --preset <name> > run.yaml\` writes one to start from)`,
      { details: { field: '--config' } },
    );
  const dir = resolve(runDir);
  return resolveConfig(flags, {
    dir,
    saved: requireSavedConfig(dir, `agentrl ${command}`),
    use: 'all',
  });
}

/** Whether the command line names a config (a file or a preset). */
export function hasConfig(flags: Flags): boolean {
  return flags.config !== undefined || flags.preset !== undefined;
}

/** The number flags with the config key each sets and the least value that key takes. */
const NUMBER_FLAGS = [
  ['seed', 'seed', undefined],
  ['iterations', 'training.iterations', minOf(trainingSchema.shape.iterations)],
  ['episodes', 'validation.episodes', minOf(validationSchema.shape.episodes)],
] as const satisfies readonly (readonly [FlagName, string, number | undefined])[];

function minOf(schema: { unwrap(): { minValue: number | null } }): number | undefined {
  return schema.unwrap().minValue ?? undefined;
}
