/**
 * The pieces of the WebShop demo: one generated catalogue per run (a shop shared by every env
 * slot, so the catalogue and its search index are built once), the train and held-out env
 * specs, the vocabulary corpus, the tiny decoder with its trainable policy, and the env
 * package's expert as the demonstration policy.
 */
import type { HistoryEntry, Observation, PromptTemplate } from '@agentrl/core';
import {
  createWebshopEnv,
  expert,
  Shop,
  type SyntheticCatalogueOptions,
  splitRange,
  WEBSHOP_METRICS,
  webshopParser,
} from '@agentrl/env-webshop';
import {
  createTinyPolicy,
  type ModelBudget,
  type WordStyle,
  WordTokenizer,
} from '@agentrl/example-demo-kit';
import type { CausalLM } from '@agentrl/model-tfjs';
import type { TfjsTrainablePolicy } from '@agentrl/model-tfjs/policy';
import type { EnvSpec, Expert } from '@agentrl/runner';
import { compactPrompt, expertResponse } from './compact-prompt.ts';

/** Model and optimiser settings of a run (the kit's). */
export type { ModelBudget } from '@agentrl/example-demo-kit';

/**
 * Products in a run's generated catalogue by default (`demoShop`'s; the demo's budget says its
 * own).
 */
export const CATALOGUE_SIZE = 500;

/** How a run's catalogue is generated beside its size: the generator's option ranges. */
export type CatalogueShape = Pick<SyntheticCatalogueOptions, 'optionGroups' | 'optionValues'>;

const shops = new Map<string, Shop>();

/**
 * The catalogue of a run as plain data (what `Shop.create` and the run's `run.json` take): the
 * synthetic catalogue of `seed` with `size` products and the option ranges of `shape` (the
 * generator's defaults where unset).
 */
export function demoCatalogue(
  seed: number,
  size: number,
  shape: CatalogueShape = {},
): { kind: 'synthetic' } & SyntheticCatalogueOptions {
  const { optionGroups, optionValues } = shape;
  return { kind: 'synthetic', size, seed, optionGroups, optionValues };
}

/** The run's shop on {@link demoCatalogue}, built once per process. */
export function demoShop(seed: number, size = CATALOGUE_SIZE, shape: CatalogueShape = {}): Shop {
  const catalogue = demoCatalogue(seed, size, shape);
  const key = JSON.stringify(catalogue);
  let shop = shops.get(key);
  if (!shop) {
    shop = Shop.create({ catalogue });
    shops.set(key, shop);
  }
  return shop;
}

/** Held-out goals of a shop: the test split of worker seed 0 (goal indices 0…n−1). */
export function heldOutGoals(shop: Shop): number {
  return splitRange('test', shop.goalSet(0).goals.length).end;
}

/**
 * The env spec of the demo. Every slot plays worker seed 0, so the train split (goals drawn by
 * the reset seed) and the test split never share a goal; held-out episode g plays test goal g
 * (distinct goals up to the split's size). The prompt is the env's compact prompt unless given.
 */
export function envSpec(
  shop: Shop,
  maxSteps: number,
  split: 'train' | 'test',
  prompt: PromptTemplate = compactPrompt,
): EnvSpec {
  const held = split === 'test' ? heldOutGoals(shop) : 0;
  return {
    create: () => createWebshopEnv({ shop, split, maxSteps, seed: 0 }),
    parser: webshopParser,
    prompt,
    metrics: WEBSHOP_METRICS,
    ...(split === 'test' ? { task: (group: number) => group % held } : {}),
  };
}

/** The env package's expert as a demonstration policy. */
export function expertPolicy(): Expert {
  return expert;
}

/**
 * The vocabulary's corpus: the expert's prompts and responses on every goal of the catalogue
 * (held-out ones too: the vocabulary is not training) and every product's title and ASIN. A
 * results layout other than the compact prompt's shows the same words, so the vocabulary holds
 * for it too.
 */
export async function vocabularyCorpus(shop: Shop, maxSteps: number): Promise<string[]> {
  const corpus = ['task : prev : now : none search results item options details | $ to'];
  for (const p of shop.products) corpus.push(p.asin, p.Title);
  const env = createWebshopEnv({ shop, split: 'all', maxSteps, seed: 0 });
  const goals = shop.goalSet(0).goals.length;
  for (let g = 0; g < goals; g++) {
    const reset = await env.reset({ seed: g, task: g });
    let current: Observation = reset.observation;
    let info = reset.info;
    const history: HistoryEntry[] = [];
    for (let t = 0; t < maxSteps; t++) {
      const context = {
        initialObservation: reset.observation,
        history,
        current,
        stepIndex: t,
        info,
      };
      const action = expert(context);
      corpus.push(compactPrompt(context), expertResponse(action));
      const step = await env.step(action);
      history.push({ observation: current, action });
      current = step.observation;
      info = step.info;
      if (step.terminated || step.truncated) break;
    }
  }
  await env.close();
  return corpus;
}

/** Model and optimiser settings of a run (a subset of the demo's budget). */
/**
 * How the shop's text splits into words: the response tags are single tokens, and decoding writes
 * no space around the characters WebShop's actions write without them (`[`, `]`, `(`, `)`, `-`,
 * `/`), so every action the shop offers decodes to itself: `click [ x - large ]` →
 * `click[x-large]`, `search [ dark chocolate ]` → `search[dark chocolate]`.
 */
export const SHOP_WORDS: WordStyle = {
  tags: ['think', 'action'],
  glueBefore: ['[', ']', ')', '-', '/'],
  glueAfter: ['[', '(', '-', '/'],
};

/** What {@link createTinyAgent} builds. */
export interface TinyAgent {
  readonly tokenizer: WordTokenizer;
  readonly model: CausalLM;
  readonly policy: TfjsTrainablePolicy;
}

/**
 * The word-level tokenizer of the shop, a fresh seeded Qwen2-architecture decoder (tied head,
 * SwiGLU 3×) and its trainable policy: AdamW, PPO clip 0.2, dual clip 3, no entropy bonus (the
 * ALFWorld demo's recipe).
 */
export async function createTinyAgent(
  shop: Shop,
  budget: ModelBudget,
  seed: number,
): Promise<TinyAgent> {
  const tokenizer = WordTokenizer.fromCorpus(
    await vocabularyCorpus(shop, budget.maxTurns),
    SHOP_WORDS,
  );
  const { model, policy } = await createTinyPolicy(tokenizer, budget, seed, 512);
  return { tokenizer, model, policy };
}
