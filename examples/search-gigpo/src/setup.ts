/**
 * The pieces of the search demo: the generated knowledge base behind the env (training
 * questions for rollouts and demonstrations, held-out ones for validation), the vocabulary
 * corpus, the tiny decoder with its trainable policy, and the env package's expert.
 */

import { ConfigError, Rng } from '@agentrl/core';
import {
  createSearchEnvFromOptions,
  expert,
  generateSearchKb,
  SEARCH_METRICS,
  type SearchKbOptions,
  searchParser,
  taskTypeOf,
} from '@agentrl/env-search';
import {
  createTinyPolicy,
  type ModelBudget,
  type WordStyle,
  WordTokenizer,
} from '@agentrl/example-demo-kit';
import type { CausalLM } from '@agentrl/model-tfjs';
import type { TfjsTrainablePolicy } from '@agentrl/model-tfjs/policy';
import type { EnvSpec, Expert } from '@agentrl/runner';
import { compactPrompt } from './compact-prompt.ts';

/** Model and optimiser settings of a run (the kit's). */
export type { ModelBudget } from '@agentrl/example-demo-kit';

/** The knowledge base of a run: generated from the run's seed. */
export function knowledgeBase(seed: number): SearchKbOptions {
  return { seed };
}

/** Env settings of the demo: 4 turns as the paper; `topK` passages per search. */
export interface SearchEnvBudget {
  readonly maxTurns: number;
  readonly topK: number;
}

/**
 * The training questions split in two disjoint parts: `demo` (indices into the training split)
 * for the warm start's demonstrations, `rl` for GiGPO's rollouts, `demoShare` of them (rounded)
 * in the first, chosen by a seeded shuffle. A `demoShare` of 1 gives both phases every question.
 */
export function trainingParts(seed: number, demoShare: number): { demo: number[]; rl: number[] } {
  if (!(demoShare > 0 && demoShare <= 1))
    throw new ConfigError(
      `demoShare is ${demoShare}: use a share of the training questions in (0, 1], e.g. 0.5 (1: the warm start and RL both use all of them)`,
      { details: { field: 'demoShare', value: demoShare } },
    );
  const n = generateSearchKb(knowledgeBase(seed)).train.length;
  const order = Rng.fromSeed(`search-demo-parts:${seed}`).permutation(n);
  if (demoShare === 1) return { demo: order, rl: order };
  const cut = Math.min(n - 1, Math.max(1, Math.round(n * demoShare)));
  return { demo: order.slice(0, cut), rl: order.slice(cut) };
}

/**
 * Which questions an env spec asks: `'test'` asks the held-out ones in order (episode g asks
 * held-out question g), so an evaluation of up to all of them never repeats a question; `'train'`
 * draws training questions by the reset seed, from all of them or, with `questions`, from those
 * indices: `'cycle'` asks them in turn (demonstrations), `'draw'` draws one per group and
 * rollout with a seeded random choice (rollouts).
 */
export interface TrainQuestions {
  readonly indices: readonly number[];
  readonly order: 'cycle' | 'draw';
}

/**
 * The env spec of one split (see {@link TrainQuestions} for which questions it asks). Success per
 * task type is exact match per data source.
 */
export function envSpec(
  seed: number,
  split: 'train' | 'test',
  budget: SearchEnvBudget,
  questions?: TrainQuestions,
): EnvSpec {
  const generator = knowledgeBase(seed);
  const heldOut = split === 'test' ? generateSearchKb(generator).test.length : 0;
  const indices = questions?.indices ?? [];
  const trainTask =
    questions === undefined
      ? undefined
      : questions.order === 'cycle'
        ? (group: number) => indices[group % indices.length] as number
        : (group: number, rolloutIndex: number) =>
            indices[
              Rng.fromSeed(`search-demo-rl:${seed}:${rolloutIndex}:${group}`).int(indices.length)
            ] as number;
  return {
    create: () =>
      createSearchEnvFromOptions({
        generator,
        split,
        maxTurns: budget.maxTurns,
        topK: budget.topK,
      }),
    parser: searchParser,
    prompt: compactPrompt,
    taskTypeOf,
    metrics: SEARCH_METRICS,
    ...(split === 'test' ? { task: (group: number) => group % heldOut } : {}),
    ...(split === 'train' && trainTask !== undefined ? { task: trainTask } : {}),
  };
}

/** The vocabulary's corpus: every passage and question of the knowledge base, and the prompt's words. */
export function vocabularyCorpus(seed: number): string[] {
  const kb = generateSearchKb(knowledgeBase(seed));
  return [
    'question : info : none | unknown',
    ...kb.passages.map((p) => p.contents),
    ...kb.train.map((q) => q.question),
    ...kb.test.map((q) => q.question),
  ];
}

/** Model and optimiser settings of a run (a subset of the demo's budget). */
/**
 * How the knowledge base's text splits into words: the action tags are single tokens and decoding
 * joins words with spaces, which the search parser reads back exactly (`<search> kelmo </search>`
 * → `<search>kelmo</search>`, the query stripped as upstream does).
 */
export const SEARCH_WORDS: WordStyle = { tags: ['search', 'answer'] };

/** What {@link createTinyAgent} builds. */
export interface TinyAgent {
  readonly tokenizer: WordTokenizer;
  readonly model: CausalLM;
  readonly policy: TfjsTrainablePolicy;
}

/**
 * The word-level tokenizer and a fresh seeded Qwen2-architecture decoder with its trainable
 * policy: AdamW, PPO clip 0.2, dual clip 3, no entropy bonus (the ALFWorld demo's recipe).
 */
export async function createTinyAgent(budget: ModelBudget, seed: number): Promise<TinyAgent> {
  const tokenizer = WordTokenizer.fromCorpus(vocabularyCorpus(seed), SEARCH_WORDS);
  const { model, policy } = await createTinyPolicy(tokenizer, budget, seed, 256);
  return { tokenizer, model, policy };
}

/** The env package's expert as a demonstration policy. */
export const expertPolicy: Expert = expert;
