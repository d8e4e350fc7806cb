# PocketVoice: a Discord voice bot speaking with Pocket TTS on the CPU.
#   docker compose up -d      (see compose.yaml and the README, "Install with Docker")
FROM python:3.11-slim-bookworm

# libopus for Discord voice, libsndfile for /clone's audio files.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libopus0 libsndfile1 \
    && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DATA_DIR=/data \
    HF_HOME=/cache/huggingface \
    METRICS_HOST=0.0.0.0 \
    METRICS_PORT=9108

WORKDIR /app
# torch first, as a CPU build from the PyTorch CPU index: PyPI's is a CUDA build of several GB.
# A mirror of that index: docker compose build --build-arg TORCH_INDEX_URL=https://...
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
RUN pip install torch==2.13.0 --index-url "$TORCH_INDEX_URL"
# The project is installed into site-packages and its source removed: run from a folder that
# holds the source, `python -m bot` would import that copy, which lacks the packaged migrations.
COPY constraints.txt pyproject.toml README.md ./src/
COPY bot ./src/bot
COPY cogs ./src/cogs
COPY migrations ./src/migrations
RUN pip install -c src/constraints.txt ./src && rm -rf src

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
