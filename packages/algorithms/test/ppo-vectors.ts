/**
 * Loads the PPO/GAE parity vectors (`fixtures/ppo-gae/vectors.json` of the repository, outputs of
 * verl-agent's own functions; `fixtures/README.md` says how they were made).
 */
import { readFileSync } from 'node:fs';
import { fixturePath } from '@agentrl/core/test';
import type { LossAggMode } from '../src/loss-options.ts';

type M = number[][];

export interface GaeCase {
  id: string;
  description: string;
  options: { gamma: number; lam: number };
  inputs: { tokenLevelRewards: M; values: M; responseMask: M };
  outputs: { advantages: M; returns: M };
}

export interface GaeErrorCase {
  id: string;
  options: { gamma: number; lam: number };
  inputs: { tokenLevelRewards: M; values: M; responseMask: M };
  referenceError: string;
}

export interface ValueLossCase {
  id: string;
  description: string;
  options: { cliprangeValue: number; lossAggMode: LossAggMode };
  inputs: { vpreds: M; returns: M; values: M; responseMask: M };
  outputs: { vfLoss: number; vfClipfrac: number };
}

export interface PPOVectors {
  schema: 'agentrl.ppo-gae-vectors/1';
  source: { commit: string };
  tolerances: { relative: number; absolute: number };
  gaeCases: GaeCase[];
  gaeErrorCases: GaeErrorCase[];
  valueLossCases: ValueLossCase[];
}

let cached: PPOVectors | undefined;

/** The parsed vectors (read once per test file). */
export function loadPPOVectors(): PPOVectors {
  if (cached === undefined) {
    const path = fixturePath('ppo-gae', 'vectors.json');
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if ((parsed as { schema?: unknown } | null)?.schema !== 'agentrl.ppo-gae-vectors/1') {
      throw new Error(`${path}: not an agentrl.ppo-gae-vectors/1 file`);
    }
    cached = parsed as PPOVectors;
  }
  return cached;
}
