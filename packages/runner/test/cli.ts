/** Shared helpers of the runner's tests that drive the CLI entry in-process. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { expect } from 'vitest';
import { main } from '../src/cli.ts';
import { tempDir } from './temp-dir.ts';

/** What one CLI call returned: its exit code and everything it wrote to stdout and stderr. */
export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/** Runs `agentrl <args>` in-process, capturing stdout and stderr as text. */
export async function runCli(args: string[]): Promise<CliResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough() as unknown as NodeJS.WriteStream;
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  (stderr as unknown as PassThrough).on('data', (d: Buffer) => (err += d.toString()));
  const code = await main(args, { stdout, stderr });
  return { code, out, err };
}

const fixture = (name: string) => new URL(`fixtures/${name}`, import.meta.url).pathname;

/**
 * Writes `<dir>/run.yaml`: a corridor run (the tabular test model, a few episodes) whose run
 * folder is `<dir>/run`, with `extra` YAML lines appended (default: one iteration).
 */
export function corridorConfig(dir: string, extra = 'training: { iterations: 1 }\n'): string {
  const path = join(dir, 'run.yaml');
  writeFileSync(
    path,
    `runDir: ${join(dir, 'run')}
env: { id: test/corridor-v1, module: ${fixture('corridor-env.ts')} }
model: { backend: module, module: ${fixture('tabular-model.ts')} }
rollout: { batchSize: 8, groupSize: 4, maxTurns: 8, maxNewTokens: 64 }
algorithm: { name: grpo }
validation: { every: 0, episodes: 4 }
${extra}`,
  );
  return path;
}

/** The rows of a run folder's `metrics.jsonl`, one per iteration. */
export function readMetrics(runDir: string): Record<string, number>[] {
  return readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>);
}

/**
 * A not-yet-created `run` folder inside a fresh temporary folder named from `prefix`, removed
 * when the test finishes.
 */
export function freshRunDir(prefix: string): string {
  return join(tempDir(prefix), 'run');
}

/** The arguments of `agentrl train --preset alfworld-cpu --run-dir <runDir>`, then `rest`. */
export function alfworldTrain(runDir: string, ...rest: string[]): string[] {
  return ['train', '--preset', 'alfworld-cpu', '--run-dir', runDir, ...rest];
}

/**
 * The `--set` overrides shrinking the `alfworld-cpu` preset to a few seconds of training with a
 * rollout engine: 4 episodes in groups of 2, 3 turns each, no validation, a 4-episode vocabulary
 * and a 32-wide 1-layer model,
 * RL alone (no warm start, no headline evaluations: `src/train-run.test.ts` runs those phases).
 */
export const TINY_ALFWORLD = [
  '--set',
  'warmStart.source=none',
  '--set',
  'finalEval.enabled=false',
  '--set',
  'rollout.batchSize=4',
  '--set',
  'rollout.groupSize=2',
  '--set',
  'rollout.maxTurns=3',
  '--set',
  'validation.every=0',
  '--set',
  'model.options.architecture.vocabularyEpisodes=4',
  '--set',
  'model.options.architecture.hiddenSize=32',
  '--set',
  'model.options.architecture.layers=1',
];

/**
 * Checks the per-iteration metrics of a run whose rollouts came from llama.cpp: the engine was
 * synced, its log-probs stay close to the tfjs policy's, and the policy was trained.
 */
export function expectEngineMetrics(metrics: Record<string, number>[]): void {
  for (const m of metrics) {
    expect(m['time/engineSync']).toBeGreaterThan(0);
    expectEngineLogProbGap(m);
    expect(m['train/negLogProb']).toBeGreaterThan(0);
  }
}

/**
 * Checks one iteration's gap between llama.cpp's log-probs and the tfjs policy's: llama.cpp's
 * defaults (F16 KV cache) against the tfjs policy at the rollout temperature.
 */
export function expectEngineLogProbGap(m: Record<string, number>): void {
  expect(m['rollout/engineLogProbAbsDiff']).toBeLessThan(1e-3);
  expect(m['rollout/engineLogProbAbsDiffMax']).toBeLessThan(1e-2);
}

/**
 * Checks that two runs trained on the same thing. llama.cpp's own log-probs may move in the last
 * digits between runs (its batches form differently); the sampled tokens, and so every metric
 * apart from timings and the engine's log-prob gap, are the same. Two such runs have been seen
 * 5.8e-9 apart in the mean gap, so it is compared to 6 digits.
 */
export function expectSameTraining(
  metrics: Record<string, number>[],
  other: Record<string, number>[],
): void {
  const exact = (rows: Record<string, number>[]) =>
    rows.map((m) =>
      Object.fromEntries(
        Object.entries(m).filter(
          ([k]) => !k.startsWith('time/') && !k.startsWith('rollout/engine'),
        ),
      ),
    );
  expect(exact(metrics)).toEqual(exact(other));
  for (const [i, m] of metrics.entries()) {
    expect(m['rollout/engineLogProbAbsDiff']).toBeCloseTo(
      other[i]?.['rollout/engineLogProbAbsDiff'] as number,
      6,
    );
  }
}

/**
 * Trains one iteration, resumes the same run to two, and trains two iterations straight in a
 * fresh folder: checks each call succeeds, the resumed run holds iterations 0 and 1 with the
 * engine's metrics, and both runs trained on the same thing. Returns the resumed run's folder and
 * metrics and the first call's stderr.
 */
export async function expectResumeRepeatsStraightRun(
  prefix: string,
  args: (runDir: string) => string[],
): Promise<{ runDir: string; metrics: Record<string, number>[]; firstErr: string }> {
  const runDir = freshRunDir(prefix);
  const first = await runCli([...args(runDir), '--iterations', '1']);
  expect(first.code, first.err).toBe(0);
  const resumed = await runCli([...args(runDir), '--iterations', '2', '--resume']);
  expect(resumed.code, resumed.err).toBe(0);
  const metrics = readMetrics(runDir);
  expect(metrics.map((m) => m.iteration)).toEqual([0, 1]);
  expectEngineMetrics(metrics);
  const straightDir = freshRunDir(prefix);
  const straight = await runCli([...args(straightDir), '--iterations', '2']);
  expect(straight.code, straight.err).toBe(0);
  expectSameTraining(metrics, readMetrics(straightDir));
  return { runDir, metrics, firstErr: first.err };
}
