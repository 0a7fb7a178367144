/**
 * Server-side rendering of the shop's pages (the pages and URLs of WebShop's Flask app). One function renders every page of both
 * the direct env and the local site, so the text converter sees the same HTML in both modes. The
 * markup has no whitespace between tags, so a browser's DOM keeps exactly the rendered text nodes.
 */
import type { Product } from './catalogue.ts';
import { pyFloatRepr } from './python-format.ts';

/** The sub-pages of an item. */
export type SubPage = 'Description' | 'Features' | 'Reviews' | 'Attributes';

/** Chosen options, in insertion order (a Python dict): `[name, value]` pairs. */
export type ChosenOptions = readonly (readonly [string, string])[];

/** Everything one page shows; `kind` says which template. */
export type PageView =
  | { readonly kind: 'search'; readonly sessionId: string; readonly instruction: string }
  | {
      readonly kind: 'results';
      readonly sessionId: string;
      readonly instruction: string;
      readonly keywords: readonly string[];
      readonly page: number;
      readonly total: number;
      readonly products: readonly Product[];
    }
  | {
      readonly kind: 'item';
      readonly sessionId: string;
      readonly instruction: string;
      readonly keywords: readonly string[];
      readonly page: number;
      readonly product: Product;
      readonly options: ChosenOptions;
      readonly showAttributes: boolean;
    }
  | {
      readonly kind: 'sub';
      readonly sessionId: string;
      readonly instruction: string;
      readonly keywords: readonly string[];
      readonly page: number;
      readonly product: Product;
      readonly options: ChosenOptions;
      readonly subPage: SubPage;
    }
  | {
      readonly kind: 'done';
      readonly sessionId: string;
      readonly asin: string;
      readonly options: ChosenOptions;
      readonly reward: number;
    };

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&#34;',
  "'": '&#39;',
  // A browser turns a raw CR (and CRLF) into LF while parsing; a character reference keeps it.
  '\r': '&#13;',
  // a browser drops a raw NUL from text; both modes show U+FFFD instead
  '\0': '&#0;',
};

const SPECIAL = new RegExp(`[&<>"'\r${String.fromCharCode(0)}]`, 'g');

/** Jinja's autoescape (plus CR and NUL, see above). */
export function escapeHtml(s: string): string {
  return s.replace(SPECIAL, (c) => ESCAPES[c] as string);
}

const seg = (s: string): string => encodeURIComponent(s);

/**
 * Product images point at Amazon's CDN in the real data: pages show a local placeholder and keep
 * the original address in `data-src`, so no request ever leaves the machine.
 */
export const PLACEHOLDER_IMAGE = '/static/product.svg';

/** The site's URLs: every page state is in the path, so pages can be bookmarked and reloaded. */
export const urls = {
  search: (sid: string): string => `/${seg(sid)}`,
  results: (sid: string, keywords: readonly string[], page: number): string =>
    `/search_results/${seg(sid)}/${seg(JSON.stringify(keywords))}/${page}`,
  item: (
    sid: string,
    asin: string,
    keywords: readonly string[],
    page: number,
    options: ChosenOptions,
  ): string =>
    `/item_page/${seg(sid)}/${seg(asin)}/${seg(JSON.stringify(keywords))}/${page}/${seg(JSON.stringify(options))}`,
  sub: (
    sid: string,
    asin: string,
    keywords: readonly string[],
    page: number,
    subPage: SubPage,
    options: ChosenOptions,
  ): string =>
    `/item_sub_page/${seg(sid)}/${seg(asin)}/${seg(JSON.stringify(keywords))}/${page}/${subPage}/${seg(JSON.stringify(options))}`,
  done: (sid: string, asin: string, options: ChosenOptions): string =>
    `/done/${seg(sid)}/${seg(asin)}/${seg(JSON.stringify(options))}`,
};

/** Python `json.dumps(obj, sort_keys=True)` of a str→str dict, made HTML-safe as Jinja's `tojson`. */
export function tojsonOptions(options: ChosenOptions): string {
  const byName = new Map<string, string>();
  for (const [k, v] of options) byName.set(k, v);
  const keys = [...byName.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const body = keys
    .map((k) => `${pyJsonString(k)}: ${pyJsonString(byName.get(k) as string)}`)
    .join(', ');
  return `{${body}}`.replace(
    /[<>&']/g,
    (c) => `\\u00${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

function pyJsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i] as string;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || c > 0x7e) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function page(title: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${title}</title><link rel="stylesheet" href="/static/style.css"><link rel="icon" href="data:,"></head><body><div class="container">${body}</div><script src="/static/shop.js"></script></body></html>`;
}

function instructionBlock(instruction: string, withSpace: boolean): string {
  return `<div id="instruction-text"><h4>Instruction:${withSpace ? ' ' : ''}<br>${escapeHtml(instruction)}</h4></div>`;
}

const backToSearch = (sid: string): string =>
  `<div class="row"><a class="btn btn-success" href="${escapeHtml(urls.search(sid))}">Back to Search</a></div>`;

const navButton = (href: string, label: string): string =>
  `<div class="row"><a class="btn btn-primary" href="${escapeHtml(href)}">${label}</a></div>`;

function renderOptions(v: Extract<PageView, { kind: 'item' }>): string {
  const chosen = new Set(v.options.map(([, value]) => value));
  let html = '';
  for (const group of v.product.options) {
    const action = urls.item(v.sessionId, v.product.asin, v.keywords, v.page, v.options);
    html += `<div class="row option-group"><h4>${escapeHtml(group.name)}</h4><form class="radio-toolbar" method="post" action="${escapeHtml(action)}">`;
    group.values.forEach((value, i) => {
      const next = [...v.options.filter(([n]) => n !== group.name), [group.name, value] as const];
      // keep the first insertion slot of a name already chosen (Python dict update)
      const ordered = v.options.some(([n]) => n === group.name)
        ? v.options.map(([n, x]) => [n, n === group.name ? value : x] as const)
        : next;
      const id = `radio_${group.name}${i}`;
      const url = urls.item(v.sessionId, v.product.asin, v.keywords, v.page, ordered);
      html += `<input type="radio" id="${escapeHtml(id)}" name="${escapeHtml(group.name)}" value="${escapeHtml(value)}" data-url="${escapeHtml(url)}"${chosen.has(value) ? ' checked' : ''}><label for="${escapeHtml(id)}">${escapeHtml(value)}</label>`;
    });
    html += '<input type="submit" class="choose" value="Choose"></form></div>';
  }
  return html;
}

/** Renders one page to HTML. */
export function renderPage(v: PageView): string {
  switch (v.kind) {
    case 'search':
      return page(
        'WebShop',
        `<div id="logo"><h2>WebShop</h2></div>${instructionBlock(v.instruction, true)}<form id="form-buscar" method="post" action="${escapeHtml(urls.search(v.sessionId))}"><input id="search_input" class="form-control" type="text" name="search_query" placeholder="Search..." required><button class="btn btn-success" type="submit">Search</button></form>`,
      );
    case 'results': {
      let body = `${instructionBlock(v.instruction, false)}${backToSearch(v.sessionId)}<div class="row"><h3>Page ${v.page} (Total results: ${v.total})</h3>`;
      if (v.page > 1)
        body += navButton(urls.results(v.sessionId, v.keywords, v.page - 1), '&lt; Prev');
      body += `${navButton(urls.results(v.sessionId, v.keywords, v.page + 1), 'Next &gt;')}</div><div class="row results">`;
      for (const p of v.products) {
        const href = urls.item(v.sessionId, p.asin, v.keywords, v.page, []);
        body += `<div class="result"><img src="${PLACEHOLDER_IMAGE}" data-src="${escapeHtml(p.MainImage)}" class="result-img" alt=""><h4 class="product-asin"><a class="product-link" href="${escapeHtml(href)}">${escapeHtml(p.asin)}</a></h4><h4 class="product-title">${escapeHtml(p.Title)}</h4><h5 class="product-price">${escapeHtml(p.Price)}</h5></div>`;
      }
      return page('WebShop: results', `${body}</div>`);
    }
    case 'item': {
      const p = v.product;
      const sub = (name: SubPage) =>
        `<a class="btn btn-primary" href="${escapeHtml(urls.sub(v.sessionId, p.asin, v.keywords, v.page, name, v.options))}">${name}</a>`;
      const body =
        `${instructionBlock(v.instruction, false)}${backToSearch(v.sessionId)}${navButton(urls.results(v.sessionId, v.keywords, v.page), '&lt; Prev')}` +
        `<div class="row item"><div class="item-options"><img id="product-image" src="${PLACEHOLDER_IMAGE}" data-src="${escapeHtml(p.MainImage)}" class="item-page-img" alt="">${renderOptions(v)}</div>` +
        `<div class="item-info"><h2>${escapeHtml(p.Title)}</h2><h4>Price: ${escapeHtml(p.Price)}</h4><h4>Rating: ${escapeHtml(p.Rating)}</h4><div class="row">${sub('Description')}${sub('Features')}${sub('Reviews')}${v.showAttributes ? sub('Attributes') : ''}</div></div>` +
        `<div class="item-buy"><form method="post" action="${escapeHtml(urls.done(v.sessionId, p.asin, v.options))}"><button type="submit" class="btn btn-lg purchase">Buy Now</button></form></div></div>`;
      return page('WebShop: item', body);
    }
    case 'sub': {
      const p = v.product;
      let content = '';
      if (v.subPage === 'Description')
        content = `<p class="product-info">${escapeHtml(p.Description)}</p>`;
      else if (v.subPage === 'Features')
        content = `<ul>${p.BulletPoints.map((b) => `<li><p class="product-info"> ${escapeHtml(b)}</p></li>`).join('')}</ul>`;
      else if (v.subPage === 'Attributes')
        content =
          `<ul>${p.Attributes.map((a) => `<li><p class="attribute"> ${escapeHtml(a)}</p></li>`).join('')}</ul>` +
          `<h5>${escapeHtml(p.category)}</h5><h5>${escapeHtml(p.query)}</h5><h5>${escapeHtml(p.product_category)}</h5>`;
      const body = `${instructionBlock(v.instruction, false)}${backToSearch(v.sessionId)}${navButton(urls.item(v.sessionId, p.asin, v.keywords, v.page, v.options), '&lt; Prev')}<div class="row sub-page"><div class="card">${content}</div></div>`;
      return page(`WebShop: ${v.subPage.toLowerCase()}`, body);
    }
    case 'done': {
      const h4 = (label: string, value: string) =>
        `<h4>${label}<pre>${escapeHtml(value)}</pre></h4>`;
      const body =
        '<div id="thankyou"><h1>Thank you for shopping with us!</h1></div><div id="stats"><h3>Your code: </h3><div><pre>None</pre> (Paste it in your MTurk interface.)</div>' +
        `<div class="details" style="display:none"><h2>Purchased</h2><hr>${h4('asin', v.asin)}${h4('options', tojsonOptions(v.options))}${h4('attrs', 'None')}${h4('category', 'None')}${h4('query', 'None')}${h4('product category', 'None')}` +
        `<h2>Target</h2><hr>${h4('asin', '')}${h4('options', '')}${h4('attrs', '')}${h4('price upper', '')}${h4('instuction text', '')}${h4('category', '')}${h4('product category', '')}${h4('query', '')}<h4>Goal <div id="goal"><pre>None</pre></div></h4><h2>Reward</h2></div>` +
        `<hr><h3 id="reward">Your score (min 0.0, max 1.0)<pre>${pyFloatRepr(v.reward)}</pre></h3><h4 hidden>Reward Details <div id="reward_info"><pre>None</pre></div></h4></div>`;
      return page('WebShop: done', body);
    }
  }
}
