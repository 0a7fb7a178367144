/**
 * thefuzz 0.19 `token_set_ratio` (difflib backend) and WebShop's `normalize_color`, as the reward uses them.
 */
import { sequenceMatcherRatio } from '@agentrl/core/difflib';
import { pyStrRepr, roundHalfEven } from './python-format.ts';

/** A synthetic goal's option as the reference passes it: the `(name, value)` pair of `dict.items()`. */
export type OptionPair = readonly [name: string, value: string];

/** A string or an option pair, as `token_set_ratio` and `normalize_color` receive them. */
export type FuzzInput = string | OptionPair;

/** Python's `str()` of a string or of a 2-tuple of strings. */
export function pyStr(value: FuzzInput): string {
  return typeof value === 'string' ? value : `(${pyStrRepr(value[0])}, ${pyStrRepr(value[1])})`;
}

const LATIN1_HIGH = /[\u0080-\u00ff]/g;
const NON_WORD = /[^\p{L}\p{N}_]/gu;

/** thefuzz `full_process(s, force_ascii=True)`. */
export function fullProcess(s: string): string {
  // fast path for ASCII text: letters, digits and '_' are the only word characters
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 127) return fullProcessUnicode(s);
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95) out += s[i];
    else if (c >= 65 && c <= 90) out += String.fromCharCode(c + 32);
    else out += ' ';
  }
  return out.trim();
}

function fullProcessUnicode(s: string): string {
  return s.replace(LATIN1_HIGH, '').replace(NON_WORD, ' ').toLowerCase().trim();
}

const SURROGATE = /[\ud800-\udfff]/;

/** Python sorts strings by code point; JavaScript's default sort compares UTF-16 units. */
function compareCodePoints(a: string, b: string): number {
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const ca = Array.from(a);
  const cb = Array.from(b);
  const n = Math.min(ca.length, cb.length);
  for (let i = 0; i < n; i++) {
    const x = (ca[i] as string).codePointAt(0) as number;
    const y = (cb[i] as string).codePointAt(0) as number;
    if (x !== y) return x - y;
  }
  return ca.length - cb.length;
}

/** thefuzz `fuzz.ratio` on already processed strings. */
export function fuzzRatio(a: string, b: string): number {
  if (a === b) return 100;
  if (a.length === 0 || b.length === 0) return 0;
  return roundHalfEven(100 * sequenceMatcherRatio(a, b));
}

/** thefuzz 0.19 `fuzz.token_set_ratio(a, b)` with its defaults, difflib backend. */
export function tokenSetRatio(a: FuzzInput, b: FuzzInput): number {
  const p1 = fullProcess(pyStr(a));
  const p2 = fullProcess(pyStr(b));
  if (p1.length === 0 || p2.length === 0) return 0;
  const t1 = new Set(p1.split(/\s+/u).filter((t) => t.length > 0));
  const t2 = new Set(p2.split(/\s+/u).filter((t) => t.length > 0));
  const sorted = (xs: Iterable<string>): string => [...xs].sort(compareCodePoints).join(' ');
  const sect = sorted([...t1].filter((t) => t2.has(t)));
  const only1 = sorted([...t1].filter((t) => !t2.has(t)));
  const only2 = sorted([...t2].filter((t) => !t1.has(t)));
  const c1 = `${sect} ${only1}`.trim();
  const c2 = `${sect} ${only2}`.trim();
  const s = sect.trim();
  return Math.max(fuzzRatio(s, c1), fuzzRatio(s, c2), fuzzRatio(c1, c2));
}

/** The reference's color list, in its order (which decides `navy blue` → `blue`). */
export const COLOR_SET: readonly string[] = [
  'alabaster',
  'apricot',
  'aqua',
  'ash',
  'asphalt',
  'azure',
  'banana',
  'beige',
  'black',
  'blue',
  'blush',
  'bordeaux',
  'bronze',
  'brown',
  'burgundy',
  'camel',
  'camo',
  'caramel',
  'champagne',
  'charcoal',
  'cheetah',
  'chestnut',
  'chocolate',
  'christmas',
  'coffee',
  'cognac',
  'copper',
  'coral',
  'cranberry',
  'cream',
  'crystal',
  'dark',
  'denim',
  'eggplant',
  'elephant',
  'espresso',
  'fuchsia',
  'gold',
  'granite',
  'grape',
  'graphite',
  'grass',
  'gray',
  'green',
  'grey',
  'heather',
  'indigo',
  'ivory',
  'ivy',
  'khaki',
  'lavender',
  'lemon',
  'leopard',
  'light',
  'lilac',
  'lime',
  'magenta',
  'maroon',
  'mauve',
  'merlot',
  'midnight',
  'mint',
  'mocha',
  'multicolor',
  'mushroom',
  'mustard',
  'natural',
  'navy',
  'nude',
  'olive',
  'orange',
  'peach',
  'pewter',
  'pink',
  'plum',
  'purple',
  'rainbow',
  'red',
  'rose',
  'royal',
  'rust',
  'sand',
  'sapphire',
  'seashell',
  'silver',
  'skull',
  'slate',
  'steel',
  'stone',
  'stonewash',
  'sunflower',
  'tan',
  'taupe',
  'teal',
  'tiger',
  'turquoise',
  'violet',
  'walnut',
  'wheat',
  'white',
  'wine',
  'yellow',
];

/**
 * `normalize_color`: the first color (list order) that is `in` the input. For a string that is a
 * substring test; for a synthetic goal's pair it is tuple membership (an exact name or value).
 */
export function normalizeColor(value: FuzzInput): FuzzInput {
  for (const color of COLOR_SET) {
    if (
      typeof value === 'string' ? value.includes(color) : value[0] === color || value[1] === color
    )
      return color;
  }
  return value;
}
