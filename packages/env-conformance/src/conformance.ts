/**
 * `describeEnvConformance`: the vitest suite of {@link checkEnv}, one test per rule. Call it at
 * the top level of a `*.test.ts` file.
 */
import { describe, expect, it } from 'vitest';
import {
  checkEnv,
  ENV_RULE_DESCRIPTIONS,
  ENV_RULES,
  type EnvCheckOptions,
  type EnvFactory,
  type EnvFinding,
  type EnvRule,
} from './check.ts';

/**
 * Options of {@link describeEnvConformance}: those of {@link checkEnv} (but `rules`: the suite
 * checks every rule, one test each), with the suite name required and a per-test timeout.
 */
export interface EnvConformanceOptions extends Omit<EnvCheckOptions, 'name' | 'rules'> {
  /** Suite name, usually the env id (it also seeds the parser fuzzing). */
  readonly name: string;
  /** Per-test timeout in milliseconds. Default 120,000. */
  readonly timeoutMs?: number;
}

/**
 * Declares the conformance suite of an environment: one test per rule of {@link checkEnv}.
 * `factory` builds a fresh instance; every instance is closed. The env rules run once (on the
 * first test that needs them) and each test reports its own rule's finding; the parser fuzzing
 * runs in its own test.
 */
export function describeEnvConformance(factory: EnvFactory, options: EnvConformanceOptions): void {
  const { timeoutMs, ...checkOptions } = options;
  const timeout = timeoutMs ?? 120_000;
  const envRules = ENV_RULES.filter((r) => r !== 'parser-never-throws');
  let envFindings: Promise<EnvFinding[]> | undefined;
  const findingsFor = async (rule: EnvRule): Promise<EnvFinding[]> => {
    if (rule === 'parser-never-throws') {
      return await checkEnv(factory, { ...checkOptions, rules: [rule] });
    }
    envFindings ??= checkEnv(factory, { ...checkOptions, rules: envRules });
    return (await envFindings).filter((f) => f.rule === rule);
  };

  describe(`${options.name}: env conformance`, () => {
    for (const rule of ENV_RULES) {
      it(
        `${rule}: ${ENV_RULE_DESCRIPTIONS[rule]}`,
        async () => {
          const found = await findingsFor(rule);
          expect(found.map((f) => f.message)).toEqual([]);
        },
        timeout,
      );
    }
  });
}
