#!/usr/bin/env bash
# Installs what PocketVoice needs, idempotently: system libraries (libopus, libsndfile),
# a virtual environment in .venv, torch as a CPU build, then the project itself.
# Usage: scripts/bootstrap.sh [--test]   (--test adds the test tools)
#        scripts/bootstrap.sh --torch-command   (print how torch would be installed, and stop)
# Versions come from constraints.txt (refresh: scripts/lock.sh; CONTRIBUTING.md, "Dependencies
# and the lock").
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
[[ "${1:-}" == "--test" ]] && extras="[test]"
PYTHON="${PYTHON:-python3}"
TORCH_SPEC="${TORCH_SPEC:-torch==2.13.0}"
CPU_INDEX="https://download.pytorch.org/whl/cpu"

say() { printf '[bootstrap] %s\n' "$*" >&2; }

# The pip arguments that install torch: from the PyTorch CPU index (TORCH_INDEX_URL, default
# the official one) when it answers; otherwise from the default index, saying so.
torch_install_args() {
  local index="${TORCH_INDEX_URL:-$CPU_INDEX}"
  if "$PYTHON" -c 'import sys, urllib.request
urllib.request.urlopen(sys.argv[1].rstrip("/") + "/torch/", timeout=5).close()' "$index" 2>/dev/null
  then
    echo "install $TORCH_SPEC --index-url $index"
  else
    say "the PyTorch CPU index ($index) cannot be reached: taking $TORCH_SPEC from the default"
    say "index instead. On Linux x86_64 that is a CUDA build of several GB unless a CPU wheel"
    say "is available locally, so the build is checked before anything is installed."
    echo "install $TORCH_SPEC"
  fi
}

# Refuse a CUDA build unless asked for: look at what pip would take, without installing it.
# Argument: what torch_install_args printed.
check_torch_build() {
  local report
  report="$(mktemp)"
  # shellcheck disable=SC2086  # the arguments are words on purpose
  "$PYTHON" -m pip --disable-pip-version-check -q install --dry-run --ignore-installed \
    --no-deps --report "$report" ${1#install } >/dev/null
  if ! "$PYTHON" - "$report" <<'PY'
import json, sys
(item,) = json.load(open(sys.argv[1]))["install"]
meta = item["metadata"]
cuda = any(r.startswith(("nvidia-", "triton")) for r in meta.get("requires_dist") or [])
print(f"[bootstrap] torch {meta['version']}: {'a CUDA' if cuda else 'a CPU'} build", file=sys.stderr)
sys.exit(1 if cuda else 0)
PY
  then
    rm -f "$report"
    if [[ "${TORCH_ALLOW_CUDA:-0}" == "1" ]]; then
      say "installing the CUDA build, as TORCH_ALLOW_CUDA=1 asks"
      return 0
    fi
    say "refusing to download a CUDA build of torch (several GB) by accident. Either make the"
    say "CPU index reachable (TORCH_INDEX_URL=$CPU_INDEX or a mirror of it), or set"
    say "TORCH_ALLOW_CUDA=1 if you do want the CUDA build."
    return 1
  fi
  rm -f "$report"
}

if [[ "${1:-}" == "--torch-command" ]]; then
  args="$(torch_install_args)"
  [[ "$args" == *--index-url* ]] || check_torch_build "$args"
  echo "pip $args"
  exit 0
fi

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else say "need root to run: $*"; return 1
  fi
}

# 1. System libraries: discord.py finds libopus with ctypes; soundfile needs libsndfile.
missing=()
# Read whole, then searched: `ldconfig -p | grep -q` under pipefail fails when grep, done at
# its first match, leaves ldconfig writing to a closed pipe (SIGPIPE), about 1 run in 20
libraries="$(ldconfig -p 2>/dev/null || true)"
grep -q 'libopus\.so\.0' <<<"$libraries" || missing+=(libopus0)
grep -q 'libsndfile\.so\.1' <<<"$libraries" || missing+=(libsndfile1)
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
# The tests start a real PostgreSQL server of their own (tests/postgres_server.py).
if [[ "${1:-}" == "--test" ]] && ! compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null &&
  ! command -v pg_ctl >/dev/null; then
  missing+=(postgresql)
fi
# The image tests build and run the Dockerfile with podman (runc: crun refuses some cgroup
# setups) on a base made with debootstrap when the official one cannot be pulled.
if [[ "${1:-}" == "--test" && $(uname -s) == Linux ]]; then
  for tool in podman runc debootstrap; do
    command -v "$tool" >/dev/null || missing+=("$tool")
  done
  # The service's page is tested in a real browser: Debian's headless chromium, driven by
  # selenium through Debian's chromedriver (tests/speech_api/test_page.py)
  command -v chromium >/dev/null || missing+=(chromium)
  [[ -x /usr/bin/chromedriver ]] || missing+=(chromium-driver)
fi
if ((${#missing[@]})); then
  if command -v apt-get >/dev/null; then
    say "installing system packages: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    say "please install these with your package manager: ${missing[*]} (Opus, libsndfile; PostgreSQL, podman and chromium for the tests)"
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
want="$(cat pyproject.toml constraints.txt scripts/bootstrap.sh | sha256sum | cut -d' ' -f1) ${TORCH_SPEC}"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
pip=(.venv/bin/python -m pip --disable-pip-version-check -q)
"${pip[@]}" install --upgrade pip
# torch first, pinned and a CPU build, so that pocket-tts does not pull a multi-GB CUDA one.
torch_args="$(PYTHON=.venv/bin/python torch_install_args)"
if [[ "$torch_args" != *--index-url* ]]; then
  PYTHON=.venv/bin/python check_torch_build "$torch_args"
fi
# shellcheck disable=SC2086  # the arguments are words on purpose
"${pip[@]}" $torch_args
"${pip[@]}" install -c constraints.txt -e ".${extras}"
echo "$want" > "$stamp"
say "ready"
