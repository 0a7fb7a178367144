/**
 * What the tests read: the parity vectors committed in the repository's `fixtures/search-qa/`, and
 * the real search-QA data (corpus and questions) when it is there: the folder the env's registry
 * defaults read (`dataPath('search')`: `SEARCH_QA_DATA`, `AGENTRL_DATA`, the shared data folder).
 */
import { readFileSync } from 'node:fs';
import { dataPath, fixturePath, hasData } from '@agentrl/core/test';

export const CORPUS_PATH = dataPath('search', 'corpus.jsonl');
export const QUESTIONS_PATH = dataPath('search', 'questions.jsonl');
export const VECTORS_PATH = fixturePath('search-qa', 'em-vectors.json');

/**
 * Whether the real corpus and questions are there; when not, prints one line saying that `group`
 * is skipped and how to get the data. Call it once per group, at the top of the test file.
 */
export function hasSearchData(group: string): boolean {
  return hasData('search', `env-search: ${group}`, { paths: [CORPUS_PATH, QUESTIONS_PATH] });
}

/** The parsed parity vectors. */
export function loadVectors(): Record<string, unknown> {
  return JSON.parse(readFileSync(VECTORS_PATH, 'utf8')) as Record<string, unknown>;
}
