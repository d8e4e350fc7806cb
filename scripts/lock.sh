#!/usr/bin/env bash
# Refresh constraints.txt, the versions scripts/bootstrap.sh installs, to the newest releases
# that fit pyproject.toml (uv, one of the test tools), and requirements.lock, the image's
# hashed lock of the same versions. Torch is pinned apart (TORCH_SPEC in bootstrap.sh), so its
# version here only decides the versions of its own dependencies.
# Usage: scripts/lock.sh [more uv pip compile options, e.g. --upgrade-package discord-py]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --test
upgrade=(--upgrade)
(($#)) && upgrade=("$@")
.venv/bin/uv pip compile pyproject.toml --extra test --quiet \
  --constraint <(echo "${TORCH_SPEC:-torch==2.13.0}") --no-emit-package torch \
  --custom-compile-command "scripts/lock.sh" "${upgrade[@]}" -o constraints.txt
# The image's lock, requirements.lock: the runtime dependencies only, at the versions just
# written, each with the sha256 of its files, for the Dockerfile's `pip install --require-hashes`.
# torch is the CPU build for Linux x86_64, found on the PyTorch CPU index's torch page; where
# that cannot be reached, TORCH_FIND_LINKS=a folder holding the wheel (its hash is then that
# file's: check it against the index's before you commit). Wheels only, but for docopt
# (num2words' dependency), which publishes none: the Dockerfile builds its sdist.
.venv/bin/uv pip compile pyproject.toml --quiet --generate-hashes --no-annotate \
  --constraint constraints.txt --constraint <(echo "${TORCH_SPEC:-torch==2.13.0}+cpu") \
  --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
  --only-binary :all: --no-binary docopt \
  --index-url https://pypi.org/simple \
  --find-links "${TORCH_FIND_LINKS:-https://download.pytorch.org/whl/torch/}" \
  --custom-compile-command "scripts/lock.sh" -o requirements.lock
echo "constraints.txt and requirements.lock refreshed; run ./test.sh, then commit them."
