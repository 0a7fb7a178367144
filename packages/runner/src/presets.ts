/**
 * Named starting configs (`--preset NAME`); a config file and flags override them.
 *
 * `alfworld-paper` is the paper's ALFWorld run (verl-agent's `examples/gigpo_trainer/run_alfworld.sh`
 * over `ppo_trainer.yaml`): Qwen2.5-1.5B-Instruct from a local
 * folder, 16 groups × 8, 50 turns, γ 0.95, ω 1, KL 0.01, lr 1e-6. It needs a GPU backend (days
 * of compute on a CPU): the config is here so that a GPU user runs exactly the paper's settings.
 * `alfworld-cpu` is the ALFWorld demo's recipe (`examples/alfworld-gigpo`, whose `preset.test.ts`
 * holds the two together): generated households of two storage receptacles and one distractor,
 * 15 steps, the env's compact prompt, a fresh tiny decoder (96 wide, 3 layers) over a word
 * vocabulary of 200 expert episodes, a warm start on 400 expert games for 480 SFT steps, then
 * GiGPO `mean_std_norm` for 32 iterations of 32 groups × 4 at temperature 0.4, 480 held-out
 * games every 8 iterations. With no `model.path` it builds the vocabulary and a seeded fresh
 * model in `<runDir>/model-init` (`@agentrl/runner/tfjs-fresh`).
 *
 * `search-paper` is the paper's search-augmented QA run (verl-agent's
 * `examples/gigpo_trainer/run_search.sh`): Qwen2.5-7B-Instruct from a local folder, 256 questions ×
 * 5 per iteration, 4 turns, top-3 passages, similarity step grouping at 0.9, invalid-action
 * penalty 0.01, KL 0.001 (`low_var_kl`), lr 1e-6, prompts up to 4,096 and responses up to 512
 * tokens, validation on 512 questions. Its inputs are the model folder, the question files
 * (Search-R1's NQ + HotpotQA training rows, a test file) and the URL of a retrieval server (the
 * Search-R1 E5 server, `POST /retrieve`). `search-cpu` is the search demo's setting: a generated
 * knowledge base (held-out questions for validation), a fresh tiny model, groups of 4, with
 * 1,200 warm-start steps (at 450 the model had not yet learned to copy the question's entity).
 *
 * The CPU presets of WebShop and search-QA prompt with the env's `compact` template (the paper's
 * runs up to 2,300 tokens a step in a tiny model's word vocabulary), teach a short response
 * (`sft.responseTemplate`) and build the fresh model's vocabulary from the env's expert episodes,
 * so that each action a warm start teaches is a few whole pieces.
 */
import type { RunConfigInput } from './config.ts';

type ModelInput = NonNullable<RunConfigInput['model']>;
type AlgorithmInput = NonNullable<RunConfigInput['algorithm']>;
type RolloutInput = NonNullable<RunConfigInput['rollout']>;

/**
 * The actor the paper's runs share (verl-agent's `ppo_trainer.yaml` as its run scripts set it):
 * a local Hugging Face folder on `@agentrl/runner/tfjs`, lr 1e-6, weight decay 0.01, dual-clip
 * PPO (0.2, 3), token-mean loss, `low_var_kl`, gradient norm 1. No backend is named: model-tfjs
 * takes the GPU that is there (tfjs-node-gpu, else WebGPU on a hardware adapter), else the CPU
 * backends.
 */
function paperModel(
  path: string,
  o: { entropyCoeff: number; klLossCoef: number; microBatchSize: number },
): ModelInput {
  return {
    backend: 'module',
    module: '@agentrl/runner/tfjs',
    path,
    options: {
      learningRate: 1e-6,
      weightDecay: 0.01,
      clipRatio: 0.2,
      clipRatioC: 3,
      lossAggMode: 'token-mean',
      entropyCoeff: o.entropyCoeff,
      klLossType: 'low_var_kl',
      klLossCoef: o.klLossCoef,
      maxGradNorm: 1,
      microBatchSize: o.microBatchSize,
    },
  };
}

/** GiGPO as the paper's runs set it: γ 0.95, ω 1, ε 1e-6; the mode and the rest per benchmark. */
function paperGigpo(
  mode: 'mean_norm' | 'mean_std_norm',
  rest: { invalidActionPenalty: number; similarityThreshold?: number },
): AlgorithmInput {
  return {
    name: 'gigpo',
    options: { mode, gamma: 0.95, stepAdvantageWeight: 1, epsilon: 1e-6, ...rest },
  };
}

/** The paper's sampling: up to 512 response tokens at temperature 1, no top-p or top-k cut. */
function paperRollout(o: {
  batchSize: number;
  groupSize: number;
  maxTurns: number;
  maxPromptTokens: number;
}): RolloutInput {
  return { ...o, maxNewTokens: 512, temperature: 1, topP: 1, topK: 0 };
}

/**
 * The CPU recipes' model: a seeded fresh tiny decoder on wasm (`@agentrl/runner/tfjs-fresh`), 96
 * wide, 3 layers, 4 heads, its vocabulary built from `vocabularyEpisodes` expert episodes of the
 * training and held-out envs (at most 4,096 words; `extra` architecture fields beside), SFT at
 * 3e-3, RL at 2e-4 with dual-clip PPO, no entropy bonus.
 */
function demoCpuModel(
  vocabularyEpisodes: number,
  extra: { letterDigitRuns?: 'split' | 'whole' } = {},
): ModelInput {
  return {
    backend: 'module',
    module: '@agentrl/runner/tfjs-fresh',
    options: {
      backend: 'wasm',
      architecture: {
        hiddenSize: 96,
        layers: 3,
        heads: 4,
        vocabularyFrom: 'expert',
        vocabularyEpisodes,
        maxWords: 4096,
        ...extra,
      },
      learningRate: 2e-4,
      sftLearningRate: 3e-3,
      clipRatio: 0.2,
      clipRatioC: 3,
      entropyCoeff: 0,
      microBatchSize: 32,
    },
  };
}

/**
 * The phases of the CPU presets: a fresh model never wins a game, so RL from it has nothing to
 * learn from (every advantage 0). They warm-start on the env package's expert demonstrations
 * (the `sft` section), and end with the headline: held-out success before the warm start, after
 * it and after RL, on the validation's episodes (the first and last validations are its rows).
 */
const CPU_PHASES = {
  warmStart: { source: 'expert' },
  finalEval: { enabled: true },
} as const satisfies Pick<RunConfigInput, 'warmStart' | 'finalEval'>;

/**
 * `webshop-paper` is the paper's WebShop run (verl-agent's `examples/gigpo_trainer/run_webshop.sh`
 * over `ppo_trainer.yaml`): Qwen2.5-1.5B-Instruct from a local folder, the real catalogue
 * (`WEBSHOP_DATA` or `env.options.dataDir`), synthetic goals, 15 steps, 16 groups × 8, GiGPO
 * `mean_norm`, γ 0.95, ω 1, invalid-action penalty 0.1, KL 0.01, lr 1e-6, mini-batches of 64,
 * validation on 128 test-split goals every 5 iterations at temperature 0.4. GPU only, as
 * `alfworld-paper`. `webshop-cpu` is the WebShop demo's default budget on its generated catalogue
 * (500 products with one or two option groups of two to four values each, so most held-out goals
 * ask for a product some training goals ask for too; no download): a fresh tiny model, 15 steps, a warm start on 1,200 expert
 * goals for 960 steps, 40 iterations of 32 groups × 4 with rollouts at temperature 1, GiGPO
 * `mean_std_norm`, 480 held-out goals at temperature 0.4 every 20 iterations
 * (`examples/webshop-gigpo`'s `preset.test.ts` holds the two together). Its vocabulary keeps
 * letter-digit runs whole (`letterDigitRuns`), so that each ASIN is one token in the results line
 * and in `click[…]`, as in the demo's word tokenizer.
 */
const WEBSHOP_PRESETS: Readonly<Record<string, RunConfigInput>> = {
  'webshop-paper': {
    seed: 0,
    runDir: 'runs/webshop-paper',
    env: {
      id: 'webshop/text-v1',
      module: '@agentrl/env-webshop',
      options: { goals: 'synthetic', split: 'train', maxSteps: 15, historyLength: 2 },
      valOptions: { split: 'test' },
    },
    model: paperModel('models/Qwen2.5-1.5B-Instruct', {
      entropyCoeff: 0.001,
      klLossCoef: 0.01,
      microBatchSize: 8,
    }),
    algorithm: paperGigpo('mean_norm', { invalidActionPenalty: 0.1 }),
    rollout: paperRollout({ batchSize: 128, groupSize: 8, maxTurns: 15, maxPromptTokens: 4096 }),
    training: { iterations: 150, miniBatchSize: 64, ppoEpochs: 1, checkpointEvery: 5 },
    validation: { every: 5, episodes: 128, temperature: 0.4 },
  },
  'webshop-cpu': {
    seed: 0,
    runDir: 'runs/webshop-cpu',
    env: {
      id: 'webshop/text-v1',
      module: '@agentrl/env-webshop',
      options: {
        catalogue: {
          kind: 'synthetic',
          size: 500,
          seed: 0,
          optionGroups: [1, 2],
          optionValues: [2, 4],
        },
        split: 'train',
        maxSteps: 15,
      },
      valOptions: { split: 'test' },
      prompt: 'compact',
    },
    model: demoCpuModel(400, { letterDigitRuns: 'whole' }),
    algorithm: {
      name: 'gigpo',
      options: { mode: 'mean_std_norm', gamma: 0.95, invalidActionPenalty: 0 },
    },
    rollout: { batchSize: 128, groupSize: 4, maxTurns: 15, maxNewTokens: 32, temperature: 1 },
    training: {
      iterations: 20,
      miniBatchSize: 64,
      dropZeroAdvantageRows: true,
      checkpointEvery: 20,
    },
    validation: { every: 20, episodes: 480, temperature: 0.4 },
    sft: {
      episodes: 1200,
      steps: 720,
      batchSize: 32,
      responseTemplate: '<think></think><action>{action}</action>',
    },
    ...CPU_PHASES,
  },
};

export const PRESETS: Readonly<Record<string, RunConfigInput>> = {
  'alfworld-paper': {
    seed: 0,
    runDir: 'runs/alfworld-paper',
    env: {
      id: 'alfworld/text-v1',
      module: '@agentrl/env-alfworld',
      options: { split: 'train', maxSteps: 50 },
      valOptions: { split: 'valid_seen' },
    },
    model: paperModel('models/Qwen2.5-1.5B-Instruct', {
      entropyCoeff: 0.001,
      klLossCoef: 0.01,
      microBatchSize: 32,
    }),
    algorithm: paperGigpo('mean_std_norm', { invalidActionPenalty: 0.1 }),
    rollout: paperRollout({ batchSize: 128, groupSize: 8, maxTurns: 50, maxPromptTokens: 2048 }),
    training: { iterations: 150, miniBatchSize: 256, ppoEpochs: 1, checkpointEvery: 5 },
    validation: { every: 5, episodes: 128, temperature: 0.4, split: 'valid_seen' },
  },
  'alfworld-cpu': {
    seed: 0,
    runDir: 'runs/alfworld-cpu',
    env: {
      id: 'alfworld/text-v1',
      module: '@agentrl/env-alfworld',
      options: {
        source: 'generated',
        generator: {
          storageReceptacles: 2,
          distractors: 1,
          extraTargets: 0,
          shareLocationProbability: 0,
        },
        maxSteps: 15,
      },
      valOptions: {},
      prompt: 'compact',
    },
    model: demoCpuModel(200),
    algorithm: {
      name: 'gigpo',
      options: { mode: 'mean_std_norm', gamma: 0.95, invalidActionPenalty: 0 },
    },
    rollout: { batchSize: 128, groupSize: 4, maxTurns: 15, maxNewTokens: 16, temperature: 0.4 },
    training: {
      iterations: 32,
      miniBatchSize: 64,
      dropZeroAdvantageRows: true,
      checkpointEvery: 8,
    },
    validation: { every: 8, episodes: 480, temperature: 0.4 },
    sft: {
      episodes: 400,
      steps: 480,
      batchSize: 32,
      responseTemplate: '<think> </think> <action> {action} </action>',
    },
    ...CPU_PHASES,
  },
  'search-paper': {
    seed: 0,
    runDir: 'runs/search-paper',
    env: {
      id: 'search/qa-v1',
      module: '@agentrl/env-search',
      options: {
        questions: 'data/search-qa/nq_hotpotqa_train.parquet',
        retriever: { url: 'http://127.0.0.1:8000/retrieve' },
        maxTurns: 4,
        topK: 3,
        historyLength: 4,
      },
      valOptions: { questions: 'data/search-qa/nq_hotpotqa_test.parquet' },
    },
    model: paperModel('models/Qwen2.5-7B-Instruct', {
      entropyCoeff: 0,
      klLossCoef: 0.001,
      microBatchSize: 32,
    }),
    algorithm: paperGigpo('mean_std_norm', {
      invalidActionPenalty: 0.01,
      similarityThreshold: 0.9,
    }),
    rollout: paperRollout({ batchSize: 1280, groupSize: 5, maxTurns: 4, maxPromptTokens: 4096 }),
    training: { iterations: 662, miniBatchSize: 512, ppoEpochs: 1, checkpointEvery: 10 },
    validation: { every: 10, episodes: 512, temperature: 0.4 },
  },
  'search-cpu': {
    seed: 0,
    runDir: 'runs/search-cpu',
    env: {
      id: 'search/qa-v1',
      module: '@agentrl/env-search',
      options: { generator: { seed: 0 }, split: 'train', maxTurns: 4, topK: 1 },
      valOptions: { split: 'test' },
      prompt: 'compact',
    },
    model: demoCpuModel(1200),
    algorithm: {
      name: 'gigpo',
      options: {
        mode: 'mean_std_norm',
        gamma: 0.95,
        invalidActionPenalty: 0.01,
        similarityThreshold: 0.9,
      },
    },
    rollout: { batchSize: 128, groupSize: 4, maxTurns: 4, maxNewTokens: 32, temperature: 0.4 },
    training: {
      iterations: 800,
      miniBatchSize: 64,
      dropZeroAdvantageRows: true,
      checkpointEvery: 100,
    },
    validation: { every: 200, episodes: 480, temperature: 0.4 },
    sft: {
      episodes: 1200,
      steps: 1200,
      batchSize: 32,
      responseTemplate: '{action}',
      spaceInsideTags: true,
    },
    ...CPU_PHASES,
  },
  ...WEBSHOP_PRESETS,
};
