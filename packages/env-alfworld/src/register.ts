/** Registers `alfworld/text-v1` with the core env registry (imported by the package index). */
import { registerEnv } from '@agentrl/core';
import { alfworldCompactPrompt } from './compact-prompt.ts';
import {
  ALFWORLD_ENV_ID,
  ALFWORLD_ENV_OPTIONS,
  type AlfworldEnvOptions,
  createAlfworldEnv,
} from './env.ts';
import { alfworldParser } from './parser.ts';
import { alfworldPrompt } from './prompt.ts';

function create(options: AlfworldEnvOptions) {
  return createAlfworldEnv(options);
}

registerEnv<AlfworldEnvOptions>({
  id: ALFWORLD_ENV_ID,
  description:
    'ALFWorld text households (real game files or generated), verl-agent prompts (and a compact one for small models) and action parser',
  create,
  parser: alfworldParser,
  prompt: alfworldPrompt,
  prompts: { compact: alfworldCompactPrompt },
  options: ALFWORLD_ENV_OPTIONS,
});
