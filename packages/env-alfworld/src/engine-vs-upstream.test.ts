/**
 * The engine against the real ALFWorld engine (alfworld 0.4.2 on textworld 1.7.0 and
 * fast-downward-textworld 20.6.4, `python/requirements-alfworld.txt` at the repository root),
 * step by step, through `createAlfworldBridgeEnv`: every observation, admissible list and `won`
 * flag must be identical. The Python comes from `AGENTRL_ALFWORLD_PYTHON` (CI makes a pinned
 * venv with `.ci/alfworld.sh`), else `python3`. Without the real engine the tests skip with one
 * line, except under CI, where that is a failure: this comparison is what keeps every ALFWorld
 * number of the repository on the benchmark's own rules.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRng, type Rng, type TextEnv } from '@agentrl/core';
import { hasData } from '@agentrl/core/test';
import { describe, expect, it } from 'vitest';
import { createAlfworldBridgeEnv } from './bridge.ts';
import {
  ALFWORLD_SPLITS,
  type AlfworldGameEntry,
  type AlfworldSplit,
  defaultAlfworldDataDir,
  listAlfworldGames,
} from './data.ts';
import { AlfworldEngine } from './engine.ts';
import { createAlfworldEnv } from './env.ts';
import { parseAlfworldGame } from './game.ts';

const PYTHON = process.env['AGENTRL_ALFWORLD_PYTHON'] || 'python3';
const probe = spawnSync(
  PYTHON,
  [
    '-c',
    'import importlib.metadata as m, alfworld, textworld; print("alfworld", m.version("alfworld"), "textworld", m.version("textworld"))',
  ],
  { encoding: 'utf8' },
);
const hasAlfworld = probe.status === 0;
const versions = hasAlfworld ? probe.stdout.trim() : '';
const inCI = process.env['CI'] === 'true' || process.env['CI'] === '1';
const hasGames = hasData('alfworld', 'env-alfworld: the engine against the real ALFWorld engine', {
  paths: ALFWORLD_SPLITS.map((s) => join(defaultAlfworldDataDir(), 'json_2.1.1', s)),
});

if (!hasAlfworld) {
  const why = (probe.stderr ?? '').trim().split('\n').at(-1) || (probe.error?.message ?? '');
  console.log(
    `engine-vs-upstream differential test skipped: \`${PYTHON} -c "import alfworld, textworld"\` failed (${why}); ` +
      'bash .ci/alfworld.sh makes the pinned venv and prints the AGENTRL_ALFWORLD_PYTHON to set',
  );
}

describe.runIf(inCI && hasGames && !hasAlfworld)('the real ALFWorld engine under CI', () => {
  it('is installed, since CI compares the engine against it on every change', () => {
    expect.fail(
      `AGENTRL_ALFWORLD_PYTHON=${PYTHON} cannot import alfworld and textworld (${(probe.stderr ?? '').trim().split('\n').at(-1)}); run .ci/alfworld.sh and export the path it prints`,
    );
  });
});

/** Games per task type in the comparison, drawn over the three splits. */
const GAMES_PER_TASK_TYPE = 10;
/** Random admissible commands played from a fresh start of each game. */
const RANDOM_STEPS = 32;
/** The object actions counted in the log (and required to have been played). */
const ACTION_VERBS = ['heat', 'cool', 'clean', 'slice', 'use'];
/** Bridge processes run side by side (one per core of a 2-core machine). */
const WORKERS = 2;

interface Mismatch {
  readonly game: string;
  readonly script: string;
  readonly step: number;
  readonly command: string;
  readonly field: 'observation' | 'admissible' | 'won';
  readonly ours: unknown;
  readonly theirs: unknown;
}

/** Draws the games: `GAMES_PER_TASK_TYPE` of each type, round-robin over the splits that have it. */
async function chooseGames(): Promise<AlfworldGameEntry[]> {
  const dataDir = defaultAlfworldDataDir();
  const bySplit = new Map<AlfworldSplit, AlfworldGameEntry[]>();
  for (const split of ALFWORLD_SPLITS)
    bySplit.set(split, await listAlfworldGames({ dataDir, split }));
  const rng = createRng('engine-vs-upstream games');
  const types = [...new Set([...bySplit.values()].flat().map((g) => g.taskType))].sort();
  const chosen: AlfworldGameEntry[] = [];
  for (const type of types) {
    const pools = ALFWORLD_SPLITS.map((s) =>
      rng.shuffle((bySplit.get(s) ?? []).filter((g) => g.taskType === type)),
    );
    let taken = 0;
    for (let round = 0; taken < GAMES_PER_TASK_TYPE && pools.some((p) => p.length > 0); round++) {
      const pool = pools[round % pools.length] as AlfworldGameEntry[];
      const next = pool.shift();
      if (next) {
        chosen.push(next);
        taken++;
      }
    }
  }
  return chosen;
}

/**
 * The stored walkthrough with noise before its commands: look, inventory, help, `examine` of the
 * held object and of an object lying here, invalid strings, the next command padded or in upper
 * case, and a command admissible later in the walkthrough but not now.
 */
function noisyWalkthrough(
  walkthrough: readonly string[],
  rng: Rng,
): Array<string | ((admissible: readonly string[], held: string | null) => string | null)> {
  const out: Array<
    string | ((admissible: readonly string[], held: string | null) => string | null)
  > = [];
  for (let i = 0; i < walkthrough.length; i++) {
    const command = walkthrough[i] as string;
    const later = walkthrough.slice(i + 1);
    const kind = rng.int(9);
    if (kind === 0) out.push(rng.pick(['look', 'inventory', 'help']));
    else if (kind === 1) out.push((_a, held) => (held ? `examine ${held}` : 'look'));
    else if (kind === 2)
      out.push((admissible) => {
        const lying = admissible
          .map((c) => /^take (.+) from /.exec(c)?.[1])
          .filter((o): o is string => o !== undefined);
        return lying.length > 0 ? `examine ${rng.pick(lying)}` : 'inventory';
      });
    else if (kind === 3)
      out.push(rng.pick(['', 'xyzzy', 'go  to desk 1', 'open the fridge 1', 'take all', '\u00e9']));
    else if (kind === 4) out.push(command.toUpperCase());
    else if (kind === 5)
      out.push((admissible) => {
        const notYet = later.find((c) => !admissible.includes(c));
        return notYet ?? 'look';
      });
    if (kind === 6) out.push(`  ${command}\t`);
    else out.push(command);
  }
  return out;
}

/** Plays one game's scripts on both engines; returns the steps compared and the mismatches. */
async function compareGame(
  entry: AlfworldGameEntry,
  index: number,
  bridge: TextEnv,
): Promise<{ steps: number; mismatches: Mismatch[]; played: Map<string, number> }> {
  const engine = new AlfworldEngine(
    parseAlfworldGame(readFileSync(entry.path, 'utf8'), entry.path),
  );
  const rng = createRng(`engine-vs-upstream ${entry.path}`);
  const name = entry.path.split('json_2.1.1/')[1] ?? entry.path;
  const mismatches: Mismatch[] = [];
  const played = new Map<string, number>();
  let steps = 0;
  const scripts: Array<[string, ReturnType<typeof noisyWalkthrough>]> = [
    ['walkthrough with noise', noisyWalkthrough(engine.game.walkthrough, rng)],
    [
      `${RANDOM_STEPS} random admissible commands`,
      Array.from({ length: RANDOM_STEPS }, () => (admissible: readonly string[]) => {
        // half the time an object action when one is admissible, so that heat, cool, clean,
        // slice and use are played often (a uniform draw mostly picks `go to`); taking a knife
        // counts as one, since slice needs a knife in hand
        const acts = admissible.filter(
          (c) =>
            ACTION_VERBS.includes(c.split(' ')[0] as string) || /^take (butter)?knife /.test(c),
        );
        return acts.length > 0 && rng.bernoulli(0.5) ? rng.pick(acts) : rng.pick(admissible);
      }),
    ],
  ];
  for (const [script, commands] of scripts) {
    const mine = engine.reset();
    const theirs = await bridge.reset({ seed: 0, task: index });
    const check = (
      step: number,
      command: string,
      a: [string, readonly string[], boolean],
      b: [string, readonly string[] | undefined, boolean],
    ): boolean => {
      const fields = [
        ['observation', a[0], b[0]],
        ['admissible', a[1], b[1]],
        ['won', a[2], b[2]],
      ] as const;
      let same = true;
      for (const [field, ours, their] of fields) {
        if (JSON.stringify(ours) !== JSON.stringify(their)) {
          mismatches.push({ game: name, script, step, command, field, ours, theirs: their });
          same = false;
        }
      }
      return same;
    };
    if (
      !check(
        0,
        '(reset)',
        [mine.observation, mine.admissibleCommands, false],
        [theirs.observation.text, theirs.observation.admissibleActions, false],
      )
    )
      continue;
    let held: string | null = null;
    for (const [k, planned] of commands.entries()) {
      const command: string | null =
        typeof planned === 'string' ? planned : planned(engine.admissibleCommands, held);
      if (command === null) continue;
      const a = engine.step(command);
      const b = await bridge.step(command);
      steps++;
      const verb = command.trim().split(' ')[0] as string;
      if (ACTION_VERBS.includes(verb) && a.observation !== 'Nothing happens.')
        played.set(verb, (played.get(verb) ?? 0) + 1);
      if (
        !check(
          k + 1,
          command,
          [a.observation, a.admissibleCommands, a.won],
          [b.observation.text, b.observation.admissibleActions, b.info.won === true],
        )
      )
        break; // the states have parted: later steps would only repeat the difference
      const trimmed: string = command.trim();
      if (/^take .+ from /.test(trimmed) && a.observation.startsWith('You pick up'))
        held = /^take (.+) from /.exec(trimmed)?.[1] ?? null;
      else if (/^(move|put) /.test(trimmed) && !a.observation.startsWith('Nothing')) held = null;
      if (a.won || b.terminated || b.truncated) break;
    }
  }
  return { steps, mismatches, played };
}

describe.skipIf(!hasAlfworld || !hasGames)(
  `the engine and the real ALFWorld engine (${versions || 'not installed'}), step by step`,
  () => {
    it(
      `give the same observations, admissible lists and won flags on ${GAMES_PER_TASK_TYPE} games of each task type from the three splits`,
      async () => {
        const games = await chooseGames();
        const indexOf = new Map<AlfworldSplit, AlfworldGameEntry[]>();
        for (const split of ALFWORLD_SPLITS)
          indexOf.set(split, await listAlfworldGames({ dataDir: defaultAlfworldDataDir(), split }));
        const queue = [...games];
        let steps = 0;
        const mismatches: Mismatch[] = [];
        const played = new Map<string, number>();
        const worker = async (): Promise<void> => {
          const bridges = new Map<AlfworldSplit, TextEnv>();
          try {
            for (let entry = queue.shift(); entry !== undefined; entry = queue.shift()) {
              const split = entry.split;
              let bridge = bridges.get(split);
              if (!bridge) {
                bridge = createAlfworldBridgeEnv({ split, python: PYTHON, maxSteps: 1000 });
                bridges.set(split, bridge);
              }
              const index = (indexOf.get(split) ?? []).findIndex((g) => g.path === entry.path);
              const result = await compareGame(entry, index, bridge);
              steps += result.steps;
              mismatches.push(...result.mismatches);
              for (const [verb, n] of result.played) played.set(verb, (played.get(verb) ?? 0) + n);
            }
          } finally {
            for (const b of bridges.values()) await b.close();
          }
        };
        await Promise.all(Array.from({ length: WORKERS }, worker));
        const splits = [...new Set(games.map((g) => g.split))].sort();
        const types = [...new Set(games.map((g) => g.taskType))].sort();
        console.log(
          `engine vs real ALFWorld (${versions}): compared ${games.length} games (splits ${splits.join(', ')}; task types ${types.join(', ')}), ${steps} steps after the resets (${ACTION_VERBS.map((v) => `${v} ${played.get(v) ?? 0}`).join(', ')}), ${mismatches.length} mismatches`,
        );
        for (const m of mismatches) {
          console.log(
            `MISMATCH ${m.game} [${m.script}] step ${m.step} ${JSON.stringify(m.command)} ${m.field}\n  ours:   ${JSON.stringify(m.ours)}\n  theirs: ${JSON.stringify(m.theirs)}`,
          );
        }
        expect(types).toHaveLength(6);
        expect(splits).toEqual([...ALFWORLD_SPLITS]);
        expect(games.length).toBeGreaterThanOrEqual(60);
        // every object action was compared (slice through the random steps' knives)
        for (const verb of ACTION_VERBS) expect(played.get(verb) ?? 0).toBeGreaterThan(0);
        expect(mismatches).toEqual([]);
      },
      30 * 60_000,
    );

    it(
      'createAlfworldBridgeEnv plays the same episodes as createAlfworldEnv: the same game for a seed, rewards, won, terminated and truncated',
      async () => {
        const ours = createAlfworldEnv({ split: 'valid_seen', maxSteps: 6 });
        const theirs = createAlfworldBridgeEnv({
          split: 'valid_seen',
          python: PYTHON,
          maxSteps: 6,
        });
        try {
          for (const seed of [3, 17]) {
            const a = await ours.reset({ seed });
            const b = await theirs.reset({ seed });
            expect(b.info['gamePath']).toBe(a.info['gamePath']);
            expect(b.observation).toEqual(a.observation);
            const game = parseAlfworldGame(
              readFileSync(String(a.info['gamePath']), 'utf8'),
              String(a.info['gamePath']),
            );
            // the walkthrough to the win when it fits in 6 steps, else cut off by the limit
            for (const command of game.walkthrough) {
              const x = await ours.step(command);
              const y = await theirs.step(command);
              expect([y.observation, y.reward, y.terminated, y.truncated, y.info.won]).toEqual([
                x.observation,
                x.reward,
                x.terminated,
                x.truncated,
                x.info.won,
              ]);
              if (x.terminated || x.truncated) break;
            }
          }
          // a won episode: replay a short walkthrough whole
          const games = await listAlfworldGames({
            dataDir: defaultAlfworldDataDir(),
            split: 'valid_seen',
          });
          const shortest = games
            .map((g, i) => ({
              i,
              w: parseAlfworldGame(readFileSync(g.path, 'utf8'), g.path).walkthrough,
            }))
            .sort((p, q) => p.w.length - q.w.length)[0] as { i: number; w: readonly string[] };
          const full = createAlfworldBridgeEnv({ split: 'valid_seen', python: PYTHON });
          try {
            await full.reset({ seed: 0, task: shortest.i });
            let last = null;
            for (const command of shortest.w) last = await full.step(command);
            expect([last?.reward, last?.terminated, last?.info.won]).toEqual([10, true, true]);
          } finally {
            await full.close();
          }
        } finally {
          await ours.close();
          await theirs.close();
        }
      },
      10 * 60_000,
    );
  },
);
