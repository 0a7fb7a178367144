/**
 * The three workloads of the advantage benchmark (ALFWorld-shaped, search-shaped and a large
 * scaling batch), generated deterministically from a seed. Each is a {@link StepBatch} in
 * trajectory-major order (the order the rollout loop produces, as verl-agent's).
 */
import type { StepBatch } from '@agentrl/core';
import { createRng, type Rng } from '@agentrl/core';

/** A named batch and the GiGPO options it is run with. */
export interface Workload {
  name: string;
  description: string;
  batch: StepBatch;
  options: {
    mode: 'mean_norm' | 'mean_std_norm';
    gamma: number;
    stepAdvantageWeight: number;
    invalidActionPenalty: number;
    epsilon: number;
    similarityThreshold?: number;
  };
}

/** The GiGPO options every workload runs with (the search workload adds a similarity threshold). */
const GIGPO_OPTIONS: Workload['options'] = {
  mode: 'mean_std_norm',
  gamma: 0.95,
  stepAdvantageWeight: 1,
  invalidActionPenalty: 0.1,
  epsilon: 1e-6,
};

const WORDS = (
  'you are in the middle of a room looking quickly around see cabinet countertop drawer ' +
  'fridge microwave shelf sinkbasin stoveburner toaster coffeemachine garbagecan on it ' +
  'nothing apple bread butterknife cup dishsponge egg fork kettle knife ladle lettuce mug ' +
  'pan peppershaker plate pot potato saltshaker soapbottle spatula spoon tomato open closed'
).split(' ');

function sentence(rng: Rng, length: number): string {
  let s = '';
  while (s.length < length)
    s +=
      (s === '' ? '' : ' ') +
      WORDS[rng.int(WORDS.length)] +
      (rng.bernoulli(0.2) ? ` ${rng.int(9) + 1}` : '');
  return s.slice(0, length);
}

interface Columns {
  groupIds: string[];
  trajectoryIds: string[];
  stepIndices: number[];
  anchors: string[];
  envRewards: number[];
  actionValid: boolean[];
}

function columns(): Columns {
  return {
    groupIds: [],
    trajectoryIds: [],
    stepIndices: [],
    anchors: [],
    envRewards: [],
    actionValid: [],
  };
}

/**
 * Sparse-reward rollouts: each trajectory wins (reward 10 on its last step) with probability
 * `winRate`; about 5% of actions are invalid. `anchorOf(group, trajectory, step)` gives the anchor.
 */
function rollouts(
  rng: Rng,
  groups: number,
  groupSize: number,
  minSteps: number,
  maxSteps: number,
  anchorOf: (g: number, t: number, k: number) => string,
): Columns {
  const c = columns();
  for (let g = 0; g < groups; g++) {
    for (let t = 0; t < groupSize; t++) {
      const steps = rng.intBetween(minSteps, maxSteps);
      const won = rng.bernoulli(0.4);
      for (let k = 0; k < steps; k++) {
        c.groupIds.push(`group-${g}`);
        c.trajectoryIds.push(`traj-${g}-${t}`);
        c.stepIndices.push(k);
        c.anchors.push(anchorOf(g, t, k));
        c.envRewards.push(won && k === steps - 1 ? 10 : 0);
        c.actionValid.push(!rng.bernoulli(0.05));
      }
    }
  }
  return c;
}

/** ALFWorld-sized: 16 groups × 8 trajectories of up to 50 steps, 60 distinct ~120-char anchors per group, exact grouping. */
export function alfworldWorkload(seed = 1): Workload {
  const rng = createRng(seed);
  const pools = Array.from({ length: 16 }, () =>
    Array.from({ length: 60 }, () => sentence(rng, 120)),
  );
  const batch = rollouts(rng, 16, 8, 8, 50, (g, _t, k) =>
    // Every member starts from the same state; later states are drawn from the group's pool.
    k === 0 ? pools[g]![0]! : pools[g]![rng.int(60)]!,
  );
  return {
    name: 'alfworld-exact',
    description:
      '16 groups × 8 trajectories × 8–50 steps, 60 distinct ~120-char anchors per group, exact grouping',
    batch,
    options: GIGPO_OPTIONS,
  };
}

/** Applies `edits` random single-character substitutions. */
function mutate(rng: Rng, s: string, edits: number): string {
  const chars = s.split('');
  for (let e = 0; e < edits; e++)
    chars[rng.int(chars.length)] = 'abcdefghijklmnopqrstuvwxyz '[rng.int(27)]!;
  return chars.join('');
}

/**
 * Search-sized: 256 groups × 5 trajectories × 1–4 steps, 300-char anchors with near-duplicates
 * (a question plus retrieved text, edited in a few places), similarity threshold 0.9.
 */
export function searchWorkload(seed = 2): Workload {
  const rng = createRng(seed);
  const bases = Array.from({ length: 256 }, () =>
    Array.from({ length: 4 }, () => sentence(rng, 300)),
  );
  const batch = rollouts(rng, 256, 5, 1, 4, (g, _t, k) => {
    const base = bases[g]![Math.min(k, 3)]!;
    // Step 0 is the shared question; later steps are near-duplicates or unrelated pages.
    if (k === 0) return base;
    const r = rng.next();
    if (r < 0.5) return mutate(rng, base, rng.intBetween(1, 12));
    if (r < 0.8) return bases[g]![rng.int(4)]!;
    return sentence(rng, 300);
  });
  return {
    name: 'search-similarity-0.9',
    description:
      '256 groups × 5 trajectories × 1–4 steps, 300-char anchors with near-duplicates, similarity threshold 0.9',
    batch,
    options: { ...GIGPO_OPTIONS, similarityThreshold: 0.9 },
  };
}

/** Scale: 2,500 groups × 8 trajectories × 50 steps = 1,000,000 step samples, 64-char anchors. */
export function scaleWorkload(seed = 3): Workload {
  const rng = createRng(seed);
  const pools = Array.from({ length: 2500 }, () =>
    Array.from({ length: 60 }, () => sentence(rng, 64)),
  );
  const batch = rollouts(rng, 2500, 8, 50, 50, (g, _t, k) =>
    k === 0 ? pools[g]![0]! : pools[g]![rng.int(60)]!,
  );
  return {
    name: 'scale-1M',
    description:
      '2,500 groups × 8 trajectories × 50 steps = 1,000,000 step samples, 64-char anchors, exact grouping',
    batch,
    options: GIGPO_OPTIONS,
  };
}
