/**
 * Prompt-prefix reuse across the sequences of one llama.cpp context. Each context sequence keeps
 * the tokens it last evaluated in its KV cache (node-llama-cpp tracks them as `contextTokens`).
 * A new prompt need not re-read a prefix that is already there: either in the sequence it is
 * given (its own previous prompt and response), or in another prompt of the same call, whose
 * cache is copied over once that prompt is evaluated. In agent RL both are common: the members of
 * a group start from the same game, so their first prompts are identical, and the prompts of one
 * episode repeat the task line turn after turn.
 *
 * {@link planPrefixReuse} is the plan, pure and without llama.cpp; the engine carries it out.
 */

/** How one call's prompts reuse cached prefixes. Arrays are indexed by prompt. */
export interface PrefixPlan {
  /** The sequence each prompt runs on (a permutation of the first `prompts.length` sequences). */
  readonly sequence: readonly number[];
  /**
   * The prompt whose evaluated prefix this one copies (an earlier prompt of the call), or -1
   * when it keeps the prefix its own sequence holds.
   */
  readonly parent: readonly number[];
  /** Tokens of the prompt that need not be evaluated: kept in place or copied from `parent`. */
  readonly reused: readonly number[];
  /**
   * The round in which the prompt's prefix is evaluated: 0 for prompts without a parent, one
   * more than the parent's round otherwise (a parent is evaluated before its children copy it).
   */
  readonly round: readonly number[];
}

/** Length of the common prefix of `a` and `b`. */
export function commonPrefixLength(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * Plans one call: `prompts` (at most `held.length` of them) go to the sequences whose `held`
 * tokens (what each sequence's cache holds now) share their longest prefixes, greedily, longest
 * first; a prompt then copies an earlier prompt's prefix instead when that is longer. A prompt
 * reuses at most its length - 1 tokens: its last token is evaluated with the first sampling step,
 * which needs its logits.
 */
export function planPrefixReuse(
  prompts: readonly (readonly number[])[],
  held: readonly (readonly number[])[],
): PrefixPlan {
  const n = prompts.length;
  if (n > held.length) {
    throw new RangeError(`planPrefixReuse: ${n} prompts for ${held.length} sequences`);
  }
  const cap = (i: number) => Math.max(0, (prompts[i] as readonly number[]).length - 1);
  // Greedy assignment, longest shared prefix first; ties go to the lower prompt, then sequence.
  const pairs: [number, number, number][] = [];
  for (let i = 0; i < n; i++) {
    for (let s = 0; s < held.length; s++) {
      const l = Math.min(
        commonPrefixLength(prompts[i] as readonly number[], held[s] as readonly number[]),
        cap(i),
      );
      if (l > 0) pairs.push([l, i, s]);
    }
  }
  pairs.sort((a, b) => b[0] - a[0] || a[1] - b[1] || a[2] - b[2]);
  const sequence: number[] = new Array(n).fill(-1);
  const own: number[] = new Array(n).fill(0);
  const taken = new Set<number>();
  for (const [l, i, s] of pairs) {
    if (sequence[i] !== -1 || taken.has(s)) continue;
    sequence[i] = s;
    own[i] = l;
    taken.add(s);
  }
  let free = 0;
  for (let i = 0; i < n; i++) {
    if (sequence[i] !== -1) continue;
    while (taken.has(free)) free++;
    sequence[i] = free;
    taken.add(free);
  }
  const parent: number[] = new Array(n).fill(-1);
  const reused: number[] = own.slice();
  const round: number[] = new Array(n).fill(0);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < i; j++) {
      // What prompt j's sequence holds after its round: its prompt but the last token.
      const l = Math.min(
        commonPrefixLength(prompts[i] as readonly number[], prompts[j] as readonly number[]),
        cap(i),
        cap(j),
      );
      if (l > (reused[i] as number)) {
        reused[i] = l;
        parent[i] = j;
      }
    }
    if (parent[i] !== -1) round[i] = (round[parent[i] as number] as number) + 1;
  }
  return { sequence, parent, reused, round };
}
