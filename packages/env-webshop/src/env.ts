/**
 * `createWebshopEnv`: WebShop as a `TextEnv`, as verl-agent runs it. One episode logic, two ways to produce the
 * page: direct (render + convert in process) and browser (Chromium via Puppeteer, see
 * `browser-env.ts`); both go through the same state machine and converter.
 */
import {
  createRng,
  type EnvInfo,
  EpisodeLifecycle,
  InvalidInputError,
  type Observation,
  type OptionSpec,
  type ResetOptions,
  type ResetResult,
  type StepResult,
  type TextEnv,
} from '@agentrl/core';
import { dataDirDefault } from '@agentrl/core/data';
import type { ConvertedPage } from './convert.ts';
import { type CatalogueSource, resolveDataDir } from './data.ts';
import { type GoalSource, type Split, splitRange } from './goals.ts';
import {
  admissibleActions,
  buildWebshopPrompt,
  extractTask,
  formatObservation,
  type WebshopHistoryEntry,
} from './prompts.ts';
import type { NameNouns } from './reward.ts';
import { type SessionStepResult, Shop, type ShopOptions, ShopSession } from './shop.ts';
import { SYNTHETIC_CATALOGUE_DEFAULTS } from './synthetic.ts';

/** Produces the page the agent sees: in process, or through a browser. */
export interface PageDriver {
  /** Shows the session's start page and returns it converted. */
  open(session: ShopSession): Promise<ConvertedPage>;
  /** Performs `action` (already applied to `session`, with `result`) and returns the new page. */
  perform(
    session: ShopSession,
    action: string,
    result: SessionStepResult,
    before: ConvertedPage,
  ): Promise<ConvertedPage>;
  /** Ends the current session's use of the driver (the episode failed or the env closed). */
  release(): Promise<void>;
}

/** The in-process driver: the session's own rendering. */
export const directDriver: PageDriver = {
  open: async (session) => session.page,
  perform: async (session) => session.page,
  release: async () => {},
};

/**
 * The keys of a catalogue source given as plain data (every kind's, so a misspelt key fails naming
 * the closest one); `dataDir` is a path, resolved against a run config's folder.
 */
export const CATALOGUE_OPTIONS = {
  kind: { description: "'data' (the WebShop files), 'synthetic' (generated) or 'products'" },
  dataDir: {
    path: true,
    description: "kind 'data': the data folder",
    default: dataDirDefault('webshop'),
  },
  humanInstructions: { description: "kind 'data': read the human instruction file too" },
  size: {
    description: "kind 'synthetic': number of products",
    default: SYNTHETIC_CATALOGUE_DEFAULTS.size,
  },
  seed: {
    description: "kind 'synthetic': seed of the generator",
    default: SYNTHETIC_CATALOGUE_DEFAULTS.seed,
  },
  instructedFraction: {
    description: "kind 'synthetic': fraction of products with an instruction",
    default: SYNTHETIC_CATALOGUE_DEFAULTS.instructedFraction,
  },
  optionGroups: {
    description:
      "kind 'synthetic': [fewest, most] option groups per product (one goal per combination)",
    default: SYNTHETIC_CATALOGUE_DEFAULTS.optionGroups,
  },
  optionValues: {
    description: "kind 'synthetic': [fewest, most] values per option group",
    default: SYNTHETIC_CATALOGUE_DEFAULTS.optionValues,
  },
  products: { description: "kind 'products': the product records" },
} as const satisfies { readonly [K in KeysOfUnion<CatalogueSource>]: OptionSpec };

/** Every key of any member of a union. */
type KeysOfUnion<T> = T extends unknown ? keyof T : never;

/** The keys of a shop given as plain data ({@link ShopOptions}). */
export const SHOP_OPTIONS = {
  catalogue: {
    description: 'where the products come from',
    default: "kind 'data' in the default data folder",
    options: CATALOGUE_OPTIONS,
  },
  goals: { description: "'synthetic' (verl-agent's) or 'human' goals", default: 'synthetic' },
  nameNouns: { description: "noun provider of the reward's type check" },
  showAttributes: { description: 'show the Attributes button on item pages', default: false },
} as const satisfies { readonly [K in keyof Required<ShopOptions>]: OptionSpec };

/**
 * The options `webshop/text-v1` accepts, with their defaults (the registration declares them, so a
 * misspelt key fails naming the closest one). Every key of {@link WebshopEnvOptions}.
 */
export const WEBSHOP_ENV_OPTIONS = {
  shop: {
    description:
      'the shop: a Shop, or its options { catalogue, goals, showAttributes } (envs with equal options share one)',
    options: SHOP_OPTIONS,
  },
  catalogue: {
    description: 'where the products come from when no shop is given',
    default: "kind 'data' in the default data folder",
    options: CATALOGUE_OPTIONS,
  },
  dataDir: { path: true, description: "shorthand for catalogue: { kind: 'data', dataDir }" },
  goals: { description: "'synthetic' (verl-agent's) or 'human' goals", default: 'synthetic' },
  nameNouns: { description: "noun provider of the reward's type check" },
  split: { description: 'goal indices reset draws from', default: 'train' },
  testSize: { description: 'size of the test split', default: 500 },
  seed: {
    description:
      'worker seed: goal permutation and price bounds (verl-agent: env.seed + group index)',
    default: 0,
  },
  maxSteps: { description: 'steps before truncation (verl-agent: 15)', default: 15 },
  historyLength: { description: 'past steps shown in the prompt', default: 2 },
  id: { description: 'the env id reported in errors and logs', default: 'webshop/text-v1' },
} as const satisfies { readonly [K in keyof Required<WebshopEnvOptions>]: OptionSpec };

/** Options of {@link createWebshopEnv}. */
export interface WebshopEnvOptions {
  /**
   * The shop: a `Shop` to share between envs, or its options as plain data (`{ catalogue,
   * goals, showAttributes }`, what a config file can say). Envs given equal plain-data options
   * (these or `catalogue` / `dataDir` / `goals`) in one process share one shop: the catalogue and
   * its search index are built once.
   */
  readonly shop?: Shop | ShopOptions;
  /** Where the products come from when no shop is given (default: the files in the default data folder, `resolveDataDir`). */
  readonly catalogue?: CatalogueSource;
  /** Shorthand for `catalogue: { kind: 'data', dataDir }`. */
  readonly dataDir?: string;
  /** Synthetic (default, as verl-agent) or human goals. */
  readonly goals?: GoalSource;
  /** Noun provider of the reward's type check. */
  readonly nameNouns?: NameNouns;
  /** Which goal indices `reset` draws from (default `train`). */
  readonly split?: Split;
  /** Size of the test split (default 500). */
  readonly testSize?: number;
  /** The worker seed: goal permutation and price bounds (verl-agent: env.seed + group index). */
  readonly seed?: number;
  /** Steps before truncation (default 15). */
  readonly maxSteps?: number;
  /** Past steps shown in the prompt (default 2). */
  readonly historyLength?: number;
  /** The env id reported in errors and logs. */
  readonly id?: string;
}

const SEARCH_PAGE_ACTIONS = ['search[<your query>]', 'click[search]'] as const;

/** Builds the shop of an env from its options. */
export function shopFromOptions(options: WebshopEnvOptions): Shop {
  if (options.shop instanceof Shop) return options.shop;
  const shopOptions: ShopOptions = options.shop ?? {
    catalogue: options.catalogue ?? {
      kind: 'data',
      dataDir: options.dataDir,
      humanInstructions: options.goals === 'human',
    },
    ...(options.goals === undefined ? {} : { goals: options.goals }),
    ...(options.nameNouns === undefined ? {} : { nameNouns: options.nameNouns }),
  };
  // Plain-data options (what a config file can say) name the same shop in every env slot of the
  // process: one catalogue and search index, not one per slot.
  if (shopOptions.nameNouns !== undefined || shopOptions.catalogue?.kind === 'products')
    return Shop.create(shopOptions);
  const key = JSON.stringify([shopOptions, resolveDataDir()]);
  let shop = sharedShops.get(key);
  if (shop === undefined) {
    shop = Shop.create(shopOptions);
    sharedShops.set(key, shop);
    if (sharedShops.size > SHARED_SHOPS)
      sharedShops.delete(sharedShops.keys().next().value as string);
  }
  return shop;
}

/** Shops built from plain-data options, by those options (the few most recent). */
const sharedShops = new Map<string, Shop>();
const SHARED_SHOPS = 4;

let sessionCounter = 0;

/** The episode logic shared by both modes. */
export class WebshopEnv implements TextEnv {
  readonly id: string;
  readonly shop: Shop;
  readonly #driver: PageDriver;
  readonly #lifecycle: EpisodeLifecycle;
  readonly #seed: number;
  readonly #split: Split;
  readonly #testSize: number;
  readonly #maxSteps: number;
  readonly #historyLength: number;
  #session: ShopSession | null = null;
  #page: ConvertedPage | null = null;
  #task = '';
  #goalIndex = -1;
  #steps = 0;
  #history: WebshopHistoryEntry[] = [];
  #current: Observation = { text: '', anchor: '' };

  constructor(options: WebshopEnvOptions, driver: PageDriver, shop: Shop) {
    this.id = options.id ?? WEBSHOP_ENV_OPTIONS.id.default;
    this.shop = shop;
    this.#driver = driver;
    this.#lifecycle = new EpisodeLifecycle(this.id);
    this.#seed = options.seed ?? WEBSHOP_ENV_OPTIONS.seed.default;
    this.#split = options.split ?? WEBSHOP_ENV_OPTIONS.split.default;
    this.#testSize = options.testSize ?? WEBSHOP_ENV_OPTIONS.testSize.default;
    this.#maxSteps = options.maxSteps ?? WEBSHOP_ENV_OPTIONS.maxSteps.default;
    this.#historyLength = options.historyLength ?? WEBSHOP_ENV_OPTIONS.historyLength.default;
    if (!Number.isInteger(this.#maxSteps) || this.#maxSteps < 1)
      throw new InvalidInputError(
        `maxSteps = ${options.maxSteps} must be a positive integer (verl-agent uses 15)`,
        {
          details: { field: 'maxSteps', value: options.maxSteps },
        },
      );
  }

  /** The goal index a reset plays. */
  #goalIndexFor(options: ResetOptions, goalCount: number): number {
    const { start, end } = splitRange(this.#split, goalCount, this.#testSize);
    const task = options.task;
    if (task !== undefined) {
      const n =
        typeof task === 'number'
          ? task
          : Number(/^(?:fixed_)?(\d+)$/.exec(task)?.[1] ?? Number.NaN);
      if (!Number.isInteger(n) || n < 0 || n >= goalCount)
        throw new InvalidInputError(
          `task ${JSON.stringify(task)} is not a goal index: use an integer in [0, ${goalCount}) or "fixed_<n>"`,
          { details: { field: 'task', value: task } },
        );
      return n;
    }
    if (end <= start)
      throw new InvalidInputError(
        `split "${this.#split}" is empty for ${goalCount} goals: use split "all" or a larger catalogue`,
        {
          details: { field: 'split', value: this.#split },
        },
      );
    return start + createRng(options.seed).int(end - start);
  }

  #observation(page: ConvertedPage, admissible: readonly string[]): Observation {
    const anchor = formatObservation(page.text, this.#task);
    const text = buildWebshopPrompt({
      task: this.#task,
      observation: anchor,
      admissibleActions: admissible,
      history: this.#history,
      historyLength: this.#historyLength,
    });
    return { text, anchor, admissibleActions: admissible };
  }

  #info(extra: Record<string, unknown>): EnvInfo {
    const goal = this.#session?.goal;
    return {
      won: false,
      taskScore: 0,
      goalIndex: this.#goalIndex,
      goalAsin: goal?.asin ?? null,
      task: this.#task,
      ...extra,
    };
  }

  async reset(options: ResetOptions): Promise<ResetResult> {
    this.#lifecycle.beginReset();
    const { goals, prices } = this.shop.goalSet(this.#seed);
    this.#goalIndex = this.#goalIndexFor(options, goals.length);
    const goal = goals[this.#goalIndex];
    if (!goal)
      throw new InvalidInputError(`goal ${this.#goalIndex} does not exist`, {
        details: { field: 'task' },
      });
    sessionCounter += 1;
    this.#session = new ShopSession(
      this.shop,
      `s${sessionCounter}_${this.#goalIndex}`,
      goal,
      prices,
    );
    const page = await this.#driver.open(this.#session);
    this.#page = page;
    this.#task = extractTask(page.text);
    this.#steps = 0;
    this.#history = [];
    this.#current = this.#observation(page, admissibleActions(page));
    this.#lifecycle.endReset();
    return { observation: this.#current, info: this.#info({}) };
  }

  async step(action: string): Promise<StepResult> {
    this.#lifecycle.beginStep();
    const session = this.#session as ShopSession;
    const before = this.#page as ConvertedPage;
    const text = typeof action === 'string' ? action : String(action);
    let page: ConvertedPage;
    let result: SessionStepResult;
    try {
      result = session.step(text);
      page = await this.#driver.perform(session, text, result, before);
    } catch (error) {
      // a failed page (browser crash, timeout) ends the episode; the error says why
      this.#lifecycle.endStep({ terminated: false, truncated: true });
      await this.#driver.release();
      throw error;
    }
    this.#page = page;
    this.#steps += 1;
    this.#history.push({ observation: this.#current.anchor, action: text });
    const done = result.done;
    const truncated = !done && this.#steps >= this.#maxSteps;
    const taskScore = done ? result.reward : 0;
    const won = done && taskScore === 1;
    // verl-agent's worker resets itself after Buy Now: the actions returned are the new search page's
    const admissible = done ? [...SEARCH_PAGE_ACTIONS] : admissibleActions(page);
    this.#current = this.#observation(page, admissible);
    const state = session.state;
    const stepResult: StepResult = {
      observation: this.#current,
      reward: won ? 10 : 0,
      terminated: done,
      truncated,
      info: this.#info({
        won,
        taskScore,
        purchasedAsin: done ? session.asin : null,
        rewardParts: state.kind === 'done' ? state.reward : null,
        effect: result.effect,
      }),
    };
    this.#lifecycle.endStep(stepResult);
    if (done || truncated) await this.#driver.release();
    return stepResult;
  }

  async close(): Promise<void> {
    if (this.#lifecycle.close()) await this.#driver.release();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** Builds a direct-mode (browserless) WebShop env. Either mode: `createWebshopEnv`. */
export function createDirectWebshopEnv(options: WebshopEnvOptions = {}): WebshopEnv {
  return new WebshopEnv(options, directDriver, shopFromOptions(options));
}
