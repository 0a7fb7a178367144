/**
 * Run configuration: YAML or JSON, validated by zod before any work starts. Errors name the field
 * and say how to fix it; unknown keys are errors (a typo must not silently fall back to a default).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { ESTIMATOR_NAMES, ESTIMATORS, type EstimatorName } from '@agentrl/algorithms';
import { ConfigError, checkOptionKeys, isAgentRLError, unknownKeyMessage } from '@agentrl/core';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { SFT_STOP_WINDOW } from './sft.ts';

const int = (min: number) => z.number().int().min(min);

/** The response `agentrl sft` teaches unless `sft.responseTemplate` says otherwise. */
export const DEFAULT_RESPONSE_TEMPLATE = '<think>I act.</think><action>{action}</action>';

/**
 * The response text of `action` as the `sft` section writes it: `responseTemplate` with
 * `{action}` replaced, and with `spaceInsideTags` a space inside each `<tag>…</tag>` of the action.
 */
export function formatResponse(
  sft: { readonly responseTemplate: string; readonly spaceInsideTags?: boolean },
  action: string,
): string {
  const written = sft.spaceInsideTags
    ? action.replace(
        /<([A-Za-z_][\w-]*)>([\s\S]*?)<\/\1>/g,
        (_, tag: string, inner: string) => `<${tag}> ${inner} </${tag}>`,
      )
    : action;
  return sft.responseTemplate.replace('{action}', () => written);
}

const envSchema = z.strictObject({
  /** Registry id, e.g. `alfworld/text-v1`. */
  id: z.string().min(1),
  /** Module imported first so that it registers the env (package name or path). */
  module: z.string().min(1).optional(),
  /** Options given to the env factory for training. */
  options: z.record(z.string(), z.unknown()).default({}),
  /** Options merged over `options` for validation and evaluation (the held-out split). */
  valOptions: z.record(z.string(), z.unknown()).default({}),
  /**
   * A prompt template the env registers by name (its registration's `prompts`, e.g. `compact`);
   * without it the env's default prompt.
   */
  prompt: z.string().min(1).optional(),
  /** Env calls slower than this truncate the episode (ms). */
  stepTimeoutMs: int(1).default(60_000),
});

const modelSchema = z.strictObject({
  /**
   * `module`: a module exporting `createModel(config)`; `openai`: an OpenAI-compatible endpoint
   * (evaluation only).
   */
  backend: z.enum(['module', 'openai']),
  /** Module path or package name for `backend: module`. */
  module: z.string().min(1).optional(),
  /** Model folder (weights, tokenizer); must exist when given. */
  path: z.string().min(1).optional(),
  /** Endpoint base URL for `backend: openai` (e.g. http://127.0.0.1:8000/v1). */
  baseUrl: z.string().url().optional(),
  /** Model name sent to the endpoint. */
  name: z.string().min(1).optional(),
  /** Parallel requests to the endpoint. */
  concurrency: int(1).default(8),
  /** Backend-specific settings (architecture of a fresh model, learning rate, ...). */
  options: z.record(z.string(), z.unknown()).default({}),
});

export const algorithmSchema = z.strictObject({
  /** An estimator of `@agentrl/algorithms`' registry (`ESTIMATORS`). */
  name: z.enum(ESTIMATOR_NAMES as [EstimatorName, ...EstimatorName[]]).default('gigpo'),
  /**
   * Options of that estimator (gamma, stepAdvantageWeight, mode, ...): the keys its registry entry
   * declares, checked by {@link parseRunConfig}.
   */
  options: z.record(z.string(), z.unknown()).default({}),
});

/** The `rollout` section: what one training rollout samples. */
export const rolloutSchema = z.strictObject({
  /** Env slots per iteration (groups × group size; paper 128). */
  batchSize: int(1).default(128),
  /** Members per group n (paper 8). */
  groupSize: int(1).default(8),
  maxTurns: int(1).default(50),
  maxNewTokens: int(1).default(512),
  maxPromptTokens: int(1).optional(),
  temperature: z.number().min(0).default(1),
  topP: z.number().gt(0).max(1).default(1),
  topK: int(0).default(0),
  /**
   * What generates the training rollouts. `tfjs` (default): the trained policy itself.
   * `llama.cpp`: `@agentrl/engine-llamacpp` in-process, `options` going to
   * `LlamaCppEngine.create` (device, threads, parallelSequences, contextSize, kvCacheType, ...);
   * the trainer syncs the weights to it before every rollout and recomputes the old log-probs
   * with the trained policy. `openai`: OpenAI-compatible servers (vLLM, SGLang, `agentrl serve`)
   * through `OpenAICompletionsEngine` of `@agentrl/model-openai`, `options` going to its `create`
   * (baseUrls, weightSync, concurrency, ...). Validation always runs on the trained policy.
   */
  engine: z
    .strictObject({
      name: z.enum(['tfjs', 'llama.cpp', 'openai']).default('tfjs'),
      options: z.record(z.string(), z.unknown()).default({}),
    })
    .default({ name: 'tfjs', options: {} }),
});

/** The `training` section: iterations, PPO mini-batches, dynamic sampling, checkpoints. */
export const trainingSchema = z.strictObject({
  iterations: int(1).default(150),
  miniBatchSize: int(1).default(256),
  ppoEpochs: int(1).default(1),
  dropZeroAdvantageRows: z.boolean().default(false),
  dynamicSampling: z
    .strictObject({ enabled: z.boolean().default(false), maxTries: int(1).default(10) })
    .default({ enabled: false, maxTries: 10 }),
  checkpointEvery: int(0).default(1),
  keepCheckpoints: int(1).default(2),
});

/** The `validation` section: held-out episodes (group size 1) every k iterations. */
export const validationSchema = z.strictObject({
  every: int(0).default(5),
  episodes: int(1).default(128),
  temperature: z.number().min(0).default(0.4),
  /** Held-out split for ALFWorld-style envs (valid_seen by default, as the paper's run). */
  split: z.enum(['valid_seen', 'valid_unseen']).optional(),
});

/** The `sft` section: the expert demonstrations and the SFT steps of a warm start (and of `agentrl sft`). */
export const sftSchema = z.strictObject({
  /** Expert episodes collected as demonstrations. */
  episodes: int(1).default(64),
  /** Warm-start steps; with `stopLoss`, the most steps. */
  steps: int(0).default(300),
  /**
   * Stop the warm start once the mean loss of its last `stopWindow` steps is at or below this
   * (`runSft`'s `stopWhen`). Absent: take every step.
   */
  stopLoss: z.number().positive().optional(),
  /** Steps the `stopLoss` mean is taken over. */
  stopWindow: int(1).default(SFT_STOP_WINDOW),
  batchSize: int(1).default(32),
  /** Env seed of the demonstration games (distinct from training and validation seeds). */
  seed: z.number().int().default(5000),
  /**
   * The response a demonstration teaches: `{action}` stands for the expert's action. The env's
   * parser must read it back as that action (WebShop and ALFWorld want `<think>` and `<action>`
   * tags; search-QA's actions carry their own `<search>`/`<answer>` tags). A fresh model's
   * vocabulary always holds its pieces.
   */
  responseTemplate: z
    .string()
    .refine((t) => t.split('{action}').length === 2, {
      message:
        'must contain {action} exactly once, e.g. "<think></think><action>{action}</action>"',
    })
    .default(DEFAULT_RESPONSE_TEMPLATE),
  /**
   * Write a space inside each `<tag>…</tag>` of the action (`<search> kelmo </search>`): a word
   * vocabulary's piece carries the space before it, so the argument is then the same piece as the
   * word in the prompt, which the model can copy. For envs whose parser strips the argument
   * (search-QA's).
   */
  spaceInsideTags: z.boolean().default(false),
});

/** What a run's warm start starts RL from. */
export const WARM_START_SOURCES = ['expert', 'checkpoint', 'none'] as const;

/**
 * The `warmStart` section: what `agentrl train` does before RL. `expert`: SFT on the env's expert
 * demonstrations, as the `sft` section sets it (episodes, steps, batch size, stopping rule,
 * response template; the learning rate is the model's `sftLearningRate`); `checkpoint`: the
 * weights of `checkpoint` (a folder `agentrl sft` or `agentrl train` wrote) loaded into the
 * model; `none`: RL from the model as it is built.
 */
export const warmStartSchema = z.strictObject({
  source: z.enum(WARM_START_SOURCES).default('none'),
  /** The checkpoint folder of `source: checkpoint` (`<run>/sft/model`, `<run>/checkpoints/iter-N`). */
  checkpoint: z.string().min(1).optional(),
});

/**
 * The `finalEval` section: the headline of a run. With `enabled`, held-out success is measured
 * before the warm start, after it and after RL on the same episodes, each with its Wilson
 * interval and the env's own metrics, printed as a table and written to `headline.json`. Where
 * `episodes` and `temperature` are the validation's, the trainer's first and last validations
 * are those evaluations (no game is played twice).
 */
export const finalEvalSchema = z.strictObject({
  enabled: z.boolean().default(false),
  /** Held-out episodes of each evaluation (absent: `validation.episodes`). */
  episodes: int(1).optional(),
  /** Sampling temperature of each evaluation (absent: `validation.temperature`). */
  temperature: z.number().min(0).optional(),
});

/** The `report` section. */
export const reportSchema = z.strictObject({
  /** Trajectories kept per iteration for the report's browser. */
  sampleTrajectories: int(0).default(4),
});

export const runConfigSchema = z.strictObject({
  seed: z.number().int().default(0),
  runDir: z.string().min(1).default('runs/agentrl'),
  env: envSchema,
  model: modelSchema,
  algorithm: algorithmSchema.default({ name: 'gigpo', options: {} }),
  rollout: rolloutSchema.default(rolloutSchema.parse({})),
  training: trainingSchema.default(trainingSchema.parse({})),
  validation: validationSchema.default(validationSchema.parse({})),
  sft: sftSchema.default(sftSchema.parse({})),
  warmStart: warmStartSchema.default(warmStartSchema.parse({})),
  finalEval: finalEvalSchema.default(finalEvalSchema.parse({})),
  report: reportSchema.default(reportSchema.parse({})),
  /** Folder of the config file (set by the loader): package names in `module` fields resolve from it. */
  baseDir: z.string().optional(),
});

/**
 * The sections of a run config the trainer reads, with the same schemas and so the same defaults:
 * `new Trainer({ ...config, policy, tokenizer, ... })` takes a parsed config as it is, and a
 * caller that builds the options by hand gets the defaults a config file would.
 */
export const trainerSettingsSchema = z.object({
  seed: runConfigSchema.shape.seed,
  runDir: z.string().min(1),
  rollout: rolloutSchema,
  training: trainingSchema.default(trainingSchema.parse({})),
  validation: validationSchema.default(validationSchema.parse({})),
  report: reportSchema.default(reportSchema.parse({})),
  env: z
    .object({ stepTimeoutMs: envSchema.shape.stepTimeoutMs })
    .default({ stepTimeoutMs: envSchema.shape.stepTimeoutMs.parse(undefined) }),
});

/** The trainer's settings after parsing (every default filled in). */
export type TrainerSettings = z.output<typeof trainerSettingsSchema>;
/** The trainer's settings as given (sections and keys with a default may be left out). */
export type TrainerSettingsInput = z.input<typeof trainerSettingsSchema>;

/**
 * The problem with a rollout whose batch is not a whole number of groups, or undefined. The batch
 * is `groups × groupSize` env slots; the trainer and the config loader both refuse the rest.
 */
export function batchDivisibilityProblem(rollout: {
  readonly batchSize: number;
  readonly groupSize: number;
}): string | undefined {
  const { batchSize, groupSize } = rollout;
  if (batchSize % groupSize === 0) return undefined;
  const lower = Math.max(groupSize, Math.floor(batchSize / groupSize) * groupSize);
  return `rollout.batchSize (${batchSize}) is not divisible by rollout.groupSize (${groupSize}): use a multiple of ${groupSize} such as ${lower} or ${lower + groupSize}`;
}

/** A validated run configuration. */
export type RunConfig = z.infer<typeof runConfigSchema>;
/** What a config file may contain (everything optional that has a default). */
export type RunConfigInput = z.input<typeof runConfigSchema>;

function fieldPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(top level)' : path.map(String).join('.');
}

/** The keys the object schema at `path` of `schema` accepts (through defaults and optionals). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let at: unknown = schema;
  const unwrap = () => {
    while (at instanceof z.ZodDefault || at instanceof z.ZodOptional) at = at.unwrap();
  };
  unwrap();
  for (const key of path) {
    if (!(at instanceof z.ZodObject)) return [];
    at = (at.shape as Record<string, unknown>)[String(key)];
    unwrap();
  }
  return at instanceof z.ZodObject ? Object.keys(at.shape).filter((k) => k !== 'baseDir') : [];
}

function formatIssue(
  issue: z.core.$ZodIssue,
  schema: z.ZodType,
  prefix: readonly PropertyKey[],
): string {
  const path = [...prefix, ...issue.path];
  const at = fieldPath(path);
  if (issue.code === 'unrecognized_keys') {
    const valid = keysAt(schema, issue.path);
    return issue.keys.map((k) => unknownKeyMessage(k, path.length ? at : '', valid)).join('\n');
  }
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message))
    return `${at} is required: add it to the config (expected ${issue.expected})`;
  if (issue.code === 'invalid_type')
    return `${at}: expected a ${issue.expected} (${issue.message})`;
  if (issue.code === 'invalid_value')
    return `${at}: not an allowed value; use one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  return `${at}: ${issue.message}`;
}

/**
 * A {@link ConfigError} listing every issue of `error`, raised by `schema` on the settings found
 * at `prefix` of the config (e.g. `model.options`): each names its field and the fix, an unknown
 * key also the closest valid one.
 */
export function configErrorOf(error: z.ZodError, schema: z.ZodType, prefix = ''): ConfigError {
  const start = prefix === '' ? [] : prefix.split('.');
  const lines = error.issues.map((issue) => formatIssue(issue, schema, start));
  return new ConfigError(`invalid config:\n  ${lines.join('\n  ')}`, {
    details: { field: fieldPath([...start, ...(error.issues[0]?.path ?? [])]), issues: lines },
  });
}

/**
 * Validates a config object; throws a {@link ConfigError} listing every problem with its field
 * and its fix. `baseDir` resolves relative paths (model folder, module) and checks they exist.
 */
export function parseRunConfig(input: unknown, baseDir = process.cwd()): RunConfig {
  const parsed = runConfigSchema.safeParse(input);
  if (!parsed.success) throw configErrorOf(parsed.error, runConfigSchema);
  const config = parsed.data;
  const problems: string[] = [];
  try {
    checkOptionKeys(
      config.algorithm.options,
      ESTIMATORS[config.algorithm.name].options,
      'algorithm.options',
    );
  } catch (error) {
    if (!isAgentRLError(error)) throw error;
    problems.push(error.message);
  }
  if (config.validation.split !== undefined && !config.env.id.startsWith('alfworld/'))
    problems.push(
      `validation.split (--split) "${config.validation.split}" picks one of ALFWorld's held-out sets and applies to alfworld/* envs only, not ${config.env.id}; choose its held-out tasks with env.valOptions (e.g. --set env.valOptions.split=test), or drop --split`,
    );
  const divisibility = batchDivisibilityProblem(config.rollout);
  if (divisibility !== undefined) problems.push(divisibility);
  const m = config.model;
  if (m.path !== undefined) {
    const path = isAbsolute(m.path) ? m.path : resolve(baseDir, m.path);
    if (!existsSync(path) || !statSync(path).isDirectory())
      problems.push(
        `model.path: folder "${m.path}" does not exist (resolved to ${path}); put the model files there or fix the path`,
      );
    else m.path = path;
  }
  if (m.backend === 'module' && m.module === undefined)
    problems.push(
      'model.module is required when model.backend is "module": name the module that exports createModel',
    );
  if (m.backend === 'openai' && m.baseUrl === undefined)
    problems.push(
      'model.baseUrl is required when model.backend is "openai": e.g. http://127.0.0.1:8000/v1',
    );
  problems.push(...warmStartProblems(config, baseDir));
  const ignored = (['episodes', 'temperature'] as const).filter(
    (k) => config.finalEval[k] !== undefined,
  );
  if (!config.finalEval.enabled && ignored.length > 0)
    problems.push(
      `finalEval.${ignored[0]} is set but finalEval.enabled is false, so no final evaluation reads it: set finalEval.enabled=true to measure the headline, or drop finalEval.${ignored[0]}`,
    );
  if (m.module?.startsWith('.')) m.module = resolve(baseDir, m.module);
  if (config.env.module?.startsWith('.')) config.env.module = resolve(baseDir, config.env.module);
  if (problems.length > 0) {
    throw new ConfigError(`invalid config:\n  ${problems.join('\n  ')}`, {
      details: { field: problems[0]?.split(/[ :]/)[0], issues: problems },
    });
  }
  if (!isAbsolute(config.runDir)) config.runDir = resolve(baseDir, config.runDir);
  config.baseDir ??= baseDir;
  return config;
}

/**
 * What is wrong with the `warmStart` section beside its types: a checkpoint source without its
 * folder (or with one that does not exist), or a folder the source would never read. Resolves
 * the folder from `baseDir`.
 */
function warmStartProblems(config: RunConfig, baseDir: string): string[] {
  const w = config.warmStart;
  if (w.source !== 'checkpoint') {
    return w.checkpoint === undefined
      ? []
      : [
          `warmStart.checkpoint is set but warmStart.source is "${w.source}", which never reads it: set warmStart.source=checkpoint to start from it, or drop warmStart.checkpoint`,
        ];
  }
  if (w.checkpoint === undefined)
    return [
      'warmStart.checkpoint is required when warmStart.source is "checkpoint": give the folder of the weights, e.g. --set warmStart.checkpoint=runs/alfworld-cpu/sft/model (what `agentrl sft` writes)',
    ];
  const path = isAbsolute(w.checkpoint) ? w.checkpoint : resolve(baseDir, w.checkpoint);
  if (!existsSync(path) || !statSync(path).isDirectory())
    return [
      `warmStart.checkpoint: folder "${w.checkpoint}" does not exist (resolved to ${path}); give a checkpoint folder \`agentrl sft\` or \`agentrl train\` wrote, or set warmStart.source=expert`,
    ];
  w.checkpoint = path;
  return [];
}

/** Reads a YAML (.yaml/.yml) or JSON config file into a plain object (not yet validated). */
export function readConfigFile(path: string): Record<string, unknown> {
  if (!existsSync(path))
    throw new ConfigError(`config file "${path}" does not exist; pass an existing --config`, {
      details: { field: 'config', value: path },
    });
  const text = readFileSync(path, 'utf8');
  let data: unknown;
  try {
    data = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ConfigError(`config file "${path}" does not parse: ${(error as Error).message}`, {
      details: { field: 'config', value: path },
    });
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw new ConfigError(
      `config file "${path}" must hold a mapping of settings at the top level`,
      {
        details: { field: 'config', value: path },
      },
    );
  return data as Record<string, unknown>;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Deep merge with JSON Merge Patch's rule for null (RFC 7386): objects merge key by key, a null
 * in `over` removes the key (so `--set env.options=null` puts a preset's options back to their
 * default), anything else in `over` replaces.
 */
export function mergeConfig(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const prev = out[k];
    if (v === null) delete out[k];
    else out[k] = isPlainObject(prev) && isPlainObject(v) ? mergeConfig(prev, v) : v;
  }
  return out;
}

/** `value` with every null-valued key removed, at any depth (what is left of a merge patch). */
export function withoutNulls(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null) continue;
    out[k] = isPlainObject(v) ? withoutNulls(v) : v;
  }
  return out;
}

/** A `--set key.path=value` split into its keys and its value, parsed as YAML. */
export function parseOverride(assignment: string): { keys: string[]; value: unknown } {
  const eq = assignment.indexOf('=');
  if (eq <= 0)
    throw new ConfigError(
      `--set "${assignment}" must look like key.path=value (e.g. rollout.temperature=0.7)`,
      {
        details: { field: 'set', value: assignment },
      },
    );
  const key = assignment.slice(0, eq);
  const text = assignment.slice(eq + 1);
  // YAML reserves @ and ` at the start of a plain value; a package name such as
  // @agentrl/env-webshop is meant as the string it reads as.
  if (/^[@`]/.test(text)) return { keys: key.split('.'), value: text };
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    throw new ConfigError(
      `--set ${key}: the value ${JSON.stringify(text)} does not parse as YAML (${(error as Error).message.split('\n')[0]}); quote it to mean the string: --set '${key}="${text}"'`,
      { details: { field: key, value: text } },
    );
  }
  return { keys: key.split('.'), value };
}

/**
 * Applies a `--set a.b.c=value` override (the value parsed as YAML: numbers, booleans, strings;
 * `null` removes the key, see {@link mergeConfig}).
 */
export function applyOverride(
  config: Record<string, unknown>,
  assignment: string,
): Record<string, unknown> {
  const { keys, value } = parseOverride(assignment);
  let patch: Record<string, unknown> = {};
  const root = patch;
  keys.forEach((k, i) => {
    if (i === keys.length - 1) patch[k] = value;
    else {
      const next: Record<string, unknown> = {};
      patch[k] = next;
      patch = next;
    }
  });
  return mergeConfig(config, root);
}

/** The folder a config file's relative paths are resolved against. */
export function configBaseDir(configPath: string | undefined): string {
  return configPath ? dirname(resolve(configPath)) : process.cwd();
}
