/**
 * `pnpm demo [alfworld|webshop|search] [--smoke] [flags]`: the main job, which is the CLI's run of
 * one benchmark's CPU preset, `agentrl train --preset <benchmark>-cpu` (ALFWorld when no benchmark
 * is named): a held-out evaluation of a fresh model, the expert warm start, GiGPO, the held-out
 * table with 95 % intervals, `headline.json` and `report.html` in the run folder (the preset's,
 * `runs/<benchmark>-cpu`, unless `--run-dir DIR`). Every other flag goes to `agentrl train`
 * (`--seed N`, `--run-dir DIR`, `--force`, `--resume`, `--set field=value`).
 *
 * `--smoke` runs every phase at toy size in seconds, in `runs/<benchmark>-cpu-smoke` (started
 * over each time): it checks the plumbing and wins nothing. The command is printed before it runs,
 * so what the demo does can be typed as it is.
 *
 * Written in erasable TypeScript only, so Node runs it as it is.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCHMARKS = ['alfworld', 'webshop', 'search'] as const;

/** The `--set` overrides of a smoke run: a 32-wide 1-layer model, 8 expert games, 2 iterations. */
const SMOKE_SETS = [
  'model.options.architecture.hiddenSize=32',
  'model.options.architecture.layers=1',
  'model.options.architecture.vocabularyEpisodes=8',
  'sft.episodes=8',
  'sft.steps=4',
  'sft.batchSize=8',
  'rollout.batchSize=4',
  'rollout.groupSize=2',
  'rollout.maxTurns=4',
  'validation.every=1',
  'validation.episodes=4',
];

/** The `agentrl train` arguments of `pnpm demo` with `args` (what follows `pnpm demo`). */
export function demoArguments(args: readonly string[]): string[] {
  const rest = args.filter((a) => a !== '--');
  const first = rest[0];
  const named = first !== undefined && !first.startsWith('-');
  const name = named ? first : 'alfworld';
  if (!(BENCHMARKS as readonly string[]).includes(name))
    throw new Error(
      `pnpm demo: no demo "${name}"; use one of ${BENCHMARKS.join(', ')} (default alfworld)`,
    );
  const flags = rest.slice(named ? 1 : 0);
  const smoke = flags.includes('--smoke');
  const passed = flags.filter((a) => a !== '--smoke');
  const out = ['train', '--preset', `${name}-cpu`];
  if (smoke) {
    out.push('--iterations', '2');
    for (const set of SMOKE_SETS) out.push('--set', set);
    if (!passed.includes('--run-dir')) out.push('--run-dir', `runs/${name}-cpu-smoke`);
    if (!passed.includes('--force') && !passed.includes('--resume')) out.push('--force');
  }
  return [...out, ...passed];
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  let args: string[];
  try {
    args = demoArguments(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
  const root = dirname(dirname(fileURLToPath(import.meta.url)));
  process.stderr.write(`$ agentrl ${args.join(' ')}\n`);
  const result = spawnSync(
    process.execPath,
    [join(root, 'packages', 'runner', 'bin', 'agentrl.js'), ...args],
    { stdio: 'inherit', cwd: root },
  );
  process.exit(result.status ?? 1);
}
