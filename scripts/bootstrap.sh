#!/usr/bin/env bash
# Installs what PocketVoice needs, idempotently: system libraries (libopus, libsndfile),
# a virtual environment in .venv, torch as a CPU build, then the project itself.
# Usage: scripts/bootstrap.sh [--test]   (--test adds the test tools)
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
[[ "${1:-}" == "--test" ]] && extras="[test]"
PYTHON="${PYTHON:-python3}"
TORCH_SPEC="${TORCH_SPEC:-torch==2.13.0}"

say() { printf '[bootstrap] %s\n' "$*" >&2; }

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else say "need root to run: $*"; return 1
  fi
}

# 1. System libraries: discord.py finds libopus with ctypes; soundfile needs libsndfile.
missing=()
ldconfig -p | grep -q 'libopus\.so\.0' || missing+=(libopus0)
ldconfig -p | grep -q 'libsndfile\.so\.1' || missing+=(libsndfile1)
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
if ((${#missing[@]})); then
  if command -v apt-get >/dev/null; then
    say "installing system packages: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    say "please install these with your package manager: ${missing[*]} (Opus, libsndfile)"
    exit 1
  fi
fi

# 2. Python environment.
if [[ ! -x .venv/bin/python ]]; then
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
    { say "Python 3.11 or newer is needed (found $("$PYTHON" --version))"; exit 1; }
  say "creating .venv"
  "$PYTHON" -m venv .venv
fi
stamp=".venv/.pocketvoice-installed${extras}"
want="$(cat pyproject.toml scripts/bootstrap.sh | sha256sum | cut -d' ' -f1) ${TORCH_SPEC}"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
pip=(.venv/bin/python -m pip --disable-pip-version-check -q)
"${pip[@]}" install --upgrade pip
# torch first, pinned, so that pocket-tts does not pull a multi-GB CUDA build.
# Elsewhere than on a machine with a local CPU wheel, set
# TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu to get the CPU build.
if [[ -n "${TORCH_INDEX_URL:-}" ]]; then
  "${pip[@]}" install "$TORCH_SPEC" --index-url "$TORCH_INDEX_URL"
else
  "${pip[@]}" install "$TORCH_SPEC"
fi
"${pip[@]}" install -e ".${extras}"
echo "$want" > "$stamp"
say "ready"
