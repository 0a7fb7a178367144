#!/usr/bin/env bash
# Packs a run of @agentrl/model-tfjs on the webgpu backend for a GPU machine without network:
# the entry bundled into one ESM file (esbuild), the Node binary and Dawn's
# dawn.node xz-compressed, tfjs's wasm files, the Vulkan loader (libvulkan1 .deb unpacked), and
# a run.sh that unpacks once and runs. Usage:
#   packages/model-tfjs/scripts/pack-gpu-run.sh [ENTRY.ts] [OUT_DIR]
# ENTRY defaults to scripts/gpu-check.ts, OUT_DIR to ./gpu-run. Copy OUT_DIR.tar.xz over, then
#   tar xJf gpu-run.tar.xz && gpu-run/run.sh [args...]
# Environment: ESBUILD (command; default `pnpm dlx esbuild@0.27.2`), NODE_BIN (default: the node
# on PATH; pick the version the GPU machine should run).
set -euo pipefail

pkg="$(cd "$(dirname "$0")/.." && pwd)"
entry="$(realpath "${1:-$pkg/scripts/gpu-check.ts}")"
out="$(realpath -m "${2:-gpu-run}")"
esbuild=${ESBUILD:-"pnpm dlx esbuild@0.27.2"}
node_bin="${NODE_BIN:-$(command -v node)}"

say() { echo "pack-gpu-run: $*"; }
resolve_dir() { # directory of an installed package, resolved from this package
  (cd "$pkg" && node -e "const p=require('node:path');process.stdout.write(p.dirname(require.resolve(process.argv[1]+'/package.json')))" "$1")
}

rm -rf "$out"
mkdir -p "$out/node_modules/webgpu/dist/linux-x64" "$out/vulkan"

say "bundling $entry"
# The banner gives the ESM bundle the CommonJS names bundled tfjs code expects.
$esbuild "$entry" --bundle --platform=node --format=esm --target=node20 \
  --conditions=@agentrl/source --outfile="$out/run.mjs" --log-level=warning \
  --external:webgpu --external:@tensorflow/tfjs-node --external:@tensorflow/tfjs-node-gpu \
  --banner:js="import { createRequire as __agentrlRequire } from 'node:module'; import { fileURLToPath as __agentrlPath } from 'node:url'; const require = __agentrlRequire(import.meta.url); const __filename = __agentrlPath(import.meta.url); const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));"

say "copying tfjs wasm files and the webgpu package (dawn.node)"
cp "$(resolve_dir @tensorflow/tfjs-backend-wasm)"/dist/*.wasm "$out/"
webgpu_dir="$(resolve_dir webgpu)"
cp "$webgpu_dir/index.js" "$webgpu_dir/package.json" "$out/node_modules/webgpu/"
xz -T0 -6 -c "$webgpu_dir/dist/linux-x64/dawn.node" >"$out/node_modules/webgpu/dist/linux-x64/dawn.node.xz"

say "compressing node $("$node_bin" --version) from $node_bin"
xz -T0 -6 -c "$node_bin" >"$out/node.xz"

say "fetching the Vulkan loader (libvulkan1)"
if (cd "$out/vulkan" && apt-get download libvulkan1 >/dev/null 2>&1); then
  deb="$(ls "$out"/vulkan/libvulkan1_*.deb)"
  dpkg-deb -x "$deb" "$out/vulkan/root"
  rm -f "$deb"
else
  lib="$(ldconfig -p | awk '/libvulkan\.so\.1 /{print $NF; exit}')"
  if [ -n "$lib" ]; then
    mkdir -p "$out/vulkan/root/usr/lib/x86_64-linux-gnu"
    cp -L "$lib" "$out/vulkan/root/usr/lib/x86_64-linux-gnu/libvulkan.so.1"
  else
    say "no libvulkan1 found; the GPU machine must have the Vulkan loader installed"
  fi
fi

cat >"$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Unpacks node and dawn.node once, then runs the bundle on the webgpu backend.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
[ -x "$here/node" ] || { xz -dc "$here/node.xz" >"$here/node" && chmod +x "$here/node"; }
dawn="$here/node_modules/webgpu/dist/linux-x64/dawn.node"
[ -f "$dawn" ] || xz -dc "$dawn.xz" >"$dawn"
for d in "$here"/vulkan/root/usr/lib/x86_64-linux-gnu "$here"/vulkan/root/lib/x86_64-linux-gnu; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
# If Vulkan finds no GPU driver, point it at the vendor ICD file, e.g.
#   VK_DRIVER_FILES=/usr/share/vulkan/icd.d/nvidia_icd.json gpu-run/run.sh
export AGENTRL_TFJS_BACKEND="${AGENTRL_TFJS_BACKEND:-webgpu}"
exec "$here/node" "$here/run.mjs" "$@"
RUN
chmod +x "$out/run.sh"

tar -C "$(dirname "$out")" -cJf "$out.tar.xz" "$(basename "$out")"
say "wrote $out and $out.tar.xz ($(du -h "$out.tar.xz" | cut -f1))"
