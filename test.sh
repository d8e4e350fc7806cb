#!/usr/bin/env bash
# Run the whole test suite (installs what is missing first). No network needed.
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap.sh --test
.venv/bin/ruff check .
.venv/bin/ruff format --check .
set +e
.venv/bin/python -m pytest "$@"
code=$?
set -e
if [[ $code -eq 5 ]]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit $code
