#!/usr/bin/env bash
# Packs this benchmark for a GPU machine without network: the bundle, Node,
# dawn.node and the Vulkan loader from packages/model-tfjs/scripts/pack-gpu-run.sh, plus
# torch_harness.py, the GL vendor-neutral libraries NVIDIA's Vulkan driver loads (libglvnd), and
# bench.sh, which finds the NVIDIA Vulkan ICD when it sits outside the loader's search path.
#   benchmarks/model-gpu/scripts/pack.sh [OUT_DIR]        (default benchmarks/model-gpu/gpu-run)
# Then on the GPU machine: OUT_DIR/bench.sh --shapes full --json results.json [--python python3]
# Environment: as pack-gpu-run.sh (ESBUILD, NODE_BIN).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="$(realpath -m "${1:-$here/gpu-run}")"

bash "$repo/packages/model-tfjs/scripts/pack-gpu-run.sh" "$here/src/bench.ts" "$out"
cp "$here/torch_harness.py" "$out/"

# libGLX_nvidia (the library NVIDIA's Vulkan ICD names) needs libGLdispatch from libglvnd; GPU
# images without X often lack it. Unpacked beside the Vulkan loader, on run.sh's LD_LIBRARY_PATH.
tmp="$(mktemp -d)"
if (cd "$tmp" && apt-get download libglvnd0 libglx0 libegl1 libgl1 libopengl0 >/dev/null 2>&1); then
  for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$out/vulkan/root"; done
else
  echo "pack: could not download libglvnd0 & co; the GPU machine must provide libGLdispatch" >&2
fi
rm -rf "$tmp"

cat >"$out/bench.sh" <<'RUN'
#!/usr/bin/env bash
# Runs the model-gpu benchmark from this pack on the webgpu backend. Arguments go to the
# benchmark (--shapes full|tiny, --python PATH, --only NAMES, --repeats N, --json FILE, ...).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ] &&
  ! ls /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json >/dev/null 2>&1; then
  for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/local/share/vulkan/icd.d/nvidia_icd.json; do
    if [ -f "$f" ]; then export VK_DRIVER_FILES="$f"; echo "bench.sh: VK_DRIVER_FILES=$f" >&2; break; fi
  done
fi
exec "$here/run.sh" "$@"
RUN
chmod +x "$out/bench.sh"

tar -C "$(dirname "$out")" -cJf "$out.tar.xz" "$(basename "$out")"
echo "pack: wrote $out ($(du -sh "$out" | cut -f1)) and $out.tar.xz ($(du -h "$out.tar.xz" | cut -f1))"
