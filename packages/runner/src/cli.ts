/**
 * The `agentrl` command line: train, eval, sft, report. `main(argv, io)` returns the exit code
 * so that tests call it in-process; `bin/agentrl.js` calls it with the real argv.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { isAgentRLError } from '@agentrl/core';
import { OpenAICompatibleAgent } from '@agentrl/model-openai';
import { policyAgent, type RolloutAgent } from './agent.ts';
import {
  applyOverride,
  configBaseDir,
  mergeConfig,
  parseRunConfig,
  type RunConfig,
  readConfigFile,
} from './config.ts';
import { createEstimator } from './estimators.ts';
import { evaluateAgent } from './evaluate.ts';
import { appendLineSync, writeJsonAtomic } from './files.ts';
import type { Logger } from './logger.ts';
import { expertOf, loadEnvSpecs, loadModel } from './plugins.ts';
import { PRESETS } from './presets.ts';
import { createConsoleProgress } from './progress.ts';
import { writeReport } from './report.ts';
import { hashFolder, writeRunInfo } from './run-info.ts';
import { collectDemonstrations, type Demonstration, runSft } from './sft.ts';
import { Trainer } from './trainer.ts';

/** Where the CLI writes (tests capture it). */
export interface CliIO {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WriteStream;
}

const USAGE = `agentrl <command> [options]

Commands:
  train   train with GiGPO / GRPO / RLOO             agentrl train --config run.yaml
  eval    score a checkpoint or an OpenAI endpoint    agentrl eval --config run.yaml [--checkpoint DIR | --base-url URL --model-name NAME]
  sft     warm start from expert demonstrations       agentrl sft --config run.yaml [--demos demos.jsonl]
  report  write report.html of a run folder           agentrl report RUN_DIR

Config options (every command taking a config):
  --config, -c FILE     YAML or JSON config
  --preset NAME         start from a preset (${Object.keys(PRESETS).join(', ')})
  --set key.path=value  override one setting (repeatable), e.g. --set rollout.temperature=0.7
  --seed N  --iterations N  --run-dir DIR
train: --resume        continue the run in --run-dir from its latest checkpoint
eval:  --checkpoint DIR --split valid_seen|valid_unseen --episodes N --base-url URL --model-name NAME
`;

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  preset: { type: 'string' },
  set: { type: 'string', multiple: true },
  seed: { type: 'string' },
  iterations: { type: 'string' },
  'run-dir': { type: 'string' },
  resume: { type: 'boolean' },
  checkpoint: { type: 'string' },
  split: { type: 'string' },
  episodes: { type: 'string' },
  'base-url': { type: 'string' },
  'model-name': { type: 'string' },
  demos: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Flags = ReturnType<
  typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>
>['values'];

/** Preset → config file → flags, then validation (before any work). */
export function resolveConfig(flags: Flags): RunConfig {
  let raw: Record<string, unknown> = {};
  if (flags.preset !== undefined) {
    const preset = PRESETS[flags.preset];
    if (!preset)
      throw new Error(
        `--preset "${flags.preset}" is unknown; use one of ${Object.keys(PRESETS).join(', ')}`,
      );
    raw = mergeConfig(raw, preset as Record<string, unknown>);
  }
  if (flags.config !== undefined) raw = mergeConfig(raw, readConfigFile(flags.config));
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
  for (const s of sets) raw = applyOverride(raw, s);
  return parseRunConfig(raw, configBaseDir(flags.config));
}

function loggerFor(io: CliIO): Logger {
  return {
    info: (m) => io.stderr.write(`${m}\n`),
    warn: (m) => io.stderr.write(`warning: ${m}\n`),
  };
}

function pct(rate: number): string {
  return `${(rate * 100).toFixed(1)}%`;
}

async function train(flags: Flags, io: CliIO): Promise<number> {
  const config = resolveConfig(flags);
  const estimator = createEstimator(config.algorithm.name, config.algorithm.options);
  const logger = loggerFor(io);
  const envs = await loadEnvSpecs(config);
  const { policy, tokenizer, info } = await loadModel(config, {
    config,
    env: envs.train,
    logger,
  });
  await mkdir(config.runDir, { recursive: true });
  await writeRunInfo(config.runDir, {
    command: 'train',
    config,
    seed: config.seed,
    data: config.model.path ? { model: hashFolder(config.model.path) } : {},
    ...(info !== undefined ? { model: info } : {}),
  });
  const progress = createConsoleProgress(config.training.iterations, io.stderr);
  const trainer = new Trainer({
    policy,
    tokenizer,
    trainEnv: envs.train,
    valEnv: envs.val,
    estimator,
    runDir: config.runDir,
    iterations: config.training.iterations,
    groups: config.rollout.batchSize / config.rollout.groupSize,
    groupSize: config.rollout.groupSize,
    maxTurns: config.rollout.maxTurns,
    seed: config.seed,
    maxNewTokens: config.rollout.maxNewTokens,
    ...(config.rollout.maxPromptTokens !== undefined
      ? { maxPromptTokens: config.rollout.maxPromptTokens }
      : {}),
    temperature: config.rollout.temperature,
    topP: config.rollout.topP,
    topK: config.rollout.topK,
    valEpisodes: config.validation.episodes,
    valEvery: config.validation.every,
    valTemperature: config.validation.temperature,
    miniBatchSize: config.training.miniBatchSize,
    ppoEpochs: config.training.ppoEpochs,
    dropZeroAdvantageRows: config.training.dropZeroAdvantageRows,
    dynamicSampling: config.training.dynamicSampling,
    checkpointEvery: config.training.checkpointEvery,
    keepCheckpoints: config.training.keepCheckpoints,
    sampleTrajectories: config.report.sampleTrajectories,
    stepTimeoutMs: config.env.stepTimeoutMs,
    logger,
    onEvent: (e) => {
      progress.onEvent(e);
      if (e.type === 'checkpoint')
        io.stdout.write(`checkpoint ${e.iteration + 1} written to ${e.dir}\n`);
    },
  });
  try {
    const summary = await trainer.run({ resume: flags.resume === true });
    progress.stop();
    const path = await writeReport(config.runDir);
    const v = summary.finalMetrics?.['val/success'];
    io.stdout.write(
      `${v !== undefined ? `final validation success ${pct(v)}\n` : ''}report: ${path}\n`,
    );
  } finally {
    progress.stop();
  }
  return 0;
}

async function evaluate(flags: Flags, io: CliIO): Promise<number> {
  const config = resolveConfig(flags);
  const logger = loggerFor(io);
  const envs = await loadEnvSpecs(config);
  let agent: RolloutAgent;
  let source: string;
  if (config.model.backend === 'openai') {
    const apiKey = process.env.OPENAI_API_KEY;
    agent = new OpenAICompatibleAgent({
      baseUrl: config.model.baseUrl as string,
      model: config.model.name ?? 'default',
      temperature: config.validation.temperature,
      topP: config.rollout.topP,
      maxTokens: config.rollout.maxNewTokens,
      concurrency: config.model.concurrency,
      ...(apiKey ? { apiKey } : {}),
    });
    source = `${config.model.baseUrl} (${config.model.name ?? 'default'})`;
  } else {
    const { policy, tokenizer } = await loadModel(config, { config, env: envs.train, logger });
    if (flags.checkpoint !== undefined) {
      const dir = resolve(flags.checkpoint);
      const modelDir = existsSync(join(dir, 'model')) ? join(dir, 'model') : dir;
      await policy.load(modelDir);
    }
    agent = policyAgent(policy, tokenizer, {
      sampling: {
        maxNewTokens: config.rollout.maxNewTokens,
        temperature: config.validation.temperature,
        topP: config.rollout.topP,
        topK: config.rollout.topK,
      },
      ...(config.rollout.maxPromptTokens !== undefined
        ? { maxPromptTokens: config.rollout.maxPromptTokens }
        : {}),
    });
    source = flags.checkpoint ?? 'the configured model';
  }
  const result = await evaluateAgent({
    env: envs.val,
    agent,
    episodes: config.validation.episodes,
    seed: config.seed,
    maxTurns: config.rollout.maxTurns,
    stepTimeoutMs: config.env.stepTimeoutMs,
    logger,
  });
  const s = result.success;
  await mkdir(config.runDir, { recursive: true });
  await writeJsonAtomic(join(config.runDir, 'eval.json'), {
    source,
    success: s,
    metrics: result.metrics,
  });
  io.stdout.write(
    `success ${s.wins}/${s.n} = ${pct(s.rate)} (95% interval ${pct(s.low)}–${pct(s.high)}) on ${source}\n`,
  );
  return 0;
}

function readDemos(path: string): Demonstration[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim().length > 0)
    .map((l, i) => {
      const d = JSON.parse(l) as { prompt?: unknown; response?: unknown };
      if (typeof d.prompt !== 'string' || typeof d.response !== 'string')
        throw new Error(
          `--demos ${path} line ${i + 1}: each line needs string "prompt" and "response" fields`,
        );
      return { prompt: d.prompt, response: d.response };
    });
}

async function sft(flags: Flags, io: CliIO): Promise<number> {
  const config = resolveConfig(flags);
  const logger = loggerFor(io);
  const envs = await loadEnvSpecs(config);
  const { policy, tokenizer, info } = await loadModel(config, { config, env: envs.train, logger });
  let demos: Demonstration[];
  if (flags.demos !== undefined) demos = readDemos(flags.demos);
  else {
    const expert = expertOf(envs.module);
    if (!expert)
      throw new Error(
        'env.module exports no expert: pass --demos FILE.jsonl with prompt/response lines',
      );
    const collected = await collectDemonstrations({
      env: envs.train,
      expert,
      episodes: config.sft.episodes,
      seed: config.sft.seed,
      maxTurns: config.rollout.maxTurns,
      formatResponse: (a) => `<think>I act.</think><action>${a}</action>`,
    });
    io.stderr.write(
      `expert won ${collected.wins}/${collected.episodes} episodes: ${collected.demonstrations.length} demonstrations\n`,
    );
    demos = collected.demonstrations;
  }
  await mkdir(join(config.runDir, 'sft'), { recursive: true });
  await writeRunInfo(config.runDir, {
    command: 'sft',
    config,
    seed: config.seed,
    ...(info !== undefined ? { model: info } : {}),
  });
  const progress = createConsoleProgress(1, io.stderr);
  const task = progress.task('warm start', config.sft.steps);
  const metricsPath = join(config.runDir, 'sft', 'metrics.jsonl');
  await runSft({
    policy,
    tokenizer,
    demonstrations: demos,
    steps: config.sft.steps,
    batchSize: config.sft.batchSize,
    seed: config.seed,
    onStep: (step, m) => {
      appendLineSync(metricsPath, JSON.stringify({ step, ...m }));
      task.tick(m.loss !== undefined ? `loss ${m.loss.toFixed(4)}` : '');
    },
  });
  task.done();
  const modelDir = join(config.runDir, 'sft', 'model');
  await mkdir(modelDir, { recursive: true });
  await policy.save(modelDir);
  io.stdout.write(`warm-started model written to ${modelDir}\n`);
  return 0;
}

/** Runs the CLI; returns the exit code. */
export async function main(
  argv: readonly string[],
  io: CliIO = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    io.stderr.write(`agentrl: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const [command, ...rest] = parsed.positionals;
  if (parsed.values.help || command === undefined) {
    io.stdout.write(USAGE);
    return command === undefined && !parsed.values.help ? 2 : 0;
  }
  try {
    switch (command) {
      case 'train':
        return await train(parsed.values, io);
      case 'eval':
        return await evaluate(parsed.values, io);
      case 'sft':
        return await sft(parsed.values, io);
      case 'report': {
        const dir = rest[0] ?? parsed.values['run-dir'];
        if (!dir || !existsSync(dir)) {
          io.stderr.write(
            `agentrl report: give an existing run folder (got ${dir ?? 'nothing'})\n`,
          );
          return 2;
        }
        io.stdout.write(`report: ${await writeReport(resolve(dir))}\n`);
        return 0;
      }
      default:
        io.stderr.write(`agentrl: unknown command "${command}"\n\n${USAGE}`);
        return 2;
    }
  } catch (error) {
    const code = isAgentRLError(error) ? ` [${error.code}]` : '';
    io.stderr.write(`agentrl ${command} failed${code}: ${(error as Error).message}\n`);
    return 1;
  }
}
