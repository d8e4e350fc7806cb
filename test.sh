#!/usr/bin/env bash
# Run the whole test suite (installs what is missing first). No network needed.
#   ./test.sh            everything, as CI does (a fake Discord, PostgreSQL, the image): the
#                        tests side by side (TEST_WORKERS, 6, and the image tests beside
#                        them), then the `timing` ones alone
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
  # The image tests in a process of their own beside the workers: they share one build, and
  # podman's restart of a crashed container did not happen under an xdist worker (CONTRIBUTING.md)
  image_log="$(mktemp)"
  trap 'rm -f "$image_log"' EXIT
  pytest -m "image and not timing" >"$image_log" 2>&1 &
  image=$!
  # worksteal: a worker that runs out takes tests queued on another (the longest take a minute)
  pytest -n "${TEST_WORKERS:-6}" --dist worksteal -m "not image and not timing" || failed=1
  wait "$image" || failed=1
  cat "$image_log"
  pytest -m timing || failed=1
  exit $failed
elif [[ "$1" == "--fast" ]]; then
  pytest -m "unit and not slow" "${@:2}"
else
  pytest "$@"
fi
