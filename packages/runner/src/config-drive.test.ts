/**
 * A user drives runs from presets, config files and `--set`: every way of saying what they want
 * ends in a working run or an error that names the fix.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { isAgentRLError } from '@agentrl/core';
import { DATA_FILES, generateSyntheticCatalogue, type WebshopEnv } from '@agentrl/env-webshop';
import { describe, expect, it } from 'vitest';
import { TabularPolicy, tokenizer } from '../test/tabular-policy.ts';
import { tempDir } from '../test/temp-dir.ts';
import { resolveConfig } from './cli.ts';
import { applyOverride } from './config.ts';
import { checkSequenceBudget, importModule, loadEnvSpecs } from './plugins.ts';
import { runSft } from './sft.ts';

const REPO = resolve(import.meta.dirname, '..', '..', '..');

/** A config file in a fresh folder, and that folder. */
function configFile(yaml: string): { path: string; dir: string } {
  const dir = tempDir('agentrl-config-drive-');
  const path = join(dir, 'run.yaml');
  writeFileSync(path, yaml);
  return { path, dir };
}

describe('--set', () => {
  it('reads a value starting with @ as the string it says, and asks to quote a value YAML refuses', () => {
    expect(applyOverride({}, 'env.module=@agentrl/env-webshop')).toEqual({
      env: { module: '@agentrl/env-webshop' },
    });
    expect(() => applyOverride({}, 'env.module=[a')).toThrow(
      /--set env\.module: the value "\[a" does not parse as YAML .*quote it.*--set 'env\.module="\[a"'/,
    );
  });

  it('removes a key with null, putting a preset section back to its default', () => {
    const config = resolveConfig({
      preset: 'webshop-cpu',
      set: ['env.options=null', 'env.options.maxSteps=4', 'env.valOptions=null'],
    });
    expect(config.env.options).toEqual({ maxSteps: 4 });
    expect(config.env.valOptions).toEqual({});
  });
});

describe("a preset's env settings", () => {
  it('belong to its env: another env.id from --set or a config file starts from none of them', () => {
    const switched = resolveConfig({
      preset: 'alfworld-cpu',
      set: ['env.options.maxSteps=3', 'env.id=webshop/text-v1'],
    });
    expect(switched.env.id).toBe('webshop/text-v1');
    expect(switched.env.module).toBeUndefined();
    expect(switched.env.options).toEqual({ maxSteps: 3 });
    // The rest of the preset stays.
    expect(switched.model.module).toBe('@agentrl/runner/tfjs-fresh');
    const file = configFile('env:\n  id: search/qa-v1\n  options: { generator: { seed: 1 } }\n');
    const fromFile = resolveConfig({ preset: 'alfworld-cpu', config: file.path });
    expect(fromFile.env.options).toEqual({ generator: { seed: 1 } });
    const same = resolveConfig({ preset: 'alfworld-cpu', set: ['env.id=alfworld/text-v1'] });
    expect(same.env.options).toEqual(resolveConfig({ preset: 'alfworld-cpu' }).env.options);
  });

  it('of a known env family need no module: the package that registers the id is imported', async () => {
    const config = resolveConfig({
      preset: 'alfworld-cpu',
      set: [
        'env.id=webshop/text-v1',
        'env.options={catalogue: {kind: synthetic, size: 40, seed: 2}, maxSteps: 3}',
      ],
    });
    const { train } = await loadEnvSpecs(config);
    const env = await train.create();
    const { observation } = await env.reset({ seed: 0 });
    expect(observation.admissibleActions).toContain('click[search]');
    await env.close();
  });
});

describe('env modules', () => {
  it('resolve by package name from a project folder, from anywhere in this workspace, and as a folder', async () => {
    const project = tempDir('agentrl-project-');
    const pkg = join(project, 'node_modules', '@someone', 'my-env');
    mkdirSync(join(pkg, 'lib'), { recursive: true });
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({
        name: '@someone/my-env',
        type: 'module',
        exports: { '.': './lib/main.js' },
      }),
    );
    writeFileSync(join(pkg, 'lib', 'main.js'), 'export const registered = "my-env";\n');
    const deep = join(project, 'configs', 'nested');
    mkdirSync(deep, { recursive: true });
    expect((await importModule('@someone/my-env', 'env.module', deep)).registered).toBe('my-env');
    // A workspace package the runner does not depend on, from the repository's root.
    const conformance = await importModule('@agentrl/env-conformance', 'env.module', REPO);
    expect(Object.keys(conformance).length).toBeGreaterThan(0);
    // A package folder, relative to the config's folder.
    const folder = await importModule('./packages/env-webshop', 'env.module', REPO);
    expect(folder.createWebshopEnv).toBeTypeOf('function');
    await expect(importModule('@someone/absent', 'env.module', deep)).rejects.toSatisfy(
      (e) =>
        isAgentRLError(e, 'BAD_CONFIG') && /install the package or fix the path/.test(String(e)),
    );
  });
});

describe('env options from a config file', () => {
  it('take an HTTP retriever as { url } and resolve relative data paths from the config file', async () => {
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.setHeader('content-type', 'application/json');
        response.end(
          JSON.stringify({
            result: [[{ document: { id: '7', contents: '"Rome"\nRome is in Italy.' } }]],
          }),
        );
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const { port } = server.address() as AddressInfo;
      const file = configFile(
        [
          'env:',
          '  id: search/qa-v1',
          '  options:',
          `    retriever: { url: "http://127.0.0.1:${port}/retrieve", maxAttempts: 1 }`,
          '    questions: ./data/questions.jsonl',
          'model: { backend: module, module: "@agentrl/runner/tfjs-fresh" }',
        ].join('\n'),
      );
      mkdirSync(join(file.dir, 'data'));
      writeFileSync(
        join(file.dir, 'data', 'questions.jsonl'),
        `${JSON.stringify({ id: 'q', question: 'where is rome?', golden_answers: ['Italy'], data_source: 'nq' })}\n`,
      );
      const { train } = await loadEnvSpecs(resolveConfig({ config: file.path }));
      const env = await train.create();
      const { observation } = await env.reset({ seed: 0 });
      expect(observation.text).toBe('where is rome?');
      const searched = await env.step('<search>rome</search>');
      expect(searched.observation.text).toContain('Rome is in Italy.');
      await env.close();
      const bad = configFile(
        'env:\n  id: search/qa-v1\n  options: { retriever: { host: x }, questions: ./q.jsonl }\n',
      );
      const badSpecs = await loadEnvSpecs(
        resolveConfig({ config: bad.path, set: ['model.backend=module', 'model.module=x'] }),
      );
      await expect(Promise.resolve().then(() => badSpecs.train.create())).rejects.toThrow(
        /retriever must be \{ url: /,
      );
    } finally {
      server.close();
    }
  });

  it('give every WebShop slot of a process one shop, also when the shop is set as plain data', async () => {
    const config = resolveConfig({
      preset: 'webshop-cpu',
      set: [
        'env.options=null',
        'env.options.shop={catalogue: {kind: synthetic, size: 30, seed: 4}}',
      ],
    });
    const { train, val } = await loadEnvSpecs(config);
    const envs = (await Promise.all([
      train.create(),
      train.create(),
      val.create(),
    ])) as WebshopEnv[];
    expect(envs[0]?.shop).toBe(envs[1]?.shop);
    expect(envs[0]?.shop.products).toHaveLength(30);
    for (const env of envs) await env.close();
  });
});

describe('WebShop data folders in a config file', () => {
  it('resolve against the config file, also inside shop and catalogue, and misspelt keys there are named', async () => {
    const file = configFile(
      [
        'env:',
        '  id: webshop/text-v1',
        '  options: { shop: { catalogue: { kind: data, dataDir: ./shop-data } } }',
        'model: { backend: module, module: "@agentrl/runner/tfjs-fresh" }',
      ].join('\n'),
    );
    // The real file format, written by the package's generator.
    const files = generateSyntheticCatalogue({ size: 25, seed: 3 });
    mkdirSync(join(file.dir, 'shop-data'));
    writeFileSync(join(file.dir, 'shop-data', DATA_FILES.products), JSON.stringify(files.products));
    writeFileSync(
      join(file.dir, 'shop-data', DATA_FILES.attributes),
      JSON.stringify(files.attributes),
    );
    const { train } = await loadEnvSpecs(resolveConfig({ config: file.path }));
    const env = (await train.create()) as WebshopEnv;
    expect(env.shop.products).toHaveLength(25);
    await env.close();
    const typo = resolveConfig({
      preset: 'webshop-cpu',
      set: ['env.options=null', 'env.options.catalogue={kind: synthetic, sise: 30}'],
    });
    await expect(loadEnvSpecs(typo)).rejects.toThrow(
      /unknown key "env\.options\.catalogue\.sise".*did you mean "size"/,
    );
  });
});

describe('flags', () => {
  it('--split on an env without ALFWorld splits is refused, naming the env and the option to use', () => {
    expect(() => resolveConfig({ preset: 'webshop-cpu', split: 'valid_unseen' })).toThrow(
      /validation\.split \(--split\) "valid_unseen" .* alfworld\/\* envs only, not webshop\/text-v1; .*env\.valOptions/,
    );
    expect(resolveConfig({ preset: 'alfworld-cpu', split: 'valid_unseen' }).validation.split).toBe(
      'valid_unseen',
    );
  });
});

describe('rollouts', () => {
  it('refuse a prompt budget that cannot fit the model with its responses, naming the largest that fits', () => {
    const config = resolveConfig({
      preset: 'alfworld-cpu',
      set: ['rollout.maxPromptTokens=2000', 'rollout.maxNewTokens=100'],
    });
    expect(() => checkSequenceBudget(config, { maxPositions: 2048 })).toThrow(
      /rollout\.maxPromptTokens \(2000\) \+ rollout\.maxNewTokens \(100\) = 2100 tokens exceed the model's 2048 positions: set rollout\.maxPromptTokens to at most 1948/,
    );
    expect(() => checkSequenceBudget(config, { maxPositions: 4096 })).not.toThrow();
  });
});

describe('supervised warm starts', () => {
  it('refuse a demonstration longer than the model, naming the limit and rollout.maxPromptTokens, and keep prompts to it', async () => {
    const demonstrations = [
      { prompt: 'go east '.repeat(40), response: '<action>go west</action>' },
      { prompt: 'Now: go west', response: '<action>go east</action>' },
    ];
    const options = {
      policy: new TabularPolicy(),
      tokenizer,
      demonstrations,
      steps: 1,
      batchSize: 2,
      seed: 0,
      maxSequenceTokens: 64,
    };
    const refusal = await runSft(options).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isAgentRLError(refusal, 'BAD_CONFIG')).toBe(true);
    const message = String((refusal as Error).message);
    expect(message).toMatch(
      /^demonstration 0 has \d+ tokens \(prompt \d+ \+ response \d+\), above the model's 64 positions \(1 of 2 demonstrations are\): set rollout\.maxPromptTokens to at most \d+/,
    );
    const suggested = Number(/at most (\d+)/.exec(message)?.[1]);
    expect(await runSft({ ...options, maxPromptTokens: suggested })).toHaveLength(1);
  });
});
