/**
 * The shop: catalogue, search engine, per-seed goal sets, and the per-session state machine of
 * WebShop's `WebAgentTextEnv` (its transitions, no-ops and quirks). Shared by the direct env,
 * the browser env and the local site.
 */
import { InvalidInputError } from '@agentrl/core';
import type { Product } from './catalogue.ts';
import { type ConvertedPage, convertPage } from './convert.ts';
import { type CatalogueSource, loadCatalogue } from './data.ts';
import { buildGoalSet, type Goal, type GoalSet, type GoalSource } from './goals.ts';
import { approximateNameNouns } from './name-nouns.ts';
import { type ChosenOptions, type PageView, renderPage, type SubPage } from './pages.ts';
import { getReward, type NameNouns, type RewardBreakdown } from './reward.ts';
import { SearchEngine } from './search.ts';

/** Results per page (`PRODUCT_WINDOW`). */
export const PRODUCT_WINDOW = 10;

/** Options of {@link Shop.create}. */
export interface ShopOptions {
  /** Where the products come from (default: the files in the default data folder, `resolveDataDir`). */
  readonly catalogue?: CatalogueSource;
  /** Synthetic (verl-agent's default) or human goals. */
  readonly goals?: GoalSource;
  /** NOUN/PROPN tokens of product names for the reward's type check (default: approximate). */
  readonly nameNouns?: NameNouns;
  /** Show the Attributes button on item pages (upstream `show_attrs`, off in verl-agent). */
  readonly showAttributes?: boolean;
}

/** A catalogue with its search engine; goal sets are built per worker seed and cached. */
export class Shop {
  readonly products: readonly Product[];
  readonly byAsin: ReadonlyMap<string, Product>;
  readonly engine: SearchEngine;
  readonly goalSource: GoalSource;
  readonly nameNouns: NameNouns;
  readonly showAttributes: boolean;
  readonly #goalSets = new Map<number, GoalSet>();
  readonly #searchCache = new Map<string, readonly string[]>();

  constructor(products: readonly Product[], options: Omit<ShopOptions, 'catalogue'> = {}) {
    this.products = products;
    this.byAsin = new Map(products.map((p) => [p.asin, p]));
    this.engine = new SearchEngine(products);
    this.goalSource = options.goals ?? 'synthetic';
    this.nameNouns = options.nameNouns ?? approximateNameNouns;
    this.showAttributes = options.showAttributes ?? false;
  }

  /** Loads the catalogue and indexes it. */
  static create(options: ShopOptions = {}): Shop {
    return new Shop(loadCatalogue(options.catalogue ?? { kind: 'data' }), options);
  }

  /** The goals and paid prices of a worker seeded with `seed` (as verl-agent seeds each worker). */
  goalSet(seed: number): GoalSet {
    let set = this.#goalSets.get(seed);
    if (!set) {
      set = buildGoalSet(this.products, this.goalSource, seed);
      if (set.goals.length === 0)
        throw new InvalidInputError(
          `the catalogue yields no ${this.goalSource} goals: use a catalogue with instructions (or goals: "synthetic")`,
          { details: { field: 'goals', value: this.goalSource } },
        );
      if (this.#goalSets.size > 64) this.#goalSets.clear();
      this.#goalSets.set(seed, set);
    }
    return set;
  }

  /** Top hits for the query string `keywords.join(' ')` (cached: search is deterministic). */
  search(keywords: readonly string[]): readonly string[] {
    const query = keywords.join(' ');
    let hits = this.#searchCache.get(query);
    if (!hits) {
      hits = this.engine.search(query);
      if (this.#searchCache.size > 10_000) this.#searchCache.clear();
      this.#searchCache.set(query, hits);
    }
    return hits;
  }

  /** The reward of buying `asin` with `options` for `goal`, at the worker's paid price. */
  reward(
    asin: string,
    options: ChosenOptions,
    goal: Goal,
    prices: ReadonlyMap<string, number>,
  ): RewardBreakdown {
    const product = this.byAsin.get(asin);
    if (!product)
      throw new InvalidInputError(`unknown ASIN "${asin}"`, {
        details: { field: 'asin', value: asin },
      });
    return getReward(
      product,
      goal,
      prices.get(asin) ?? 100,
      options.map(([, v]) => v),
      { nameNouns: this.nameNouns },
    );
  }
}

/** Where a session is. */
export type ShopState =
  | { readonly kind: 'search' }
  | { readonly kind: 'results' }
  | { readonly kind: 'item' }
  | { readonly kind: 'sub'; readonly subPage: SubPage }
  | { readonly kind: 'done'; readonly reward: RewardBreakdown };

/** `re.match(r'(.+)\[(.+)\]', action)`: the name and argument of an action, or no argument. */
export function parseAction(action: string): { name: string; arg: string | null } {
  const nl = action.indexOf('\n');
  const line = nl === -1 ? action : action.slice(0, nl);
  const close = line.lastIndexOf(']');
  // group 1 is greedy: the last '[' (not at 0) that leaves at least one character before a ']'
  const open = close >= 3 ? line.lastIndexOf('[', close - 2) : -1;
  if (open >= 1) return { name: line.slice(0, open), arg: line.slice(open + 1, close) };
  return { name: action, arg: null };
}

const SUB_PAGES: Record<string, SubPage> = {
  description: 'Description',
  features: 'Features',
  reviews: 'Reviews',
  attributes: 'Attributes',
};

/** What a step did. */
export interface SessionStepResult {
  readonly reward: number;
  readonly done: boolean;
  /** Which rule applied, for tests and the browser driver. */
  readonly effect:
    | 'search'
    | 'buy'
    | 'back'
    | 'next'
    | 'prev-results'
    | 'prev-item'
    | 'prev-sub'
    | 'sub-page'
    | 'product'
    | 'option'
    | 'item'
    | 'noop';
}

/** One shopping session: the goal, the session variables, the current page. */
export class ShopSession {
  readonly shop: Shop;
  readonly sessionId: string;
  readonly goal: Goal;
  readonly prices: ReadonlyMap<string, number>;
  #state: ShopState = { kind: 'search' };
  #keywords: readonly string[] = [];
  #page = 1;
  #asin: string | null = null;
  #options: [string, string][] = [];
  /** The reference's URL marker: which page `get_page_name` would see (keywords included). */
  #refUrl = '';
  #page_: ConvertedPage;
  #html: string;

  constructor(shop: Shop, sessionId: string, goal: Goal, prices: ReadonlyMap<string, number>) {
    this.shop = shop;
    this.sessionId = sessionId;
    this.goal = goal;
    this.prices = prices;
    this.#html = '';
    this.#page_ = { text: '', hasSearchBar: false, clickables: [], targets: new Map() };
    this.#toSearch();
  }

  get state(): ShopState {
    return this.#state;
  }
  /** The current page's HTML. */
  get html(): string {
    return this.#html;
  }
  /** The current page converted to text and clickables. */
  get page(): ConvertedPage {
    return this.#page_;
  }
  get keywords(): readonly string[] {
    return this.#keywords;
  }
  get pageNumber(): number {
    return this.#page;
  }
  get asin(): string | null {
    return this.#asin;
  }
  get options(): ChosenOptions {
    return this.#options;
  }

  /** The page view of the current state (what the site renders at the current URL). */
  view(): PageView {
    const base = { sessionId: this.sessionId, instruction: this.goal.instructionText };
    const s = this.#state;
    if (s.kind === 'search') return { kind: 'search', ...base };
    if (s.kind === 'done')
      return {
        kind: 'done',
        sessionId: this.sessionId,
        asin: this.#asin ?? '',
        options: this.#options,
        reward: s.reward.total,
      };
    if (s.kind === 'results') {
      const hits = this.shop.search(this.#keywords);
      const start = (this.#page - 1) * PRODUCT_WINDOW;
      const products = hits
        .slice(Math.max(0, start), Math.max(0, start + PRODUCT_WINDOW))
        .map((a) => this.shop.byAsin.get(a) as Product);
      return {
        kind: 'results',
        ...base,
        keywords: this.#keywords,
        page: this.#page,
        total: hits.length,
        products,
      };
    }
    const product = this.shop.byAsin.get(this.#asin ?? '') as Product;
    const item = {
      ...base,
      keywords: this.#keywords,
      page: this.#page,
      product,
      options: this.#options,
    };
    if (s.kind === 'item')
      return { kind: 'item', ...item, showAttributes: this.shop.showAttributes };
    return { kind: 'sub', ...item, subPage: s.subPage };
  }

  #render(): void {
    this.#html = renderPage(this.view());
    this.#page_ = convertPage(this.#html);
  }

  #toSearch(): void {
    this.#state = { kind: 'search' };
    this.#keywords = [];
    this.#page = 1;
    this.#asin = null;
    this.#options = [];
    this.#refUrl = 'index';
    this.#render();
  }

  #toResults(keywords: readonly string[], page: number): void {
    this.#state = { kind: 'results' };
    this.#keywords = keywords;
    this.#page = page;
    this.#asin = null;
    this.#options = [];
    this.#refUrl = `search_results ${keywords.join('+')}`;
    this.#render();
  }

  #toItem(): void {
    this.#state = { kind: 'item' };
    this.#refUrl = `item_page ${this.#keywords.join('+')} ${this.#options.flat().join(' ')}`;
    this.#render();
  }

  #pageName(): string | null {
    for (const name of ['search_results', 'item_page', 'item_sub_page', 'done'])
      if (this.#refUrl.includes(name)) return name;
    return null;
  }

  /** Applies one action as WebShop's text env does. Never throws for any action text. */
  step(action: string): SessionStepResult {
    if (this.#state.kind === 'done') return { reward: 0, done: true, effect: 'noop' };
    const { name, arg: rawArg } = parseAction(action);
    const arg = rawArg === null ? null : rawArg.toLowerCase();
    if (name === 'search' && arg !== null && arg !== '') {
      this.#toResults(arg.split(' '), 1);
      return { reward: 0, done: false, effect: 'search' };
    }
    if (name !== 'click' || arg === null || arg === 'search' || !this.#page_.targets.has(arg))
      return { reward: 0, done: false, effect: 'noop' };
    const pageName = this.#pageName();
    if (arg === 'buy now') {
      const reward = this.shop.reward(this.#asin ?? '', this.#options, this.goal, this.prices);
      this.#state = { kind: 'done', reward };
      this.#refUrl = 'done';
      this.#render();
      return { reward: reward.total, done: true, effect: 'buy' };
    }
    if (arg === 'back to search') {
      this.#toSearch();
      return { reward: 0, done: false, effect: 'back' };
    }
    if (arg === 'next >' && pageName === 'search_results') {
      this.#toResults(this.#keywords, this.#page + 1);
      return { reward: 0, done: false, effect: 'next' };
    }
    if (arg === '< prev' && pageName === 'search_results') {
      this.#toResults(this.#keywords, this.#page - 1);
      return { reward: 0, done: false, effect: 'prev-results' };
    }
    if (arg === '< prev' && pageName === 'item_sub_page') {
      this.#toItem();
      return { reward: 0, done: false, effect: 'prev-sub' };
    }
    if (arg === '< prev' && pageName === 'item_page') {
      this.#toResults(this.#keywords, this.#page);
      return { reward: 0, done: false, effect: 'prev-item' };
    }
    const sub = SUB_PAGES[arg];
    if (sub !== undefined) {
      this.#state = { kind: 'sub', subPage: sub };
      this.#refUrl = `item_sub_page ${this.#keywords.join('+')} ${this.#options.flat().join(' ')}`;
      this.#render();
      return { reward: 0, done: false, effect: 'sub-page' };
    }
    const target = this.#page_.targets.get(arg);
    let effect: SessionStepResult['effect'] = 'item';
    if (target?.kind === 'link') {
      this.#asin = arg.toUpperCase();
      effect = 'product';
    } else if (target?.kind === 'radio' && target.name !== undefined) {
      const key = target.name.toLowerCase();
      const at = this.#options.findIndex(([k]) => k === key);
      if (at >= 0) this.#options[at] = [key, arg];
      else this.#options.push([key, arg]);
      effect = 'option';
    }
    if (this.#asin === null || !this.shop.byAsin.has(this.#asin))
      return { reward: 0, done: false, effect: 'noop' };
    this.#toItem();
    return { reward: 0, done: false, effect };
  }
}
