/** Paths of the shared, read-only data the tests read (never copied into the repo). */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sharedPath } from '@agentrl/core/test';

export { sharedPath };

// SEARCH_QA_DATA, when set, names the data folder (as for the env's registry defaults).
const dataDir = process.env.SEARCH_QA_DATA;
export const CORPUS_PATH = dataDir
  ? join(dataDir, 'corpus.jsonl')
  : sharedPath('data/search-qa/corpus.jsonl');
export const QUESTIONS_PATH = dataDir
  ? join(dataDir, 'questions.jsonl')
  : sharedPath('data/search-qa/questions.jsonl');
export const VECTORS_PATH = sharedPath('fixtures/search-qa/em-vectors.json');

/** Whether the shared search-QA data is present. */
export const hasSharedData = existsSync(CORPUS_PATH) && existsSync(VECTORS_PATH);

if (!hasSharedData) {
  // The reason for the skipped parity tests, printed once per test file.
  console.warn(
    `env-search: ${CORPUS_PATH} or ${VECTORS_PATH} is missing; the parity and shipped-data tests are skipped (set AGENTRL_SHARED or put the shared folder beside the checkout)`,
  );
}

/** The parsed parity vectors (an empty object when absent). */
export function loadVectors(): Record<string, unknown> {
  return hasSharedData
    ? (JSON.parse(readFileSync(VECTORS_PATH, 'utf8')) as Record<string, unknown>)
    : {};
}
