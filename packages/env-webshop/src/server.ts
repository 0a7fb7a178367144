/**
 * The local shop site (WebShop's pages and URLs): a small `node:http` server on 127.0.0.1 that renders the same
 * pages as the direct env. Every page state is in its URL; sessions (goal per session id) live in
 * memory. `fixed_<n>` session ids play goal n. Every asset is served locally.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Product } from './catalogue.ts';
import type { CatalogueSource } from './data.ts';
import type { Goal, GoalSource } from './goals.ts';
import { type ChosenOptions, type PageView, renderPage, type SubPage, urls } from './pages.ts';
import { PRODUCT_WINDOW, Shop } from './shop.ts';

/** Options of {@link startWebshopServer}. */
export interface WebshopServerOptions {
  /** Port (default 0: any free port). */
  readonly port?: number;
  /** Host (default 127.0.0.1). */
  readonly host?: string;
  /** The shop to serve (or a catalogue to build one from). */
  readonly shop?: Shop;
  readonly catalogue?: CatalogueSource;
  readonly goals?: GoalSource;
  /** Worker seed of the goal list used for `fixed_<n>` and unknown session ids (default 0). */
  readonly goalSeed?: number;
}

/** A running site. */
export interface WebshopServer {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly shop: Shop;
  /** Binds a session id to a goal (the env does this before opening the session's page). */
  registerSession(sessionId: string, goal: Goal, prices: ReadonlyMap<string, number>): void;
  /** Forgets a session. */
  dropSession(sessionId: string): void;
  close(): Promise<void>;
}

const STYLE = `body{font-family:system-ui,sans-serif;margin:0;background:#f7f7f7;color:#222}
.container{max-width:960px;margin:2em auto;padding:0 1em}.row{margin:.6em 0}
#logo h2{text-align:center}#instruction-text h4{background:#fff;border:1px solid #ddd;padding:.8em;font-weight:normal}
.btn{display:inline-block;padding:.4em .9em;margin:.2em;border:1px solid #2a6;border-radius:4px;background:#3b7;color:#fff;text-decoration:none;cursor:pointer;font-size:1em}
.btn-primary{background:#37b;border-color:#259}.purchase{background:#e80;border-color:#c60;font-size:1.2em}
#search_input{width:70%;padding:.5em;font-size:1em}.result{background:#fff;border:1px solid #ddd;margin:.5em 0;padding:.6em}
.result-img,.item-page-img{width:120px;height:120px}.item{display:flex;gap:2em;flex-wrap:wrap}.radio-toolbar label{margin-right:.8em}
.choose{margin-left:.5em}pre{display:inline;white-space:pre-wrap}.card{background:#fff;border:1px solid #ddd;padding:1em}`;

const PRODUCT_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="120" viewBox="0 0 120 120"><rect width="120" height="120" fill="#e4e4e4"/><path d="M30 85l20-25 15 18 10-12 15 19z" fill="#bbb"/></svg>';

// Radios navigate on click, as upstream's jQuery did; without JavaScript the group's Choose button submits.
const SCRIPT = `document.querySelectorAll('input[type=radio][data-url]').forEach(function(r){r.addEventListener('click',function(){window.location.href=r.dataset.url;});});
document.querySelectorAll('.choose').forEach(function(b){b.style.display='none';});`;

function decode(seg: string | undefined): string {
  return decodeURIComponent(seg ?? '');
}

function parseJsonStrings(s: string): string[] | null {
  try {
    const v: unknown = JSON.parse(s);
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : null;
  } catch {
    return null;
  }
}

function parseOptions(s: string): ChosenOptions | null {
  try {
    const v: unknown = JSON.parse(s);
    if (!Array.isArray(v)) return null;
    const out: [string, string][] = [];
    for (const pair of v) {
      if (
        !Array.isArray(pair) ||
        pair.length !== 2 ||
        typeof pair[0] !== 'string' ||
        typeof pair[1] !== 'string'
      )
        return null;
      out.push([pair[0], pair[1]]);
    }
    return out;
  } catch {
    return null;
  }
}

async function readBody(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 1_000_000) break;
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** Starts the site. */
export async function startWebshopServer(
  options: WebshopServerOptions = {},
): Promise<WebshopServer> {
  const shop = options.shop ?? Shop.create({ catalogue: options.catalogue, goals: options.goals });
  const goalSeed = options.goalSeed ?? 0;
  const sessions = new Map<string, { goal: Goal; prices: ReadonlyMap<string, number> }>();

  const sessionFor = (sid: string) => {
    let s = sessions.get(sid);
    if (!s) {
      const set = shop.goalSet(goalSeed);
      const fixed = /^fixed_(\d+)$/.exec(sid);
      let index = fixed ? Number(fixed[1]) : 0;
      if (!fixed) for (const ch of sid) index = (index * 31 + (ch.codePointAt(0) ?? 0)) % 1_000_003;
      const goal = set.goals[index % set.goals.length] as Goal;
      s = { goal, prices: set.prices };
      sessions.set(sid, s);
    }
    return s;
  };

  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, {
      'content-type': `${type}; charset=utf-8`,
      'cache-control': 'no-store',
    });
    res.end(body);
  };
  const redirect = (res: ServerResponse, location: string) => {
    res.writeHead(303, { location });
    res.end();
  };
  const notFound = (res: ServerResponse, what: string) =>
    send(res, 404, 'text/plain', `not found: ${what}\n`);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const parts = path.split('/').slice(1);
    const method = req.method ?? 'GET';
    if (path === '/') return redirect(res, urls.search('fixed_0'));
    if (path === '/static/style.css') return send(res, 200, 'text/css', STYLE);
    if (path === '/static/shop.js') return send(res, 200, 'text/javascript', SCRIPT);
    if (path === '/static/product.svg') return send(res, 200, 'image/svg+xml', PRODUCT_SVG);
    if (path === '/favicon.ico') return send(res, 204, 'text/plain', '');
    const [route, rawSid] = parts.length === 1 ? ['', parts[0]] : [parts[0], parts[1]];
    const sid = decode(rawSid);
    if (!/^[A-Za-z0-9_-]{1,100}$/.test(sid)) return notFound(res, 'session id');
    const { goal, prices } = sessionFor(sid);
    const base = { sessionId: sid, instruction: goal.instructionText };
    const render = (view: PageView) => send(res, 200, 'text/html', renderPage(view));
    const product = (asin: string): Product | undefined => shop.byAsin.get(asin);

    if (route === '') {
      if (method === 'POST') {
        const body = await readBody(req);
        const query = (body.get('search_query') ?? '').toLowerCase();
        if (query === '') return redirect(res, urls.search(sid));
        return redirect(res, urls.results(sid, query.split(' '), 1));
      }
      return render({ kind: 'search', ...base });
    }
    if (route === 'search_results' && parts.length === 4) {
      const keywords = parseJsonStrings(decode(parts[2]));
      const page = Number(parts[3]);
      if (!keywords || !Number.isInteger(page)) return notFound(res, 'results page');
      const hits = shop.search(keywords);
      const start = (page - 1) * PRODUCT_WINDOW;
      const products = hits
        .slice(Math.max(0, start), Math.max(0, start + PRODUCT_WINDOW))
        .map((a) => product(a) as Product);
      return render({ kind: 'results', ...base, keywords, page, total: hits.length, products });
    }
    if (route === 'item_page' && parts.length === 6) {
      const p = product(decode(parts[2]));
      const keywords = parseJsonStrings(decode(parts[3]));
      const page = Number(parts[4]);
      const options = parseOptions(decode(parts[5]));
      if (!p || !keywords || !Number.isInteger(page) || !options) return notFound(res, 'item page');
      if (method === 'POST') {
        // a group's Choose button without JavaScript: set the chosen values, keep first slots
        const body = await readBody(req);
        const next = options.map(([k, v]) => [k, v] as [string, string]);
        for (const group of p.options) {
          const value = body.get(group.name);
          if (value === null || !group.values.includes(value)) continue;
          const at = next.findIndex(([k]) => k === group.name);
          if (at >= 0) next[at] = [group.name, value];
          else next.push([group.name, value]);
        }
        return redirect(res, urls.item(sid, p.asin, keywords, page, next));
      }
      return render({
        kind: 'item',
        ...base,
        keywords,
        page,
        product: p,
        options,
        showAttributes: shop.showAttributes,
      });
    }
    if (route === 'item_sub_page' && parts.length === 7) {
      const p = product(decode(parts[2]));
      const keywords = parseJsonStrings(decode(parts[3]));
      const page = Number(parts[4]);
      const subPage = decode(parts[5]) as SubPage;
      const options = parseOptions(decode(parts[6]));
      if (
        !p ||
        !keywords ||
        !Number.isInteger(page) ||
        !options ||
        !['Description', 'Features', 'Reviews', 'Attributes'].includes(subPage)
      )
        return notFound(res, 'sub-page');
      return render({ kind: 'sub', ...base, keywords, page, product: p, options, subPage });
    }
    if (route === 'done' && parts.length === 4) {
      const asin = decode(parts[2]);
      const options = parseOptions(decode(parts[3]));
      if (!product(asin) || !options) return notFound(res, 'done page');
      const reward = shop.reward(asin, options, goal, prices);
      return render({ kind: 'done', sessionId: sid, asin, options, reward: reward.total });
    }
    return notFound(res, path);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain', `error: ${String(error)}\n`);
      else res.end();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    shop,
    registerSession: (sessionId, goal, prices) => {
      sessions.set(sessionId, { goal, prices });
    },
    dropSession: (sessionId) => {
      sessions.delete(sessionId);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
