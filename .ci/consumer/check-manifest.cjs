'use strict';
// node check-manifest.cjs <tarball> <LICENSE>: rules every published tarball follows beyond what
// publint checks: the repository's LICENSE, built entry points, an `import` and a `default`
// condition on every export (so that require() works on Node >= 20.19), the shared minimum Node,
// metadata, and no workspace-only specifiers left in dependencies.
const { execFileSync } = require('node:child_process');
const { readFileSync } = require('node:fs');

const [tarball, licensePath] = process.argv.slice(2);
const read = (path) =>
  execFileSync('tar', ['-xzOf', tarball, `package/${path}`], { encoding: 'utf8' });
const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');
const manifest = JSON.parse(read('package.json'));
const root = JSON.parse(readFileSync(require.resolve('../../package.json'), 'utf8'));
const problems = [];

if (read('LICENSE') !== readFileSync(licensePath, 'utf8'))
  problems.push('LICENSE differs from the repository root');
for (const field of ['license', 'repository', 'homepage', 'bugs', 'keywords', 'description']) {
  if (manifest[field] === undefined) problems.push(`no "${field}"`);
}
if (manifest.engines?.node !== root.engines.node) {
  problems.push(
    `engines.node is ${manifest.engines?.node}, the repository's is ${root.engines.node}`,
  );
}
for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
  if (subpath === './package.json') continue;
  if (typeof target !== 'object' || !target.import || !target.default || !target.types) {
    problems.push(`exports["${subpath}"] needs types, import and default conditions`);
    continue;
  }
  for (const condition of ['types', 'import', 'default']) {
    if (!files.includes(`package/${target[condition].slice(2)}`)) {
      problems.push(
        `exports["${subpath}"].${condition} → ${target[condition]} is not in the tarball`,
      );
    }
  }
}
for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
  for (const [dep, range] of Object.entries(manifest[field] ?? {})) {
    if (/^(workspace|catalog|link|file):/.test(range))
      problems.push(`${field}.${dep} is "${range}"`);
  }
}
if (problems.length > 0) {
  console.error(`${manifest.name}: ${problems.join('; ')}`);
  process.exit(1);
}
