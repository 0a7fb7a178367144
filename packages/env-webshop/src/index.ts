/**
 * @agentrl/env-webshop — WebShop in Node: catalogue and goals, the reference reward, a local shop
 * site, and text environments (direct and browser-driven) with identical observations. Python's
 * text conventions the pages reproduce (`repr`, `str.strip`, Jinja's `tojson`) are
 * `@agentrl/env-webshop/internal`.
 */

// difflib's ratio, as thefuzz uses it: core's port under the name this package has always exported.
export { sequenceMatcherRatio as sequenceRatio } from '@agentrl/core/difflib';
export {
  CHROMIUM_ARGS,
  createWebshopBrowserEnv,
  findChromium,
  WEBSHOP_BROWSER_ENV_OPTIONS,
  WebshopBrowser,
  type WebshopBrowserEnvOptions,
  type WebshopBrowserOptions,
} from './browser-env.ts';
export {
  type AttributeRecord,
  type HumanInstruction,
  loadProducts,
  type OptionGroup,
  type Product,
  parsePricing,
} from './catalogue.ts';
export {
  COMPACT_RESULTS_SHOWN,
  type CompactPromptOptions,
  type CompactResultsLayout,
  chosenOptions,
  compactPage,
  createCompactPrompt,
  webshopCompactPrompt,
} from './compact-prompt.ts';
export { type ClickTarget, type ConvertedPage, convertPage, decodeEntities } from './convert.ts';
export { type CreateWebshopEnvOptions, createWebshopEnv, type WebshopMode } from './create-env.ts';
export {
  type CatalogueSource,
  DATA_FILES,
  hasProductsFile,
  loadCatalogue,
  resolveDataDir,
} from './data.ts';
export {
  createDirectWebshopEnv,
  directDriver,
  type PageDriver,
  shopFromOptions,
  WEBSHOP_ENV_OPTIONS,
  WebshopEnv,
  type WebshopEnvOptions,
} from './env.ts';
export {
  expert,
  observationParts,
  parseWebshopTask,
  WEBSHOP_EXPERT_FLOOR,
  WebshopExpert,
  type WebshopExpertTask,
  type WebshopExpertView,
  webshopExpertAction,
} from './expert.ts';
export {
  COLOR_SET,
  type FuzzInput,
  fullProcess,
  normalizeColor,
  type OptionPair,
  tokenSetRatio,
} from './fuzz.ts';
export {
  buildGoalSet,
  type Goal,
  type GoalSet,
  type GoalSource,
  humanGoals,
  PRICE_RANGE,
  type Split,
  splitRange,
  syntheticGoals,
} from './goals.ts';
export { approximateNameNouns, nameNounsFromTable } from './name-nouns.ts';
export {
  type ChosenOptions,
  escapeHtml,
  type PageView,
  renderPage,
  type SubPage,
  urls,
} from './pages.ts';
export {
  admissibleActions,
  buildWebshopPrompt,
  extractTask,
  formatObservation,
  MAX_PROMPT_CHARS,
  WEBSHOP_TEMPLATE,
  WEBSHOP_TEMPLATE_NO_HIS,
  type WebshopHistoryEntry,
  type WebshopPromptInput,
  webshopParser,
  webshopPrompt,
} from './prompts.ts';
export { PyRandom } from './py-random.ts';
export { WEBSHOP_METRICS } from './register.ts';
export {
  type ChosenOptionValues,
  getReward,
  type NameNouns,
  type RewardBreakdown,
  type RewardGoal,
  type RewardProduct,
} from './reward.ts';
export {
  analyze,
  documentText,
  LUCENE_STOP_WORDS,
  quantizedLength,
  SearchEngine,
  type SearchOptions,
} from './search.ts';
export { startWebshopServer, type WebshopServer, type WebshopServerOptions } from './server.ts';
export {
  PRODUCT_WINDOW,
  parseAction,
  type SessionStepResult,
  Shop,
  type ShopOptions,
  ShopSession,
  type ShopState,
} from './shop.ts';
export {
  generateSyntheticCatalogue,
  type SyntheticCatalogueFiles,
  type SyntheticCatalogueOptions,
} from './synthetic.ts';
