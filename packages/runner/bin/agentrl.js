#!/usr/bin/env node
import { spawnSync } from 'node:child_process';
// The agentrl command. Runs the built CLI (dist/) when present; in the workspace, without a
// build, it runs the TypeScript sources (Node >= 22.18 strips types; workspace packages are
// resolved through their "@agentrl/source" export condition).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = new URL('../dist/cli-main.js', import.meta.url);
if (existsSync(fileURLToPath(built))) {
  await import(built.href);
} else if (!stripsTypes(process.versions.node)) {
  process.stderr.write(
    `agentrl: running from the TypeScript sources needs Node >= 22.18 (this is ${process.version}); ` +
      "build first (pnpm build) or run it through pnpm, which uses the repository's Node 24\n",
  );
  process.exitCode = 1;
} else {
  const source = fileURLToPath(new URL('../src/cli-main.ts', import.meta.url));
  const result = spawnSync(
    process.execPath,
    [
      '--conditions=@agentrl/source',
      '--disable-warning=ExperimentalWarning',
      source,
      ...process.argv.slice(2),
    ],
    { stdio: 'inherit' },
  );
  process.exitCode = result.status ?? 1;
}

/** Whether this Node runs TypeScript files as they are (type stripping on by default: 22.18+). */
function stripsTypes(version) {
  const [major, minor] = version.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 18);
}
