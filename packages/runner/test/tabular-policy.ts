/**
 * A learnable test policy: a softmax table over a few fixed responses, keyed by the prompt's
 * `Now:` line (the corridor prompt's current observation). Deterministic given the sampling seed,
 * trainable with advantages, saved as JSON: enough to test the trainer without a model.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ResponseScores, SftBatch, TrainablePolicy, TrainBatch } from '@agentrl/core';
import { type GenerationResult, Rng, type SamplingOptions } from '@agentrl/core';
import { CodePointTokenizer } from '@agentrl/core/test';

export const RESPONSES = [
  '<action>go east</action>',
  '<action>go west</action>',
  '<action>wait</action>',
  'I am not sure.',
] as const;

export const tokenizer = new CodePointTokenizer();

function keyOf(prompt: readonly number[]): string {
  const text = tokenizer.decode(prompt, { skipSpecialTokens: true });
  const line = text.split('\n').find((l) => l.startsWith('Now: '));
  return line ?? text;
}

export class TabularPolicy implements TrainablePolicy {
  table = new Map<string, number[]>();
  readonly lr: number;
  steps = 0;

  constructor(lr = 0.5) {
    this.lr = lr;
  }

  #logits(key: string): number[] {
    let row = this.table.get(key);
    if (!row) {
      row = RESPONSES.map(() => 0);
      this.table.set(key, row);
    }
    return row;
  }

  #probs(key: string, temperature: number): number[] {
    const z = this.#logits(key).map((v) => v / Math.max(temperature, 1e-6));
    const m = Math.max(...z);
    const e = z.map((v) => Math.exp(v - m));
    const s = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / s);
  }

  async generate(
    prompts: readonly (readonly number[])[],
    sampling: SamplingOptions,
  ): Promise<GenerationResult> {
    const temperature = sampling.temperature ?? 1;
    const tokenIds: number[][] = [];
    const logProbs: number[][] = [];
    prompts.forEach((prompt, i) => {
      const key = keyOf(prompt);
      const p = this.#probs(key, temperature === 0 ? 1 : temperature);
      let choice = 0;
      if (temperature === 0) choice = p.indexOf(Math.max(...p));
      else {
        let u = Rng.fromSeed(`${sampling.seed ?? 0}:${i}`).next();
        for (choice = 0; choice < p.length - 1; choice++) {
          u -= p[choice] as number;
          if (u < 0) break;
        }
      }
      const ids = [...tokenizer.encode(RESPONSES[choice] as string), 0];
      tokenIds.push(ids);
      logProbs.push(ids.map((_, j) => (j === 0 ? Math.log(p[choice] as number) : 0)));
    });
    return { tokenIds, logProbs, finishReasons: prompts.map(() => 'stop' as const) };
  }

  #choiceOf(ids: readonly number[]): number {
    const text = tokenizer.decode(ids, { skipSpecialTokens: true });
    return Math.max(0, RESPONSES.indexOf(text as (typeof RESPONSES)[number]));
  }

  async trainStep(batch: TrainBatch): Promise<Record<string, number>> {
    let loss = 0;
    batch.advantages.forEach((a, i) => {
      const key = keyOf(batch.promptTokenIds[i] as number[]);
      const choice = this.#choiceOf(batch.responseTokenIds[i] as number[]);
      const p = this.#probs(key, 1);
      const row = this.#logits(key);
      loss -= a * Math.log(p[choice] as number);
      for (let k = 0; k < row.length; k++)
        row[k] =
          (row[k] as number) +
          (this.lr * a * ((k === choice ? 1 : 0) - (p[k] as number))) / batch.advantages.length;
    });
    this.steps++;
    return { loss: loss / Math.max(1, batch.advantages.length), numTensors: 0 };
  }

  /** The first token carries the choice's log-prob (and the table's entropy); the rest are certain. */
  async scoreResponses(batch: SftBatch): Promise<ResponseScores> {
    const logProbs: number[][] = [];
    const entropies: number[][] = [];
    batch.responseTokenIds.forEach((ids, i) => {
      const p = this.#probs(keyOf(batch.promptTokenIds[i] as number[]), 1);
      const choice = this.#choiceOf(ids);
      const entropy = -p.reduce((s, q) => s + (q > 0 ? q * Math.log(q) : 0), 0);
      logProbs.push(ids.map((_, j) => (j === 0 ? Math.log(p[choice] as number) : 0)));
      entropies.push(ids.map((_, j) => (j === 0 ? entropy : 0)));
    });
    return { logProbs, entropies };
  }

  async sftStep(batch: SftBatch): Promise<Record<string, number>> {
    return this.trainStep({
      promptTokenIds: batch.promptTokenIds,
      responseTokenIds: batch.responseTokenIds,
      oldLogProbs: batch.responseTokenIds.map((r) => r.map(() => 0)),
      advantages: batch.promptTokenIds.map(() => 1),
    });
  }

  async save(dir: string): Promise<void> {
    await writeFile(
      join(dir, 'table.json'),
      JSON.stringify({ steps: this.steps, table: [...this.table] }),
    );
  }

  async load(dir: string): Promise<void> {
    const data = JSON.parse(await readFile(join(dir, 'table.json'), 'utf8')) as {
      steps: number;
      table: [string, number[]][];
    };
    this.steps = data.steps;
    this.table = new Map(data.table);
  }
}
