/**
 * The WebShop presets resolve and validate without training: the env module loads, the env
 * options are the registration's, `webshop-cpu`'s env plays a generated goal to the end with the
 * package's expert, and `webshop-paper` holds the paper's settings. Then `webshop-cpu` through the
 * CLI at a tiny budget: train, sft from the module's expert, eval with the WebShop score.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HistoryEntry } from '@agentrl/core';
import { webshopCompactPrompt } from '@agentrl/env-webshop';
import { describe, expect, it } from 'vitest';
import { freshRunDir, readMetrics, runCli } from '../test/cli.ts';
import { resolveConfig } from './cli.ts';
import { formatResponse, parseRunConfig } from './config.ts';
import { expertOf, loadEnvSpecs } from './plugins.ts';
import { PRESETS } from './presets.ts';

function resolved(name: string) {
  const preset = PRESETS[name];
  if (!preset) throw new Error(`no preset ${name}`);
  return parseRunConfig({ ...preset, model: { ...preset.model, path: '.' } });
}

describe('the WebShop presets', () => {
  it("webshop-paper holds the paper's WebShop settings and its env options are the env's", async () => {
    const c = resolved('webshop-paper');
    expect([
      c.rollout.batchSize / c.rollout.groupSize,
      c.rollout.groupSize,
      c.rollout.maxTurns,
    ]).toEqual([16, 8, 15]);
    expect(c.env.options).toMatchObject({ maxSteps: 15, goals: 'synthetic' });
    expect(c.algorithm.options).toMatchObject({
      mode: 'mean_norm',
      gamma: 0.95,
      stepAdvantageWeight: 1,
      invalidActionPenalty: 0.1,
    });
    expect(c.model.options).toMatchObject({ learningRate: 1e-6, klLossCoef: 0.01 });
    expect(c.validation).toMatchObject({ every: 5, episodes: 128, temperature: 0.4 });
    const envs = await loadEnvSpecs(c);
    expect(envs.val.metrics?.map((m) => m.label)).toEqual(['WebShop score']);
  });

  it("webshop-cpu prompts with the env's compact prompt and teaches a response its parser reads, and other prompt names or templates are refused", async () => {
    const c = resolved('webshop-cpu');
    expect(c.env.prompt).toBe('compact');
    expect(c.model.options.architecture).toMatchObject({
      vocabularyFrom: 'expert',
      letterDigitRuns: 'whole',
    });
    const envs = await loadEnvSpecs(c);
    for (const spec of [envs.train, envs.val]) expect(spec.prompt).toBe(webshopCompactPrompt);
    for (const action of ['search[red running shoes]', 'click[b0abcdefgh]', 'click[buy now]'])
      expect(envs.train.parser(formatResponse(c.sft, action))).toEqual({
        action,
        valid: true,
      });
    await expect(loadEnvSpecs({ ...c, env: { ...c.env, prompt: 'short' } })).rejects.toThrow(
      'env.prompt "short" is not a prompt template of webshop/text-v1: use one of "compact", or leave env.prompt out for the default',
    );
    expect(() =>
      resolveConfig({ preset: 'webshop-cpu', set: ['sft.responseTemplate=<action>'] }),
    ).toThrow(/sft\.responseTemplate.*must contain \{action\} exactly once/);
  });

  it('webshop-cpu builds its generated shop, and the env module expert wins a goal in it', async () => {
    const c = resolved('webshop-cpu');
    const envs = await loadEnvSpecs(c);
    const expert = expertOf(envs.module);
    if (!expert) throw new Error('@agentrl/env-webshop exports no expert');
    const env = await envs.train.create();
    const reset = await env.reset({ seed: 1 });
    let current = reset.observation;
    let info = reset.info;
    const history: HistoryEntry[] = [];
    let won = false;
    for (let t = 0; t < c.rollout.maxTurns; t++) {
      const action = await expert({
        initialObservation: reset.observation,
        history,
        current,
        stepIndex: t,
        info,
      });
      const step = await env.step(action);
      history.push({ observation: current, action });
      current = step.observation;
      info = step.info;
      if (step.terminated || step.truncated) {
        won = step.info.won === true;
        break;
      }
    }
    await env.close();
    expect(won).toBe(true);
    expect(envs.train.metrics?.[0]).toMatchObject({ infoField: 'taskScore', scale: 100 });
  });

  it('trains, warm-starts and evaluates through the CLI on webshop-cpu, reporting the WebShop score', async () => {
    const runDir = freshRunDir('agentrl-webshop-preset-');
    const tiny = [
      ...['rollout.batchSize=4', 'rollout.groupSize=2', 'rollout.maxTurns=4'],
      ...['validation.every=1', 'validation.episodes=2'],
      ...['model.options.architecture.vocabularyEpisodes=4'],
      ...['model.options.architecture.hiddenSize=32', 'model.options.architecture.layers=1'],
    ].flatMap((s) => ['--set', s]);
    const preset = ['--preset', 'webshop-cpu', '--run-dir', runDir];
    // The preset's phases at a tiny budget: 2 expert goals (up to 15 steps each), 1 SFT step.
    const warm = ['sft.episodes=2', 'sft.steps=1', 'sft.batchSize=2', 'rollout.maxTurns=15'];
    const train = await runCli([
      'train',
      ...preset,
      '--iterations',
      '1',
      ...tiny,
      ...warm.flatMap((s) => ['--set', s]),
    ]);
    expect(train.code, train.err).toBe(0);
    expect(readMetrics(runDir).some((m) => m['val/env/score'] !== undefined)).toBe(true);
    // The headline's rows carry the WebShop score beside success.
    const headline = JSON.parse(readFileSync(join(runDir, 'headline.json'), 'utf8')) as {
      label: string;
      metrics?: Record<string, number>;
    }[];
    expect(headline).toHaveLength(3);
    for (const row of headline) expect(row.metrics?.['WebShop score']).toBeGreaterThanOrEqual(0);
    expect(train.out).toMatch(/after GiGPO \(1 iteration\)\s+\d\/2 .*WebShop score \d+\.\d\d/);
    const sft = await runCli([
      'sft',
      ...preset,
      ...['--set', 'sft.episodes=2', '--set', 'sft.steps=1', '--set', 'sft.batchSize=2'],
      ...tiny,
      // the expert needs up to about 8 steps: the demonstrations get the env's 15
      ...['--set', 'rollout.maxTurns=15'],
    ]);
    expect(sft.code, sft.err).toBe(0);
    expect(sft.err).toMatch(/expert won \d+\/2 episodes/);
    const evaluation = await runCli(['eval', ...preset, '--episodes', '2', ...tiny]);
    expect(evaluation.code, evaluation.err).toBe(0);
    expect(evaluation.out).toMatch(/WebShop score \d+\.\d\d/);
    const written = JSON.parse(readFileSync(join(runDir, 'eval.json'), 'utf8'));
    expect(written.envMetrics[0]).toMatchObject({ name: 'score', label: 'WebShop score' });
  }, 0);
});
