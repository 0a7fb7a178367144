/**
 * The rollout engine a run config names (`rollout.engine`), created before any other work so
 * that a bad setting (an engine package not installed, an unknown option, a GPU build that cannot
 * run here) fails first, with an error naming the fix. `tfjs` needs no engine: the trained policy
 * generates its own rollouts.
 */
import { ConfigError, checkOptionKeys, type RolloutEngine } from '@agentrl/core';
import type { OpenAICompletionsEngineOptions } from '@agentrl/model-openai';
import type { RunConfig } from './config.ts';
import type { Logger } from './logger.ts';

/**
 * Creates the engine of `rollout.engine`, or returns undefined for `tfjs`. `lora` says whether
 * the run trains a LoRA adapter (`model.options.lora`): an `openai` engine then syncs adapters
 * (`weightSync: 'lora'`), else full weights (`'disk'`), unless its options say otherwise.
 */
export async function createRolloutEngine(
  engine: RunConfig['rollout']['engine'],
  logger?: Logger,
  run: { readonly lora?: boolean } = {},
): Promise<RolloutEngine | undefined> {
  if (engine.name === 'tfjs') return undefined;
  if (engine.name === 'openai') {
    // A dependency of the runner already (agentrl eval --base-url).
    const mod = await import('@agentrl/model-openai');
    checkOptionKeys(engine.options, mod.OPENAI_ENGINE_OPTIONS, 'rollout.engine.options');
    const options = engine.options as Partial<OpenAICompletionsEngineOptions>;
    const engineOptions = {
      ...options,
      baseUrls: options.baseUrls ?? [],
      weightSync: options.weightSync ?? (run.lora === true ? 'lora' : 'disk'),
    } as OpenAICompletionsEngineOptions;
    const created = await mod.OpenAICompletionsEngine.create(engineOptions);
    logger?.info(
      `rollout engine openai: ${engineOptions.baseUrls.length} server(s), weights synced by ${engineOptions.weightSync === 'lora' ? '/v1/load_lora_adapter' : '/update_weights_from_disk'}`,
    );
    return created;
  }
  let mod: typeof import('@agentrl/engine-llamacpp');
  try {
    mod = await import('@agentrl/engine-llamacpp');
  } catch (cause) {
    throw new ConfigError(
      'rollout.engine.name is llama.cpp, but @agentrl/engine-llamacpp cannot be imported; install it beside @agentrl/runner (npm i @agentrl/engine-llamacpp) or set rollout.engine.name to tfjs',
      { cause, details: { field: 'rollout.engine.name', value: engine.name } },
    );
  }
  checkOptionKeys(engine.options, mod.LLAMACPP_ENGINE_OPTIONS, 'rollout.engine.options');
  return mod.LlamaCppEngine.create({
    ...(engine.options as Parameters<typeof mod.LlamaCppEngine.create>[0]),
    ...(logger !== undefined
      ? { logger: { info: (m) => logger.info(m), warn: (m) => logger.warn(m) } }
      : {}),
  });
}
