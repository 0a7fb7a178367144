/**
 * Command-line arguments of the scripts and CLIs: pnpm 12 passes a literal `--` through to the
 * script (`pnpm start -- --smoke` runs `main.ts -- --smoke`), and a script whose command line
 * already has arguments (`cli-main.ts eval -c eval.yaml`) receives it in the middle. Node's
 * `parseArgs` would read everything after it as positionals.
 */

/** `args` without its first `--` (the one pnpm passes through); later ones are kept. */
export function dropArgsSeparator(args: readonly string[]): string[] {
  const at = args.indexOf('--');
  return at < 0 ? [...args] : [...args.slice(0, at), ...args.slice(at + 1)];
}
