'use strict';
// node load-entries.cjs <package>: loads every entry point of an installed package through
// require() and through import(), each in a fresh process, and fails unless each gives a non-empty
// module. An entry that needs an optional peer dependency which is not installed is reported and
// skipped.
const { spawnSync } = require('node:child_process');
const { readFileSync } = require('node:fs');

if (process.argv[2] === '--one') {
  const [specifier, how] = process.argv.slice(3);
  const load = how === 'require' ? async () => require(specifier) : () => import(specifier);
  load().then(
    (module) => {
      if (Object.keys(module).length === 0) throw new Error(`${how}('${specifier}') is empty`);
    },
    (error) => {
      console.error(error);
      process.exit(['MODULE_NOT_FOUND', 'ERR_MODULE_NOT_FOUND'].includes(error.code) ? 3 : 1);
    },
  );
} else {
  const name = process.argv[2];
  const manifest = JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8'));
  const meta = manifest.peerDependenciesMeta ?? {};
  const optionalPeers = Object.keys(meta).filter((peer) => meta[peer].optional);
  for (const subpath of Object.keys(manifest.exports)) {
    if (subpath === './package.json') continue;
    const specifier = name + subpath.slice(1);
    for (const how of ['require', 'import']) {
      const run = spawnSync(process.execPath, [__filename, '--one', specifier, how], {
        encoding: 'utf8',
      });
      const peer = optionalPeers.find((p) => run.stderr.includes(`'${p}'`));
      if (run.status === 3 && peer) {
        console.log(`  ${how}('${specifier}') needs the optional peer ${peer} (not installed)`);
      } else if (run.status === 0) {
        console.log(`  ${how}('${specifier}') ok`);
      } else {
        console.error(run.stderr);
        console.error(`${how}('${specifier}') failed on Node ${process.version}`);
        process.exit(1);
      }
    }
  }
}
