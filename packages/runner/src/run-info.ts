/**
 * What makes a run reproducible, written into its folder: the resolved config, the seed, the
 * versions of Node and of the agentrl packages, and hashes of the data the run read.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hashFileSync, hashText, writeJsonAtomic } from './files.ts';

/** What `packageVersions` records for the runner when no package.json sits beside its code. */
export const BUNDLED_VERSION = 'unknown (no package.json beside the code: a bundle)';

/**
 * Versions of the `@agentrl/*` packages the runner resolves, plus the runner's own, read from
 * the package folder `root` (default: this package's). A bundled run (e.g. packed for an offline
 * GPU machine) has no package.json there and records {@link BUNDLED_VERSION}.
 */
export function packageVersions(
  root: URL = new URL('../', import.meta.url),
): Record<string, string> {
  const out: Record<string, string> = {};
  const ownPath = fileURLToPath(new URL('package.json', root));
  if (!existsSync(ownPath)) return { '@agentrl/runner': BUNDLED_VERSION };
  const own = JSON.parse(readFileSync(ownPath, 'utf8')) as { name: string; version: string };
  out[own.name] = own.version;
  const scope = fileURLToPath(new URL('node_modules/@agentrl/', root));
  if (existsSync(scope)) {
    for (const name of readdirSync(scope)) {
      const pkg = join(scope, name, 'package.json');
      if (!existsSync(pkg)) continue;
      const data = JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string; version?: string };
      if (data.name && data.version) out[data.name] = data.version;
    }
  }
  return out;
}

/** SHA-256 of every file under `dir` (sorted, at most `limit` files), relative path → hash. */
export function hashFolder(dir: string, limit = 200): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      if (Object.keys(out).length >= limit) return;
      const r = rel ? `${rel}/${name}` : name;
      const full = join(dir, r);
      if (statSync(full).isDirectory()) walk(r);
      else out[r] = hashFileSync(full);
    }
  };
  if (existsSync(dir)) walk('');
  return out;
}

/** Writes `config.resolved.json` into the run folder. */
export async function writeRunInfo(
  runDir: string,
  info: {
    command: string;
    config: unknown;
    seed: number;
    data?: Record<string, unknown>;
    /** What the model module reports about itself (backend, adapter, parameters). */
    model?: Readonly<Record<string, unknown>>;
    /** The arm the run belongs to in a comparison (`agentrl report` groups runs by it). */
    arm?: string;
  },
): Promise<void> {
  await writeJsonAtomic(join(runDir, 'config.resolved.json'), {
    command: info.command,
    ...(info.arm !== undefined ? { arm: info.arm } : {}),
    seed: info.seed,
    config: info.config,
    configHash: hashText(JSON.stringify(info.config)),
    versions: { node: process.version, ...packageVersions() },
    data: info.data ?? {},
    ...(info.model !== undefined ? { model: info.model } : {}),
    writtenAt: new Date().toISOString(),
  });
}
