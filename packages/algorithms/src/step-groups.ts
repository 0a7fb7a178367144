/**
 * Anchor-state grouping (paper Eq. 6): step groups are formed inside each task group,
 * by exact anchor equality or by greedy first-fit clustering on difflib's ratio.
 */

import {
  Alphabet,
  type EncodedSequence,
  encodeSequence,
  histogramOf,
  lengthBound,
  matchingCharacters,
  multisetBound,
  type PreparedSequence,
  prepareSequence,
  ratioOf,
  type SymbolHistogram,
} from '@agentrl/core/difflib';
import type { IndexedBatch } from './batch.ts';

/** Step-group labels (0, 1, 2, … by first appearance in batch order) and their count. */
export interface StepGroups {
  labels: Int32Array;
  count: number;
}

/**
 * Exact grouping: rows of one task group with identical anchor strings (code-point
 * equality, no normalisation) share a step group. Independent of row order up to renaming.
 */
export function exactStepGroups(ib: IndexedBatch): StepGroups {
  const { n, groupIndex, groupCount } = ib;
  const anchors = ib.batch.anchors;
  const labels = new Int32Array(n);
  let count = 0;
  if (ib.groupsContiguous) {
    // Groups one after another (the rollout layout): one map, emptied at each group boundary,
    // so its tables die young instead of piling up until the end of the call.
    const seen = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      if (i > 0 && groupIndex[i] !== groupIndex[i - 1]) seen.clear();
      const anchor = anchors[i] as string;
      let label = seen.get(anchor);
      if (label === undefined) {
        label = count++;
        seen.set(anchor, label);
      }
      labels[i] = label;
    }
    return { labels, count };
  }
  const perGroup = new Array<Map<string, number> | undefined>(groupCount);
  for (let i = 0; i < n; i++) {
    const g = groupIndex[i] as number;
    let seen = perGroup[g];
    if (seen === undefined) {
      seen = new Map();
      perGroup[g] = seen;
    }
    const anchor = anchors[i] as string;
    let label = seen.get(anchor);
    if (label === undefined) {
      label = count++;
      seen.set(anchor, label);
    }
    labels[i] = label;
  }
  return { labels, count };
}

interface Cluster {
  readonly rep: string;
  readonly encoded: EncodedSequence;
  histogram: SymbolHistogram | undefined;
  prepared: PreparedSequence | undefined;
  readonly label: number;
}

interface GroupState {
  readonly clusters: Cluster[];
  /** Anchor → label of anchors already placed (an anchor always lands in the same cluster). */
  readonly placed: Map<string, number>;
}

/**
 * Similarity grouping, exactly the reference's greedy clustering (`enable_similarity`): per task group, in
 * batch order, a row joins the first cluster (in creation order) whose representative — its first
 * member, never changed — has `ratio(anchor, rep) ≥ θ`, else founds a new cluster.
 *
 * Speed without changing any result:
 * - an anchor seen before in the same task group is placed where it was placed then (the clusters
 *   before its cluster are unchanged and still fail; its cluster still passes, ratio(x, x) = 1);
 * - a comparison is skipped when an exact upper bound of the ratio is already below θ: CPython's
 *   `real_quick_ratio` (lengths) and `quick_ratio` (multiset intersection), evaluated with the
 *   same float64 expression 2·bound/T, so `bound < θ` implies `ratio < θ`;
 * - each representative is indexed once (b2j, autojunk) and reused for every comparison.
 */
export function similarityStepGroups(ib: IndexedBatch, threshold: number): StepGroups {
  const { n, groupIndex, groupCount } = ib;
  const anchors = ib.batch.anchors;
  const labels = new Int32Array(n);
  const states = new Array<GroupState | undefined>(groupCount);
  const alphabet = new Alphabet();
  let count = 0;
  for (let i = 0; i < n; i++) {
    const g = groupIndex[i] as number;
    let state = states[g];
    if (state === undefined) {
      state = { clusters: [], placed: new Map() };
      states[g] = state;
    }
    const anchor = anchors[i] as string;
    const known = state.placed.get(anchor);
    if (known !== undefined) {
      labels[i] = known;
      continue;
    }
    const a = encodeSequence(alphabet.encode(anchor), alphabet.size);
    let label = -1;
    for (const cluster of state.clusters) {
      if (similarEnough(anchor, a, cluster, threshold)) {
        label = cluster.label;
        break;
      }
    }
    if (label < 0) {
      label = count++;
      state.clusters.push({
        rep: anchor,
        encoded: a,
        histogram: undefined,
        prepared: undefined,
        label,
      });
    }
    state.placed.set(anchor, label);
    labels[i] = label;
  }
  return { labels, count };
}

/** ratio(anchor, rep) ≥ θ, with the new anchor as `a` and the representative as `b` (as the reference). */
function similarEnough(
  anchor: string,
  a: EncodedSequence,
  cluster: Cluster,
  threshold: number,
): boolean {
  if (anchor === cluster.rep) return true;
  const b = cluster.encoded;
  const total = a.seq.length + b.seq.length;
  if (ratioOf(lengthBound(a, b) / 2, total) < threshold) return false;
  cluster.histogram ??= histogramOf(b);
  if (ratioOf(multisetBound(a, cluster.histogram), total) < threshold) return false;
  cluster.prepared ??= prepareSequence(b, true, cluster.histogram);
  const needed = matchesNeeded(total, threshold);
  return ratioOf(matchingCharacters(a.seq, cluster.prepared, needed), total) >= threshold;
}

/**
 * The least integer M with ratioOf(M, T) ≥ θ (T + 1 when none), found with the same float64
 * expression the decision uses, so that `M ≥ needed ⇔ ratio ≥ θ` holds exactly.
 */
function matchesNeeded(total: number, threshold: number): number {
  let m = Math.max(0, Math.floor((threshold * total) / 2) - 1);
  while (m <= total && ratioOf(m, total) < threshold) m++;
  return m;
}
