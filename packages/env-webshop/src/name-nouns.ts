/**
 * The default `nameNouns` provider of the reward's type check (WebShop runs spaCy there, which
 * has no JavaScript equivalent).
 *
 * The reference tags product names with spaCy `en_core_web_sm` and keeps NOUN/PROPN tokens. No
 * precomputed table ships yet (spaCy cannot run here), so the default tags names with the npm
 * tagger `compromise` (MIT, rule-based, no model download) and keeps its Noun/ProperNoun terms
 * (not pronouns or numbers), split at hyphens as spaCy's tokenizer does. It is exact whenever the
 * purchased product is the goal's product (both sides get the same list); for other products
 * `r_type` is approximate. Agreement with spaCy on the 1,000 real names cannot be measured until the
 * products file (and spaCy) are available. A table can be passed with {@link nameNounsFromTable}.
 */
import nlp from 'compromise';

interface TaggedTerm {
  readonly text: string;
  readonly tags: readonly string[];
}

const cache = new Map<string, readonly string[]>();

/** Approximate NOUN/PROPN tokens of a product name, lower-cased, in order (memoised). */
export function approximateNameNouns(name: string): readonly string[] {
  const hit = cache.get(name);
  if (hit) return hit;
  const sentences = nlp(name).json({ terms: { tags: true } }) as { terms: TaggedTerm[] }[];
  const out: string[] = [];
  for (const sentence of sentences) {
    for (const term of sentence.terms) {
      const tags = new Set(term.tags);
      if (!(tags.has('Noun') || tags.has('ProperNoun')) || tags.has('Pronoun') || tags.has('Value'))
        continue;
      for (const part of term.text
        .toLowerCase()
        .replace(/['’]s$/u, '')
        .split('-')) {
        const word = part.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
        if (/\p{L}/u.test(word)) out.push(word);
      }
    }
  }
  if (cache.size > 50_000) cache.clear();
  cache.set(name, out);
  return out;
}

/**
 * A provider from a precomputed table (product name → spaCy NOUN/PROPN tokens, lower-cased), falling
 * back to {@link approximateNameNouns} for names the table lacks.
 */
export function nameNounsFromTable(
  table: Readonly<Record<string, readonly string[]>>,
): (name: string) => readonly string[] {
  const map = new Map(Object.entries(table));
  return (name) => map.get(name) ?? approximateNameNouns(name);
}
