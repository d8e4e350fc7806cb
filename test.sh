#!/usr/bin/env bash
# Run the whole test suite (installs what is missing first). No network needed.
#   ./test.sh            everything, as CI does (a fake Discord, PostgreSQL, the image)
#   ./test.sh --fast     the unit tier only: no fake Discord, no process, no container, no
#                        PostgreSQL server, none of the slow ones (tests/tiers.py): a minute
#   ./test.sh ARGS       pytest ARGS (e.g. -m e2e, tests/text -k numbers)
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap.sh --test
.venv/bin/ruff check .
.venv/bin/ruff format --check .
args=("$@")
if [[ "${1:-}" == "--fast" ]]; then
  args=(-m "unit and not slow" "${@:2}")
fi
set +e
.venv/bin/python -m pytest "${args[@]}"
code=$?
set -e
if [[ $code -eq 5 ]]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit $code
