/**
 * Benchmarks @agentrl/env-alfworld's engine on the real validation games (valid_seen +
 * valid_unseen under the data directory: `$ALFWORLD_DATA` or data/alfworld of the shared data folder, see env-alfworld).
 *
 * - replay: every stored walkthrough, reset + each command; the engine computes the admissible
 *   commands and the goal after every step, as in play. Reported as steps per second.
 * - load: read + parse of one game file (`loadAlfworldGame`), median over all games.
 * - generate: one real-size generated household with its verified walkthrough.
 * - the real engine: the same walkthroughs played by upstream ALFWorld (alfworld 0.4.2 on
 *   textworld 1.7.0, through `createAlfworldBridgeEnv`, one Python process) in the same run:
 *   steps/s of its steps (admissible commands and `won` requested, as AlfredTWEnv does) and its
 *   reset time. The Python is `$AGENTRL_ALFWORLD_PYTHON` (`bash .ci/alfworld.sh` makes the pinned
 *   venv and prints it), else python3; without alfworld there the row says so.
 *
 * Run: pnpm --filter @agentrl-bench/alfworld-engine bench
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import {
  AlfworldEngine,
  type AlfworldGame,
  createAlfworldBridgeEnv,
  defaultAlfworldDataDir,
  generateAlfworldGame,
  listAlfworldGames,
  loadAlfworldGame,
  parseAlfworldGame,
} from '@agentrl/env-alfworld';
import { Bench } from 'tinybench';

const dataDir = defaultAlfworldDataDir();
const entries = [
  ...(await listAlfworldGames({ dataDir, split: 'valid_seen' })),
  ...(await listAlfworldGames({ dataDir, split: 'valid_unseen' })),
];
const paths = entries.map((g) => g.path);
const games: AlfworldGame[] = paths.map((p) => parseAlfworldGame(readFileSync(p, 'utf8'), p));
const engines = games.map((g) => new AlfworldEngine(g));
const totalSteps = games.reduce((n, g) => n + g.walkthrough.length, 0);

function replayAll(): number {
  let won = 0;
  for (const engine of engines) {
    engine.reset();
    for (const cmd of engine.game.walkthrough) if (engine.step(cmd).won) won++;
  }
  return won;
}
if (replayAll() !== games.length) throw new Error('a walkthrough did not win');

// median load time over every game (read + parse), three passes, after one warm-up pass
for (const p of paths) await loadAlfworldGame(p);
const loadTimes: number[] = [];
for (let pass = 0; pass < 3; pass++) {
  for (const p of paths) {
    const t0 = performance.now();
    await loadAlfworldGame(p);
    loadTimes.push(performance.now() - t0);
  }
}
loadTimes.sort((a, b) => a - b);
const median = loadTimes[Math.floor(loadTimes.length / 2)] as number;
const p90 = loadTimes[Math.floor(loadTimes.length * 0.9)] as number;

const bench = new Bench({ time: 3000, warmup: true });
let seed = 0;
bench
  .add(`replay ${games.length} walkthroughs (${totalSteps} steps)`, () => {
    replayAll();
  })
  .add('generate one real-size household (+ verified walkthrough)', () => {
    generateAlfworldGame({ seed: seed++ });
  });
await bench.run();

const replay = bench.tasks[0]?.result;
const generate = bench.tasks[1]?.result;
const replayMs = replay && 'latency' in replay ? replay.latency.mean : Number.NaN;
const generateMs = generate && 'latency' in generate ? generate.latency.mean : Number.NaN;
console.log(
  `machine: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} cores), node ${process.version}`,
);
console.log(`games: ${games.length} (valid_seen + valid_unseen), walkthrough steps: ${totalSteps}`);
console.log('| measure | result |');
console.log('| --- | --- |');
console.log(
  `| walkthrough replay, admissible commands every step | ${Math.round((totalSteps * 1000) / replayMs).toLocaleString('en-US')} steps/s (one core) |`,
);
console.log(
  `| game load (read + parse), median | ${median.toFixed(2)} ms (p90 ${p90.toFixed(2)} ms) |`,
);
console.log(`| generate a real-size household | ${generateMs.toFixed(2)} ms |`);

// The real engine on the first REAL_ENGINE_GAMES walkthroughs of each split, one Python process
// (each step timed alone, so the pipe's round trip is in: well under a millisecond against its
// milliseconds per step), and this engine on the same games in the same run. The real engine is
// slow enough (its reset compiles the game's PDDL) that every game would take tens of minutes.
const REAL_ENGINE_GAMES = 20;
const python = process.env['AGENTRL_ALFWORLD_PYTHON'] || 'python3';
const probe = spawnSync(python, ['-c', 'import alfworld, textworld'], { encoding: 'utf8' });
if (probe.status !== 0) {
  console.log(
    `| the real engine (alfworld 0.4.2), same walkthroughs | not measured: ${python} cannot import alfworld (bash .ci/alfworld.sh makes the pinned venv; set AGENTRL_ALFWORLD_PYTHON) |`,
  );
} else {
  let stepMs = 0;
  let resetMs = 0;
  let steps = 0;
  let won = 0;
  const subset: AlfworldEngine[] = [];
  for (const split of ['valid_seen', 'valid_unseen'] as const) {
    const env = createAlfworldBridgeEnv({ dataDir, split, python, maxSteps: 1000 });
    const list = entries.filter((e) => e.split === split).slice(0, REAL_ENGINE_GAMES);
    try {
      for (let i = 0; i < list.length; i++) {
        const engine = engines[
          entries.indexOf(list[i] as (typeof entries)[number])
        ] as AlfworldEngine;
        subset.push(engine);
        const t0 = performance.now();
        await env.reset({ seed: 0, task: i });
        resetMs += performance.now() - t0;
        for (const cmd of engine.game.walkthrough) {
          const t1 = performance.now();
          const r = await env.step(cmd);
          stepMs += performance.now() - t1;
          steps++;
          if (r.info.won) won++;
        }
      }
    } finally {
      await env.close();
    }
  }
  if (won !== subset.length)
    throw new Error(`the real engine won ${won} of ${subset.length} walkthroughs`);
  // this engine on the same games: replayed for at least a second, steps only (resets apart)
  let oursMs = 0;
  let oursSteps = 0;
  while (oursMs < 1000) {
    for (const engine of subset) {
      engine.reset();
      const t0 = performance.now();
      for (const cmd of engine.game.walkthrough) engine.step(cmd);
      oursMs += performance.now() - t0;
      oursSteps += engine.game.walkthrough.length;
    }
  }
  const real = (steps * 1000) / stepMs;
  const ours = (oursSteps * 1000) / oursMs;
  console.log(
    `| the same ${subset.length} walkthroughs (${steps} steps): this engine | ${Math.round(ours).toLocaleString('en-US')} steps/s (one core) |`,
  );
  console.log(
    `| the same ${subset.length} walkthroughs: the real engine (alfworld 0.4.2, one Python process) | ${real.toFixed(1)} steps/s; reset ${(resetMs / subset.length / 1000).toFixed(2)} s a game |`,
  );
  console.log(
    `| this engine over the real engine, per step | ${Math.round(ours / real).toLocaleString('en-US')}× |`,
  );
}
