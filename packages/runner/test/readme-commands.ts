/**
 * The shell commands of the repository's Markdown: every line of a fenced `sh`, `bash` or `shell`
 * block in a README.md, CONTRIBUTING.md or docs/*.md, with `\` continuations joined. Read by
 * `readme-commands.test.ts`, which runs the quick ones.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** One command of a fenced block, with the variable assignments made earlier in that block. */
export interface ReadmeCommand {
  /** The Markdown file, relative to the repository root. */
  readonly file: string;
  /** Index of the fenced block within the file. */
  readonly block: number;
  /** The command as written (continuations joined), comment included. */
  readonly text: string;
  /** The command without its trailing comment and with single spaces: the key of its entry. */
  readonly key: string;
  /** Lines such as `T="--set a=1"` or `export X=...` that came before it in the block. */
  readonly setup: readonly string[];
}

const SKIPPED_FOLDERS = new Set(['node_modules', '.git', 'dist', 'runs', '.turbo']);
const FENCE = /^```(sh|bash|shell)[ \t]*\n([\s\S]*?)^```/gm;
const ASSIGNMENT_ONLY = /^(export\s+)?[A-Za-z_][A-Za-z0-9_]*=("[^"]*"|'[^']*'|\S*)\s*(#.*)?$/;

/** The Markdown files that hold commands: every README.md, CONTRIBUTING.md, docs/*.md. */
export function markdownFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        if (!SKIPPED_FOLDERS.has(name)) walk(path);
      } else if (name === 'README.md' || name === 'CONTRIBUTING.md') {
        out.push(relative(root, path));
      } else if (name.endsWith('.md') && relative(root, dir) === 'docs') {
        out.push(relative(root, path));
      }
    }
  };
  walk(root);
  return out;
}

/** Removes a trailing ` # comment` (outside quotes) and collapses whitespace. */
export function commandKey(text: string): string {
  let quote: string | undefined;
  let end = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1] as string))) {
      end = i;
      break;
    }
  }
  return text.slice(0, end).replace(/\s+/g, ' ').trim();
}

/** The commands of one Markdown text. */
export function commandsOf(file: string, markdown: string): ReadmeCommand[] {
  const out: ReadmeCommand[] = [];
  let block = 0;
  for (const match of markdown.matchAll(FENCE)) {
    const setup: string[] = [];
    const joined = (match[2] as string).replace(/\\\n/g, ' ');
    for (const line of joined.split('\n')) {
      const text = line.trim();
      if (text === '' || text.startsWith('#')) continue;
      if (ASSIGNMENT_ONLY.test(text)) {
        setup.push(text);
        continue;
      }
      out.push({ file, block, text, key: commandKey(text), setup: [...setup] });
    }
    block++;
  }
  return out;
}

/** Every command of every Markdown file under `root`. */
export function readmeCommands(root: string): ReadmeCommand[] {
  return markdownFiles(root).flatMap((file) =>
    commandsOf(file, readFileSync(join(root, file), 'utf8')),
  );
}
