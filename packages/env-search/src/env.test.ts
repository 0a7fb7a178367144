import { readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { getEnvRegistration, makeEnv, type TextEnv } from '@agentrl/core';
import { describe, expect, it } from 'vitest';
import { buildBm25, createBm25Retriever } from './bm25.ts';
import { parseCorpus } from './corpus.ts';
import { createSearchEnv, SEARCH_ENV_ID, successRateByDataSource } from './env.ts';
import { formatInformation } from './information.ts';
import { parseQuestionsJsonl, type SearchQuestion } from './questions.ts';
import './register.ts';
import type { Retriever } from './retriever.ts';
import { CORPUS_PATH, hasSearchData, QUESTIONS_PATH } from './test-support/shared.ts';

const SMALL_CORPUS = parseCorpus(
  [
    '{"id": "0", "contents": "\\"Paris\\"\\nParis is the capital of France."}',
    '{"id": "1", "contents": "\\"Berlin\\"\\nBerlin is the capital of Germany."}',
    '{"id": "2", "contents": "\\"Cats\\"\\nCats are small animals."}',
  ].join('\n'),
);
const QUESTIONS: SearchQuestion[] = [
  {
    id: 'q0',
    question: 'What is the capital of France?',
    goldenAnswers: ['Paris'],
    dataSource: 'toy',
  },
  {
    id: 'q1',
    question: 'What is the capital of Germany?',
    goldenAnswers: ['Berlin'],
    dataSource: 'other',
  },
];

/** Wraps a retriever and counts the queries it receives. */
function counting(inner: Retriever): Retriever & { queries: string[] } {
  const queries: string[] = [];
  return {
    queries,
    search(q, k) {
      queries.push(...q);
      return inner.search(q, k);
    },
    close: () => inner.close(),
  };
}

function toyEnv(options: Partial<Parameters<typeof createSearchEnv>[0]> = {}) {
  const retriever = counting(createBm25Retriever(buildBm25(SMALL_CORPUS)));
  const env = createSearchEnv({ retriever, questions: QUESTIONS, ...options });
  return { env, retriever };
}

describe('search episodes', () => {
  it('starts with the question as text and anchor', async () => {
    const { env } = toyEnv();
    const { observation, info } = await env.reset({ seed: 1, task: 0 });
    expect(observation).toEqual({ text: QUESTIONS[0]?.question, anchor: QUESTIONS[0]?.question });
    expect(info).toMatchObject({ won: false, dataSource: 'toy', questionId: 'q0' });
  });

  it('searches, then scores a correct answer 1 and terminates', async () => {
    const { env, retriever } = toyEnv();
    await env.reset({ seed: 0, task: 0 });
    const first = await env.step('<think>look it up</think><search> capital France </search>');
    const expected = formatInformation([
      '"Paris"\nParis is the capital of France.',
      '"Berlin"\nBerlin is the capital of Germany.',
    ]);
    expect(first.observation).toEqual({ text: expected, anchor: expected });
    expect(first).toMatchObject({ reward: 0, terminated: false, truncated: false });
    expect(first.info).toMatchObject({ valid: true, toolCalling: true, query: 'capital France' });
    expect(retriever.queries).toEqual(['capital France']);
    const second = await env.step('<answer> paris </answer>');
    expect(second).toMatchObject({ reward: 1, terminated: true, truncated: false });
    expect(second.observation).toEqual({ text: '', anchor: '' });
    expect(second.info).toMatchObject({ won: true, em: 1, prediction: 'paris', dataSource: 'toy' });
  });

  it('scores a wrong answer 0 with won false', async () => {
    const { env } = toyEnv();
    await env.reset({ seed: 0, task: 0 });
    const result = await env.step('<answer>Lyon</answer>');
    expect(result).toMatchObject({ reward: 0, terminated: true, truncated: false });
    expect(result.info.won).toBe(false);
  });

  it('truncates at turn 4 without an answer and runs no retrieval on the last turn', async () => {
    const { env, retriever } = toyEnv();
    await env.reset({ seed: 0, task: 1 });
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await env.step(`<search>Germany ${i}</search>`));
    expect(results.slice(0, 3).every((r) => !r.terminated && !r.truncated)).toBe(true);
    expect(results[3]).toMatchObject({ reward: 0, terminated: false, truncated: true });
    expect(results[3]?.observation.text).toBe('');
    expect(retriever.queries).toEqual(['Germany 0', 'Germany 1', 'Germany 2']);
    await expect(env.step('<answer>Berlin</answer>')).rejects.toMatchObject({
      code: 'ENV_FINISHED',
    });
  });

  it('scores an answer given on the last turn', async () => {
    const { env } = toyEnv({ maxTurns: 2 });
    await env.reset({ seed: 0, task: 1 });
    await env.step('nothing useful');
    const last = await env.step('<answer>Berlin</answer>');
    expect(last).toMatchObject({ reward: 1, terminated: true, truncated: false });
  });

  it('gives invalid actions the observation and anchor "" and appends nothing', async () => {
    const { env, retriever } = toyEnv();
    await env.reset({ seed: 0, task: 0 });
    const result = await env.step('I think the answer is Paris');
    expect(result.observation).toEqual({ text: '', anchor: '' });
    expect(result.info).toMatchObject({ valid: false, toolCalling: true, query: null });
    expect(retriever.queries).toEqual([]);
  });

  it('ends and scores an extracted answer even when the response was invalid', async () => {
    const { env } = toyEnv();
    await env.reset({ seed: 0, task: 0 });
    const result = await env.step('<answer>Paris</answer><answer>Lyon</answer>');
    expect(result).toMatchObject({ reward: 1, terminated: true });
    expect(result.info.valid).toBe(false);
  });

  it('gives two group members that issue the same query the same anchor', async () => {
    const a = toyEnv().env;
    const b = toyEnv().env;
    const [ra, rb] = await Promise.all([a.reset({ seed: 7 }), b.reset({ seed: 7 })]);
    expect(ra.observation).toEqual(rb.observation);
    const [sa, sb] = await Promise.all([
      a.step('<search>capital</search>'),
      b.step('<SEARCH>capital</SEARCH>'),
    ]);
    expect(sa.observation.anchor).toBe(sb.observation.anchor);
  });

  it('sends the empty query and shows "No search results found." when BM25 finds nothing', async () => {
    const { env, retriever } = toyEnv();
    await env.reset({ seed: 0, task: 0 });
    const result = await env.step('<search></search>');
    expect(retriever.queries).toEqual(['']);
    expect(result.observation.text).toBe(
      '<information>{"result": "No search results found."}</information>',
    );
  });

  it('turns a retriever that throws or hangs into the failure observation', async () => {
    const failing: Retriever = {
      search: async () => {
        throw new Error('connection refused');
      },
      close: async () => {},
    };
    const env = createSearchEnv({ retriever: failing, questions: QUESTIONS });
    await env.reset({ seed: 0, task: 0 });
    const result = await env.step('<search>x</search>');
    expect(result.observation.text).toBe(
      '<information>{"result": "Search error: connection refused"}</information>',
    );
    expect(result.info.searchError).toEqual({
      code: 'BACKEND_FAILURE',
      message: 'connection refused',
    });
    const hanging: Retriever = { search: () => new Promise(() => {}), close: async () => {} };
    const slow = createSearchEnv({ retriever: hanging, questions: QUESTIONS, searchTimeoutMs: 20 });
    await slow.reset({ seed: 0, task: 0 });
    const timedOut = await slow.step('<search>x</search>');
    expect(timedOut.observation.text).toContain('Search error: search timed out after 20 ms');
  });

  it('rejects bad options with BAD_CONFIG naming the option', () => {
    const retriever = createBm25Retriever(buildBm25(SMALL_CORPUS));
    expect(() => createSearchEnv({ retriever, questions: [] })).toThrow(/questions/);
    expect(() => createSearchEnv({ retriever, questions: QUESTIONS, dataSources: ['nq'] })).toThrow(
      /dataSources.*"nq"/,
    );
    expect(() => createSearchEnv({ retriever, questions: QUESTIONS, topK: 0 })).toThrow(/topK/);
    expect(() => createSearchEnv({ retriever, questions: QUESTIONS, maxTurns: 0 })).toThrow(
      /maxTurns/,
    );
  });

  it('draws the question from the seed and filters by data source', async () => {
    const { env } = toyEnv({ dataSources: ['other'] });
    for (const seed of [0, 1, 2, 3]) {
      expect((await env.reset({ seed })).info.dataSource).toBe('other');
    }
    await expect(env.reset({ seed: 0, task: 'nope' })).rejects.toMatchObject({
      code: 'BAD_CONFIG',
    });
  });

  it("shows Search-R1's raw Doc i(Title: …) text with informationFormat search-r1", async () => {
    const { env } = toyEnv({ informationFormat: 'search-r1', topK: 1 });
    await env.reset({ seed: 0, task: 0 });
    const result = await env.step('<search>France</search>');
    expect(result.observation.text).toBe(
      '\n\n<information>Doc 1(Title: "Paris") Paris is the capital of France.</information>\n\n',
    );
  });

  it('carries the configured prompt template', async () => {
    const { env } = toyEnv({ template: 'search-r1' });
    const { observation, info } = await env.reset({ seed: 0, task: 0 });
    const text = env.prompt({
      initialObservation: observation,
      history: [],
      current: observation,
      stepIndex: 0,
      info,
    });
    expect(text.startsWith('Answer the given question.')).toBe(true);
    expect(text.endsWith(`Question: ${QUESTIONS[0]?.question}\n`)).toBe(true);
  });

  it('tallies success per data source', () => {
    expect(
      successRateByDataSource([
        { dataSource: 'nq', won: true },
        { dataSource: 'nq', won: false },
        { dataSource: 'hotpotqa', won: true },
      ]),
    ).toEqual({
      nq: { episodes: 2, won: 1, successRate: 0.5 },
      hotpotqa: { episodes: 1, won: 1, successRate: 1 },
    });
  });
});

const hasShipped = hasSearchData('the registered env on the shipped data');

describe.skipIf(!hasShipped)('the registered env on the shipped data', () => {
  it('is registered with its parser and prompt, and an oracle policy wins every corpus question', async () => {
    const registration = getEnvRegistration(SEARCH_ENV_ID);
    expect(registration.parser).toBeTypeOf('function');
    expect(registration.prompt).toBeTypeOf('function');
    const env: TextEnv = await makeEnv(SEARCH_ENV_ID, {
      corpus: CORPUS_PATH,
      questions: QUESTIONS_PATH,
      split: 'corpus',
    });
    const rows = parseQuestionsJsonl(readFileSync(QUESTIONS_PATH, 'utf8')).filter(
      (q) => q.inCorpus,
    );
    let wins = 0;
    for (let task = 0; task < rows.length; task++) {
      const { observation } = await env.reset({ seed: 0, task });
      const row = rows[task] as SearchQuestion;
      expect(observation.text).toBe(row.question);
      const searched = await env.step(`<search>${observation.text}</search>`);
      expect(searched.observation.text.startsWith('<information>{"result": "Doc 1: ')).toBe(true);
      const answered = await env.step(`<answer>${row.goldenAnswers[0]}</answer>`);
      if (answered.info.won) wins += 1;
    }
    expect(wins).toBe(rows.length);
    await env.close();
  });

  it('takes corpus and questions from SEARCH_QA_DATA when the options leave them out', async () => {
    const previous = process.env.SEARCH_QA_DATA;
    const previousRoot = process.env.AGENTRL_DATA;
    const empty = await mkdtemp(join(tmpdir(), 'agentrl-search-data-'));
    try {
      process.env.SEARCH_QA_DATA = dirname(CORPUS_PATH);
      const env = await makeEnv(SEARCH_ENV_ID, { split: 'corpus' });
      const { observation } = await env.reset({ seed: 3 });
      expect(observation.text.length).toBeGreaterThan(0);
      await env.close();
      delete process.env.SEARCH_QA_DATA;
      process.env.AGENTRL_DATA = empty;
      const missing = makeEnv(SEARCH_ENV_ID, {});
      await expect(missing).rejects.toThrow(/SEARCH_QA_DATA/);
      await expect(missing).rejects.toThrow(`looked in ${join(empty, 'search-qa')}`);
      await expect(missing).rejects.toThrow('`agentrl data fetch search`');
    } finally {
      if (previous === undefined) delete process.env.SEARCH_QA_DATA;
      else process.env.SEARCH_QA_DATA = previous;
      if (previousRoot === undefined) delete process.env.AGENTRL_DATA;
      else process.env.AGENTRL_DATA = previousRoot;
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('takes corpus and questions from <AGENTRL_DATA>/search-qa when SEARCH_QA_DATA is unset', async () => {
    const previous = process.env.SEARCH_QA_DATA;
    const previousRoot = process.env.AGENTRL_DATA;
    const root = await mkdtemp(join(tmpdir(), 'agentrl-search-root-'));
    try {
      await symlink(dirname(CORPUS_PATH), join(root, 'search-qa'));
      delete process.env.SEARCH_QA_DATA;
      process.env.AGENTRL_DATA = root;
      const env = await makeEnv(SEARCH_ENV_ID, { split: 'corpus' });
      const { observation } = await env.reset({ seed: 3 });
      expect(observation.text.length).toBeGreaterThan(0);
      await env.close();
    } finally {
      if (previous === undefined) delete process.env.SEARCH_QA_DATA;
      else process.env.SEARCH_QA_DATA = previous;
      if (previousRoot === undefined) delete process.env.AGENTRL_DATA;
      else process.env.AGENTRL_DATA = previousRoot;
      await rm(root, { recursive: true, force: true });
    }
  });

  it('loads the shipped test questions with Search-R1 preprocessing', () => {
    const rows = parseQuestionsJsonl(readFileSync(QUESTIONS_PATH, 'utf8'));
    const nq = rows.filter((q) => q.dataSource === 'nq');
    expect(nq.length).toBeGreaterThan(0);
    expect(nq.every((q) => q.question.endsWith('?'))).toBe(true);
    expect(rows.some((q) => q.inCorpus === true && (q.supportingTitles?.length ?? 0) > 0)).toBe(
      true,
    );
  });
});
