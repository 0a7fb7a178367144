/**
 * @agentrl/env-search — search-augmented QA (the Search-R1 / GiGPO setting) with an in-process
 * BM25 retriever, a persistent index, an HTTP retriever client and a retrieval server.
 */
export {
  exactMatch,
  extractLastAnswer,
  type GoldenAnswers,
  normalizeAnswer,
  subExactMatch,
  tokenF1,
  transcriptScore,
} from './answer.ts';
export {
  Bm25Index,
  type Bm25Options,
  type Bm25Parameters,
  buildBm25,
  createBm25Retriever,
  DEFAULT_BM25,
  loadBm25Json,
  MIN_BM25_PASSAGES,
} from './bm25.ts';
export { passagesOf, searchCompactPrompt } from './compact-prompt.ts';
export { type Corpus, loadCorpus, type Passage, parseCorpus, passageTitle } from './corpus.ts';
export {
  buildDenseIndexInMemory,
  createDenseRetriever,
  type DenseEncoder,
  DenseIndex,
  type DenseModelOptions,
  type DenseModelSettings,
  loadDenseEncoder,
} from './dense.ts';
export {
  createSearchEnv,
  SEARCH_ENV_ID,
  type SearchEnv,
  type SearchEnvOptions,
  successRateByDataSource,
  taskTypeOf,
} from './env.ts';
export { expert, searchExpertAction } from './expert.ts';
export {
  type GeneratedSearchKb,
  generateSearchKb,
  QUESTION_FORMS,
  RELATION_PATTERNS,
  type SearchKbEntity,
  type SearchKbOptions,
  type SearchKbRelation,
  SYNTHETIC_MULTIHOP,
  SYNTHETIC_SINGLE,
} from './generator.ts';
export {
  createHttpRetriever,
  type HttpRetrieverOptions,
  RetrievalError,
} from './http-retriever.ts';
export {
  type AnyIndexManifest,
  type BuildDenseIndexOptions,
  type BuildIndexOptions,
  buildDenseIndex,
  buildIndex,
  type DenseIndexManifest,
  INDEX_FORMAT_VERSION,
  type IndexManifest,
  type LoadedDenseIndex,
  type LoadedIndex,
  loadDenseIndex,
  loadIndex,
  type OpenIndexOptions,
  openIndex,
  openRetriever,
  readManifest,
  type SearchLogger,
} from './index-store.ts';
export {
  formatInformation,
  formatInformationSearchR1,
  formatNoResults,
  formatSearchError,
  type InformationFormat,
  jsonResult,
  NO_RESULTS_TEXT,
} from './information.ts';
export { loadQuestionsParquet } from './parquet.ts';
export { projectSearchAction, searchParser } from './parser.ts';
export {
  createSearchPrompt,
  renderFirstStepPrompt,
  renderHistory,
  renderHistoryPrompt,
  renderSearchR1Prompt,
  type SearchHistoryStep,
  type SearchPromptOptions,
  type SearchTemplateId,
  searchPrompt,
} from './prompt.ts';
export { pythonJsonString, pythonSplit, pythonStrip } from './python-text.ts';
export {
  loadQuestionsJsonl,
  parseQuestionsJsonl,
  preprocessQuestion,
  type QuestionRowOptions,
  type QuestionSplit,
  questionFromRow,
  type SearchQuestion,
  type SelectQuestionsOptions,
  selectQuestions,
} from './questions.ts';
export {
  createSearchEnvFromOptions,
  SEARCH_ENV_OPTIONS,
  SEARCH_METRICS,
  type SearchEnvRegistryOptions,
} from './register.ts';
export type { RetrievedPassage, Retriever } from './retriever.ts';
export { type RetrievalServer, type ServeOptions, serve } from './server.ts';
export {
  DEFAULT_TOKENIZER,
  ENGLISH_STOP_WORDS,
  PLAIN_TOKENIZER,
  sStem,
  type TokenizerOptions,
  tokenize,
} from './tokenizer.ts';
