/**
 * The pieces of the main job that other runs reuse (the GiGPO-vs-GRPO benchmark): the generated
 * households, the vocabulary corpus, the tiny decoder with its trainable policy, and the expert
 * as a demonstration policy.
 */
import type { TextEnv } from '@agentrl/core';
import {
  AlfworldExpert,
  type AlfworldGeneratorOptions,
  alfworldParser,
  createAlfworldEnv,
  HELP_TEXT,
  NOTHING_HAPPENS,
  TINY_HOUSEHOLD,
} from '@agentrl/env-alfworld';
import { createTinyPolicy, type ModelBudget } from '@agentrl/example-demo-kit';
import type { CausalLM } from '@agentrl/model-tfjs';
import type { TfjsTrainablePolicy } from '@agentrl/model-tfjs/policy';
import type { EnvSpec, Expert } from '@agentrl/runner';
import { compactPrompt } from './compact-prompt.ts';
import { WordTokenizer } from './word-tokenizer.ts';

/** Model and optimiser settings of a run (the kit's). */
export type { ModelBudget } from '@agentrl/example-demo-kit';

/** The env's source of generated households with `household`'s generator settings. */
function generated(household: AlfworldGeneratorOptions) {
  return { source: 'generated', generator: household } as const;
}

/** Generated tiny households (2 storage receptacles, 1 distractor, all six task types). */
export const GENERATED = generated(TINY_HOUSEHOLD);

/**
 * The env spec of the main job: generated households, the paper's parser, the compact prompt.
 * `household` changes the generator's settings (default {@link TINY_HOUSEHOLD}: the main job's).
 */
export function envSpec(
  maxSteps: number,
  household: AlfworldGeneratorOptions = TINY_HOUSEHOLD,
): EnvSpec {
  return {
    create: (): TextEnv => createAlfworldEnv({ ...generated(household), maxSteps }),
    parser: alfworldParser,
    prompt: compactPrompt,
  };
}

/**
 * The vocabulary's corpus: expert episodes on seeds 900000+ (independent of the run seed) and
 * every admissible command of the households seen (generated with `household`'s settings).
 */
export async function vocabularyCorpus(
  episodes: number,
  maxSteps: number,
  household: AlfworldGeneratorOptions = TINY_HOUSEHOLD,
): Promise<string[]> {
  const env = createAlfworldEnv({ ...generated(household), maxSteps });
  const corpus = [NOTHING_HAPPENS, HELP_TEXT, 'task : prev : now : actions : > |'];
  for (let seed = 0; seed < episodes; seed++) {
    let { observation } = await env.reset({ seed: 900_000 + seed });
    const expert = new AlfworldExpert();
    for (let t = 0; t < maxSteps; t++) {
      corpus.push(observation.text, ...(observation.admissibleActions ?? []));
      const step = await env.step(
        expert.act(observation.text, observation.admissibleActions ?? []),
      );
      observation = step.observation;
      if (step.terminated || step.truncated) break;
    }
    corpus.push(observation.text);
  }
  await env.close();
  return corpus;
}

/** What {@link createTinyAgent} builds. */
export interface TinyAgent {
  readonly tokenizer: WordTokenizer;
  readonly model: CausalLM;
  readonly policy: TfjsTrainablePolicy;
}

/**
 * The word-level tokenizer, a fresh seeded Qwen2-architecture decoder (tied head, SwiGLU 3×) and
 * its trainable policy: AdamW, PPO clip 0.2, dual clip 3, no KL, no entropy bonus (the recipe a
 * PyTorch prototype of this CPU set-up trained with). The vocabulary is read from households
 * generated with `household`'s settings (default the main job's tiny ones).
 */
export async function createTinyAgent(
  budget: ModelBudget,
  seed: number,
  household: AlfworldGeneratorOptions = TINY_HOUSEHOLD,
): Promise<TinyAgent> {
  const tokenizer = WordTokenizer.fromCorpus(
    await vocabularyCorpus(200, budget.maxTurns, household),
  );
  const { model, policy } = await createTinyPolicy(tokenizer, budget, seed, 512);
  return { tokenizer, model, policy };
}

/** The env package's handcoded expert as a demonstration policy (a fresh expert per episode). */
export function expertPolicy(): Expert {
  let expert = new AlfworldExpert();
  return (context) => {
    if (context.stepIndex === 0) expert = new AlfworldExpert();
    return expert.act(context.current.text, context.current.admissibleActions ?? []);
  };
}
