/**
 * A model module for runs that start from no model folder (`@agentrl/runner/tfjs-fresh`): with
 * `model.path` it is `@agentrl/runner/tfjs`; without, it builds a word vocabulary over the
 * environment's own text (observations, admissible commands and rendered prompts of a few seeded
 * episodes, played at random or by the env's expert, whose responses are then counted too) and
 * a seeded fresh model (`createFreshCausalLM` of `@agentrl/model-tfjs/policy`, the
 * main job's builder too), writes both as an HF folder into
 * `<runDir>/model-init` (reused when it is already there, so `agentrl eval --checkpoint` and
 * `--resume` get the same tokenizer), and loads that folder through `@agentrl/runner/tfjs`.
 *
 * With a `model.path` that holds weights only (a checkpoint or `agentrl sft`'s `sft/model`), the
 * tokenizer and architecture come from the `model-init` of its run and the weights from
 * `model.path`; that `model-init` is copied into this run's folder when it has none, so that a
 * later `agentrl eval --checkpoint` on this run reads the same tokenizer.
 *
 * `model.options.architecture` sets the fresh model's size; every other option goes to
 * `@agentrl/runner/tfjs` unchanged.
 */
import { cpSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  ConfigError,
  createRng,
  type EnvInfo,
  type HistoryEntry,
  type Observation,
  type PromptContext,
} from '@agentrl/core';
import { buildWordVocabulary, type TokenizerFiles, writeTokenizerFiles } from '@agentrl/model-tfjs';
import { createFreshCausalLM } from '@agentrl/model-tfjs/policy';
import { z } from 'zod';
import { configErrorOf, formatResponse } from './config.ts';
import type { CreatedModel, ModelContext } from './plugins.ts';
import type { EnvSpec } from './rollout.ts';
import { createTfjsModel } from './tfjs-policy.ts';

const architectureSchema = z.strictObject({
  hiddenSize: z.number().int().positive().default(32),
  layers: z.number().int().positive().default(1),
  heads: z.number().int().positive().default(4),
  maxPositions: z.number().int().positive().default(2048),
  /** Seeded episodes played to collect the vocabulary's text. */
  vocabularyEpisodes: z.number().int().positive().default(20),
  /**
   * Who plays them: `random` (admissible commands at random) or `expert` (the env module's
   * expert, its actions written as `sft.responseTemplate` writes them, so that the words and
   * action syntax a warm start teaches are whole pieces: search queries, `<search>` right after
   * its tag, `click[...]` arguments).
   */
  vocabularyFrom: z.enum(['random', 'expert']).default('random'),
  maxWords: z.number().int().positive().default(512),
  /**
   * How a run of letters and digits that holds both splits (`letterDigitRuns` of
   * `buildWordVocabulary`): `split` into letter runs and digit runs, or `whole`, one piece, so
   * that a product code such as WebShop's ASINs is one token in the results and in `click[…]`.
   */
  letterDigitRuns: z.enum(['split', 'whole']).default('split'),
});

/** Architecture of the fresh model and of its vocabulary (`model.options.architecture`). */
export type FreshArchitecture = z.infer<typeof architectureSchema>;

/**
 * Text of `episodes` seeded episodes: observations, admissible commands and rendered prompts, and
 * with the expert playing, its responses as `sft.responseTemplate` writes them.
 */
async function environmentText(
  context: ModelContext,
  spec: EnvSpec,
  episodes: number,
  from: FreshArchitecture['vocabularyFrom'],
): Promise<string[]> {
  const { config } = context;
  const expert = spec.expert;
  if (from === 'expert' && expert === undefined)
    throw new ConfigError(
      `model.options.architecture.vocabularyFrom is "expert" but the env module of ${config.env.id} exports no expert: set it to "random" or name an env.module that exports one`,
      { details: { field: 'model.options.architecture.vocabularyFrom', value: from } },
    );
  const rng = createRng(config.seed).split('vocabulary');
  const texts: string[] = [];
  const env = await spec.create();
  try {
    for (let e = 0; e < episodes; e++) {
      const reset = await env.reset({ seed: 700_000 + e });
      const initial: Observation = reset.observation;
      let current = initial;
      let info: EnvInfo = reset.info;
      const history: HistoryEntry[] = [];
      for (let t = 0; t < config.rollout.maxTurns; t++) {
        const admissible = current.admissibleActions ?? [];
        const prompt: PromptContext = {
          initialObservation: initial,
          history: [...history],
          current,
          stepIndex: t,
          info,
        };
        texts.push(current.text, ...admissible, spec.prompt(prompt));
        let action: string;
        if (from === 'expert' && expert !== undefined) {
          action = await expert(prompt);
          texts.push(formatResponse(config.sft, action));
        } else {
          if (admissible.length === 0) break;
          action = admissible[rng.int(admissible.length)] as string;
        }
        const step = await env.step(action);
        history.push({ observation: current, action });
        current = step.observation;
        info = step.info;
        if (step.terminated || step.truncated) break;
      }
      texts.push(current.text);
    }
  } finally {
    await env.close();
  }
  return texts;
}

/**
 * The fresh model's vocabulary (`tokenizer.json` and `tokenizer_config.json` contents): the
 * words of `architecture.vocabularyEpisodes` seeded episodes of the run's training env, played as
 * `architecture.vocabularyFrom` says, with the pieces of `sft.responseTemplate` always kept. With
 * the expert playing, as many again on the held-out env when the context has one: the vocabulary
 * is not training, and it makes the held-out tasks' own words (a product's ASIN, an entity the
 * answer names) single pieces, as the demos' vocabularies do.
 */
export async function freshVocabulary(
  context: ModelContext,
  architecture: Partial<FreshArchitecture> = {},
): Promise<TokenizerFiles> {
  const a = architectureSchema.parse(architecture);
  const specs =
    a.vocabularyFrom === 'expert' && context.valEnv !== undefined
      ? [context.env, context.valEnv]
      : [context.env];
  const texts: string[] = [];
  for (const spec of specs)
    texts.push(...(await environmentText(context, spec, a.vocabularyEpisodes, a.vocabularyFrom)));
  return buildWordVocabulary(texts, {
    maxWords: a.maxWords,
    letterDigitRuns: a.letterDigitRuns,
    // The response template's own pieces whatever the counts (the default template gives
    // `<think>I act.</think><action> </action>`, the pieces this module always kept); with the
    // expert, also the chat template's role names, which every prompt holds (else 13 bytes).
    required: [
      formatResponse(context.config.sft, ' '),
      ...(a.vocabularyFrom === 'expert' ? ['user', 'assistant'] : []),
    ],
  });
}

/**
 * The `model-init` folder a weights-only folder belongs to: the nearest one above it (a run's
 * `sft/model` or `checkpoints/iter-N/model`), else the current run's.
 */
function initFolderFor(weights: string, runInit: string): string | undefined {
  for (let dir = dirname(weights), i = 0; i < 4; i++, dir = dirname(dir)) {
    if (existsSync(join(dir, 'model-init', 'tokenizer.json'))) return join(dir, 'model-init');
  }
  return existsSync(join(runInit, 'tokenizer.json')) ? runInit : undefined;
}

/** `createModel` of `@agentrl/runner/tfjs-fresh` (see the module comment). */
export async function createModel(
  model: Parameters<typeof createTfjsModel>[0],
  context: ModelContext,
): Promise<CreatedModel> {
  const { architecture: rawArchitecture, ...tfjsOptions } = model.options;
  const initDir = join(context.config.runDir, 'model-init');
  if (model.path !== undefined) {
    // A checkpoint or warm-started folder holds weights only: the tokenizer and the architecture
    // come from its run's model-init, the weights from model.path.
    const init = existsSync(join(model.path, 'tokenizer.json'))
      ? undefined
      : initFolderFor(model.path, initDir);
    if (init !== undefined) {
      const created = await createTfjsModel(
        { ...model, path: init, options: tfjsOptions },
        context,
        model.path,
      );
      context.logger.info(`weights from ${model.path} (tokenizer and architecture of ${init})`);
      if (resolve(init) !== resolve(initDir) && !existsSync(join(initDir, 'config.json'))) {
        // Later commands on this run folder (eval --checkpoint, --resume) find the tokenizer
        // the run trained with, not a vocabulary built anew.
        cpSync(init, initDir, { recursive: true });
        context.logger.info(`copied ${init} to ${initDir}`);
      }
      return created;
    }
    return createTfjsModel({ ...model, options: tfjsOptions }, context);
  }
  const parsed = architectureSchema.safeParse(rawArchitecture ?? {});
  if (!parsed.success)
    throw configErrorOf(parsed.error, architectureSchema, 'model.options.architecture');
  const a = parsed.data;
  const dir = initDir;
  if (!existsSync(join(dir, 'config.json'))) {
    const files = await freshVocabulary(context, a);
    await writeTokenizerFiles(dir, files);
    const vocab = (files.tokenizer as { model: { vocab: Record<string, number> } }).model.vocab;
    const backend = tfjsOptions.backend;
    const fresh = await createFreshCausalLM(a, {
      vocabSize: Object.keys(vocab).length,
      eosTokenId: vocab['<|im_end|>'] as number,
      seed: context.config.seed,
      ...(backend === 'wasm' ||
      backend === 'cpu' ||
      backend === 'tensorflow' ||
      backend === 'webgpu'
        ? { backend }
        : {}),
    });
    try {
      await fresh.save(dir);
    } finally {
      fresh.dispose();
    }
    context.logger.info(
      `fresh model written to ${dir} (vocabulary ${Object.keys(vocab).length}, seed ${context.config.seed})`,
    );
  } else context.logger.info(`reusing the fresh model in ${dir}`);
  return createTfjsModel({ ...model, path: dir, options: tfjsOptions }, context);
}
