/**
 * Suggestions for mistyped names (command-line flags, option keys): the closest candidate by
 * edit distance, so that an error can say what the user most likely meant.
 */

/**
 * Edit distance with adjacent transpositions (optimal string alignment): insertions, deletions,
 * substitutions and swaps of two neighbouring characters each cost 1.
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array(rows * cols).fill(0);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        (d[(i - 1) * cols + j] as number) + 1,
        (d[i * cols + j - 1] as number) + 1,
        (d[(i - 1) * cols + j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (d[(i - 2) * cols + j - 2] as number) + 1);
      }
      d[i * cols + j] = best;
    }
  }
  return d[rows * cols - 1] as number;
}

/**
 * The candidate closest to `name` (case-insensitive), or `undefined` when none is close enough
 * to be a plausible typo: at most a third of the name's length in edits (at least 1, at most 3),
 * or a candidate that starts with a name of three or more characters. Ties go to the earlier
 * candidate.
 */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  const wanted = name.toLowerCase();
  const limit = Math.min(3, Math.max(1, Math.floor(wanted.length / 3)));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const lower = candidate.toLowerCase();
    let distance = editDistance(wanted, lower);
    if (distance > limit && wanted.length >= 3 && lower.startsWith(wanted)) distance = limit;
    if (distance <= limit && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}
