/**
 * HTML → text observation and clickables, as WebAgentTextEnv does it with BeautifulSoup
 * (`WebAgentTextEnv` with `observation_mode='text'`, and `get_available_actions`): visible text nodes, bs4's whitespace rule, `[SEP]` joining, and the clickable
 * map (buttons, then product links, then radios; later equal keys overwrite, first slot kept).
 * A small tokenizer, enough for the pages this package renders and for a browser's serialisation
 * of them (quoted attributes, `&amp;`-style references, void elements).
 */
import { pyStrip } from './python-format.ts';

/** What a clickable does when clicked: the element kind that won its key. */
export interface ClickTarget {
  readonly kind: 'button' | 'link' | 'radio';
  /** A radio's `name` attribute (the option group). */
  readonly name?: string;
}

/** A page as the text env sees it. */
export interface ConvertedPage {
  /** The raw observation (`convert_html_to_text(simple=True)`). */
  readonly text: string;
  /** Whether an element with id `search_input` exists. */
  readonly hasSearchBar: boolean;
  /** Clickable keys in order. */
  readonly clickables: readonly string[];
  /** The element each key selects. */
  readonly targets: ReadonlyMap<string, ClickTarget>;
}

const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'source',
  'track',
  'wbr',
]);
const RAW_TEXT = new Set(['script', 'style']);
const HIDDEN_PARENTS = new Set(['style', 'script', 'head', 'title', 'meta']);
const PRESERVE = new Set(['pre', 'textarea']);
const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
};

/** Decodes the character references a renderer or a browser's serialiser writes. */
export function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref[0] === '#') {
      const cp =
        ref[1] === 'x' || ref[1] === 'X'
          ? Number.parseInt(ref.slice(2), 16)
          : Number.parseInt(ref.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff)
        ? String.fromCodePoint(cp)
        : '\ufffd';
    }
    return NAMED[ref] ?? whole;
  });
}

const ATTR = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

function parseAttributes(s: string): Map<string, string> {
  const attrs = new Map<string, string>();
  for (const m of s.matchAll(ATTR)) {
    const name = (m[1] as string).toLowerCase();
    if (!attrs.has(name)) attrs.set(name, decodeEntities(m[2] ?? m[3] ?? m[4] ?? ''));
  }
  return attrs;
}

interface OpenElement {
  readonly name: string;
  /** Index into `collectors` when this element's text is a clickable key. */
  readonly collectors: number[];
}

const ASCII_SPACE_ONLY = /^[ \n\t\f\r]+$/;

/** Converts one page's HTML into the text observation and the clickables. */
export function convertPage(html: string): ConvertedPage {
  const texts: string[] = [];
  const stack: OpenElement[] = [];
  let hasSearchBar = false;
  // keyed elements in document order, by category; the text of each is collected until it closes
  const buttons: number[] = [];
  const links: number[] = [];
  const collected: string[] = [];
  const radios: { value: string; name: string }[] = [];

  const addText = (raw: string, parent: string | undefined): void => {
    if (raw.length === 0) return;
    for (const el of stack) for (const c of el.collectors) collected[c] += raw;
    if (parent === undefined || HIDDEN_PARENTS.has(parent)) return;
    let t = raw;
    if (!stack.some((e) => PRESERVE.has(e.name)) && ASCII_SPACE_ONLY.test(t))
      t = t.includes('\n') ? '\n' : ' ';
    if (t === '\n') return;
    texts.push(pyStrip(t));
  };

  let i = 0;
  const n = html.length;
  while (i < n) {
    const lt = html.indexOf('<', i);
    const textEnd = lt === -1 ? n : lt;
    if (textEnd > i) addText(decodeEntities(html.slice(i, textEnd)), stack.at(-1)?.name);
    if (lt === -1) break;
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      i = end === -1 ? n : end + 3;
      continue;
    }
    const next = html[lt + 1] ?? '';
    if (next === '!' || next === '?') {
      const end = html.indexOf('>', lt);
      i = end === -1 ? n : end + 1;
      continue;
    }
    if (next === '/') {
      const end = html.indexOf('>', lt);
      const name = html
        .slice(lt + 2, end === -1 ? n : end)
        .trim()
        .toLowerCase();
      const at = stack.findLastIndex((e) => e.name === name);
      if (at >= 0) stack.length = at;
      i = end === -1 ? n : end + 1;
      continue;
    }
    if (!/[a-zA-Z]/.test(next)) {
      addText('<', stack.at(-1)?.name);
      i = lt + 1;
      continue;
    }
    const end = html.indexOf('>', lt);
    if (end === -1) break;
    const inner = html.slice(lt + 1, end);
    const nameMatch = /^[^\s/>]+/.exec(inner);
    const name = (nameMatch?.[0] ?? '').toLowerCase();
    const attrs = parseAttributes(inner.slice(name.length));
    i = end + 1;
    if (attrs.get('id') === 'search_input') hasSearchBar = true;
    const classes = (attrs.get('class') ?? '').split(/\s+/).filter((c) => c.length > 0);
    if (name === 'input' && attrs.get('type') === 'radio') {
      radios.push({ value: attrs.get('value') ?? 'None', name: attrs.get('name') ?? '' });
    }
    if (VOID.has(name) || inner.endsWith('/')) continue;
    const collectors: number[] = [];
    if (classes.includes('btn')) {
      buttons.push(collected.length);
      collectors.push(collected.length);
      collected.push('');
    }
    if (name === 'a' && classes.includes('product-link')) {
      links.push(collected.length);
      collectors.push(collected.length);
      collected.push('');
    }
    if (RAW_TEXT.has(name)) {
      const close = html.toLowerCase().indexOf(`</${name}`, i);
      const stop = close === -1 ? n : close;
      stack.push({ name, collectors });
      addText(html.slice(i, stop), name);
      stack.pop();
      const gt = close === -1 ? n : html.indexOf('>', close);
      i = gt === -1 ? n : gt + 1;
      continue;
    }
    stack.push({ name, collectors });
  }

  const targets = new Map<string, ClickTarget>();
  for (const b of buttons) targets.set((collected[b] as string).toLowerCase(), { kind: 'button' });
  for (const l of links) targets.set((collected[l] as string).toLowerCase(), { kind: 'link' });
  for (const r of radios) targets.set(r.value, { kind: 'radio', name: r.name });
  return { text: texts.join(' [SEP] '), hasSearchBar, clickables: [...targets.keys()], targets };
}
