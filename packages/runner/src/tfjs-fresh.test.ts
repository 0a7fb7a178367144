/**
 * The fresh model's vocabulary (`freshVocabulary` of `@agentrl/runner/tfjs-fresh`) as the CPU
 * presets build it through the CLI: from the env's expert episodes on the training and the
 * held-out env, every expert response of a held-out task is written in a handful of whole
 * pieces, decodes back to itself and parses as the same action. On ALFWorld a random player's
 * episodes hold the same words (every command an expert writes is in some admissible list the
 * random player reads), so there the expert's vocabulary is as short, not shorter.
 */
import { join } from 'node:path';
import { loadTokenizer, writeTokenizerFiles } from '@agentrl/model-tfjs';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test/temp-dir.ts';
import { resolveConfig } from './cli.ts';
import { DEFAULT_RESPONSE_TEMPLATE, formatResponse, parseRunConfig } from './config.ts';
import { loadEnvSpecs } from './plugins.ts';
import { collectDemonstrations } from './sft.ts';
import { freshVocabulary } from './tfjs-fresh.ts';

const silent = { info: () => {}, warn: () => {} };

/** The tokens of the expert's responses on 12 held-out tasks, under the preset's vocabulary built as `from` says. */
async function responseTokens(preset: string, from: 'random' | 'expert'): Promise<number> {
  const config = resolveConfig({ preset, 'run-dir': tempDir('agentrl-fresh-vocab-') });
  const envs = await loadEnvSpecs(config);
  const architecture = {
    ...(config.model.options.architecture as object),
    vocabularyFrom: from,
    vocabularyEpisodes: 40,
  };
  const dir = join(config.runDir, 'model-init');
  await writeTokenizerFiles(
    dir,
    await freshVocabulary(
      { config, env: envs.train, valEnv: envs.val, logger: silent },
      architecture,
    ),
  );
  const tokenizer = await loadTokenizer(dir);
  const expert = envs.val.expert;
  if (expert === undefined) throw new Error(`${config.env.module} exports no expert`);
  const { demonstrations } = await collectDemonstrations({
    env: envs.val,
    expert,
    episodes: 12,
    seed: 5000,
    maxTurns: config.rollout.maxTurns,
    formatResponse: (a) => formatResponse(config.sft, a),
  });
  expect(demonstrations.length).toBeGreaterThan(0);
  let tokens = 0;
  for (const { response } of demonstrations) {
    const ids = tokenizer.encode(response);
    const decoded = tokenizer.decode(ids, { skipSpecialTokens: true });
    expect(decoded).toBe(response);
    expect(envs.val.parser(decoded)).toMatchObject({ valid: true });
    tokens += ids.length;
  }
  if (from === 'expert')
    expect(tokens / demonstrations.length).toBeLessThan(config.rollout.maxNewTokens);
  return tokens;
}

describe('the fresh model vocabulary', () => {
  for (const preset of ['webshop-cpu', 'search-cpu']) {
    it(`built from the expert's episodes writes ${preset}'s held-out expert responses in fewer tokens than one built at random (under 70 %), and back exactly`, async () => {
      const expert = await responseTokens(preset, 'expert');
      const random = await responseTokens(preset, 'random');
      expect(expert).toBeLessThan(random * 0.7);
    }, 0);
  }

  it("built from the expert's episodes writes alfworld-cpu's held-out expert responses in no more tokens than one built at random, and back exactly", async () => {
    const expert = await responseTokens('alfworld-cpu', 'expert');
    const random = await responseTokens('alfworld-cpu', 'random');
    expect(expert).toBeLessThanOrEqual(random);
  }, 0);

  it("writes responses as the sft section says, and keeps the default template's pieces as the vocabulary always kept them", () => {
    expect(formatResponse({ responseTemplate: DEFAULT_RESPONSE_TEMPLATE }, ' ')).toBe(
      '<think>I act.</think><action> </action>',
    );
    expect(formatResponse({ responseTemplate: '<a>{action}</a>' }, 'x $& $1')).toBe(
      '<a>x $& $1</a>',
    );
    const spaced = { responseTemplate: '{action}', spaceInsideTags: true };
    expect(formatResponse(spaced, '<search>new york</search>')).toBe('<search> new york </search>');
    expect(formatResponse(spaced, 'click[red]')).toBe('click[red]');
  });

  it('with vocabularyFrom expert on an env module without an expert, fails naming the option', async () => {
    const config = parseRunConfig({
      env: { id: 'alfworld/text-v1', options: { source: 'generated' } },
      model: { backend: 'module', module: '@agentrl/runner/tfjs-fresh' },
      runDir: tempDir('agentrl-fresh-vocab-'),
    });
    const envs = await loadEnvSpecs(config);
    const { expert: _expert, ...withoutExpert } = envs.train;
    await expect(
      freshVocabulary(
        { config, env: withoutExpert, logger: silent },
        { vocabularyFrom: 'expert', vocabularyEpisodes: 1 },
      ),
    ).rejects.toThrow(/vocabularyFrom is "expert" but the env module .* exports no expert/);
  });
});
