/**
 * Answer extraction, normalisation and scoring with Python 3 semantics (Search-R1's
 * `verl/utils/reward_score/qa_em.py`): the reward is
 * EM of the normalised last `<answer>` of the transcript; sub-EM and token F1 are for reporting.
 */
import {
  PY_WORD_CLASS,
  pythonLower,
  pythonSplit,
  pythonStrip,
  removePythonPunctuation,
} from './python-text.ts';

// `\b(a|an|the)\b` with Python's Unicode-aware word boundary, written as lookarounds because
// JavaScript's `\b` only knows ASCII word characters.
const ARTICLES = new RegExp(`(?<!${PY_WORD_CLASS})(?:a|an|the)(?!${PY_WORD_CLASS})`, 'gv');

/**
 * SQuAD-style answer normalisation exactly as the reference runs it in Python 3: lower-case,
 * delete `string.punctuation`, replace the articles a/an/the by a space, collapse whitespace.
 */
export function normalizeAnswer(text: string): string {
  const lower = pythonLower(text);
  const noPunctuation = removePythonPunctuation(lower);
  const noArticles = noPunctuation.replace(ARTICLES, ' ');
  return pythonSplit(noArticles).join(' ');
}

/** Golden answers as the reference accepts them: a bare string is a one-element list. */
export type GoldenAnswers = string | readonly string[];

function goldenList(golden: GoldenAnswers): readonly string[] {
  return typeof golden === 'string' ? [golden] : golden;
}

/** 1 when the normalised prediction equals the normalised form of any golden answer, else 0. */
export function exactMatch(prediction: string, golden: GoldenAnswers): 0 | 1 {
  const normalized = normalizeAnswer(prediction);
  for (const answer of goldenList(golden)) if (normalizeAnswer(answer) === normalized) return 1;
  return 0;
}

/** 1 when the normalised form of any golden answer is a substring of the normalised prediction. */
export function subExactMatch(prediction: string, golden: GoldenAnswers): 0 | 1 {
  const normalized = normalizeAnswer(prediction);
  for (const answer of goldenList(golden)) {
    if (normalized.includes(normalizeAnswer(answer))) return 1;
  }
  return 0;
}

const SPECIAL_ANSWERS = new Set(['yes', 'no', 'noanswer']);

/**
 * Token-level F1 (FlashRAG / HotpotQA convention), maximised over the golden answers. A yes/no/
 * noanswer answer on either side scores 0 unless both sides are equal.
 */
export function tokenF1(prediction: string, golden: GoldenAnswers): number {
  const normalizedPrediction = normalizeAnswer(prediction);
  const predictionTokens = pythonSplit(normalizedPrediction);
  let best = 0;
  for (const answer of goldenList(golden)) {
    const normalizedAnswer = normalizeAnswer(answer);
    if (normalizedPrediction !== normalizedAnswer) {
      if (SPECIAL_ANSWERS.has(normalizedPrediction) || SPECIAL_ANSWERS.has(normalizedAnswer)) {
        continue;
      }
    }
    const answerTokens = pythonSplit(normalizedAnswer);
    const counts = new Map<string, number>();
    for (const token of answerTokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    let same = 0;
    for (const token of predictionTokens) {
      const left = counts.get(token) ?? 0;
      if (left > 0) {
        same += 1;
        counts.set(token, left - 1);
      }
    }
    if (same === 0) continue;
    // Same operation order as the reference so the float is bit-identical.
    const precision = (1.0 * same) / predictionTokens.length;
    const recall = (1.0 * same) / answerTokens.length;
    const f1 = (2 * precision * recall) / (precision + recall);
    if (f1 > best) best = f1;
  }
  return best;
}

/**
 * The prediction of a transcript: the last non-overlapping `<answer>…</answer>` (case-sensitive),
 * Python-stripped, or `null` when there are fewer than `minMatches` of them. The env uses 1;
 * Search-R1's own scorer sees the prompt's example answer too and uses 2.
 */
export function extractLastAnswer(transcript: string, minMatches: 1 | 2 = 1): string | null {
  // Equivalent to re.finditer(r"<answer>(.*?)</answer>", s, re.DOTALL), in linear time.
  let count = 0;
  let last = '';
  let from = 0;
  for (;;) {
    const open = transcript.indexOf('<answer>', from);
    if (open < 0) break;
    const close = transcript.indexOf('</answer>', open + 8);
    if (close < 0) break;
    count += 1;
    last = transcript.slice(open + 8, close);
    from = close + 9;
  }
  if (count < minMatches) return null;
  return pythonStrip(last);
}

/** The EM reward of a transcript: 0 without an answer, else EM of the last answer. */
export function transcriptScore(transcript: string, golden: GoldenAnswers): 0 | 1 {
  const prediction = extractLastAnswer(transcript, 1);
  if (prediction === null) return 0;
  return exactMatch(prediction, golden);
}
