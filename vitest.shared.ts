import type { UserWorkspaceConfig } from 'vitest/config';

/**
 * The vitest settings every package shares: resolve workspace packages to their TypeScript
 * sources (the `@agentrl/source` export condition), so tests never need a build first.
 */
export function agentrlVitest(overrides: UserWorkspaceConfig['test'] = {}): UserWorkspaceConfig {
  const conditions = ['@agentrl/source', 'module', 'node', 'import', 'default'];
  return {
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: ['@agentrl/source'] } },
    test: {
      include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
      // Sized for the slowest machine CI may get, hooks as much as tests (vitest's 10 s hook
      // default once failed a fresh 2-core machine); no test relies on finishing sooner.
      testTimeout: 60_000,
      hookTimeout: 60_000,
      ...overrides,
    },
  };
}
