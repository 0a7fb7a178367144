/**
 * The `agentrl` command line's flags: their definitions for `parseArgs`, the help text of each
 * command (estimators with their options from the algorithms registry) and a validation-free scan
 * of argv, so that a mistyped flag or command can be named with the closest valid one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ESTIMATORS } from '@agentrl/algorithms';
import type { OptionsSchema } from '@agentrl/core';
import { ENV_SERVER_OPTIONS } from '@agentrl/env-server';
import { dataHelp } from './data/help.ts';
import { ESTIMATOR_NAMES } from './estimators.ts';
import { PRESETS } from './presets.ts';

export const OPTIONS = {
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
  out: { type: 'string', short: 'o' },
  port: { type: 'string' },
  env: { type: 'string' },
  host: { type: 'string' },
  dir: { type: 'string' },
  force: { type: 'boolean' },
  mirror: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

export type FlagName = keyof typeof OPTIONS;

/** The help line of each flag: the value it takes (if any) and what it does. */
export const FLAG_HELP: Record<FlagName, { readonly value?: string; readonly text: string }> = {
  config: { value: 'FILE', text: 'YAML or JSON run config' },
  preset: { value: 'NAME', text: `start from a preset (${Object.keys(PRESETS).join(', ')})` },
  set: {
    value: 'key.path=value',
    text: 'override one setting (repeatable), e.g. --set rollout.temperature=0.7',
  },
  seed: { value: 'N', text: 'the run seed (config key seed)' },
  iterations: { value: 'N', text: 'training iterations (training.iterations)' },
  'run-dir': { value: 'DIR', text: 'the run folder (runDir)' },
  resume: {
    text: 'continue the run in --run-dir from its latest checkpoint (with no --config or --preset, its saved config)',
  },
  checkpoint: {
    value: 'DIR',
    text: "eval: the checkpoint to score (a run's checkpoints/iter-NNNNNN folder; with no --config or --preset, the run's saved config); serve: the weights served from the start",
  },
  port: {
    value: 'N',
    text: 'serve, env serve: the port (default 8000; 0 picks a free one)',
  },
  env: {
    value: 'NAME',
    text: 'env serve: the env served (alfworld, webshop, webshop-browser, search, or a registry id)',
  },
  host: {
    value: 'HOST',
    text: 'env serve: the interface to listen on (default 127.0.0.1; 0.0.0.0 for every interface)',
  },
  split: { value: 'valid_seen|valid_unseen', text: 'the evaluation split (validation.split)' },
  episodes: { value: 'N', text: 'evaluation episodes (validation.episodes)' },
  'base-url': {
    value: 'URL',
    text: 'evaluate an OpenAI-compatible endpoint instead of a local model (model.backend=openai)',
  },
  'model-name': {
    value: 'NAME',
    text: 'eval: the model name sent to that endpoint (model.name); serve: the served name (default agentrl)',
  },
  demos: {
    value: 'FILE.jsonl',
    text: 'demonstrations, one {"prompt", "response"} object a line (default: the env module\'s expert)',
  },
  out: {
    value: 'FILE',
    text: 'where the report goes (default: RUN_DIR/report.html for one run, ./report-compare.html for several)',
  },
  dir: {
    value: 'DIR',
    text: 'data: the dataset folder (default: <AGENTRL_DATA or the user cache folder>/<dataset>, see below)',
  },
  force: {
    text: 'train: start over in a --run-dir that holds a run (deletes its checkpoints, metrics and samples); data: replace the dataset folder when it already exists',
  },
  mirror: {
    value: 'URL',
    text: 'data: fetch each file from URL/<dataset>/<file name> instead of its upstream address',
  },
  help: { text: 'show this help' },
  version: { text: 'print the agentrl version' },
};

/** Where a user finds every key of a run config (`pnpm docs:config` writes the page). */
const CONFIG_REFERENCE_LINE =
  "Config reference (every key of a run config, its type, default and meaning, and each estimator's and env's options): docs/config-reference.md in the repository; commented configs of the CPU presets: examples/configs/.\n";

/** What each command is for, how it is called and the flags it takes. */
export const COMMANDS: Record<
  string,
  {
    readonly summary: string;
    readonly usage: readonly string[];
    readonly flags: readonly FlagName[];
    /** More help after the flags (built on demand). */
    readonly more?: () => string;
  }
> = {
  train: {
    summary: `train a policy with an advantage estimator (${ESTIMATOR_NAMES.join(', ')}) and write the run folder and its report`,
    usage: [
      'agentrl train --config run.yaml [--run-dir DIR] [--force]',
      'agentrl train --preset alfworld-cpu',
      'agentrl train --resume --run-dir DIR   (the run folder keeps its config)',
    ],
    flags: ['config', 'preset', 'set', 'seed', 'iterations', 'run-dir', 'resume', 'force'],
    more: () => `${estimatorHelp()}\n${CONFIG_REFERENCE_LINE}`,
  },
  eval: {
    summary: 'score a checkpoint, the configured model or an OpenAI-compatible endpoint',
    usage: [
      'agentrl eval --checkpoint RUN_DIR/checkpoints/iter-NNNNNN [--episodes N]   (the run folder keeps its config)',
      'agentrl eval --run-dir RUN_DIR   (its latest checkpoint)',
      'agentrl eval --config run.yaml [--checkpoint DIR] [--split valid_unseen] [--episodes N]',
      'agentrl eval --config run.yaml --base-url URL --model-name NAME',
    ],
    flags: [
      'config',
      'preset',
      'set',
      'seed',
      'run-dir',
      'checkpoint',
      'split',
      'episodes',
      'base-url',
      'model-name',
    ],
  },
  sft: {
    summary: 'warm-start the model on expert demonstrations (written to RUN_DIR/sft/model)',
    usage: [
      'agentrl sft --config run.yaml [--demos demos.jsonl]',
      'agentrl sft --run-dir RUN_DIR   (the run folder keeps its config)',
    ],
    flags: ['config', 'preset', 'set', 'seed', 'run-dir', 'demos'],
  },
  report: {
    summary:
      'write report.html of a run folder, or overlay several runs (each run, and per arm the mean ± sd)',
    usage: [
      'agentrl report RUN_DIR',
      'agentrl report RUN_DIR RUN_DIR... [--out FILE]   (arm: the algorithm in each run info)',
      'agentrl report ARM=RUN_DIR ARM=RUN_DIR... [--out FILE]',
    ],
    flags: ['run-dir', 'out'],
  },
  serve: {
    summary:
      'serve llama.cpp on 127.0.0.1 with the OpenAI-compatible routes rollout.engine openai uses (completions with token ids and log-probs, runtime LoRA loading, full-weight reload), until stopped',
    usage: ['agentrl serve [--checkpoint DIR] [--port N] [--set threads=1 ...]'],
    flags: ['checkpoint', 'port', 'model-name', 'set'],
    more: () =>
      '\n--set key=value sets an option of the llama.cpp engine (the keys of rollout.engine.options for llama.cpp; values are read as JSON, else as text).\n',
  },
  env: {
    summary:
      "env serve: serve an environment over OpenEnv's WebSocket protocol (reset/step/state on /ws, with GiGPO anchors) for Python trainers, until stopped",
    usage: [
      'agentrl env serve --env alfworld [--port N] [--host H] [--set env.options.KEY=VALUE] [--set server.KEY=VALUE]',
    ],
    flags: ['env', 'port', 'host', 'set'],
    more: envServeHelp,
  },
  config: {
    summary:
      'list the presets, or print a resolved config (preset, file and flags applied, every default filled in) as YAML that train -c reads',
    usage: [
      'agentrl config list',
      'agentrl config show --preset alfworld-cpu [--set key.path=value ...] > run.yaml',
      'agentrl config show --config run.yaml [--set key.path=value ...]',
    ],
    flags: ['preset', 'config', 'set', 'seed', 'iterations', 'run-dir', 'split', 'episodes'],
    more: () => `\n${CONFIG_REFERENCE_LINE}`,
  },
  data: {
    summary:
      'download a real dataset (alfworld, webshop, search, search-r1) from its public sources, check it and unpack it where the environment looks',
    usage: [
      'agentrl data fetch alfworld|webshop|search|search-r1 [--dir DIR] [--force] [--mirror URL]',
    ],
    flags: ['dir', 'force', 'mirror'],
    more: dataHelp,
  },
};

/** The server options `--set server.KEY=VALUE` takes, with their defaults. */
function envServeHelp(): string {
  const schema: OptionsSchema = ENV_SERVER_OPTIONS;
  const lines = Object.entries(schema).map(
    ([key, spec]) => `  server.${key} (${defaultText(spec.default)}): ${spec.description}\n`,
  );
  return `\n--set env.options.KEY=VALUE sets an option of the env (as in a run config's env.options); --set env.module=MODULE imports a package or file that registers more envs.\n--set server.KEY=VALUE sets a server option:\n${lines.join('')}`;
}

/** A default for help text: strings as they are, numbers and booleans as YAML writes them. */
function defaultText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The estimators of `@agentrl/algorithms`' registry with their options and defaults. */
function estimatorHelp(): string {
  const lines = ESTIMATOR_NAMES.map((name) => {
    const { description, options } = ESTIMATORS[name];
    const schema: OptionsSchema = options;
    const keys = Object.entries(schema).map(([key, spec]) =>
      'default' in spec ? `${key} (${defaultText(spec.default)})` : key,
    );
    return `  ${name.padEnd(7)}${description}\n         options: ${keys.join(', ')}\n`;
  });
  return `\nAdvantage estimators (algorithm.name, with their algorithm.options and defaults):\n${lines.join('')}`;
}

function flagLines(names: readonly FlagName[]): string {
  const left = names.map((name) => {
    const short =
      'short' in OPTIONS[name] ? `-${(OPTIONS[name] as { short: string }).short}, ` : '';
    const value = FLAG_HELP[name].value;
    return `  ${short}--${name}${value !== undefined ? ` ${value}` : ''}`;
  });
  const width = Math.max(...left.map((l) => l.length)) + 2;
  return names
    .map((name, i) => `${(left[i] as string).padEnd(width)}${FLAG_HELP[name].text}\n`)
    .join('');
}

export const USAGE = `agentrl <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(8)}${c.summary}\n`)
  .join('')}
Options:
${flagLines(['help', 'version'])}
Run \`agentrl <command> --help\` for the options of one command.
`;

export function commandUsage(name: string): string {
  const command = COMMANDS[name] as (typeof COMMANDS)[string];
  return `${command.usage.map((u, i) => `${i === 0 ? 'Usage: ' : '       '}${u}\n`).join('')}
${command.summary}

Options:
${flagLines([...command.flags, 'help'])}${command.more?.() ?? ''}`;
}

/** The runner's version from its package.json, or `unknown` in a bundle that has none. */
export function version(): string {
  const path = fileURLToPath(new URL('../package.json', import.meta.url));
  if (!existsSync(path)) return 'unknown';
  return (JSON.parse(readFileSync(path, 'utf8')) as { version?: string }).version ?? 'unknown';
}

/**
 * `argv` with a negative number after a flag that takes a value joined to it (`--iterations -1`
 * becomes `--iterations=-1`): `parseArgs` would take `-1` for an option and stop with "argument
 * is ambiguous", where the command can say which values the flag takes.
 */
export function joinNegativeValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    const option =
      name !== undefined && Object.hasOwn(OPTIONS, name) ? OPTIONS[name as FlagName] : undefined;
    if (option?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/**
 * The command (first positional) and the flags of `argv`, read as tokens without validation, so
 * that `-c run.yaml train` finds `train` and a value such as `--set a=b` is not taken for a flag.
 */
export function scan(argv: readonly string[]): {
  command: string | undefined;
  flags: { name: string; rawName: string }[];
} {
  const { tokens } = parseArgs({
    args: [...argv],
    options: OPTIONS,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const command = tokens.find((t) => t.kind === 'positional')?.value;
  const flags = tokens.flatMap((t) =>
    t.kind === 'option' ? [{ name: t.name, rawName: t.rawName }] : [],
  );
  return { command, flags };
}

export type Flags = ReturnType<
  typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>
>['values'];
