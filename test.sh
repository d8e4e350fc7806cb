#!/usr/bin/env bash
# Run the whole test suite (installs what is missing first). No network needed.
#   ./test.sh            everything, as CI does (a fake Discord, PostgreSQL, the image): the
#                        tests side by side (TEST_WORKERS, 4), then the `timing` ones alone
#   ./test.sh --fast     the unit tier only: no fake Discord, no process, no container, no
#                        PostgreSQL server, none of the slow ones (tests/tiers.py): a minute
#   ./test.sh ARGS       pytest ARGS, in one process (e.g. -m e2e, tests/text -k numbers)
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap.sh --test
.venv/bin/ruff check .
.venv/bin/ruff format --check .

# pytest's exit code 5 (no tests collected) is a failure here
pytest() {
  local code=0
  .venv/bin/python -m pytest "$@" || code=$?
  if [[ $code -eq 5 ]]; then
    echo "pytest collected no tests ($*): that is a failure here" >&2
    return 1
  fi
  return $code
}

if [[ $# -eq 0 ]]; then
  failed=0
  pytest -n "${TEST_WORKERS:-4}" -m "not timing" || failed=1
  pytest -m timing || failed=1
  exit $failed
elif [[ "$1" == "--fast" ]]; then
  pytest -m "unit and not slow" "${@:2}"
else
  pytest "$@"
fi
