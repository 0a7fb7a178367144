#!/usr/bin/env bash
# The API reference: TypeDoc over every public entry point of every package (the `exports` map's
# source files) into docs/api/<package folder>/, and docs/api/index.html linking them. Fails when
# TypeDoc reports an error; its warnings (a link to another package's symbol, a referenced type
# that the entry points do not export) are printed with a count per package.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=docs/api
rm -rf "$OUT"
mkdir -p "$OUT"
LOG=$(mktemp "${TMPDIR:-/tmp}/agentrl-typedoc.XXXXXX")
trap 'rm -f "$LOG"' EXIT
items=""
for dir in packages/*/; do
  dir=${dir%/}
  folder=$(basename "$dir")
  name=$(node -p "require('./$dir/package.json').name")
  mapfile -t entries < <(node -p "Object.entries(require('./$dir/package.json').exports)
    .filter(([key]) => key !== './package.json')
    .map(([key, target]) => target['@agentrl/source']).join('\n')")
  args=()
  for entry in "${entries[@]}"; do args+=(--entryPoints "$dir/${entry#./}"); done
  if ! node_modules/.bin/typedoc --entryPointStrategy resolve "${args[@]}" \
    --tsconfig "$dir/tsconfig.json" --out "$OUT/$folder" --name "$name" --readme none \
    --disableSources --logLevel Warn >"$LOG" 2>&1; then
    cat "$LOG" >&2
    echo "api-docs: TypeDoc failed on $name" >&2
    exit 1
  fi
  warnings=$(grep '\[warning\]' "$LOG" | grep -vc 'Found [0-9]* errors' || true)
  sed 's/^/  /' "$LOG"
  echo "api-docs: $name (${#entries[@]} entry points, $warnings warnings)"
  items+="<li><a href=\"$folder/index.html\">$name</a></li>"
done
printf '<!doctype html><meta charset="utf-8"><title>agentrl API</title><h1>agentrl API reference</h1><ul>%s</ul>\n' \
  "$items" >"$OUT/index.html"
echo "api-docs: $OUT/index.html"
