/**
 * Goals (WebShop's `web_agent_site/engine/goal.py`): paid prices, synthetic and human goals with their price bounds, the per-seed
 * permutation and the index splits, reproducing CPython's `random` stream exactly.
 */
import type { Product } from './catalogue.ts';
import type { FuzzInput, OptionPair } from './fuzz.ts';
import { PyRandom } from './py-random.ts';

/** A task: which product to buy, with which options and attributes, under which price. */
export interface Goal {
  readonly asin: string;
  readonly category: string;
  readonly query: string;
  readonly name: string;
  readonly product_category: string;
  readonly instructionText: string;
  readonly attributes: readonly string[];
  readonly priceUpper: number;
  /** Synthetic goals: `(name, value)` pairs in sorted-name order; human goals: option strings. */
  readonly goalOptions: readonly FuzzInput[];
  readonly kind: 'synthetic' | 'human';
  readonly weight: number;
}

/** `PRICE_RANGE = [10.0, 20.0, ..., 990.0]`. */
export const PRICE_RANGE: readonly number[] = Array.from({ length: 99 }, (_, i) => 10 * (i + 1));

/** Which goals to build: verl-agent's default is synthetic. */
export type GoalSource = 'synthetic' | 'human';

/** Draws the paid price of every product, in product order (Python `random`, as the engine). */
export function drawProductPrices(
  products: readonly Product[],
  random: PyRandom,
): Map<string, number> {
  const prices = new Map<string, number>();
  for (const p of products) {
    const [a, b] = p.pricing;
    prices.set(p.asin, a === undefined ? 100 : b === undefined ? a : random.uniform(a, b));
  }
  return prices;
}

function drawPriceBound(
  price: number,
  random: PyRandom,
): { priceUpper: number; priceText: string } {
  const cands = PRICE_RANGE.filter((x) => x > price).slice(0, 4);
  if (cands.length < 2) return { priceUpper: 1000000, priceText: '' };
  const priceUpper = Math.max(...random.sample(cands, 2));
  return { priceUpper, priceText: `, and price lower than ${priceUpper.toFixed(2)} dollars` };
}

function compareCodePoints(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function cartesian(lists: readonly (readonly string[])[]): string[][] {
  let out: string[][] = [[]];
  for (const list of lists) {
    const next: string[][] = [];
    for (const prefix of out) for (const v of list) next.push([...prefix, v]);
    out = next;
  }
  return out;
}

/** Synthetic goals (verl-agent's default): one price bound per product, one goal per option combination. */
export function syntheticGoals(
  products: readonly Product[],
  prices: ReadonlyMap<string, number>,
  random: PyRandom,
): Goal[] {
  const goals: Goal[] = [];
  for (const p of products) {
    if (p.instructionText === null) continue;
    const { priceUpper, priceText } = drawPriceBound(prices.get(p.asin) ?? 100, random);
    // Python's sorted() on str compares code points; for strings without surrogates that is
    // JavaScript's < order, and option names are short ASCII in practice.
    const groups = [...p.options].sort((x, y) => compareCodePoints(x.name, y.name));
    for (const combination of cartesian(groups.map((g) => g.values))) {
      const pairs: OptionPair[] = combination.map((v, i) => [
        (groups[i] as { name: string }).name,
        v,
      ]);
      // a dict keyed by sorted names: a repeated name keeps its first slot, last value
      const byName = new Map<string, string>();
      for (const [n, v] of pairs) byName.set(n, v);
      const goalOptions: OptionPair[] = [...byName];
      const optionText =
        goalOptions.length > 0
          ? ` with ${goalOptions.map(([n, v]) => `${n}: ${v}`).join(', and ')}`
          : '';
      goals.push({
        asin: p.asin,
        category: p.category,
        query: p.query,
        name: p.Title,
        product_category: p.product_category,
        instructionText: `${p.instructionText}${optionText}${priceText}`,
        attributes: p.instructionAttributes ?? [],
        priceUpper,
        goalOptions,
        kind: 'synthetic',
        weight: 0,
      });
    }
  }
  const counts = new Map<string, number>();
  for (const g of goals) for (const a of g.attributes) counts.set(a, (counts.get(a) ?? 0) + 1);
  return goals.map((g) => ({
    ...g,
    weight:
      g.attributes.length === 0
        ? 0
        : g.attributes.reduce((s, a) => s + 1 / (counts.get(a) ?? 1), 0) / g.attributes.length,
  }));
}

function stripDots(s: string): string {
  return s.replace(/^\.+|\.+$/g, '');
}

/** Human goals: one per instruction with attributes, one price bound each. */
export function humanGoals(
  products: readonly Product[],
  prices: ReadonlyMap<string, number>,
  random: PyRandom,
): Goal[] {
  const goals: Goal[] = [];
  for (const p of products) {
    for (const ins of p.humanInstructions ?? []) {
      if (ins.instructionAttributes.length === 0) continue;
      const { priceUpper, priceText } = drawPriceBound(prices.get(p.asin) ?? 100, random);
      goals.push({
        asin: p.asin,
        category: p.category,
        query: p.query,
        name: p.name,
        product_category: p.product_category,
        instructionText: stripDots(ins.instruction) + priceText,
        attributes: ins.instructionAttributes,
        priceUpper,
        goalOptions: ins.instructionOptions,
        kind: 'human',
        weight: 1,
      });
    }
  }
  return goals;
}

/** The goal list and paid prices one worker sees for `seed` (`random.seed(seed)`, prices, goals, shuffle). */
export interface GoalSet {
  readonly seed: number;
  readonly prices: ReadonlyMap<string, number>;
  /** Goals in the worker's shuffled order: goal index i is `goals[i]`. */
  readonly goals: readonly Goal[];
}

/** `random.seed(seed)` → prices → goal bounds → `random.seed(seed)` → `shuffle(goals)`. */
export function buildGoalSet(
  products: readonly Product[],
  source: GoalSource,
  seed: number,
): GoalSet {
  const random = new PyRandom(seed);
  const prices = drawProductPrices(products, random);
  const goals =
    source === 'human'
      ? humanGoals(products, prices, random)
      : syntheticGoals(products, prices, random);
  random.seed(seed);
  random.shuffle(goals);
  return { seed, prices, goals };
}

/** Which indices a split covers. */
export type Split = 'test' | 'train' | 'all';

/**
 * Index range of a split: test = 0..testSize-1, train = testSize..n-1 (verl-agent: testSize 500).
 * Small synthetic catalogues have fewer goals: the test size is then capped at half of them.
 */
export function splitRange(
  split: Split,
  goalCount: number,
  testSize = 500,
): { start: number; end: number } {
  const t = Math.min(testSize, Math.floor(goalCount / 2));
  if (split === 'test') return { start: 0, end: t };
  if (split === 'train') return { start: t, end: goalCount };
  return { start: 0, end: goalCount };
}
