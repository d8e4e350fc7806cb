#!/usr/bin/env bash
# Run PocketVoice: installs what is missing, then `python -m bot ...` (default: run the bot).
#   ./run.sh serve           the speech service alone: a page at http://127.0.0.1:8000/
#   ./run.sh                 run the Discord bot (needs DISCORD_TOKEN in .env)
#   ./run.sh say "Hello" --out hello.ogg   speak into a file, no Discord needed
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap.sh
(($#)) || set -- run
exec .venv/bin/python -m bot "$@"
