#!/usr/bin/env bash
# The real ALFWorld engine for the differential test of @agentrl/env-alfworld: a virtual
# environment with the pinned packages of python/requirements-alfworld.txt (alfworld 0.4.2,
# textworld 1.7.0, fast-downward-textworld 20.6.4 and their dependencies, all from PyPI), made
# once per content of that file and Python version, outside the checkout (as .ci/python.sh does),
# so later runs cost nothing. Prints the venv's Python on its last line of stdout: .ci/run
# exports it as AGENTRL_ALFWORLD_PYTHON before the tests. fast-downward-textworld builds from
# source on the first install (a C++ compiler and CMake, a few minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
REQUIREMENTS=python/requirements-alfworld.txt
PYTHON=${PYTHON:-python3}

stamp=$(cat "$REQUIREMENTS" <("$PYTHON" -c 'import sys; print(sys.version)') | sha256sum | cut -c1-16)
VENV=${AGENTRL_ALFWORLD_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/agentrl/alfworld-venv-$stamp}
if [ ! -x "$VENV/bin/python" ]; then
  echo "alfworld: creating $VENV with the pinned packages of $REQUIREMENTS" >&2
  mkdir -p "$(dirname "$VENV")"
  partial=$(mktemp -d "$VENV.partial.XXXXXX")
  "$PYTHON" -m venv "$partial"
  "$partial/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS" >&2
  # Moved into place whole; the test runs the interpreter itself, never the scripts in bin/,
  # whose first lines name the folder they were installed in.
  mv -T "$partial" "$VENV" 2>/dev/null || rm -rf "$partial" # another run made it first
fi
"$VENV/bin/python" -c 'import alfworld, textworld' >&2 || {
  echo "alfworld: $VENV cannot import alfworld and textworld; remove it and run again" >&2
  exit 1
}
echo "alfworld: the real engine is in $VENV" >&2
echo "$VENV/bin/python"
