/**
 * The few Python 3 string operations the reference relies on, reproduced exactly: `str.split()`
 * / `str.strip()` whitespace, `string.punctuation`, Unicode-aware `\b`, and `json.dumps` with
 * `ensure_ascii=True` for one string. JavaScript's `\s`, `\b` and `JSON.stringify` differ from
 * all of these (the answer normalisation and the `<information>` text need Python's).
 */
import { UNICODE_14_UNASSIGNED_CLASS_BODY } from './unicode14.ts';

/**
 * Python's whitespace (`Py_UNICODE_ISSPACE`): category Zs plus bidi classes WS, B, S. Differs
 * from JavaScript's `\s`: includes `\x1c`–`\x1f` and `\x85`, excludes `\ufeff`.
 */
const PY_WHITESPACE =
  '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

const PY_SPLIT = new RegExp(`[${PY_WHITESPACE}]+`, 'u');
const PY_SPACE_CODES = new Set<number>([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001,
  0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f,
  0x205f, 0x3000,
]);

/** Whether `ch` (one code point) is whitespace for Python's `str.isspace()`. */
export function isPythonSpace(ch: string): boolean {
  return ch.length === 1 && PY_SPACE_CODES.has(ch.charCodeAt(0));
}

/** Python's `s.split()` with no argument: split on runs of whitespace, drop empty ends. */
export function pythonSplit(text: string): string[] {
  const parts = text.split(PY_SPLIT);
  const out: string[] = [];
  for (const part of parts) if (part !== '') out.push(part);
  return out;
}

/** Python's `s.strip()` with no argument. */
export function pythonStrip(text: string): string {
  // A loop rather than a `\s+$` regex, which backtracks quadratically on long inner runs.
  let start = 0;
  let end = text.length;
  while (start < end && isPythonSpace(text[start] as string)) start += 1;
  while (end > start && isPythonSpace(text[end - 1] as string)) end -= 1;
  return text.slice(start, end);
}

/** Python's `string.punctuation`: exactly these 32 ASCII characters. */
export const PYTHON_PUNCTUATION = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';

const PUNCTUATION_SET = new Set(PYTHON_PUNCTUATION);

/** Deletes every character of `string.punctuation` (other punctuation stays, as in Python). */
export function removePythonPunctuation(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (!PUNCTUATION_SET.has(ch)) out += ch;
  }
  return out;
}

/**
 * A word character for Python's `re` on `str` patterns: `str.isalnum()` or `_`. Letters of any
 * script and numeric characters (combining marks are not), as Python 3.11 knows them: code
 * points unassigned in its Unicode 14 are excluded. A class for regexes with the `v` flag.
 */
export const PY_WORD_CLASS = `[[\\p{L}\\p{N}_]--[${UNICODE_14_UNASSIGNED_CLASS_BODY}]]`;

const UNASSIGNED = new RegExp(`[${UNICODE_14_UNASSIGNED_CLASS_BODY}]+`, 'gu');

/**
 * Python 3.11's `str.lower()`: full Unicode lower-casing (final sigma and `İ` → `i̇` included),
 * leaving code points that Unicode 14 had not assigned unchanged.
 */
export function pythonLower(text: string): string {
  UNASSIGNED.lastIndex = 0;
  if (!UNASSIGNED.test(text)) return text.toLowerCase();
  UNASSIGNED.lastIndex = 0;
  let out = '';
  let from = 0;
  for (const match of text.matchAll(UNASSIGNED)) {
    out += text.slice(from, match.index).toLowerCase() + match[0];
    from = match.index + match[0].length;
  }
  return out + text.slice(from).toLowerCase();
}

/** Python `json.dumps(text)` with the default `ensure_ascii=True`: quotes included. */
export function pythonJsonString(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    switch (code) {
      case 0x22:
        out += '\\"';
        continue;
      case 0x5c:
        out += '\\\\';
        continue;
      case 0x0a:
        out += '\\n';
        continue;
      case 0x0d:
        out += '\\r';
        continue;
      case 0x09:
        out += '\\t';
        continue;
      case 0x08:
        out += '\\b';
        continue;
      case 0x0c:
        out += '\\f';
        continue;
      default:
    }
    // ensure_ascii: anything outside printable ASCII (controls, DEL, non-ASCII) becomes a \u escape with four hex digits
    // in lower-case hex; astral code points are already two UTF-16 units, i.e. a surrogate pair.
    if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += text[i];
  }
  return `${out}"`;
}
