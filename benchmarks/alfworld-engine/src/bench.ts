/**
 * Benchmarks @agentrl/env-alfworld's engine on the real validation games (valid_seen +
 * valid_unseen under the data directory: `$ALFWORLD_DATA` or data/alfworld of the shared data folder, see env-alfworld).
 *
 * - replay: every stored walkthrough, reset + each command; the engine computes the admissible
 *   commands and the goal after every step, as in play. Reported as steps per second.
 * - load: read + parse of one game file (`loadAlfworldGame`), median over all games.
 * - generate: one real-size generated household with its verified walkthrough.
 *
 * Run: pnpm --filter @agentrl-bench/alfworld-engine bench
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import {
  AlfworldEngine,
  type AlfworldGame,
  defaultAlfworldDataDir,
  generateAlfworldGame,
  listAlfworldGames,
  loadAlfworldGame,
  parseAlfworldGame,
} from '@agentrl/env-alfworld';
import { Bench } from 'tinybench';

const dataDir = defaultAlfworldDataDir();
const paths = [
  ...(await listAlfworldGames({ dataDir, split: 'valid_seen' })),
  ...(await listAlfworldGames({ dataDir, split: 'valid_unseen' })),
].map((g) => g.path);
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
