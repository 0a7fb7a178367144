#!/usr/bin/env bash
# Software Vulkan for the WebGPU tests of @agentrl/model-tfjs: Mesa's lavapipe
# from bookworm-backports (Dawn refuses bookworm's Mesa 22). Idempotent and quick when already
# installed. Never fails the CI run: when it cannot install, it says so and the webgpu tests skip.
set -u

say() { echo "ci(vulkan): $*"; }

lavapipe_ready() {
  # lavapipe's ICD file plus a Mesa of version 23 or newer.
  ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 || return 1
  local version
  version="$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null)" || return 1
  dpkg --compare-versions "$version" ge 23 || return 1
  dpkg -s libvulkan1 >/dev/null 2>&1
}

if lavapipe_ready; then
  say "software Vulkan (lavapipe) already installed"
  exit 0
fi

if [ "$(uname -s)" != Linux ] || ! command -v apt-get >/dev/null 2>&1; then
  say "no apt-get here; webgpu tests will skip unless a Vulkan driver is present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    say "not root and no password-less sudo; webgpu tests will skip"
    exit 0
  fi
fi

codename="$( . /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")"
if [ "$codename" != bookworm ]; then
  # Newer releases ship a Mesa that Dawn accepts in their main suite.
  say "installing mesa-vulkan-drivers from $codename"
  if $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      --no-install-recommends mesa-vulkan-drivers libvulkan1; then
    say "installed"
  else
    say "could not install mesa-vulkan-drivers; webgpu tests will skip"
  fi
  exit 0
fi

sources=/etc/apt/sources.list.d/debian.sources
if [ -f "$sources" ]; then
  if ! grep -q 'bookworm-backports' "$sources"; then
    # Append the suite to the Suites line that lists plain bookworm (not bookworm-security).
    $SUDO sed -i -E '/^Suites:(.* )?bookworm( |$)/s/$/ bookworm-backports/' "$sources"
  fi
elif ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo 'deb http://deb.debian.org/debian bookworm-backports main' |
    $SUDO tee /etc/apt/sources.list.d/bookworm-backports.list >/dev/null
fi

say "installing mesa-vulkan-drivers and libvulkan1 from bookworm-backports"
if $SUDO apt-get update -qq &&
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    -t bookworm-backports mesa-vulkan-drivers libvulkan1; then
  if lavapipe_ready; then say "installed"; else say "installed, but no lavapipe ICD found"; fi
else
  say "could not install from bookworm-backports; webgpu tests will skip"
fi
exit 0
