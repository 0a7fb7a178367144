#!/usr/bin/env bash
# Checks the tarballs of the public packages: publint (--strict), Are-The-Types-Wrong and our
# manifest rules (.ci/consumer/check-manifest.cjs: the repository's LICENSE, import and default
# conditions on every export and their files present, the shared minimum Node, metadata, no
# workspace-only specifiers).
#   check-packages.sh DIR   the *.tgz files in DIR (the registry check passes the published ones)
#   check-packages.sh       packs every package under packages/ from its current dist/ (no
#                           rebuild: run `pnpm build` first, as `pnpm release` does) and checks that
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
LOG=$(mktemp "${TMPDIR:-/tmp}/agentrl-check.XXXXXX")
if [ $# -ge 1 ]; then
  DIR=$1
  trap 'rm -f "$LOG"' EXIT
else
  DIR=$(mktemp -d "${TMPDIR:-/tmp}/agentrl-pack.XXXXXX")
  trap 'rm -rf "$DIR" "$LOG"' EXIT
  pnpm -r --filter './packages/*' pack --ignore-scripts --pack-destination "$DIR" >"$LOG" 2>&1 ||
    { cat "$LOG" >&2; exit 1; }
fi
count=0
for tgz in "$DIR"/*.tgz; do
  [ -e "$tgz" ] || { echo "check-packages: no tarballs in $DIR" >&2; exit 1; }
  node .ci/consumer/check-manifest.cjs "$tgz" "$ROOT/LICENSE"
  pnpm exec publint run "$tgz" --strict --level warning >"$LOG" 2>&1 || { cat "$LOG" >&2; exit 1; }
  # esm-only: the packages are ES modules that Node >= 20.19 also loads through require(), which
  # attw does not model; .ci/registry-check.sh runs require() itself instead.
  pnpm exec attw "$tgz" --profile esm-only --format table-flipped >"$LOG" 2>&1 ||
    { cat "$LOG" >&2; exit 1; }
  count=$((count + 1))
done
echo "check-packages: publint, attw and manifest rules pass on $count tarballs"
