/** Registers `search/qa-v1` with the core registry (on import of the package). */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  ConfigError,
  isAgentRLError,
  type OptionSpec,
  registerEnv,
  type TextEnv,
} from '@agentrl/core';
import { missingDataFix, resolveDataDir } from '@agentrl/core/data';
import { type Bm25Index, type Bm25Options, buildBm25, createBm25Retriever } from './bm25.ts';
import { searchCompactPrompt } from './compact-prompt.ts';
import { loadCorpus } from './corpus.ts';
import {
  buildDenseIndexInMemory,
  createDenseRetriever,
  type DenseModelOptions,
  loadDenseEncoder,
} from './dense.ts';
import { createSearchEnv, SEARCH_ENV_ID, type SearchEnvOptions } from './env.ts';
import { type GeneratedSearchKb, generateSearchKb, type SearchKbOptions } from './generator.ts';
import { createHttpRetriever, type HttpRetrieverOptions } from './http-retriever.ts';
import {
  buildDenseIndex,
  loadDenseIndex,
  openIndex,
  readManifest,
  type SearchLogger,
} from './index-store.ts';
import { searchParser } from './parser.ts';
import { createSearchPrompt } from './prompt.ts';
import type { Retriever } from './retriever.ts';
import { PLAIN_TOKENIZER } from './tokenizer.ts';

/**
 * Options of `makeEnv('search/qa-v1', …)`: the env's options, with a retriever built for you.
 * `corpus` and `questions` default to `corpus.jsonl` and `questions.jsonl` of the search-QA data
 * folder (`resolveDataDir('search')` of `@agentrl/core/data`: `SEARCH_QA_DATA` when set, else
 * `$AGENTRL_DATA/search-qa`, else a source checkout's shared folder, else the user cache folder,
 * where `agentrl data fetch search` puts it), when the file is there.
 */
export interface SearchEnvRegistryOptions
  extends Omit<SearchEnvOptions, 'retriever' | 'closeRetriever' | 'questions' | 'split'>,
    Bm25Options {
  /** Questions (array or JSONL/Parquet path). Default `questions.jsonl` of the data folder. */
  readonly questions?: SearchEnvOptions['questions'];
  /**
   * A generated knowledge base instead of data files (see `generateSearchKb`): its passages
   * behind BM25 and its questions. Not with `questions`, `corpus` or `retriever`.
   */
  readonly generator?: SearchKbOptions;
  /**
   * Which questions. Data files: `'corpus'`, `'test'` or `'all'` (default `'all'`). A generated
   * knowledge base: `'train'` (default), `'test'` (the held-out subjects) or `'all'`.
   */
  readonly split?: SearchEnvOptions['split'] | 'train';
  /**
   * A retriever of your own, or an HTTP one as plain data (`{ url, … }`, see
   * {@link HttpRetrieverOptions}; what a YAML config can say); otherwise BM25 over `corpus`.
   */
  readonly retriever?: Retriever | HttpRetrieverOptions;
  /** Corpus JSONL for the built-in retriever. Default `corpus.jsonl` of the data folder. */
  readonly corpus?: string;
  /** Index folder: loaded when fresh, (re)built when missing or stale. Default: in memory. */
  readonly indexDir?: string;
  /** `'bm25'` (default) or `'dense'` (needs `model`). */
  readonly kind?: 'bm25' | 'dense';
  /** The local ONNX model folder of a dense retriever. */
  readonly model?: DenseModelOptions;
  readonly logger?: SearchLogger;
}

/**
 * The keys `search/qa-v1` accepts (the registration declares them, so a misspelt key fails naming
 * the closest one). Their defaults stay where they are applied and documented
 * ({@link SearchEnvOptions}, {@link SearchEnvRegistryOptions}). Every key of the latter.
 */
export const SEARCH_ENV_OPTIONS = {
  questions: { path: true, description: 'questions: an array, or a JSONL / Parquet path' },
  generator: {
    description:
      'a generated knowledge base ({ seed, people, towns, testFraction, multiHop }) instead of data files',
  },
  retriever: {
    description:
      "an HTTP retriever as { url, body?, timeoutMs?, maxAttempts?, retryDelayMs? } (e.g. a Search-R1 server's /retrieve), or a retriever object of your own; otherwise BM25 over corpus",
  },
  corpus: { path: true, description: 'Search-R1 JSONL corpus of the built-in retriever' },
  indexDir: {
    path: true,
    description:
      'index folder: loaded when fresh, (re)built when missing or stale; absent: in memory',
  },
  kind: { description: "'bm25' or 'dense' (needs model)" },
  model: { description: 'the local ONNX model folder of a dense retriever ({ modelDir, ... })' },
  logger: { description: 'receives progress lines of index builds' },
  tokenizer: { description: 'BM25 tokenizer settings' },
  bm25: { description: 'BM25 parameters' },
  split: {
    description:
      "which questions: 'corpus', 'test' or 'all' (data files); 'train', 'test' or 'all' (generator)",
  },
  dataSources: { description: 'keep only these data sources' },
  maxTurns: { description: "turns per episode (the reference run's max_steps)" },
  topK: { description: 'passages per search' },
  informationFormat: {
    description: "how passages are shown: verl-agent's JSON text or Search-R1's raw text",
  },
  searchTimeoutMs: { description: 'a slower search ends in the failure observation, ms' },
  historyLength: { description: "steps in the prompt's history block" },
  template: { description: "prompt template: verl-agent's or Search-R1's" },
} as const satisfies { readonly [K in keyof Required<SearchEnvRegistryOptions>]: OptionSpec };

/**
 * The HTTP retriever a config describes as plain data (`retriever: { url, body?, timeoutMs?,
 * maxAttempts?, retryDelayMs? }`, e.g. a Search-R1 E5 server's `/retrieve`), or undefined for a
 * retriever object with a `search` method. Anything else is refused naming both forms.
 */
function httpRetrieverOptions(retriever: unknown): HttpRetrieverOptions | undefined {
  if (typeof (retriever as Retriever).search === 'function') return undefined;
  const given = retriever as Record<string, unknown>;
  if (typeof retriever === 'object' && retriever !== null && typeof given.url === 'string') {
    const allowed = ['url', 'body', 'timeoutMs', 'maxAttempts', 'retryDelayMs'];
    const unknown = Object.keys(given).filter((k) => !allowed.includes(k));
    if (unknown.length > 0)
      throw new ConfigError(
        `${SEARCH_ENV_ID}: retriever.${unknown[0]} is not an HTTP retriever setting; use ${allowed.join(', ')}`,
        { details: { field: `retriever.${unknown[0]}` } },
      );
    return given as unknown as HttpRetrieverOptions;
  }
  throw new ConfigError(
    `${SEARCH_ENV_ID}: retriever must be { url: "http://host:port/retrieve" } (an HTTP retriever such as Search-R1's) or an object with search(queries, topK), got ${JSON.stringify(retriever)}`,
    { details: { field: 'retriever', value: retriever } },
  );
}

/** Builds the env from registry options (async: it may load or build an index). */
export async function createSearchEnvFromOptions(
  given: SearchEnvRegistryOptions,
): Promise<TextEnv> {
  if (given.generator !== undefined) return createGeneratedSearchEnv(given);
  if (given.split === 'train') {
    throw new ConfigError(
      `${SEARCH_ENV_ID}: split "train" exists only for a generated knowledge base (generator); with data files use "corpus", "test" or "all"`,
      { details: { field: 'split', value: given.split } },
    );
  }
  const { split, ...others } = given;
  const dataDir = resolveDataDir('search').dir;
  const dataFile = (name: string): string | undefined =>
    existsSync(join(dataDir, name)) ? join(dataDir, name) : undefined;
  const questions = given.questions ?? dataFile('questions.jsonl');
  if (questions === undefined) {
    throw new ConfigError(
      `${SEARCH_ENV_ID}: give questions (an array or a JSONL/Parquet path), or put the search-QA data in its folder: questions.jsonl is not there; ${missingDataFix('search')}`,
      { details: { field: 'questions' } },
    );
  }
  const options = {
    ...others,
    ...(split === undefined ? {} : { split }),
    questions,
    corpus: given.corpus ?? (given.retriever ? undefined : dataFile('corpus.jsonl')),
  };
  if (options.retriever !== undefined) {
    const http = httpRetrieverOptions(options.retriever);
    if (http !== undefined)
      return createSearchEnv({
        ...options,
        retriever: createHttpRetriever({
          ...http,
          ...(given.logger ? { logger: given.logger } : {}),
        }),
        closeRetriever: true,
      });
    return createSearchEnv({ ...options, retriever: options.retriever as Retriever });
  }
  if (options.corpus === undefined) {
    throw new ConfigError(
      `${SEARCH_ENV_ID}: give either retriever or corpus (a Search-R1 JSONL corpus for the built-in BM25 retriever); corpus.jsonl is not in the search-QA data folder: ${missingDataFix('search')}`,
      { details: { field: 'corpus' } },
    );
  }
  if (options.kind === 'dense') {
    return createSearchEnv({
      ...options,
      retriever: await openDenseRetriever(options.corpus, options),
      closeRetriever: true,
    });
  }
  const index =
    options.indexDir === undefined
      ? buildBm25(await loadCorpus(options.corpus), options)
      : (await openIndex({ ...options, corpus: options.corpus, dir: options.indexDir })).index;
  return createSearchEnv({
    ...options,
    retriever: createBm25Retriever(index),
    closeRetriever: true,
  });
}

/**
 * Generated knowledge bases and their BM25 indexes by options: every env slot of a process (a
 * rollout pool has one per episode) shares one read-only copy instead of building its own.
 */
const generatedCache = new Map<string, { kb: GeneratedSearchKb; index: Bm25Index }>();
const GENERATED_CACHE_SIZE = 4;

function generatedKb(given: SearchEnvRegistryOptions): { kb: GeneratedSearchKb; index: Bm25Index } {
  const key = JSON.stringify([given.generator, given.tokenizer, given.bm25]);
  let entry = generatedCache.get(key);
  if (entry === undefined) {
    const kb = generateSearchKb(given.generator);
    // Made-up names are not English: no stemming (Porter2 would merge `kalos` with `kalo`).
    entry = {
      kb,
      index: buildBm25(kb.passages, { ...given, tokenizer: given.tokenizer ?? PLAIN_TOKENIZER }),
    };
    generatedCache.set(key, entry);
    if (generatedCache.size > GENERATED_CACHE_SIZE) {
      generatedCache.delete(generatedCache.keys().next().value as string);
    }
  }
  return entry;
}

function createGeneratedSearchEnv(given: SearchEnvRegistryOptions): TextEnv {
  for (const field of ['questions', 'corpus', 'retriever', 'indexDir', 'dataSources'] as const) {
    if (given[field] !== undefined) {
      throw new ConfigError(
        `${SEARCH_ENV_ID}: ${field} cannot be combined with generator (the knowledge base brings its own passages and questions); drop one of them`,
        { details: { field } },
      );
    }
  }
  const split = given.split ?? 'train';
  if (split !== 'train' && split !== 'test' && split !== 'all') {
    throw new ConfigError(
      `${SEARCH_ENV_ID}: with generator, split must be "train", "test" or "all", got ${JSON.stringify(split)}`,
      { details: { field: 'split', value: split } },
    );
  }
  const { kb, index } = generatedKb(given);
  const questions =
    split === 'train' ? kb.train : split === 'test' ? kb.test : [...kb.train, ...kb.test];
  const { generator: _generator, split: _split, ...rest } = given;
  return createSearchEnv({
    ...rest,
    questions,
    retriever: createBm25Retriever(index),
  });
}

async function openDenseRetriever(
  corpusPath: string,
  options: SearchEnvRegistryOptions,
): Promise<Retriever> {
  const model = options.model;
  if (model === undefined) {
    throw new ConfigError(`${SEARCH_ENV_ID}: kind "dense" needs model: { modelDir }`, {
      details: { field: 'model' },
    });
  }
  const corpus = await loadCorpus(corpusPath);
  if (options.indexDir === undefined) {
    return createDenseRetriever(
      await buildDenseIndexInMemory(corpus.passages, await loadDenseEncoder(model)),
    );
  }
  try {
    const manifest = await readManifest(options.indexDir);
    if (manifest.kind === 'dense' && manifest.corpus.sha256 === corpus.sha256) {
      return createDenseRetriever((await loadDenseIndex(options.indexDir, model)).index);
    }
  } catch (error) {
    if (!isAgentRLError(error)) throw error;
    options.logger?.info(
      `no usable dense index in ${options.indexDir} (${error.message}); building`,
    );
  }
  const built = await buildDenseIndex({
    corpus,
    out: options.indexDir,
    model,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  return createDenseRetriever(built.index);
}

/**
 * The paper's metric beside success: exact match × 100 over all questions and per data source
 * (`val/env/em`, `val/env/em/<source>`; reports and `agentrl eval` show them).
 */
export const SEARCH_METRICS = [
  { name: 'em', infoField: 'em', scale: 100, groupBy: 'dataSource', label: 'exact match' },
] as const;

registerEnv<SearchEnvRegistryOptions>({
  id: SEARCH_ENV_ID,
  description:
    'Search-augmented QA (Search-R1 / GiGPO setting): <search> a local BM25 or HTTP retriever, <answer> scored by exact match',
  create: createSearchEnvFromOptions,
  parser: searchParser,
  prompt: createSearchPrompt(),
  prompts: { compact: searchCompactPrompt },
  options: SEARCH_ENV_OPTIONS,
  metrics: SEARCH_METRICS,
});
