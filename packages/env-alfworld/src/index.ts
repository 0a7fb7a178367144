/**
 * @agentrl/env-alfworld — ALFWorld's text households in TypeScript.
 */
export {
  ALFWORLD_BRIDGE_ENV_ID,
  ALFWORLD_BRIDGE_PROTOCOL,
  type AlfworldBridgeEnvOptions,
  alfworldBridgeServerPath,
  createAlfworldBridgeEnv,
} from './bridge.ts';
export { alfworldCompactPrompt } from './compact-prompt.ts';
export {
  ALFWORLD_SPLITS,
  type AlfworldGameEntry,
  type AlfworldSplit,
  defaultAlfworldDataDir,
  type ListAlfworldGamesOptions,
  listAlfworldGames,
  pickAlfworldGame,
  taskTypeOfDirectory,
} from './data.ts';
export {
  type CollectDemonstrationsOptions,
  collectExpertDemonstrations,
  type Demonstration,
  type DemonstrationStep,
} from './demonstrations.ts';
export {
  type AlfworldDialect,
  AlfworldEngine,
  type AlfworldEngineOptions,
  type AlfworldResetResult,
  type AlfworldStepResult,
} from './engine.ts';
export {
  ALFWORLD_ENV_ID,
  ALFWORLD_ENV_OPTIONS,
  ALFWORLD_WIN_REWARD,
  type AlfworldEnvInfo,
  type AlfworldEnvOptions,
  createAlfworldEnv,
} from './env.ts';
export {
  AlfworldExpert,
  type AlfworldExpertTask,
  type ExpertEpisode,
  expertAction,
  parseAlfworldTask,
  playExpertEpisode,
} from './expert.ts';
export {
  ALFWORLD_TASK_TYPES,
  type AlfworldGame,
  type AlfworldGoal,
  type AlfworldInitialState,
  type AlfworldLocation,
  type AlfworldObject,
  type AlfworldReceptacle,
  type AlfworldTaskType,
  loadAlfworldGame,
  parseAlfworldGame,
} from './game.ts';
export {
  type AlfworldGeneratorOptions,
  type CountOption,
  type GeneratedAlfworldGame,
  generateAlfworldGame,
  TINY_HOUSEHOLD,
  type WriteGeneratedGamesOptions,
  writeGeneratedAlfworldGames,
} from './generator.ts';
export { alfworldParser, parseAlfworldAction } from './parser.ts';
export {
  ALFWORLD_TEMPLATE,
  ALFWORLD_TEMPLATE_NO_HISTORY,
  type AlfworldPromptInput,
  type AlfworldPromptOptions,
  alfworldPrompt,
  alfworldTaskDescription,
  createAlfworldPrompt,
  formatAdmissibleActions,
  formatAlfworldHistory,
  renderAlfworldPrompt,
} from './prompt.ts';
export { displayList, HELP_TEXT, NOTHING_HAPPENS } from './text.ts';

import './register.ts';
