#!/usr/bin/env bash
# Run the whole test suite (installs what is missing first). No network needed.
#   ./test.sh            everything, as CI does (a fake Discord, PostgreSQL, the image): the
#                        `timing` tests that load both cores, alone, then the tests side by
#                        side (TEST_WORKERS, 6), then the other `timing` ones with the image
#                        tests beside them at the lowest CPU priority
#   ./test.sh --fast     the unit tier only: no fake Discord, no process, no container, no
#                        PostgreSQL server, none of the slow ones (tests/tiers.py), in two
#                        workers: under a minute
#   ./test.sh ARGS       pytest ARGS, in one process (e.g. -m e2e, tests/text -k numbers)
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap.sh --test
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# the types ([tool.mypy] in pyproject.toml: bot/ and cogs/, strictly); a few
# seconds with its cache (.mypy_cache), about a minute on a fresh checkout
.venv/bin/mypy

# Bytecode is written (__pycache__, ignored by git and the image's build): with it, pytest's
# rewritten test modules are not rewritten again by each of the run's later processes,
# whatever the environment says
unset PYTHONDONTWRITEBYTECODE

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
  # First the `timing` tests that load both cores by design, with nothing beside them
  # (tests/tiers.py): on a host not yet warm from minutes of load, and their collection writes
  # the rewritten test modules every later process reads
  pytest -m "timing and alone" || failed=1

  image_tmp="$(mktemp -d)"
  trap 'rm -rf "$image_tmp"' EXIT
  mkdir "$image_tmp/shared"
  # The image tests' stand-in base (debootstrap: mostly downloads) made beside the workers at
  # the lowest CPU priority, ready when the image tests start (tests/image/podman.py, SHARED_ENV)
  (
    renice -n 19 -p "$BASHPID" >/dev/null
    .venv/bin/python -m tests.image.podman "$image_tmp/shared"
  ) >"$image_tmp/base.log" 2>&1 &
  base=$!
  # worksteal: a worker that runs out takes tests queued on another (the longest take a minute)
  pytest -n "${TEST_WORKERS:-6}" --dist worksteal -m "not image and not timing" || failed=1

  # The `timing` tests in one process, and beside them the image tests at the lowest CPU
  # priority (nice 19, inherited by podman, the builds and the containers): the timing tests
  # use about half a core, mostly waiting on speech played in real time, and the image tests
  # take the rest without delaying them; beside the six workers instead, the image tests were
  # the longest part of a run that was CPU-bound (docs/performance.md, "The image and the
  # tests", has the figures).
  # Two image processes (podman's restart of a crashed container did not happen under an xdist
  # worker, CONTRIBUTING.md): the PostgreSQL stand-in's build in one, the bot's image (one
  # build, shared by its tests) in the other, each on container storage and a temporary folder
  # of its own; the stand-in base's debootstrap, which both need, is done once in a folder they
  # share (tests/image/podman.py, SHARED_ENV)
  shards_test=tests/image/test_compose.py::test_the_shards_compose_file_starts_its_postgresql
  (
    renice -n 19 -p "$BASHPID" >/dev/null
    POCKETVOICE_IMAGE_SHARED="$image_tmp/shared" \
      pytest -m "image and not timing" --basetemp "$image_tmp/shards" "$shards_test"
  ) >"$image_tmp/shards.log" 2>&1 &
  shards=$!
  (
    renice -n 19 -p "$BASHPID" >/dev/null
    POCKETVOICE_IMAGE_SHARED="$image_tmp/shared" \
      pytest -m "image and not timing" --basetemp "$image_tmp/image" --deselect "$shards_test" \
      tests/image
  ) >"$image_tmp/image.log" 2>&1 &
  image=$!
  pytest -m "timing and not alone" || failed=1
  wait "$shards" || failed=1
  wait "$image" || failed=1
  # the head start's own failure is not the run's: the image tests then made the base (or
  # failed, saying why)
  wait "$base" || cat "$image_tmp/base.log"
  cat "$image_tmp/shards.log" "$image_tmp/image.log"
  exit $failed
elif [[ "$1" == "--fast" ]]; then
  # two workers: the tier is CPU-bound, and our machines have 2 cores
  pytest -n 2 --dist worksteal -m "unit and not slow" "${@:2}"
else
  pytest "$@"
fi
