/** `createWebshopEnv({ mode })`: one entry point for both modes (direct and browser). */
import { createWebshopBrowserEnv, type WebshopBrowserEnvOptions } from './browser-env.ts';
import { createDirectWebshopEnv, type WebshopEnv } from './env.ts';

/** Which way pages are produced: in process, or through Chromium. */
export type WebshopMode = 'direct' | 'browser';

/** Options of {@link createWebshopEnv}: the env options, the browser options, and the mode. */
export interface CreateWebshopEnvOptions extends WebshopBrowserEnvOptions {
  /** `direct` (default, `webshop/text-v1`) or `browser` (`webshop/browser-v1`). */
  readonly mode?: WebshopMode;
}

/** Builds a WebShop env in either mode; both give identical observations, rewards and ends. */
export function createWebshopEnv(options: CreateWebshopEnvOptions = {}): WebshopEnv {
  return options.mode === 'browser'
    ? createWebshopBrowserEnv(options)
    : createDirectWebshopEnv(options);
}
