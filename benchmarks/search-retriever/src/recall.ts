/**
 * Recall of supporting passages: for each question, the fraction of its
 * `supporting_titles` among the titles of the top-k passages (macro-averaged), and
 * all-supporting@k (every supporting title found).
 */
import { passageTitle } from '@agentrl/env-search';

/** A question with the titles of the passages that answer it. */
export interface RecallQuestion {
  readonly question: string;
  readonly supportingTitles: readonly string[];
}

/** Recall figures at one k. */
export interface RecallAtK {
  readonly k: number;
  readonly recall: number;
  readonly allSupporting: number;
}

/** Computes recall@k for each k, given a search that returns passage contents in rank order. */
export function recallAtK(
  questions: readonly RecallQuestion[],
  search: (query: string, k: number) => readonly string[],
  ks: readonly number[],
): RecallAtK[] {
  const maxK = Math.max(...ks);
  const ranked = questions.map((q) => search(q.question, maxK).map(passageTitle));
  return ks.map((k) => {
    let recall = 0;
    let all = 0;
    questions.forEach((q, i) => {
      const top = new Set((ranked[i] ?? []).slice(0, k));
      const found = q.supportingTitles.filter((t) => top.has(t)).length;
      recall += q.supportingTitles.length === 0 ? 0 : found / q.supportingTitles.length;
      if (found === q.supportingTitles.length) all += 1;
    });
    return { k, recall: recall / questions.length, allSupporting: all / questions.length };
  });
}
