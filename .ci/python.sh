#!/usr/bin/env bash
# The Python package (python/agentrl-env) against real servers: a virtual environment with the
# pinned packages of python/requirements-ci.txt (OpenEnv's client among them), made once per
# content of that file outside the checkout (so no file walker of the repository sees it, and
# checkouts share it); the package built as a wheel (its pinned build backend) and installed
# into a folder of this run only; then pytest. Exits non-zero on any failure, and when pytest
# collects no test (its exit 5). AGENTRL_PYTHON_REQUIREMENTS names another pinned file for the
# environment (python/requirements-trl.txt adds TRL and PyTorch 2, so that the TRL example's test
# runs instead of skipping; CI keeps the default).
set -euo pipefail
cd "$(dirname "$0")/.."
REQUIREMENTS=${AGENTRL_PYTHON_REQUIREMENTS:-python/requirements-ci.txt}
PYTHON=${PYTHON:-python3}

"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' || {
  echo "python: $PYTHON is older than 3.10; set PYTHON to a newer interpreter" >&2
  exit 1
}
stamp=$(cat "$REQUIREMENTS" <("$PYTHON" -c 'import sys; print(sys.version)') | sha256sum | cut -c1-16)
VENV=${AGENTRL_PYTHON_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/agentrl/python-venv-$stamp}
if [ ! -x "$VENV/bin/python" ]; then
  echo "python: creating $VENV with the pinned packages of $REQUIREMENTS"
  mkdir -p "$(dirname "$VENV")"
  partial=$(mktemp -d "$VENV.partial.XXXXXX")
  "$PYTHON" -m venv "$partial"
  "$partial/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS"
  # Moved into place whole (the tests run modules with `python -m`, never the scripts in bin/,
  # whose first lines name the folder they were installed in).
  mv -T "$partial" "$VENV" 2>/dev/null || rm -rf "$partial" # another run made it first
fi

# The wheel, built from the sources every run (a PyPI user gets the same file), installed into a
# folder of this run only: the shared environment is never changed after it is made.
RUN=$(mktemp -d "${TMPDIR:-/tmp}/agentrl-python.XXXXXX")
trap 'rm -rf "$RUN"' EXIT
"$VENV/bin/python" -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$RUN/wheels" python/agentrl-env
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --target "$RUN/site" "$RUN"/wheels/agentrl_env-*.whl
echo "python: testing $(basename "$RUN"/wheels/agentrl_env-*.whl) with $VENV"

set +e
(cd python/agentrl-env && PYTHONPATH="$RUN/site" PYTHONDONTWRITEBYTECODE=1 \
  "$VENV/bin/python" -m pytest -q -rs -p no:cacheprovider tests)
code=$?
set -e
if [ "$code" = 5 ]; then
  echo "python: pytest collected no tests (exit 5); the Python tests are missing" >&2
  exit 1
fi
exit "$code"
