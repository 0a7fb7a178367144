/**
 * The `agentrl` command line: train, eval, sft, report, serve, env serve, data fetch. `main(argv, io)`
 * returns the exit code so that tests call it in-process; `bin/agentrl.js` calls it with the real argv.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  ConfigError,
  closestName,
  DataError,
  dropArgsSeparator,
  isAgentRLError,
  type RolloutEngine,
} from '@agentrl/core';
import { OpenAICompatibleAgent } from '@agentrl/model-openai';
import { policyAgent, type RolloutAgent, rolloutAgentOptions } from './agent.ts';
import { configCommand } from './cli-config.ts';
import { dataCommand } from './cli-data.ts';
import { listenError, RunFolderError, reportLine, UsageError } from './cli-errors.ts';
import {
  COMMANDS,
  commandUsage,
  type FlagName,
  type Flags,
  joinNegativeValues,
  OPTIONS,
  scan,
  USAGE,
  version,
} from './cli-flags.ts';
import { checkNumberFlags, hasConfig, resolveConfig, runFolderConfig } from './cli-resolve.ts';
import { formatResponse, type RunConfig } from './config.ts';
import { startEnvServe } from './env-serve.ts';
import { createEstimator } from './estimators.ts';
import { evaluateAgent } from './evaluate.ts';
import { appendLineSync, writeJsonAtomic } from './files.ts';
import type { Logger } from './logger.ts';
import { checkSequenceBudget, loadEnvSpecs, loadModel } from './plugins.ts';
import { createConsoleProgress } from './progress.ts';
import { writeReport } from './report.ts';
import { type OverlayRun, writeOverlayReport } from './report-overlay.ts';
import { createRolloutEngine } from './rollout-engines.ts';
import {
  checkCheckpointExists,
  ensureWritableFolder,
  isRunFolder,
  prepareTrainFolder,
  runFolderOfCheckpoint,
  savedRunConfig,
} from './run-folder.ts';
import { hashFolder, writeRunInfo } from './run-info.ts';
import { startServe } from './serve.ts';
import { collectDemonstrations, type Demonstration, runSft } from './sft.ts';
import { trainRun } from './train-run.ts';
import { type AdvantageEstimator, latestCheckpointDir } from './trainer.ts';

/** Where the CLI writes (tests capture it). */
export { type RunFolderLayer, resolveConfig } from './cli-resolve.ts';

export interface CliIO {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WriteStream;
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
  const resumeDir = flags['run-dir'] !== undefined ? resolve(flags['run-dir']) : undefined;
  if (
    flags.resume &&
    !hasConfig(flags) &&
    resumeDir !== undefined &&
    savedRunConfig(resumeDir) === undefined
  )
    throw new RunFolderError(
      'NOTHING_TO_RESUME',
      `--resume: nothing to resume in ${resumeDir}: it holds no run (no config.resolved.json, no checkpoint); give the folder of the run to continue with --run-dir DIR, or start a new run with --preset <name> or --config <file>`,
      { details: { field: '--run-dir', value: resumeDir } },
    );
  const config = hasConfig(flags)
    ? resolveConfig(flags)
    : runFolderConfig(
        'train',
        flags,
        flags.resume ? flags['run-dir'] : undefined,
        flags.resume ? '--run-dir <run folder> with --resume (its saved config), ' : '',
      );
  await prepareTrainFolder(config.runDir, {
    resume: flags.resume === true,
    force: flags.force === true,
    hasCheckpoint: (await latestCheckpointDir(config.runDir)) !== undefined,
  });
  const estimator = createEstimator(config.algorithm.name, config.algorithm.options);
  const logger = loggerFor(io);
  // First, so that a bad engine setting fails before the environments and the model load.
  const rolloutEngine = await createRolloutEngine(config.rollout.engine, logger, {
    lora: config.model.options.lora !== undefined,
  });
  try {
    return await trainWith(config, estimator, logger, rolloutEngine, flags, io);
  } finally {
    await rolloutEngine?.close();
  }
}

async function trainWith(
  config: RunConfig,
  estimator: AdvantageEstimator,
  logger: Logger,
  rolloutEngine: RolloutEngine | undefined,
  flags: Flags,
  io: CliIO,
): Promise<number> {
  const envs = await loadEnvSpecs(config);
  await ensureWritableFolder(config.runDir);
  const { policy, tokenizer, info } = await loadModel(config, {
    config,
    env: envs.train,
    valEnv: envs.val,
    logger,
  });
  checkSequenceBudget(config, info);
  await writeRunInfo(config.runDir, {
    command: 'train',
    config,
    seed: config.seed,
    data: config.model.path ? { model: hashFolder(config.model.path) } : {},
    ...(info !== undefined ? { model: info } : {}),
  });
  // The run's phases: warm start (warmStart), RL, the headline (finalEval), the report.
  await trainRun(
    config,
    {
      policy,
      tokenizer,
      envs,
      estimator,
      rolloutEngine,
      logger,
      info,
      resume: flags.resume === true,
    },
    io,
  );
  return 0;
}

/**
 * The config and the checkpoint `agentrl eval` scores. A checkpoint inside a run folder
 * (`<run>/checkpoints/<name>`) brings its run: the run's saved config when no --config or
 * --preset is given, else the run's model section over theirs (the checkpoint's weights fit the
 * model its run built); either way the run folder is the config's runDir. Without --checkpoint,
 * a run folder given alone is scored at its latest checkpoint.
 */
async function evalTarget(
  flags: Flags,
  logger: Logger,
): Promise<{ config: RunConfig; checkpoint: string | undefined }> {
  const given = flags.checkpoint;
  if (given !== undefined) checkCheckpointExists(given);
  if (given !== undefined && isRunFolder(given))
    throw new UsageError(
      `--checkpoint ${given} is a run folder, not one of its checkpoints: pass --run-dir ${given} (its latest checkpoint) or --checkpoint ${join(given, 'checkpoints', 'iter-NNNNNN')}`,
      { details: { field: '--checkpoint', value: given } },
    );
  const run = given !== undefined ? runFolderOfCheckpoint(given) : undefined;
  const runDirFlag = flags['run-dir'] !== undefined ? resolve(flags['run-dir']) : undefined;
  if (run !== undefined && runDirFlag !== undefined && runDirFlag !== run)
    throw new ConfigError(
      `--checkpoint ${given} belongs to the run folder ${run}, not to --run-dir ${flags['run-dir']}: drop --run-dir (eval then reads that run's model and writes eval.json there)`,
      { details: { field: '--run-dir', value: flags['run-dir'], checkpointRun: run } },
    );
  if (!hasConfig(flags)) {
    const config = runFolderConfig(
      'eval',
      flags,
      run ?? runDirFlag,
      '--checkpoint <run>/checkpoints/<name> or --run-dir <run folder> (the run folder keeps its config), ',
    );
    const latest = given === undefined ? await latestCheckpointDir(config.runDir) : undefined;
    if (latest !== undefined) logger.info(`scoring the run's latest checkpoint, ${latest}`);
    return { config, checkpoint: given ?? latest };
  }
  if (run === undefined) return { config: resolveConfig(flags), checkpoint: given };
  const saved = savedRunConfig(run);
  if (saved?.model !== undefined)
    logger.info(`the model as the checkpoint's run built it (${run}/config.resolved.json)`);
  return { config: resolveConfig(flags, { dir: run, saved, use: 'model' }), checkpoint: given };
}

async function evaluate(flags: Flags, io: CliIO): Promise<number> {
  const logger = loggerFor(io);
  const { config, checkpoint } = await evalTarget(flags, logger);
  const envs = await loadEnvSpecs(config);
  await ensureWritableFolder(config.runDir);
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
    const { policy, tokenizer, info } = await loadModel(config, {
      config,
      env: envs.train,
      valEnv: envs.val,
      logger,
    });
    checkSequenceBudget(config, info);
    if (checkpoint !== undefined) {
      const dir = resolve(checkpoint);
      const modelDir = existsSync(join(dir, 'model')) ? join(dir, 'model') : dir;
      try {
        await policy.load(modelDir);
      } catch (error) {
        if (isAgentRLError(error)) throw error;
        throw new ConfigError(
          `--checkpoint ${checkpoint}: its weights do not fit the model this config builds (${(error as Error).message.split('\n')[0]}); evaluate it with the config of the run that wrote it: drop --config/--preset and give the checkpoint alone`,
          { details: { field: '--checkpoint', value: checkpoint }, cause: error },
        );
      }
    }
    agent = policyAgent(
      policy,
      tokenizer,
      rolloutAgentOptions(config.rollout, config.validation.temperature),
    );
    source = checkpoint ?? 'the configured model';
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
  await writeJsonAtomic(join(config.runDir, 'eval.json'), {
    source,
    success: s,
    envMetrics: result.envMetrics,
    metrics: result.metrics,
  });
  io.stdout.write(
    `success ${s.wins}/${s.n} = ${pct(s.rate)} (95% interval ${pct(s.low)}–${pct(s.high)}) on ${source}\n`,
  );
  for (const m of result.envMetrics) io.stdout.write(`${m.label} ${m.value.toFixed(2)}\n`);
  return 0;
}

function readDemos(path: string): Demonstration[] {
  if (!existsSync(path))
    throw new DataError(`--demos ${path} does not exist; give a JSONL file of demonstrations`, {
      details: { field: '--demos', value: path },
    });
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim().length > 0)
    .map((l, i) => {
      let d: { prompt?: unknown; response?: unknown };
      try {
        d = JSON.parse(l) as { prompt?: unknown; response?: unknown };
      } catch (error) {
        throw new DataError(
          `--demos ${path} line ${i + 1} is not JSON (${(error as Error).message}): write one {"prompt": ..., "response": ...} object a line`,
          { details: { field: '--demos', value: path, line: i + 1 }, cause: error },
        );
      }
      if (typeof d.prompt !== 'string' || typeof d.response !== 'string')
        throw new DataError(
          `--demos ${path} line ${i + 1}: each line needs string "prompt" and "response" fields`,
          { details: { field: '--demos', value: path, line: i + 1 } },
        );
      return { prompt: d.prompt, response: d.response };
    });
}

async function sft(flags: Flags, io: CliIO): Promise<number> {
  const config = hasConfig(flags)
    ? resolveConfig(flags)
    : runFolderConfig(
        'sft',
        flags,
        flags['run-dir'],
        '--run-dir <run folder> (its saved config), ',
      );
  const logger = loggerFor(io);
  const envs = await loadEnvSpecs(config);
  await ensureWritableFolder(config.runDir);
  const { policy, tokenizer, info } = await loadModel(config, {
    config,
    env: envs.train,
    valEnv: envs.val,
    logger,
  });
  let demos: Demonstration[];
  if (flags.demos !== undefined) demos = readDemos(flags.demos);
  else {
    const expert = envs.train.expert;
    if (!expert)
      throw new ConfigError(
        'env.module exports no expert: pass --demos FILE.jsonl with prompt/response lines',
        { details: { field: 'env.module', value: config.env.module } },
      );
    const collected = await collectDemonstrations({
      env: envs.train,
      expert,
      episodes: config.sft.episodes,
      seed: config.sft.seed,
      maxTurns: config.rollout.maxTurns,
      formatResponse: (a) => formatResponse(config.sft, a),
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
    ...(config.sft.stopLoss !== undefined
      ? { stopWhen: { meanLoss: config.sft.stopLoss, window: config.sft.stopWindow } }
      : {}),
    ...(config.rollout.maxPromptTokens !== undefined
      ? { maxPromptTokens: config.rollout.maxPromptTokens }
      : {}),
    ...(typeof info?.maxPositions === 'number' ? { maxSequenceTokens: info.maxPositions } : {}),
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

/**
 * `agentrl report`: one run folder gives its report; several give the overlay report. An argument
 * `ARM=DIR` (when no folder is named so) puts the run in arm ARM.
 */
async function report(args: readonly string[], flags: Flags, io: CliIO): Promise<number> {
  const given = args.length > 0 ? args : flags['run-dir'] !== undefined ? [flags['run-dir']] : [];
  const runs: OverlayRun[] = [];
  for (const arg of given) {
    const eq = arg.indexOf('=');
    const labelled = !existsSync(arg) && eq > 0;
    const dir = labelled ? arg.slice(eq + 1) : arg;
    if (!existsSync(dir))
      throw new RunFolderError(
        'NOT_FOUND',
        `${dir} is not an existing run folder; give run folders (or ARM=RUN_DIR)`,
        { details: { field: 'RUN_DIR', value: dir } },
      );
    if (!existsSync(join(dir, 'metrics.jsonl')))
      throw new RunFolderError(
        'NOT_A_RUN',
        `${dir} holds no metrics.jsonl, so there is nothing to report: give the folder \`agentrl train\` wrote (its --run-dir), or train into ${dir} first`,
        { details: { field: 'RUN_DIR', value: dir } },
      );
    runs.push({ dir: resolve(dir), ...(labelled ? { arm: arg.slice(0, eq) } : {}) });
  }
  if (runs.length === 0)
    throw new UsageError('give an existing run folder: agentrl report RUN_DIR (got nothing)', {
      details: { field: 'RUN_DIR' },
    });
  const out = flags.out !== undefined ? resolve(flags.out) : undefined;
  const path =
    runs.length === 1
      ? await writeReport((runs[0] as OverlayRun).dir, out !== undefined ? { path: out } : {})
      : await writeOverlayReport(runs, out ?? resolve('report-compare.html'));
  io.stdout.write(`report: ${path}\n`);
  return 0;
}

/** `agentrl serve`: runs until SIGINT or SIGTERM. */
async function serve(values: Flags, io: CliIO): Promise<number> {
  const engineOptions: Record<string, unknown> = {};
  for (const item of values.set ?? []) {
    const eq = item.indexOf('=');
    if (eq <= 0)
      throw new ConfigError(`--set ${item}: write key=value, e.g. --set threads=1`, {
        details: { field: '--set', value: item },
      });
    const raw = item.slice(eq + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // Text.
    }
    engineOptions[item.slice(0, eq)] = value;
  }
  const port = values.port !== undefined ? Number(values.port) : 8000;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(
      `--port ${values.port}: give a port from 0 to 65535 (0 picks a free one)`,
      {
        details: { field: '--port', value: values.port },
      },
    );
  const handle = await startServe({
    ...(values.checkpoint !== undefined ? { checkpoint: values.checkpoint } : {}),
    ...(values['model-name'] !== undefined ? { modelName: values['model-name'] } : {}),
    port,
    engineOptions,
    logger: loggerFor(io),
  }).catch((error: unknown) => {
    throw listenError(error, port, '127.0.0.1');
  });
  io.stdout.write(`agentrl serve: listening on ${handle.baseUrl}\n`);
  await new Promise<void>((r) => {
    process.once('SIGINT', () => r());
    process.once('SIGTERM', () => r());
  });
  await handle.close();
  return 0;
}

/** `agentrl env serve`: serves one environment until SIGINT or SIGTERM. */
async function envCommand(rest: readonly string[], values: Flags, io: CliIO): Promise<number> {
  if (rest[0] !== 'serve' || rest.length > 1) {
    io.stderr.write(
      `agentrl env failed [USAGE]: ${rest.length === 0 ? 'give a subcommand' : `unknown subcommand "${rest.join(' ')}"`}; use \`agentrl env serve --env NAME\`\n\n${commandUsage('env')}`,
    );
    return 2;
  }
  const handle = await startEnvServe(values, loggerFor(io));
  io.stdout.write(
    `agentrl env serve: ${values.env} on ${handle.baseUrl} (WebSocket ${handle.baseUrl.replace(/^http/, 'ws')}/ws)\n`,
  );
  await new Promise<void>((r) => {
    process.once('SIGINT', () => r());
    process.once('SIGTERM', () => r());
  });
  await handle.close();
  return 0;
}

/**
 * Runs the CLI; returns the exit code. The first `--` is dropped: pnpm passes it through
 * (`pnpm agentrl -- train ...`, or `pnpm start -- --episodes 3` after a script's own arguments).
 */
export async function main(
  argv: readonly string[],
  io: CliIO = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const args = joinNegativeValues(dropArgsSeparator(argv));
  const { command, flags } = scan(args);
  const known = command !== undefined ? COMMANDS[command] : undefined;
  if (command !== undefined && known === undefined) {
    const suggestion = closestName(command, Object.keys(COMMANDS));
    io.stderr.write(
      `agentrl failed [USAGE]: unknown command "${command}"${suggestion ? `; did you mean "${suggestion}"?` : ''}\n\n${USAGE}`,
    );
    return 2;
  }
  const allowed: readonly FlagName[] = [...(known?.flags ?? []), 'help', 'version'];
  const unknown = flags.find((f) => !(allowed as readonly string[]).includes(f.name));
  if (unknown !== undefined) {
    const where = command !== undefined ? `agentrl ${command}` : 'agentrl';
    const suggestion = closestName(unknown.name, allowed);
    const owners = Object.entries(COMMANDS)
      .filter(([, c]) => (c.flags as readonly string[]).includes(unknown.name))
      .map(([name]) => name);
    const hint = suggestion
      ? `; did you mean "--${suggestion}"?`
      : owners.length > 0
        ? `; it is an option of ${owners.map((c) => `agentrl ${c}`).join(', ')}`
        : '';
    io.stderr.write(
      `${where} failed [USAGE]: unknown option "${unknown.rawName}"${hint} (\`${where} --help\` lists the options)\n`,
    );
    return 2;
  }
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    const where = command !== undefined ? `agentrl ${command}` : 'agentrl';
    io.stderr.write(
      `${where} failed [USAGE]: ${(error as Error).message} (\`${where} --help\` lists the options)\n`,
    );
    return 2;
  }
  const rest = parsed.positionals.slice(1);
  if (parsed.values.version) {
    io.stdout.write(`agentrl ${version()}\n`);
    return 0;
  }
  if (command === undefined) {
    io.stdout.write(USAGE);
    return parsed.values.help ? 0 : 2;
  }
  if (parsed.values.help) {
    io.stdout.write(commandUsage(command));
    return 0;
  }
  try {
    checkNumberFlags(parsed.values);
    switch (command) {
      case 'train':
        return await train(parsed.values, io);
      case 'eval':
        return await evaluate(parsed.values, io);
      case 'sft':
        return await sft(parsed.values, io);
      case 'report':
        return await report(rest, parsed.values, io);
      case 'serve':
        return await serve(parsed.values, io);
      case 'env':
        return await envCommand(rest, parsed.values, io);
      case 'data':
        return await dataCommand(rest, parsed.values, io);
      case 'config':
        return configCommand(rest, parsed.values, io.stdout, (f) => resolveConfig(f));
      default:
        return 2;
    }
  } catch (error) {
    const { line, exitCode } = reportLine(command, error);
    io.stderr.write(line);
    return exitCode;
  }
}
