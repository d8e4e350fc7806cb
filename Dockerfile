# PocketVoice: a Discord voice bot speaking with Pocket TTS on the CPU.
#   docker compose up -d      (see compose.yaml and the README, "Install with Docker")

# The base is pinned by digest, so that a rebuild takes the very image that was tested, not
# whatever the tag points at that day. The digest is the official image's multi-platform index
# for python:3.11-slim-bookworm (Python 3.11.16 on Debian bookworm of 2026-08-24), as listed in
# docker-library/repo-info (repos/python/remote/3.11-slim-bookworm.md); Docker Hub cannot be
# reached from the machine that wrote this, so the digest was not pulled and checked here.
# To update it: docker buildx imagetools inspect python:3.11-slim-bookworm (or docker pull
# python:3.11-slim-bookworm, then docker inspect --format '{{index .RepoDigests 0}}' on it),
# put the new digest here, rebuild and run ./test.sh. The image tests stand a local image in
# for it (podman build --from; tests/image/podman.py).
FROM python:3.11-slim-bookworm@sha256:0bee7276f83efd4a1ee05bbbf4281d95ed28e079220a9457f25a93e3f1e3c31b

# libopus for Discord voice, libsndfile for /clone's audio files.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libopus0 libsndfile1 \
    && rm -rf /var/lib/apt/lists/*

# The container runs with a read-only root (compose.yaml): nothing may need writing outside
# /data, /cache/huggingface and the /tmp tmpfs. So no bytecode is written at run time (pip
# compiles it at install), and home-relative caches (pocket-tts's, torch's) land in HOME,
# which is /data, the one place the bot keeps what it makes.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DATA_DIR=/data \
    HF_HOME=/cache/huggingface \
    METRICS_HOST=0.0.0.0 \
    METRICS_PORT=9108

WORKDIR /app
# The runtime dependencies exactly as locked: requirements.lock names every package with the
# sha256 of its files, and pip refuses any file whose hash differs or any package it does not
# name (scripts/lock.sh writes it from constraints.txt). torch is the CPU build, from the
# PyTorch CPU index: PyPI's is a CUDA build of several GB.
# A mirror of that index: docker compose build --build-arg TORCH_INDEX_URL=https://...
# Wheels only, but docopt (num2words' dependency, one pure-Python file) publishes none: its
# hashed sdist is built, with setuptools from a wheel.
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
COPY requirements.lock ./src/
RUN pip install --require-hashes --only-binary :all: --no-binary docopt \
        --extra-index-url "$TORCH_INDEX_URL" -r src/requirements.lock
# The project is installed into site-packages and its source removed: run from a folder that
# holds the source, `python -m bot` would import that copy, which lacks the packaged migrations.
# Its dependencies are all in place, so nothing else is fetched: no index, no build isolation
# (setuptools, its build backend, is in the lock).
COPY pyproject.toml README.md LICENSE NOTICE.md ./src/
COPY bot ./src/bot
COPY cogs ./src/cogs
COPY migrations ./src/migrations
RUN pip install --no-deps --no-index --no-build-isolation ./src && rm -rf src

RUN groupadd --system --gid 10001 pocketvoice \
    && useradd --system --uid 10001 --gid 10001 --home-dir /data pocketvoice \
    && mkdir -p /data /cache/huggingface \
    && chown pocketvoice:pocketvoice /data /cache/huggingface \
    && chmod 0700 /data
USER 10001:10001
VOLUME ["/data", "/cache/huggingface"]
EXPOSE 9108

HEALTHCHECK --interval=30s --timeout=5s --start-period=300s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(f\"http://127.0.0.1:{os.environ['METRICS_PORT']}/healthz\", timeout=4)"]

ENTRYPOINT ["python", "-m", "bot"]
CMD ["run"]
