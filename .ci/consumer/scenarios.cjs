'use strict';
// Small real programs that a user would write against the published packages. Each takes
// `load(specifier)`, which returns a module namespace through require() or through import(), so
// the same program checks both ways in. `.ci/registry-check.sh` installs `install` alone in a
// clean project (from the local registry), checks that none of `absent` was installed, then runs
// the program under the minimum Node version the packages declare.
const assert = require('node:assert/strict');
const { mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

/** Three trajectories of one task; a and b reach the same state and then part ways. */
function kitchenRecords() {
  const steps = [
    ['a', 'You are in the kitchen.', 'go to fridge 1', 0],
    ['a', 'You are at the fridge.', 'open fridge 1', 0],
    ['a', 'The fridge is open. You see an apple.', 'take apple 1', 10],
    ['b', 'You are in the kitchen.', 'go to fridge 1', 0],
    ['b', 'You are at the fridge.', 'go to sink 1', 0],
    ['b', 'You are at the sink.', 'look', 0],
    ['c', 'You are in the kitchen.', 'go to sink 1', 0],
    ['c', 'You are at the sink.', 'look', 0],
  ];
  const seen = new Map();
  return steps.map(([trajectoryId, anchor, action, reward]) => {
    const stepIndex = seen.get(trajectoryId) ?? 0;
    seen.set(trajectoryId, stepIndex + 1);
    return {
      groupId: 'kitchen',
      trajectoryId,
      stepIndex,
      anchor,
      reward,
      actionValid: true,
      action,
      promptTokenIds: [],
      responseTokenIds: [],
      responseLogProbs: [],
      terminated: reward > 0,
      truncated: false,
      won: reward > 0,
    };
  });
}

module.exports = {
  gigpo: {
    install: ['@agentrl/algorithms'],
    absent: ['@tensorflow/tfjs-core', '@tensorflow/tfjs'],
    async run(load) {
      const { stepBatchFromRecords } = await load('@agentrl/core');
      const algorithms = await load('@agentrl/algorithms');
      const records = kitchenRecords();
      const batch = stepBatchFromRecords(records);
      const gigpo = algorithms.computeGiGPOAdvantages(batch, {
        mode: 'mean_std_norm',
        gamma: 0.95,
        stepAdvantageWeight: 1,
      });
      const at = (i) => ({ episode: gigpo.episodeAdvantages[i], step: gigpo.stepAdvantages[i] });
      // the winner's steps get a positive episode advantage, the others negative ones
      for (const [i, r] of records.entries()) {
        assert.equal(at(i).episode > 0, r.trajectoryId === 'a');
      }
      // from the shared state "at the fridge", opening it beats walking away
      assert.ok(at(1).step > 0 && at(4).step < 0, 'step advantages at the shared state');
      assert.equal(at(2).step, 0, 'a state seen once has step advantage 0');
      const returns = algorithms.computeStepReturns(batch, { gamma: 0.5 });
      assert.equal(returns.stepReturns[0], 2.5);
      const kept = algorithms.filterGroupsWithEqualRewards({
        episodeRewards: [1, 0, 1, 1],
        groupSize: 2,
      });
      assert.deepEqual(Array.from(kept), [0, 1]);
      return `GiGPO advantages ${Array.from(gigpo.advantages, (a) => a.toFixed(3)).join(' ')}`;
    },
  },

  alfworld: {
    install: ['@agentrl/env-alfworld'],
    absent: ['@tensorflow/tfjs-core'],
    async run(load) {
      const { createAlfworldEnv, AlfworldExpert, TINY_HOUSEHOLD } =
        await load('@agentrl/env-alfworld');
      const env = createAlfworldEnv({
        source: 'generated',
        generator: TINY_HOUSEHOLD,
        maxSteps: 30,
      });
      let { observation } = await env.reset({ seed: 3 });
      const expert = new AlfworldExpert();
      let step;
      let turns = 0;
      do {
        step = await env.step(expert.act(observation.text, observation.admissibleActions ?? []));
        observation = step.observation;
        turns += 1;
      } while (!step.terminated && !step.truncated);
      await env.close();
      assert.equal(step.info.won, true, 'the expert wins a generated household');
      return `ALFWorld: the expert won a generated household in ${turns} steps`;
    },
  },

  envServer: {
    install: ['@agentrl/env-server', '@agentrl/env-alfworld'],
    absent: ['@tensorflow/tfjs-core'],
    async run(load) {
      const { TINY_HOUSEHOLD } = await load('@agentrl/env-alfworld');
      const { startEnvServer } = await load('@agentrl/env-server');
      const { WebSocket } = await load('ws');
      const server = await startEnvServer({
        envId: 'alfworld/text-v1',
        envOptions: { source: 'generated', generator: TINY_HOUSEHOLD },
        port: 0,
      });
      try {
        const health = await (await fetch(`${server.baseUrl}/health`)).json();
        assert.equal(health.status, 'healthy');
        const socket = new WebSocket(`${server.baseUrl.replace(/^http/, 'ws')}/ws`);
        const reply = await new Promise((resolve, reject) => {
          socket.once('open', () =>
            socket.send(JSON.stringify({ type: 'reset', data: { seed: 3 } })),
          );
          socket.once('message', (data) => resolve(JSON.parse(String(data))));
          socket.once('error', reject);
        });
        socket.close();
        assert.equal(reply.type, 'observation');
        assert.equal(reply.data.observation.anchor, reply.data.observation.text);
        return `env server: a reset over the WebSocket gave ${reply.data.observation.admissible_actions.length} admissible actions`;
      } finally {
        await server.close();
      }
    },
  },

  search: {
    install: ['@agentrl/env-search'],
    absent: ['onnxruntime-node', '@tensorflow/tfjs-core'],
    async run(load) {
      const search = await load('@agentrl/env-search');
      const passages = [
        {
          id: '1',
          contents: '"Doctor Strange (2016 film)"\nDoctor Strange is directed by Scott Derrickson.',
        },
        { id: '2', contents: '"Paris"\nParis is the capital of France.' },
        { id: '3', contents: '"Mount Everest"\nEverest is the highest mountain above sea level.' },
      ];
      const retriever = search.createBm25Retriever(search.buildBm25(passages));
      const env = search.createSearchEnv({
        retriever,
        questions: [
          {
            id: 'q0',
            question: 'Who directed Doctor Strange?',
            goldenAnswers: ['Scott Derrickson'],
            dataSource: 'nq',
          },
        ],
      });
      await env.reset({ seed: 0 });
      const found = await env.step(
        search.searchParser('<search>director Doctor Strange</search>').action,
      );
      assert.match(found.observation.text, /Scott Derrickson/);
      const done = await env.step(search.searchParser('<answer>Scott Derrickson</answer>').action);
      await env.close();
      assert.equal(done.terminated, true);
      assert.equal(done.reward, 1, 'exact match of the answer');
      return 'search QA: BM25 found the passage and the answer scored EM 1';
    },
  },

  webshop: {
    install: ['@agentrl/env-webshop'],
    absent: ['puppeteer-core'],
    async run(load) {
      const { createWebshopEnv, webshopParser } = await load('@agentrl/env-webshop');
      const env = createWebshopEnv({
        catalogue: { kind: 'synthetic', size: 50 },
        split: 'train',
        seed: 0,
      });
      const { observation, info } = await env.reset({ seed: 7 });
      assert.equal(typeof info.task, 'string');
      let step = await env.step(webshopParser(`<action>search[${info.task}]</action>`).action);
      const actions = step.observation.admissibleActions ?? [];
      const item = actions.find((a) => /^click\[[A-Z0-9]{10}\]$/i.test(a));
      assert.ok(item, `a product link on the results page (${actions.slice(0, 6).join(', ')})`);
      step = await env.step(item);
      step = await env.step('click[buy now]');
      await env.close();
      assert.equal(step.terminated, true, 'buying ends the episode');
      const score = step.info.taskScore;
      assert.ok(score >= 0 && score <= 1, `WebShop score in [0, 1], got ${score}`);
      assert.equal(step.reward, score === 1 ? 10 : 0, 'reward 10 exactly when the score is 1');
      return `WebShop: ${observation.anchor} -> search -> ${item} -> buy now, score ${score.toFixed(3)}`;
    },
  },

  gguf: {
    install: ['@agentrl/engine-llamacpp', '@agentrl/core'],
    absent: ['@agentrl/model-tfjs', '@tensorflow/tfjs', '@tensorflow/tfjs-core'],
    async run(load) {
      const { writeSafetensors } = await load('@agentrl/core/checkpoint');
      const { checkpointToGguf } = await load('@agentrl/engine-llamacpp');
      const dir = mkdtempSync(join(tmpdir(), 'agentrl-gguf-'));
      try {
        // A one-layer Qwen2 checkpoint with a tied head: every tensor the converter expects.
        const [V, H, I, L] = [8, 8, 16, 1];
        const config = {
          model_type: 'qwen2',
          vocab_size: V,
          hidden_size: H,
          intermediate_size: I,
          num_hidden_layers: L,
          num_attention_heads: 2,
          num_key_value_heads: 1,
          tie_word_embeddings: true,
          torch_dtype: 'bfloat16',
          eos_token_id: 1,
        };
        const kv = H / 2;
        const shapes = {
          'model.embed_tokens.weight': [V, H],
          'model.norm.weight': [H],
          'model.layers.0.input_layernorm.weight': [H],
          'model.layers.0.post_attention_layernorm.weight': [H],
          'model.layers.0.self_attn.q_proj.weight': [H, H],
          'model.layers.0.self_attn.q_proj.bias': [H],
          'model.layers.0.self_attn.k_proj.weight': [kv, H],
          'model.layers.0.self_attn.k_proj.bias': [kv],
          'model.layers.0.self_attn.v_proj.weight': [kv, H],
          'model.layers.0.self_attn.v_proj.bias': [kv],
          'model.layers.0.self_attn.o_proj.weight': [H, H],
          'model.layers.0.mlp.gate_proj.weight': [I, H],
          'model.layers.0.mlp.up_proj.weight': [I, H],
          'model.layers.0.mlp.down_proj.weight': [H, I],
        };
        const tensors = new Map(
          Object.entries(shapes).map(([name, shape], k) => {
            const data = Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) =>
              Math.sin(k + i),
            );
            return [name, { dtype: 'BF16', shape, data }];
          }),
        );
        writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
        await writeSafetensors(join(dir, 'model.safetensors'), tensors);
        const out = join(dir, 'model.gguf');
        const parsed = await checkpointToGguf(dir, out, { type: 'F16' });
        assert.equal(parsed.dtype, 'BF16');
        const bytes = readFileSync(out);
        assert.equal(bytes.subarray(0, 4).toString('latin1'), 'GGUF');
        return `GGUF: a BF16 Qwen2 checkpoint written with @agentrl/core/checkpoint converted to ${bytes.length} bytes of F16 GGUF, no TensorFlow.js installed`;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },

  runner: {
    install: ['@agentrl/runner', '@agentrl/model-tfjs'],
    absent: [],
    async run(load) {
      const { main } = await load('@agentrl/runner');
      const { PassThrough } = require('node:stream');
      const capture = () => {
        const s = new PassThrough();
        s.text = '';
        s.on('data', (d) => (s.text += d));
        return s;
      };
      const io = { stdout: capture(), stderr: capture() };
      assert.equal(await main(['--help'], io), 0);
      assert.match(io.stdout.text + io.stderr.text, /agentrl <command>/);
      const dir = mkdtempSync(join(tmpdir(), 'agentrl-consumer-'));
      try {
        const tiny = [
          'rollout.batchSize=4',
          'rollout.groupSize=2',
          'rollout.maxTurns=4',
          'validation.every=1',
          'validation.episodes=2',
          'model.options.architecture.vocabularyEpisodes=4',
          // The preset's expert warm start, at a tiny budget.
          'sft.episodes=4',
          'sft.steps=2',
          'sft.batchSize=4',
        ].flatMap((s) => ['--set', s]);
        const args = [
          'train',
          '--preset',
          'alfworld-cpu',
          '--run-dir',
          join(dir, 'run'),
          '--iterations',
          '2',
        ];
        const code = await main([...args, ...tiny], io);
        assert.equal(code, 0, io.stderr.text);
        const lines = readFileSync(join(dir, 'run', 'metrics.jsonl'), 'utf8')
          .trim()
          .split('\n');
        assert.ok(lines.length >= 2, 'metrics of two iterations');
        const headline = JSON.parse(readFileSync(join(dir, 'run', 'headline.json'), 'utf8'));
        assert.equal(headline.length, 3, 'headline rows before, after the warm start, after RL');
        return `runner: --help and a two-iteration alfworld-cpu train (${lines.length} metric lines)`;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },
};
