/**
 * `docs/config-reference.md` is what `pnpm docs:config` (`tools/config-reference.ts`) writes from
 * the run config's schema, the estimators' options and the envs' options now: a default or a
 * description changed in its schema without regenerating the page fails here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFIG_REFERENCE_PATH, configReference } from '../../../tools/config-reference.ts';
import { runConfigSchema } from '../src/config.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('config reference', () => {
  it('the committed docs/config-reference.md is what pnpm docs:config generates now', async () => {
    const committed = readFileSync(join(ROOT, CONFIG_REFERENCE_PATH), 'utf8');
    const generated = await configReference();
    expect(
      committed,
      `${CONFIG_REFERENCE_PATH} is out of date with the schemas it documents: run \`pnpm docs:config\` and commit the result`,
    ).toBe(generated);
  });

  it('names every key of the run config with its default', async () => {
    const text = await configReference();
    for (const [section, schema] of Object.entries(runConfigSchema.shape)) {
      if (section === 'baseDir') continue;
      expect(text).toContain(`| \`${section}\` |`);
      const inner = schema.def.type === 'default' ? schema.def.innerType : schema;
      if (inner.def.type !== 'object') continue;
      for (const key of Object.keys((inner as { shape: object }).shape))
        expect(text).toContain(`| \`${section}.${key}\` |`);
    }
    expect(text).toContain('| `rollout.groupSize` | integer ≥ 1 | `8` |');
    expect(text).toContain('| `stepAdvantageWeight` | `1` |');
  });
});
