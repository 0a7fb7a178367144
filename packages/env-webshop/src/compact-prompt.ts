/**
 * A short prompt for tiny models (the `compact` prompt of `webshop/text-v1`): the instruction, the
 * previous action and the current page in a few words, about 60 words a step. The results page
 * shows its first five entries as `title $price asin` (the ASIN after the words that describe it,
 * so a causal model has read them when it reaches the ASIN; `asin title $price` is the other
 * layout, see {@link CompactResultsLayout}); an item page its title, price, option
 * values and the options clicked since it was opened (the page itself does not show which are
 * selected, and without them the prompt repeats itself after each option click). The paper's
 * template (`webshopPrompt`) lists every clickable ASIN a second time and adds about 120 words of
 * instructions: up to 2,300 tokens of a tiny model's word vocabulary, which a CPU run cannot
 * afford. The env, its parser, its anchors and its rewards are the same whichever prompt is used.
 */
import { InvalidInputError, type PromptTemplate } from '@agentrl/core';
import { observationParts } from './expert.ts';

/** The page's fixed buttons: none of them is an option value. */
const BUTTONS = new Set([
  'click[back to search]',
  'click[< prev]',
  'click[next >]',
  'click[description]',
  'click[features]',
  'click[reviews]',
  'click[attributes]',
  'click[buy now]',
  'click[search]',
]);

/** Results the compact prompt shows of a page (the expert buys one of the first few nearly always). */
export const COMPACT_RESULTS_SHOWN = 5;

const ASIN_CLICK = /^click\[[a-z0-9]{10}\]$/;

/** A title without its brand (the first word) and trailing number: `Orchard Classic Shirt 173` → `Classic Shirt`. */
function shortTitle(title: string): string {
  return title.replace(/\s+\d+$/, '').replace(/^\S+\s+/, '');
}

/** Prices in whole dollars, rounded down: `$82.12 to $109.62` → `$82 to $109`. */
function shortPrice(price: string): string {
  return price.replace(/\$(\d+)(?:\.\d+)?/g, '$$$1');
}

/**
 * The option values clicked since the current product was opened, oldest first, read from the
 * agent's own past actions (back to the product click, a search, or a return to the results).
 */
export function chosenOptions(pastActions: readonly string[]): string[] {
  const chosen: string[] = [];
  for (let i = pastActions.length - 1; i >= 0; i--) {
    const action = pastActions[i] as string;
    if (!action.startsWith('click[') || ASIN_CLICK.test(action)) break;
    if (action === 'click[< prev]' || action === 'click[back to search]') break;
    if (BUTTONS.has(action)) continue;
    const value = action.slice('click['.length, -1);
    if (!chosen.includes(value)) chosen.unshift(value);
  }
  return chosen;
}

/**
 * How a results entry is laid out: `title-first` (`title $price asin`, the default) or
 * `asin-first` (`asin title $price`, the layout before title-first became the default). A causal
 * model reads an entry left to right, so with the ASIN last its position has seen the title the
 * goal is matched against: a tiny decoder's warm start copied the right ASIN more often that way
 * (`examples/webshop-gigpo` README).
 */
export type CompactResultsLayout = 'title-first' | 'asin-first';

/** The layouts, the default first. */
const LAYOUTS: readonly CompactResultsLayout[] = ['title-first', 'asin-first'];
const DEFAULT_LAYOUT = LAYOUTS[0] as CompactResultsLayout;

/** The current page in a few words, from its anchor text and admissible actions. */
export function compactPage(
  anchor: string,
  admissible: readonly string[],
  chosen: readonly string[] = [],
  layout: CompactResultsLayout = DEFAULT_LAYOUT,
): string {
  const parts = observationParts(anchor);
  const buyable = admissible.includes('click[buy now]');
  if (admissible.includes('search[<your query>]') && !buyable) return 'search';
  if (parts[1]?.startsWith('Page ')) {
    const clickable = new Set(admissible);
    const entries: string[] = [];
    for (let i = 0; i + 2 < parts.length && entries.length < COMPACT_RESULTS_SHOWN; i++) {
      const asin = (parts[i] as string).toLowerCase();
      if (!/^[a-z0-9]{10}$/.test(asin) || !clickable.has(`click[${asin}]`)) continue;
      const title = shortTitle(parts[i + 1] as string);
      const price = shortPrice(parts[i + 2] as string);
      entries.push(
        layout === 'title-first' ? `${title} ${price} ${asin}` : `${asin} ${title} ${price}`,
      );
      i += 2;
    }
    return `results ${parts[1].split(' ')[1]} : ${entries.join(' | ')}`;
  }
  if (buyable) {
    const values = admissible
      .filter((a) => a.startsWith('click[') && !BUTTONS.has(a))
      .map((a) => a.slice('click['.length, -1));
    const rating = parts.indexOf('Rating: N.A.');
    const title = rating >= 2 ? shortTitle(parts[rating - 2] as string) : '';
    const price =
      rating >= 1 ? shortPrice((parts[rating - 1] as string).replace('Price: ', '')) : '';
    const list = (items: readonly string[]) => (items.length > 0 ? items.join(' | ') : 'none');
    return `item ${title} ${price} : options ${list(values)} : chosen ${list(chosen)}`;
  }
  return 'details';
}

/** Options of {@link createCompactPrompt}. */
export interface CompactPromptOptions {
  /** How a results entry is laid out (default `title-first`). */
  readonly results?: CompactResultsLayout;
}

/** A compact prompt with the given layout (see the module comment). */
export function createCompactPrompt(options: CompactPromptOptions = {}): PromptTemplate {
  const layout = options.results ?? DEFAULT_LAYOUT;
  if (!LAYOUTS.includes(layout)) {
    throw new InvalidInputError(
      `compact prompt: results must be ${LAYOUTS.map((l) => `'${l}'`).join(' or ')}, got ${JSON.stringify(layout)}`,
      { details: { field: 'results', value: layout } },
    );
  }
  return ({ history, current, info }) => {
    const task = typeof info.task === 'string' ? info.task : '';
    const last = history.at(-1);
    const page = compactPage(
      current.anchor,
      current.admissibleActions ?? [],
      chosenOptions(history.map((h) => h.action)),
      layout,
    );
    return [`task : ${task}`, `prev : ${last ? last.action : 'none'}`, `now : ${page}`].join('\n');
  };
}

/** The `compact` prompt of the WebShop envs: {@link createCompactPrompt}'s default layout. */
export const webshopCompactPrompt: PromptTemplate = createCompactPrompt();
