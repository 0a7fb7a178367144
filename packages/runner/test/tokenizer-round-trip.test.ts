/**
 * The tiny models' word vocabulary (`buildWordVocabulary` of `@agentrl/model-tfjs`, as
 * `tfjs-fresh` builds it: counted over other seeds' episodes, written and reloaded as
 * `tokenizer.json`) gives back every text of generated episodes of the three environments
 * exactly: observations, prompts, admissible commands, and the responses in each action form
 * (`<action>go to desk 1</action>`, `<action>search[red shoes]</action>`, `<search>q</search>`,
 * `<answer>a</answer>`). Each response decodes to a text the env's parser reads as it reads the
 * original, so a demonstration teaches the very action it shows. Both piece schemes: letter-digit
 * runs split (the default) and whole (`letterDigitRuns: 'whole'`), where every ASIN of the
 * generated catalogue that the corpus holds is a single token, in the page text, in the prompt
 * and inside `click[…]`.
 */
import { join } from 'node:path';
import {
  type ActionParser,
  createRng,
  getEnvRegistration,
  type HistoryEntry,
  type PromptContext,
  type PromptTemplate,
  type Rng,
  type TextEnv,
} from '@agentrl/core';
import {
  AlfworldExpert,
  alfworldParser,
  alfworldPrompt,
  createAlfworldEnv,
  TINY_HOUSEHOLD,
} from '@agentrl/env-alfworld';
import { SEARCH_ENV_ID, expert as searchExpert } from '@agentrl/env-search';
import {
  createWebshopEnv,
  Shop,
  expert as webshopExpert,
  webshopParser,
  webshopPrompt,
} from '@agentrl/env-webshop';
import {
  buildWordVocabulary,
  type HFTokenizer,
  type LetterDigitRuns,
  loadTokenizer,
  splitPieces,
  writeTokenizerFiles,
} from '@agentrl/model-tfjs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tempDir } from './temp-dir.ts';

/** An environment under test: how to build it, and the responses an agent would give. */
interface Case {
  readonly name: string;
  readonly create: () => TextEnv | Promise<TextEnv>;
  readonly parser: ActionParser;
  readonly prompt: PromptTemplate;
  /** The next action: the env package's expert most of the time, something else otherwise. */
  readonly act: (context: PromptContext, rng: Rng) => string;
  /** Response texts for `action` in the forms the env's agents write. */
  readonly responses: (action: string) => string[];
}

const thinkAction = (a: string) => [
  a,
  `<think>I act.</think><action>${a}</action>`,
  `<think> </think> <action> ${a} </action>`,
];

function pick<T>(items: readonly T[], rng: Rng): T {
  return items[rng.int(items.length)] as T;
}

/** A random admissible command, a query of the task's words where the command takes one. */
function randomCommand(context: PromptContext, rng: Rng): string {
  const admissible = context.current.admissibleActions ?? [];
  const a = pick(admissible.length > 0 ? admissible : ['look'], rng);
  return a.replace('<your query>', String(context.info.task ?? 'red shoes').slice(0, 40));
}

function alfworldCase(): Case {
  let expert = new AlfworldExpert();
  return {
    name: 'ALFWorld (generated households)',
    create: () =>
      createAlfworldEnv({ source: 'generated', generator: TINY_HOUSEHOLD, maxSteps: 12 }),
    parser: alfworldParser,
    prompt: alfworldPrompt,
    act: (context, rng) => {
      if (context.stepIndex === 0) expert = new AlfworldExpert();
      const { text, admissibleActions } = context.current;
      return rng.next() < 0.8
        ? expert.act(text, admissibleActions ?? [])
        : randomCommand(context, rng);
    },
    responses: thinkAction,
  };
}

const shop = Shop.create({ catalogue: { kind: 'synthetic', size: 120, seed: 11 } });

function webshopCase(): Case {
  return {
    name: 'WebShop (synthetic catalogue)',
    create: () => createWebshopEnv({ shop, split: 'all', maxSteps: 8 }),
    parser: webshopParser,
    prompt: webshopPrompt,
    act: (context, rng) =>
      rng.next() < 0.75 ? webshopExpert(context) : randomCommand(context, rng),
    responses: thinkAction,
  };
}

function searchCase(): Case {
  const registration = getEnvRegistration(SEARCH_ENV_ID);
  return {
    name: 'search-QA (generated knowledge bases)',
    create: () => registration.create({ generator: { seed: 3 }, split: 'all' }),
    parser: registration.parser as ActionParser,
    prompt: registration.prompt as PromptTemplate,
    act: (context, rng) =>
      rng.next() < 0.8
        ? searchExpert(context)
        : pick(['<search>Zürich — 大阪 (1583)?</search>', '<answer>unknown</answer>'], rng),
    responses: (a) => [a, `<think>The passage names it.\nSo:</think>\n${a}`],
  };
}

/** Every text of one episode of `c` on `seed`: observations, commands, prompts and responses. */
async function episodeTexts(
  c: Case,
  seed: number,
): Promise<{ texts: string[]; responses: string[] }> {
  const env = await c.create();
  const rng = createRng(seed).split('round-trip');
  const texts: string[] = [];
  const responses: string[] = [];
  try {
    const reset = await env.reset({ seed });
    const initialObservation = reset.observation;
    let current = initialObservation;
    let info = reset.info;
    const history: HistoryEntry[] = [];
    for (let stepIndex = 0; stepIndex < 12; stepIndex++) {
      const context = { initialObservation, history: [...history], current, stepIndex, info };
      texts.push(current.text, ...(current.admissibleActions ?? []), c.prompt(context));
      const action = c.act(context, rng);
      responses.push(...c.responses(action));
      const step = await env.step(action);
      history.push({ observation: current, action });
      current = step.observation;
      info = step.info;
      if (step.terminated || step.truncated) break;
    }
    texts.push(current.text);
  } finally {
    await env.close();
  }
  return { texts, responses };
}

/** Texts of the episodes a vocabulary is counted over (other seeds than the property's). */
async function vocabularyCorpus(c: Case): Promise<string[]> {
  const corpus: string[] = [];
  for (let e = 0; e < 5; e++) {
    const { texts, responses } = await episodeTexts(c, 700_000 + e);
    corpus.push(...texts, ...responses);
  }
  return corpus;
}

/** The vocabulary `tfjs-fresh` would build over `corpus`: written and reloaded. */
async function tinyTokenizer(
  corpus: readonly string[],
  letterDigitRuns: LetterDigitRuns,
  maxWords = 512,
): Promise<HFTokenizer> {
  const dir = tempDir('agentrl-round-trip-');
  await writeTokenizerFiles(
    dir,
    buildWordVocabulary(corpus, {
      maxWords,
      letterDigitRuns,
      required: ['<think>I act.</think><action> </action>'],
    }),
  );
  return loadTokenizer(dir);
}

describe('the tiny models’ word vocabulary', () => {
  for (const make of [alfworldCase, webshopCase, searchCase]) {
    const c = make();
    it(`gives back every text and action of generated ${c.name} episodes exactly, letter-digit runs split or whole`, async () => {
      const corpus = await vocabularyCorpus(c);
      const tokenizers = [
        await tinyTokenizer(corpus, 'split'),
        await tinyTokenizer(corpus, 'whole'),
      ];
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: 1_000_000 }), async (seed) => {
          const { texts, responses } = await episodeTexts(c, seed);
          for (const tokenizer of tokenizers) {
            for (const text of [...texts, ...responses])
              expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
            for (const response of responses) {
              const decoded = tokenizer.decode(tokenizer.encode(response), {
                skipSpecialTokens: true,
              });
              expect(c.parser(decoded)).toEqual(c.parser(response));
            }
          }
        }),
        { numRuns: 15 },
      );
    }, 0);
  }

  it('with letter-digit runs whole, makes each ASIN of a generated catalogue that its corpus holds one token, after a space or inside click[…], and decodes it back exactly', async () => {
    const corpus = await vocabularyCorpus(webshopCase());
    const whole = await tinyTokenizer(corpus, 'whole', 100_000);
    const split = await tinyTokenizer(corpus, 'split', 100_000);
    const pieces = new Set(corpus.flatMap((text) => splitPieces(text, 'whole')));
    const seen = shop.products
      .flatMap((p) => [p.asin, p.asin.toLowerCase()])
      .filter((code) => pieces.has(code));
    expect(seen.length).toBeGreaterThan(0);
    for (const code of seen) {
      const [id, ...rest] = whole.encode(code);
      expect(rest).toEqual([]);
      expect(whole.decode([id as number])).toBe(code);
      for (const text of [` ${code}`, `click[${code}]`, `results : ${code} Shirt $82`]) {
        const ids = whole.encode(text);
        expect(ids.filter((t) => t === id)).toHaveLength(1);
        expect(whole.decode(ids)).toBe(text);
      }
      // The default scheme spells the same code in several pieces.
      expect(split.encode(code).length).toBeGreaterThan(1);
    }
    // A code the corpus never held still decodes back exactly (in bytes).
    for (const p of shop.products) {
      const code = p.asin.toLowerCase();
      expect(whole.decode(whole.encode(`click[${code}]`))).toBe(`click[${code}]`);
    }
  }, 0);

  it('reads a vocabulary folder written before the lossless scheme (WordPiece, lowercased)', async () => {
    const dir = join(import.meta.dirname, 'fixtures', 'wordpiece-vocabulary');
    const tokenizer = await loadTokenizer(dir);
    expect(tokenizer.decode(tokenizer.encode('go to desk 1'))).toBe('go to desk 1');
    expect(tokenizer.eosTokenIds).toEqual([2]);
  });
});
