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
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY constraints.txt pyproject.toml README.md ./
COPY bot ./bot
COPY cogs ./cogs
COPY migrations ./migrations
RUN pip install -c constraints.txt .

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
