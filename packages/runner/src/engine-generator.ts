/**
 * A rollout engine seen as the trainer's token-in / token-out policy for one weights version.
 */
import { assertWeightsVersion, type Policy, type RolloutEngine } from '@agentrl/core';

/**
 * The engine as a token-in / token-out policy whose every result must come from weights
 * version `version`. Engines that report no log-probs get zeros, replaced by the recomputation.
 */
export function engineGenerator(
  engine: RolloutEngine,
  version: number,
  seen: { logProbs: boolean },
): Policy {
  return {
    async generate(prompts, sampling) {
      const out = await engine.generate(prompts, sampling);
      assertWeightsVersion(engine.name, out, version);
      if (out.logProbs === undefined) seen.logProbs = false;
      return {
        tokenIds: out.tokenIds,
        logProbs: out.logProbs ?? out.tokenIds.map((row) => row.map(() => 0)),
        finishReasons: out.finishReasons,
      };
    },
  };
}
