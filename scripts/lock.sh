#!/usr/bin/env bash
# Refresh constraints.txt, the versions scripts/bootstrap.sh installs, to the newest releases
# that fit pyproject.toml (uv, one of the test tools). Torch is pinned apart (TORCH_SPEC in
# bootstrap.sh), so its version here only decides the versions of its own dependencies.
# Usage: scripts/lock.sh [more uv pip compile options, e.g. --upgrade-package discord-py]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --test
upgrade=(--upgrade)
(($#)) && upgrade=("$@")
.venv/bin/uv pip compile pyproject.toml --extra test --quiet \
  --constraint <(echo "${TORCH_SPEC:-torch==2.13.0}") --no-emit-package torch \
  --custom-compile-command "scripts/lock.sh" "${upgrade[@]}" -o constraints.txt
echo "constraints.txt refreshed; run ./test.sh, then commit it."
