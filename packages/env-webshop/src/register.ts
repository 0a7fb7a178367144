/** Registers `webshop/text-v1` (direct) and `webshop/browser-v1` when the package is imported. */
import { registerEnv } from '@agentrl/core';
import {
  createWebshopBrowserEnv,
  WEBSHOP_BROWSER_ENV_OPTIONS,
  type WebshopBrowserEnvOptions,
} from './browser-env.ts';
import { webshopCompactPrompt } from './compact-prompt.ts';
import { createDirectWebshopEnv, WEBSHOP_ENV_OPTIONS, type WebshopEnvOptions } from './env.ts';
import { webshopParser, webshopPrompt } from './prompts.ts';

/**
 * The paper's second WebShop number beside success: the score, mean final task score × 100 (an
 * episode that never buys scores 0).
 */
export const WEBSHOP_METRICS = [
  { name: 'score', infoField: 'taskScore', scale: 100, label: 'WebShop score' },
] as const;

const createText = (options: WebshopEnvOptions) =>
  createDirectWebshopEnv({ id: 'webshop/text-v1', ...options });
const createBrowser = (options: WebshopBrowserEnvOptions) =>
  createWebshopBrowserEnv({ id: 'webshop/browser-v1', ...options });

registerEnv<WebshopEnvOptions>({
  id: 'webshop/text-v1',
  description:
    'WebShop (synthetic or human goals), browserless: pages rendered and converted in process',
  create: createText,
  parser: webshopParser,
  prompt: webshopPrompt,
  prompts: { compact: webshopCompactPrompt },
  options: WEBSHOP_ENV_OPTIONS,
  metrics: WEBSHOP_METRICS,
});

registerEnv<WebshopBrowserEnvOptions>({
  id: 'webshop/browser-v1',
  description:
    'WebShop driven through the local shop site in headless Chromium (Puppeteer); same text as text-v1',
  create: createBrowser,
  parser: webshopParser,
  prompt: webshopPrompt,
  prompts: { compact: webshopCompactPrompt },
  options: WEBSHOP_BROWSER_ENV_OPTIONS,
  metrics: WEBSHOP_METRICS,
});
