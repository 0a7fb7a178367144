/**
 * What other runs reuse of the WebShop demo: its recipe, the shared generated shop with the
 * compact prompt, the expert and its response format, and the tiny fresh model with its word
 * tokenizer.
 */
export { chosenOptions, compactPage, compactPrompt, expertResponse } from './compact-prompt.ts';
export {
  type DemoBudget,
  type DemoOptions,
  type DemoResult,
  FULL_BUDGET,
  runDemo,
  SMOKE_BUDGET,
} from './demo.ts';
export {
  CATALOGUE_SIZE,
  createTinyAgent,
  demoCatalogue,
  demoShop,
  envSpec,
  expertPolicy,
  heldOutGoals,
  type ModelBudget,
  SHOP_WORDS,
  type TinyAgent,
  vocabularyCorpus,
} from './setup.ts';
