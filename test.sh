#!/usr/bin/env bash
# Run the whole test suite (installs what is missing first). No network needed.
#   ./test.sh            everything, as CI does (a fake Discord, PostgreSQL, the image): the
#                        tests side by side (TEST_WORKERS, 6, and the image tests beside
#                        them), then the `timing` ones alone
#   ./test.sh --fast     the unit tier only: no fake Discord, no process, no container, no
#                        PostgreSQL server, none of the slow ones (tests/tiers.py), in two
#                        workers: under a minute
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
  # The image tests in processes of their own beside the workers (podman's restart of a crashed
  # container did not happen under an xdist worker, CONTRIBUTING.md): the PostgreSQL stand-in's
  # build in one, the bot's image (one build, shared by its tests) in the other, each on
  # container storage and a temporary folder of its own; the stand-in base's debootstrap, which
  # both need, is done once in a folder they share (tests/image/podman.py, SHARED_ENV)
  shards_test=tests/image/test_compose.py::test_the_shards_compose_file_starts_its_postgresql
  image_tmp="$(mktemp -d)"
  trap 'rm -rf "$image_tmp"' EXIT
  mkdir "$image_tmp/shared"
  POCKETVOICE_IMAGE_SHARED="$image_tmp/shared" \
    pytest -m "image and not timing" --basetemp "$image_tmp/shards" "$shards_test" \
    >"$image_tmp/shards.log" 2>&1 &
  shards=$!
  POCKETVOICE_IMAGE_SHARED="$image_tmp/shared" \
    pytest -m "image and not timing" --basetemp "$image_tmp/image" --deselect "$shards_test" \
    tests/image \
    >"$image_tmp/image.log" 2>&1 &
  image=$!
  # worksteal: a worker that runs out takes tests queued on another (the longest take a minute)
  pytest -n "${TEST_WORKERS:-6}" --dist worksteal -m "not image and not timing" || failed=1
  wait "$shards" || failed=1
  wait "$image" || failed=1
  cat "$image_tmp/shards.log" "$image_tmp/image.log"
  pytest -m timing || failed=1
  exit $failed
elif [[ "$1" == "--fast" ]]; then
  # two workers: in one process the tier took 82 s on our 2 cores (2026-12-03), in two 50 s
  pytest -n 2 --dist worksteal -m "unit and not slow" "${@:2}"
else
  pytest "$@"
fi
