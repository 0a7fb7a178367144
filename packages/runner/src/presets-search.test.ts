import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { searchCompactPrompt } from '@agentrl/env-search';
import { describe, expect, it } from 'vitest';
import { freshRunDir, readMetrics, runCli } from '../test/cli.ts';
import { formatResponse, parseRunConfig } from './config.ts';
import { createEstimator } from './estimators.ts';
import { expertOf, loadEnvSpecs } from './plugins.ts';
import { PRESETS } from './presets.ts';

function resolved(name: 'search-paper' | 'search-cpu') {
  const preset = PRESETS[name];
  return parseRunConfig({ ...preset, model: { ...preset?.model, path: '.' } });
}

describe('the search presets', () => {
  it("search-paper holds the settings of the paper's search-QA run and validates without training", async () => {
    const c = resolved('search-paper');
    expect([
      c.rollout.batchSize / c.rollout.groupSize,
      c.rollout.groupSize,
      c.rollout.maxTurns,
      c.rollout.maxPromptTokens,
      c.rollout.maxNewTokens,
    ]).toEqual([256, 5, 4, 4096, 512]);
    expect(c.algorithm).toMatchObject({
      name: 'gigpo',
      options: {
        mode: 'mean_std_norm',
        gamma: 0.95,
        stepAdvantageWeight: 1,
        invalidActionPenalty: 0.01,
        similarityThreshold: 0.9,
      },
    });
    expect(c.model.options).toMatchObject({
      learningRate: 1e-6,
      klLossType: 'low_var_kl',
      klLossCoef: 0.001,
      entropyCoeff: 0,
    });
    expect(PRESETS['search-paper']?.model?.path).toMatch(/Qwen2\.5-\d+B-Instruct$/);
    expect(c.env.options).toMatchObject({
      maxTurns: 4,
      topK: 3,
      historyLength: 4,
      retriever: { url: expect.stringMatching(/^http:\/\/.+\/retrieve$/) },
    });
    expect(c.validation.episodes).toBe(512);
    // The estimator accepts the algorithm options; the env module loads and declares every env
    // option key (the env itself needs the user's question files and retrieval server).
    createEstimator(c.algorithm.name, c.algorithm.options);
    const { module } = await loadEnvSpecs(c);
    expect(expertOf(module)).toBeTypeOf('function');
  });

  it('search-cpu trains on generated questions, validates on the held-out ones, and its expert wins them', async () => {
    const c = resolved('search-cpu');
    createEstimator(c.algorithm.name, c.algorithm.options);
    expect(c.algorithm.options).toMatchObject({
      similarityThreshold: 0.9,
      invalidActionPenalty: 0.01,
    });
    const { train, val, module } = await loadEnvSpecs(c);
    // The env's compact prompt, and the expert's actions with a space inside their own tags.
    for (const spec of [train, val]) expect(spec.prompt).toBe(searchCompactPrompt);
    expect(c.model.options.architecture).toMatchObject({ vocabularyFrom: 'expert' });
    for (const action of ['<search>kelmo</search>', '<answer>vesk</answer>']) {
      const response = formatResponse(c.sft, action);
      expect(response).toBe(action.replace(/^(<\w+>)(.*)(<\/\w+>)$/, '$1 $2 $3'));
      expect(val.parser(response)).toEqual({ action, valid: true });
    }
    expect(val.metrics?.map((m) => [m.infoField, m.groupBy])).toEqual([['em', 'dataSource']]);
    const expert = expertOf(module);
    if (expert === undefined) throw new Error('env-search exports no expert');
    const seen: Record<'train' | 'val', Set<string>> = { train: new Set(), val: new Set() };
    for (const [name, spec] of [
      ['train', train],
      ['val', val],
    ] as const) {
      const env = await spec.create();
      for (let seed = 0; seed < 20; seed++) {
        const reset = await env.reset({ seed });
        seen[name].add(String(reset.info.questionId));
        // Success per data source is exact match per data source (the paper's columns).
        expect(spec.taskTypeOf?.(reset.info)).toMatch(/^synthetic-(single|multihop)$/);
        const history: { observation: typeof reset.observation; action: string }[] = [];
        let current = reset.observation;
        let info = reset.info;
        for (let stepIndex = 0; stepIndex < c.rollout.maxTurns; stepIndex++) {
          const context = {
            initialObservation: reset.observation,
            history,
            current,
            stepIndex,
            info,
          };
          const action = await expert(context);
          expect(spec.prompt(context).length).toBeGreaterThan(0);
          const step = await env.step(spec.parser(action).action);
          history.push({ observation: current, action });
          current = step.observation;
          info = step.info;
          if (step.terminated || step.truncated) break;
        }
        expect(info).toMatchObject({ won: true });
      }
      await env.close();
    }
    for (const id of seen.val) expect(seen.train.has(id)).toBe(false);
  }, 0);

  it('warm-starts, trains, evaluates and reports through the CLI on search-cpu, with exact match per data source', async () => {
    const dir = freshRunDir('agentrl-search-preset-');
    const tiny = [
      ...['rollout.batchSize=4', 'rollout.groupSize=2', 'validation.every=1'],
      ...['validation.episodes=4', 'model.options.architecture.vocabularyEpisodes=8'],
      ...['model.options.architecture.hiddenSize=32', 'model.options.architecture.layers=1'],
      ...['sft.episodes=8', 'sft.steps=2', 'sft.batchSize=4'],
    ].flatMap((s) => ['--set', s]);
    const preset = ['--preset', 'search-cpu'];
    const sft = await runCli(['sft', ...preset, '--run-dir', dir, ...tiny]);
    expect(sft.code, sft.err).toBe(0);
    expect(sft.err).toMatch(/expert won \d+\/8 episodes/);
    const rl = `${dir}-rl`;
    const fromSft = ['--set', `model.path=${dir}/sft/model`];
    const train = await runCli([
      'train',
      ...preset,
      '--run-dir',
      rl,
      '--iterations',
      '1',
      ...tiny,
      ...fromSft,
    ]);
    expect(train.code, train.err).toBe(0);
    // The warm start's tokenizer came along, so eval on the RL run reads what it trained with.
    expect(readFileSync(join(rl, 'model-init', 'tokenizer.json'), 'utf8')).toBe(
      readFileSync(join(dir, 'model-init', 'tokenizer.json'), 'utf8'),
    );
    const last = readMetrics(rl).at(-1) ?? {};
    expect(Object.keys(last).filter((k) => k.startsWith('val/env/em/'))).not.toHaveLength(0);
    const checkpoint = `${rl}/checkpoints/iter-000001`;
    const evaluation = await runCli([
      'eval',
      ...preset,
      '--run-dir',
      rl,
      '--checkpoint',
      checkpoint,
      ...tiny,
    ]);
    expect(evaluation.code, evaluation.err).toBe(0);
    // The checkpoint's run says how its model was built (from the warm start, whose tokenizer
    // the RL run copied above).
    expect(evaluation.err).toMatch(
      /the model as the checkpoint's run built it \(.*-rl\/config\.resolved\.json\)/,
    );
    expect(evaluation.err).toMatch(/weights from .*\/sft\/model/);
    expect(evaluation.out).toMatch(/exact match \d+\.\d\d/);
    const report = await runCli(['report', rl]);
    expect(report.code, report.err).toBe(0);
    expect(readFileSync(join(rl, 'report.html'), 'utf8')).toMatch(
      /val\/env\/em\/synthetic-(single|multihop)/,
    );
  }, 0);
});
