/**
 * @agentrl/env-conformance — the rules every agentrl environment follows: `checkEnv` (a plain
 * function returning findings) and `describeEnvConformance` (its vitest suite).
 */
export { fixedAdversarialStrings, randomAdversarialString } from './adversarial.ts';
export {
  checkEnv,
  ENV_RULE_DESCRIPTIONS,
  ENV_RULES,
  type EnvCheckOptions,
  type EnvFactory,
  type EnvFinding,
  type EnvRule,
} from './check.ts';
export { describeEnvConformance, type EnvConformanceOptions } from './conformance.ts';
