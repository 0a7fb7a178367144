/**
 * Browser mode (`webshop/browser-v1`): the env drives the local shop site in headless Chromium
 * through `puppeteer-core`, really typing queries and clicking buttons, links and radios, then
 * reads the DOM and runs the same converter as direct mode. One browser, a pool of pages.
 */
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { AgentRLError, type OptionSpec } from '@agentrl/core';
import type { Browser, Page } from 'puppeteer-core';
import { type ConvertedPage, convertPage } from './convert.ts';
import {
  type PageDriver,
  shopFromOptions,
  WEBSHOP_ENV_OPTIONS,
  WebshopEnv,
  type WebshopEnvOptions,
} from './env.ts';
import { urls } from './pages.ts';
import { startWebshopServer, type WebshopServer } from './server.ts';
import { parseAction, type SessionStepResult, type Shop, type ShopSession } from './shop.ts';

// The few DOM names used inside page functions (this package does not load the DOM typings).
interface DomElementLike {
  readonly textContent: string | null;
  getAttribute(name: string): string | null;
}
declare const document: { querySelectorAll(selector: string): Iterable<DomElementLike> };

/** Chromium flags: headless, sandbox off (containers), nothing that phones home. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-default-apps',
  '--disable-sync',
  '--metrics-recording-only',
  '--disable-dev-shm-usage',
  // one site, one renderer: no per-navigation process swaps (measured 2x faster clicks here)
  '--disable-features=site-per-process,IsolateOrigins,BackForwardCache',
  // defence in depth: no host name resolves, so only the 127.0.0.1 site can be reached
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

/** Finds Chromium: the option, `CHROMIUM_PATH`, then `chromium` / `chromium-browser` / `google-chrome` on `PATH`. */
export function findChromium(path?: string): string | null {
  const candidates = path ? [path] : process.env.CHROMIUM_PATH ? [process.env.CHROMIUM_PATH] : [];
  if (candidates.length === 0)
    for (const dir of (process.env.PATH ?? '').split(delimiter))
      for (const name of ['chromium', 'chromium-browser', 'google-chrome'])
        candidates.push(join(dir, name));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // not this one
    }
  }
  return null;
}

/** Options of {@link WebshopBrowser.launch}. */
export interface WebshopBrowserOptions {
  readonly shop: Shop;
  /** Chromium executable (default: see {@link findChromium}). */
  readonly chromiumPath?: string;
  /** Pages in the pool, shared by the envs using this browser (default 4). */
  readonly poolSize?: number;
  /** Timeout of every navigation and page operation, ms (default 15,000). */
  readonly timeoutMs?: number;
}

/** One Chromium with a pool of pages and the local site it browses. */
export class WebshopBrowser {
  readonly shop: Shop;
  readonly server: WebshopServer;
  readonly timeoutMs: number;
  readonly #chromiumPath: string;
  readonly #poolSize: number;
  #browser: Browser | null = null;
  #launching: Promise<Browser> | null = null;
  #profileDir: string | null = null;
  #free: Page[] = [];
  #created = 0;
  #waiters: ((page: Page) => void)[] = [];
  #closed = false;

  private constructor(
    shop: Shop,
    server: WebshopServer,
    chromiumPath: string,
    poolSize: number,
    timeoutMs: number,
  ) {
    this.shop = shop;
    this.server = server;
    this.#chromiumPath = chromiumPath;
    this.#poolSize = poolSize;
    this.timeoutMs = timeoutMs;
  }

  /** Starts the site and Chromium. Throws `BACKEND_UNAVAILABLE` when Chromium is missing. */
  static async launch(options: WebshopBrowserOptions): Promise<WebshopBrowser> {
    const chromium = findChromium(options.chromiumPath);
    if (!chromium)
      throw new AgentRLError(
        'BACKEND_UNAVAILABLE',
        'Chromium was not found (option chromiumPath, CHROMIUM_PATH, or chromium on PATH): install it with `apt-get install -y chromium` or set CHROMIUM_PATH',
        { details: { field: 'chromiumPath' } },
      );
    const server = await startWebshopServer({ shop: options.shop });
    const browser = new WebshopBrowser(
      options.shop,
      server,
      chromium,
      options.poolSize ?? 4,
      options.timeoutMs ?? 15_000,
    );
    await browser.#ensureBrowser();
    return browser;
  }

  async #ensureBrowser(): Promise<Browser> {
    if (this.#browser?.connected) return this.#browser;
    if (this.#launching) return this.#launching;
    this.#launching = (async () => {
      const { launch } = await import('puppeteer-core');
      if (this.#profileDir) rmSync(this.#profileDir, { recursive: true, force: true });
      this.#profileDir = mkdtempSync(join(tmpdir(), 'webshop-chromium-'));
      const browser = await launch({
        executablePath: this.#chromiumPath,
        headless: true,
        args: [...CHROMIUM_ARGS, `--user-data-dir=${this.#profileDir}`],
        timeout: this.timeoutMs * 2,
        protocolTimeout: this.timeoutMs * 2,
      });
      browser.on('disconnected', () => {
        if (this.#browser === browser) {
          this.#browser = null;
          this.#free = [];
          this.#created = 0;
        }
      });
      this.#browser = browser;
      return browser;
    })();
    try {
      return await this.#launching;
    } finally {
      this.#launching = null;
    }
  }

  /** The Chromium process id (for memory measurements), when running. */
  get processId(): number | undefined {
    return this.#browser?.process()?.pid;
  }

  /** Takes a page from the pool (waits when all are busy). */
  async acquire(): Promise<Page> {
    if (this.#closed)
      throw new AgentRLError('BACKEND_UNAVAILABLE', 'the WebShop browser is closed');
    const free = this.#free.pop();
    if (free && !free.isClosed()) return free;
    if (this.#created < this.#poolSize) {
      this.#created += 1;
      try {
        const browser = await this.#ensureBrowser();
        const page = await browser.newPage();
        page.setDefaultTimeout(this.timeoutMs);
        page.setDefaultNavigationTimeout(this.timeoutMs);
        return page;
      } catch (error) {
        this.#created -= 1;
        throw new AgentRLError(
          'BACKEND_FAILURE',
          `could not open a Chromium page: ${String(error)}`,
          { cause: error },
        );
      }
    }
    return await new Promise<Page>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(
          new AgentRLError(
            'TIMEOUT',
            `no free browser page within ${this.timeoutMs} ms: raise poolSize`,
          ),
        );
      }, this.timeoutMs);
      const waiter = (page: Page) => {
        clearTimeout(timer);
        resolve(page);
      };
      this.#waiters.push(waiter);
    });
  }

  /** Returns a page to the pool; a broken page is closed and its slot freed. */
  release(page: Page, broken = false): void {
    if (broken || page.isClosed() || this.#closed) {
      this.#created = Math.max(0, this.#created - 1);
      page.close().catch(() => {});
      const waiter = this.#waiters.shift();
      if (waiter && !this.#closed) this.acquire().then(waiter, () => this.#waiters.unshift(waiter));
      return;
    }
    const waiter = this.#waiters.shift();
    if (waiter) waiter(page);
    else this.#free.push(page);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const browser = this.#browser;
    this.#browser = null;
    await browser?.close().catch(() => {});
    await this.server.close();
    if (this.#profileDir) rmSync(this.#profileDir, { recursive: true, force: true });
  }
}

function expectedPath(session: ShopSession): string {
  const s = session.state;
  const sid = session.sessionId;
  const asin = session.asin ?? '';
  switch (s.kind) {
    case 'search':
      return urls.search(sid);
    case 'results':
      return urls.results(sid, session.keywords, session.pageNumber);
    case 'item':
      return urls.item(sid, asin, session.keywords, session.pageNumber, session.options);
    case 'sub':
      return urls.sub(sid, asin, session.keywords, session.pageNumber, s.subPage, session.options);
    case 'done':
      return urls.done(sid, asin, session.options);
  }
}

const TYPABLE = /^[\x20-\x7e]{1,200}$/;

/** Drives one env's episodes through a shared {@link WebshopBrowser}. */
class BrowserDriver implements PageDriver {
  readonly #browser: () => Promise<WebshopBrowser>;
  #page: Page | null = null;
  #sessionId: string | null = null;
  #server: WebshopServer | null = null;

  constructor(browser: () => Promise<WebshopBrowser>) {
    this.#browser = browser;
  }

  async #read(page: Page): Promise<ConvertedPage> {
    return convertPage(await page.content());
  }

  async #goto(page: Page, path: string): Promise<void> {
    const base = (this.#server as WebshopServer).url;
    await page.goto(base + path, { waitUntil: 'domcontentloaded' });
  }

  async #clickAndWait(
    page: Page,
    selectorScript: (key: string) => boolean,
    key: string,
  ): Promise<boolean> {
    const handle = await page.evaluateHandle(selectorScript, key);
    const element = handle.asElement();
    if (!element) {
      await handle.dispose();
      return false;
    }
    // the element's own click(): follows the link, submits the form, checks the radio and runs
    // its handler, without the scroll-and-mouse round trips of a synthetic mouse click
    await Promise.all([
      page.waitForNavigation({ waitUntil: 'domcontentloaded' }),
      element.evaluate((el) => (el as unknown as { click(): void }).click()),
    ]);
    await handle.dispose();
    return true;
  }

  async open(session: ShopSession): Promise<ConvertedPage> {
    const browser = await this.#browser();
    this.#server = browser.server;
    if (this.#sessionId) browser.server.dropSession(this.#sessionId);
    this.#page ??= await browser.acquire();
    this.#sessionId = session.sessionId;
    browser.server.registerSession(session.sessionId, session.goal, session.prices);
    return await this.#guard(async (page) => {
      await this.#goto(page, urls.search(session.sessionId));
      return await this.#read(page);
    });
  }

  async #guard<T>(work: (page: Page) => Promise<T>): Promise<T> {
    const page = this.#page;
    if (!page)
      throw new AgentRLError('BACKEND_FAILURE', 'the browser page of this episode is gone');
    try {
      return await work(page);
    } catch (error) {
      const browser = await this.#browser();
      browser.release(page, true);
      this.#page = null;
      throw new AgentRLError('BACKEND_FAILURE', `the browser page failed: ${String(error)}`, {
        cause: error,
      });
    }
  }

  async perform(
    session: ShopSession,
    action: string,
    result: SessionStepResult,
  ): Promise<ConvertedPage> {
    return await this.#guard(async (page) => {
      const key =
        result.effect === 'search'
          ? session.keywords.join(' ')
          : (parseAction(action).arg ?? '').toLowerCase();
      switch (result.effect) {
        case 'noop':
          return await this.#read(page);
        case 'search': {
          if (!(await page.$('#search_input')))
            await this.#goto(page, urls.search(session.sessionId));
          if (TYPABLE.test(key)) {
            // typed as one text input event (an IME-style insert), then the Search button pressed
            await page.focus('#search_input');
            await page.keyboard.sendCharacter(key);
            await this.#clickAndWait(
              page,
              () => [...document.querySelectorAll('button.btn')].at(0) as unknown as boolean,
              '',
            );
          }
          break;
        }
        case 'buy':
          await this.#clickAndWait(
            page,
            () => [...document.querySelectorAll('button.purchase')].at(0) as unknown as boolean,
            '',
          );
          break;
        case 'product':
          await this.#clickAndWait(
            page,
            (k) =>
              [...document.querySelectorAll('a.product-link')]
                .filter((a) => (a.textContent ?? '').toLowerCase() === k)
                .at(-1) as unknown as boolean,
            key,
          );
          break;
        case 'option':
          await this.#clickAndWait(
            page,
            (k) =>
              [...document.querySelectorAll('input[type=radio]')]
                .filter((r) => r.getAttribute('value') === k)
                .at(-1) as unknown as boolean,
            key,
          );
          break;
        case 'item':
          break;
        default:
          // buttons: back to search, next, prev, sub-pages
          await this.#clickAndWait(
            page,
            (k) =>
              [...document.querySelectorAll('.btn')]
                .filter((b) => (b.textContent ?? '').toLowerCase() === k)
                .at(-1) as unknown as boolean,
            key,
          );
      }
      // when a click could not express the reference's transition (typed text with control
      // characters, URL-based quirks), go to the state's page directly
      const expected = expectedPath(session);
      if (new URL(page.url()).pathname !== expected) await this.#goto(page, expected);
      return await this.#read(page);
    });
  }

  async release(): Promise<void> {
    const browser = await this.#browser();
    if (this.#sessionId) browser.server.dropSession(this.#sessionId);
    this.#sessionId = null;
    if (this.#page) browser.release(this.#page);
    this.#page = null;
  }
}

/** Options of {@link createWebshopBrowserEnv}. */
export interface WebshopBrowserEnvOptions extends WebshopEnvOptions {
  /** A browser shared by several envs; when absent the env launches its own and closes it. */
  readonly browser?: WebshopBrowser;
  readonly chromiumPath?: string;
  readonly poolSize?: number;
  readonly timeoutMs?: number;
}

/**
 * The options `webshop/browser-v1` accepts: those of `webshop/text-v1` plus the browser's. Every
 * key of {@link WebshopBrowserEnvOptions}.
 */
export const WEBSHOP_BROWSER_ENV_OPTIONS = {
  ...WEBSHOP_ENV_OPTIONS,
  id: { description: 'the env id reported in errors and logs', default: 'webshop/browser-v1' },
  browser: {
    description: 'a WebshopBrowser shared by several envs; absent: the env launches its own',
  },
  chromiumPath: {
    description: 'Chromium executable of an own browser',
    default: 'found by findChromium',
  },
  poolSize: { description: "pages of an own browser's pool", default: 1 },
  timeoutMs: { description: 'timeout of every navigation and page operation, ms', default: 15_000 },
} as const satisfies { readonly [K in keyof Required<WebshopBrowserEnvOptions>]: OptionSpec };

/** Builds a browser-mode WebShop env. */
export function createWebshopBrowserEnv(options: WebshopBrowserEnvOptions = {}): WebshopEnv {
  const shop = options.browser?.shop ?? shopFromOptions(options);
  let own: Promise<WebshopBrowser> | null = null;
  const getBrowser = (): Promise<WebshopBrowser> => {
    if (options.browser) return Promise.resolve(options.browser);
    own ??= WebshopBrowser.launch({
      shop,
      chromiumPath: options.chromiumPath,
      poolSize: options.poolSize ?? WEBSHOP_BROWSER_ENV_OPTIONS.poolSize.default,
      timeoutMs: options.timeoutMs,
    });
    return own;
  };
  const driver = new BrowserDriver(getBrowser);
  const env = new WebshopEnv({ id: 'webshop/browser-v1', ...options }, driver, shop);
  if (!options.browser) {
    const close = env.close.bind(env);
    env.close = async () => {
      await close();
      if (own) await (await own).close();
      own = null;
    };
  }
  return env;
}
