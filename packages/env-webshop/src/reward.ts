/**
 * WebShop's reward `get_reward` with every part: type, attributes, options, price.
 */
import { type FuzzInput, normalizeColor, tokenSetRatio } from './fuzz.ts';

/** The purchased product's fields the reward reads. */
export interface RewardProduct {
  readonly name: string;
  readonly Title: string;
  readonly query: string;
  readonly product_category: string;
  readonly Attributes: readonly string[];
  readonly BulletPoints: readonly string[];
  readonly Description: string;
}

/** The goal's fields the reward reads. */
export interface RewardGoal {
  readonly query: string;
  readonly product_category: string;
  readonly name: string;
  readonly attributes: readonly string[];
  /** Human goals: option strings; synthetic goals: `(name, value)` pairs. */
  readonly goalOptions: readonly FuzzInput[];
  readonly priceUpper: number;
}

/** The NOUN/PROPN tokens (lower-cased, in order) of a product name, as spaCy tags them. */
export type NameNouns = (name: string) => readonly string[];

/** The reward and its parts, named as the reference's verbose info. */
export interface RewardBreakdown {
  readonly total: number;
  readonly r_type: number;
  readonly query_match: boolean;
  readonly category_match: boolean;
  readonly title_score: number;
  /** null when the goal lists no attributes (the reference divides by zero there). */
  readonly r_att: number | null;
  readonly num_attr_matches: number;
  /** null when the goal has no options. */
  readonly r_option: number | null;
  readonly num_option_matches: number;
  readonly r_price: boolean;
}

function categoryParts(s: string): Set<string> {
  return new Set(s.split('›').map((x) => x.trim()));
}

/** `get_type_reward`. */
export function typeReward(
  purchased: RewardProduct,
  goal: RewardGoal,
  nameNouns: NameNouns,
): Pick<RewardBreakdown, 'r_type' | 'query_match' | 'category_match' | 'title_score'> {
  const query_match = purchased.query === goal.query;
  const pc = categoryParts(purchased.product_category);
  let common = 0;
  for (const x of categoryParts(goal.product_category)) if (pc.has(x)) common++;
  const category_match = common >= 2;
  const p = new Set(nameNouns(purchased.name));
  const d = nameNouns(goal.name);
  let title_score: number;
  if (d.length === 0) title_score = 0.2;
  else {
    let n = 0;
    for (const x of new Set(d)) if (p.has(x)) n++;
    title_score = n / d.length;
  }
  let r_type = 1.0;
  if (!(query_match || category_match || title_score > 0.2)) r_type = 0.5;
  if (title_score < 0.1) r_type = 0.1;
  if (title_score === 0) r_type = 0.0;
  return { r_type, query_match, category_match, title_score };
}

/** `get_attribute_reward`: the number of goal attributes the product has. */
export function attributeMatches(
  purchased: RewardProduct,
  goalAttributes: readonly string[],
): number {
  let texts: string[] | null = null;
  let n = 0;
  for (const g of goalAttributes) {
    if (purchased.Attributes.some((a) => tokenSetRatio(a, g) > 85)) {
      n++;
      continue;
    }
    texts ??= [
      purchased.Title.toLowerCase(),
      purchased.BulletPoints.join(' ').toLowerCase(),
      purchased.Description.toLowerCase(),
    ];
    // reference quirk: the goal attribute itself is not lower-cased
    if (texts.some((t) => t.includes(g))) n++;
  }
  return n;
}

/** `get_option_reward`: the number of goal options some chosen option matches. */
export function optionMatches(
  chosen: readonly string[],
  goalOptions: readonly FuzzInput[],
): number {
  const p = chosen.map(normalizeColor);
  let n = 0;
  for (const g of goalOptions.map(normalizeColor)) if (p.some((x) => tokenSetRatio(x, g) > 85)) n++;
  return n;
}

/**
 * The chosen options: their values in the session's insertion order, or name → value as a Map, a
 * list of pairs, or a plain object (whose integer-like keys JavaScript reorders: prefer the others).
 */
export type ChosenOptionValues =
  | readonly string[]
  | readonly (readonly [string, string])[]
  | ReadonlyMap<string, string>
  | Readonly<Record<string, string>>;

function optionValues(options: ChosenOptionValues): string[] {
  if (options instanceof Map) return [...options.values()];
  if (Array.isArray(options))
    return options.map((o: string | readonly [string, string]) =>
      typeof o === 'string' ? o : o[1],
    );
  return Object.values(options as Readonly<Record<string, string>>);
}

/**
 * `get_reward(purchased, goal, price, options)`. `total` is computed in the reference's operation
 * order (bit-exact).
 */
export function getReward(
  purchased: RewardProduct,
  goal: RewardGoal,
  price: number,
  chosen: ChosenOptionValues,
  config: { nameNouns: NameNouns },
): RewardBreakdown {
  const options = optionValues(chosen);
  const type = typeReward(purchased, goal, config.nameNouns);
  const r_price = price <= goal.priceUpper;
  const num_attr_matches = attributeMatches(purchased, goal.attributes);
  const num_option_matches = optionMatches(options, goal.goalOptions);
  let total =
    (num_attr_matches + num_option_matches + (r_price ? 1 : 0)) /
    (goal.attributes.length + goal.goalOptions.length + 1);
  total *= type.r_type;
  return {
    total,
    ...type,
    r_att: goal.attributes.length === 0 ? null : num_attr_matches / goal.attributes.length,
    num_attr_matches,
    r_option: goal.goalOptions.length === 0 ? null : num_option_matches / goal.goalOptions.length,
    num_option_matches,
    r_price,
  };
}
