"""Operator settings, read once from the environment and `.env`, validated at start."""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import overload
from urllib.parse import urlparse

from dotenv import dotenv_values

from bot.core.errors import OperatorError

DEFAULT_API_BASE = "https://discord.com/api/v10"
DEFAULT_GATEWAY_URL = "wss://gateway.discord.gg/"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class ConfigError(OperatorError):
    """A bad or missing setting; the message names the variable and never shows its value."""

    label = "Configuration error"


@dataclass(frozen=True)
class Config:
    discord_token: str | None = field(default=None, repr=False)
    tts_language: str = "english"
    tts_config: Path | None = None
    # Languages that servers and members may choose (empty: TTS_LANGUAGE alone; "all": every
    # language pocket-tts has); each is loaded when first needed, within TTS_MEMORY_MB (0: no
    # limit) and TTS_MODELS.
    tts_languages: tuple[str, ...] = ()
    tts_config_dir: Path | None = None  # <language>.yaml configs for local weights
    tts_memory_mb: int = 0
    tts_models: int = 3
    tts_quantize: bool = True  # int8 flow LM: 2-3x faster steps (bench/load.py); 0 opts out
    # Mimi's decoder in bfloat16 ("auto": where the CPU has AVX512-BF16 or AMX), or "fp32"
    tts_decoder_precision: str = "auto"
    default_voice: str | None = None
    data_dir: Path = Path(".")
    # PostgreSQL shared by several bot processes (None: SQLite in DATA_DIR); holds a password
    database_url: str | None = field(default=None, repr=False)
    discord_api_base: str = DEFAULT_API_BASE
    discord_gateway_url: str = DEFAULT_GATEWAY_URL
    discord_ca_file: Path | None = None
    log_level: str = "INFO"
    # discord.py's own loggers (None: LOG_LEVEL, but never below INFO): its DEBUG lines carry
    # whole gateway payloads, members' messages and voice keys among them
    discord_log_level: str | None = None
    sync_commands: bool = False
    max_text_length: int = 1000
    tts_workers: int = 1
    tts_batch: int = 8  # largest batch of the batched engine; 1: one stream per thread
    metrics_port: int | None = None  # /metrics, /healthz, /livez; None: no HTTP server
    metrics_host: str = "127.0.0.1"
    log_format: str = "text"  # or "json", one object per line for log shippers
    hf_token: str | None = field(default=None, repr=False)  # for the gated cloning weights
    # Gateway shards this process holds: None for both is discord.py's automatic sharding
    # (Discord's recommended count, every shard here).
    shard_count: int | None = None
    shard_ids: tuple[int, ...] | None = None
    # The speech service (bot/speech_api): `serve` always, the bot when SPEECH_PORT is set
    speech_host: str = "127.0.0.1"
    speech_port: int | None = None  # None: `serve` listens on 8000, the bot not at all
    speech_api_keys: tuple[str, ...] = field(default=(), repr=False)  # Bearer keys
    speech_streams_per_key: int = 4  # streams at once per key (or per address without keys)
    speech_requests_per_minute: int = 60  # per key (or per address)
    speech_queue: int = 8  # service streams that may wait for room at once; past it: 429
    wyoming_port: int | None = None  # Home Assistant's protocol (None: off)
    wyoming_host: str = "127.0.0.1"
    wyoming_open: bool = False  # a non-loopback WYOMING_HOST is taken only with this set


# The largest batch of the batched engine. Measured on 2 cores (bench/load.py, english, fp32):
# past 8 rows, a bigger batch no longer lowers the cost per stream enough to pay for the
# longer step every stream then waits on.
DEFAULT_BATCH = 16  # an upper bound: the start-up and live step times choose the rows (capacity.py)


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity (a container's `--cpuset-cpus`,
    `taskset`), which `os.cpu_count()` ignores (it counts the host's)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # no affinity on this platform (macOS)
        return os.cpu_count() or 1


def default_workers() -> int:
    """Model worker threads when TTS_WORKERS is unset: one per 2 cores (bench/workers.py).

    Each pocket-tts generation already keeps ~1.5 cores busy (its language model and audio
    decoder run in two threads). Measured on 2 cores: a second replica adds only ~9% of
    aggregate speed while halving each stream's speed, so 2 cores get one worker.
    """
    return max(1, usable_cores() // 2)


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ConfigError(f"{name} must be 0 or 1")


def _url(env: Mapping[str, str], name: str, default: str, schemes: tuple[str, ...]) -> str:
    value = env.get(name, "").strip() or default
    parsed = urlparse(value)
    if parsed.scheme not in schemes or not parsed.netloc:
        raise ConfigError(f"{name} must be a {' or '.join(schemes)} URL")
    return value.rstrip("/") if name == "DISCORD_API_BASE" else value


def _existing_file(env: Mapping[str, str], name: str) -> Path | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    path = Path(raw).expanduser()
    if not path.is_file():
        raise ConfigError(f"{name} points to {path}, which is not a readable file")
    return path


@overload
def _int(env: Mapping[str, str], name: str, default: int, low: int, high: int | None = None,
         what: str = "") -> int: ...  # fmt: skip
@overload
def _int(env: Mapping[str, str], name: str, default: None, low: int, high: int | None = None,
         what: str = "") -> int | None: ...  # fmt: skip
def _int(env: Mapping[str, str], name: str, default: int | None, low: int,
         high: int | None = None, what: str = "") -> int | None:  # fmt: skip
    """The whole number `name` sets, from `low` to `high` (None: no top), else `default`
    (checked too; None: unset stays None). `what` words the error when it is not "a whole
    number from LOW to HIGH"."""
    raw = env.get(name, "").strip() or ("" if default is None else str(default))
    if not raw:
        return None
    if not raw.isdigit() or not low <= int(raw) <= (int(raw) if high is None else high):
        raise ConfigError(f"{name} must be {what or f'a whole number from {low} to {high}'}")
    return int(raw)


def _shards(env: Mapping[str, str]) -> tuple[int | None, tuple[int, ...] | None]:
    """SHARD_COUNT and SHARD_IDS ("0,1", "0-3", "0-1,4"); ids alone need a count."""
    count = _int(env, "SHARD_COUNT", None, 1, 4096,
                 "a whole number from 1 to 4096 (unset: automatic)")  # fmt: skip
    raw_ids = env.get("SHARD_IDS", "").strip()
    if not raw_ids:
        return count, None
    if count is None:
        raise ConfigError("SHARD_IDS needs SHARD_COUNT: the number of shards across all processes")
    ids: list[int] = []
    for part in raw_ids.split(","):
        first, dash, last = part.strip().partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise ConfigError("SHARD_IDS must be shard numbers such as 0,1 or 0-3")
        ids.extend(range(int(first), int(last if dash else first) + 1))
    if not ids or max(ids) >= count:
        raise ConfigError(f"SHARD_IDS must be shard numbers from 0 to {count - 1} (SHARD_COUNT)")
    return count, tuple(dict.fromkeys(ids))


def load_config(
    environ: Mapping[str, str] | None = None,
    *,
    dotenv_path: Path | None = Path(".env"),
    require_token: bool = True,
) -> Config:
    """Settings from `environ` (default: the process environment) over the `.env` file."""
    env: dict[str, str] = {}
    if dotenv_path is not None and dotenv_path.is_file():
        env.update({k: v for k, v in dotenv_values(dotenv_path).items() if v is not None})
    env.update(os.environ if environ is None else environ)

    token = env.get("DISCORD_TOKEN", "").strip() or None
    if require_token and token is None:
        raise ConfigError("DISCORD_TOKEN is missing: put your bot token in .env (see .env.example)")
    if token is not None and (any(c.isspace() for c in token) or token.lower().startswith("bot ")):
        raise ConfigError("DISCORD_TOKEN is malformed: give the bare token, without 'Bot '")

    language = env.get("TTS_LANGUAGE", "").strip() or "english"
    if not language.replace("_", "").replace("-", "").isalnum():
        raise ConfigError("TTS_LANGUAGE must be a pocket-tts language name such as 'english'")
    tts_config = _existing_file(env, "TTS_CONFIG")
    if tts_config is not None and tts_config.suffix not in (".yaml", ".yml"):
        raise ConfigError("TTS_CONFIG must be a pocket-tts .yaml config file")

    languages = tuple(
        dict.fromkeys(
            x.strip().lower() for x in env.get("TTS_LANGUAGES", "").split(",") if x.strip()
        )
    )
    if any(not x.replace("_", "").isalnum() for x in languages):
        raise ConfigError("TTS_LANGUAGES must be language names separated by commas")
    if languages and language not in languages:
        languages = (language, *languages)  # the default is always allowed
    config_dir = env.get("TTS_CONFIG_DIR", "").strip()
    if config_dir and not Path(config_dir).expanduser().is_dir():
        raise ConfigError("TTS_CONFIG_DIR must be a folder of <language>.yaml configs")
    memory_mb = _int(env, "TTS_MEMORY_MB", 0, 0, None, "a whole number of megabytes (0: no limit)")
    models = _int(env, "TTS_MODELS", 3, 1, 16)

    log_level = env.get("LOG_LEVEL", "").strip().upper() or "INFO"
    if not isinstance(logging.getLevelName(log_level), int):
        raise ConfigError("LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR")
    discord_log_level = env.get("DISCORD_LOG_LEVEL", "").strip().upper() or None
    if discord_log_level and not isinstance(logging.getLevelName(discord_log_level), int):
        raise ConfigError("DISCORD_LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR")

    max_text_length = _int(env, "MAX_TEXT_LENGTH", 1000, 1, 4000)
    workers = _int(env, "TTS_WORKERS", default_workers(), 1, 16)
    batch = _int(env, "TTS_BATCH", DEFAULT_BATCH, 1, 32)
    port = _int(env, "METRICS_PORT", None, 1, 65535, "a port number from 1 to 65535 (unset: off)")
    decoder_precision = env.get("TTS_DECODER_PRECISION", "").strip().lower() or "auto"
    if decoder_precision not in ("auto", "fp32", "bf16"):
        raise ConfigError("TTS_DECODER_PRECISION must be auto, fp32 or bf16")
    log_format = env.get("LOG_FORMAT", "").strip().lower() or "text"
    if log_format not in ("text", "json"):
        raise ConfigError("LOG_FORMAT must be text or json")

    data_dir = Path(env.get("DATA_DIR", "").strip() or ".").expanduser()
    if data_dir.exists() and not data_dir.is_dir():
        raise ConfigError(f"DATA_DIR points to {data_dir}, which is not a folder")

    database_url = env.get("DATABASE_URL", "").strip() or None
    if database_url and not database_url.startswith(("postgresql://", "postgres://")):
        raise ConfigError(
            "DATABASE_URL must be a postgresql://user:password@host:port/database URL "
            "(unset: SQLite in DATA_DIR)"
        )

    shard_count, shard_ids = _shards(env)
    speech_port = _int(
        env, "SPEECH_PORT", None, 1, 65535,
        "a port number from 1 to 65535 (unset: 8000 for serve, off in the bot)",
    )  # fmt: skip
    keys = tuple(k.strip() for k in env.get("SPEECH_API_KEYS", "").split(",") if k.strip())
    if any(len(k) < 16 or any(c.isspace() for c in k) for k in keys):
        raise ConfigError(
            "SPEECH_API_KEYS must be keys of 16 characters or more, separated by commas"
        )
    wyoming_port = _int(env, "WYOMING_PORT", None, 1, 65535,
                        "a port number from 1 to 65535 (unset: off)")  # fmt: skip

    return Config(
        discord_token=token,
        tts_language=language,
        tts_config=tts_config,
        tts_languages=languages,
        tts_config_dir=Path(config_dir).expanduser() if config_dir else None,
        tts_memory_mb=memory_mb,
        tts_models=models,
        tts_quantize=_flag(env, "TTS_QUANTIZE", True),
        tts_decoder_precision=decoder_precision,
        default_voice=env.get("DEFAULT_VOICE", "").strip() or None,
        data_dir=data_dir,
        database_url=database_url,
        discord_api_base=_url(env, "DISCORD_API_BASE", DEFAULT_API_BASE, ("https", "http")),
        discord_gateway_url=_url(env, "DISCORD_GATEWAY_URL", DEFAULT_GATEWAY_URL, ("wss", "ws")),
        discord_ca_file=_existing_file(env, "DISCORD_CA_FILE"),
        log_level=log_level,
        discord_log_level=discord_log_level,
        sync_commands=_flag(env, "SYNC_COMMANDS", False),
        max_text_length=max_text_length,
        tts_workers=workers,
        tts_batch=batch,
        metrics_port=port,
        metrics_host=env.get("METRICS_HOST", "").strip() or "127.0.0.1",
        log_format=log_format,
        hf_token=env.get("HF_TOKEN", "").strip() or None,
        shard_count=shard_count,
        shard_ids=shard_ids,
        speech_host=env.get("SPEECH_HOST", "").strip() or "127.0.0.1",
        speech_port=speech_port,
        speech_api_keys=keys,
        speech_streams_per_key=_int(env, "SPEECH_STREAMS_PER_KEY", 4, 1, 64),
        speech_requests_per_minute=_int(env, "SPEECH_REQUESTS_PER_MINUTE", 60, 1, 100_000),
        speech_queue=_int(env, "SPEECH_QUEUE", 8, 0, 256),
        wyoming_port=wyoming_port,
        wyoming_host=env.get("WYOMING_HOST", "").strip() or "127.0.0.1",
        wyoming_open=_flag(env, "WYOMING_OPEN", False),
    )


def export_hf_token(settings: Config) -> None:
    """huggingface_hub reads HF_TOKEN from the environment only; a token given in .env is
    handed on to it here."""
    if settings.hf_token and not os.environ.get("HF_TOKEN"):
        os.environ["HF_TOKEN"] = settings.hf_token


def one_stream(settings: Config) -> Config:
    """For a command that makes one stream or one voice (`say`, `voices import`, `doctor`):
    one worker and no batched engine, so no measuring of batch sizes at start (that takes
    tens of seconds on a small machine)."""
    return dataclasses.replace(settings, tts_batch=1, tts_workers=1)


def is_loopback(host: str) -> bool:
    """`host` is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a name: it may resolve anywhere
        return False


def check_speech_binds(settings: Config) -> None:
    """The speech service listens beyond this machine only with keys to check, and Wyoming
    (a protocol without keys) only when the operator says so."""
    if not is_loopback(settings.speech_host) and not settings.speech_api_keys:
        raise ConfigError(
            f"SPEECH_HOST {settings.speech_host} is reachable from other machines: set "
            "SPEECH_API_KEYS (keys clients send as 'Authorization: Bearer KEY'), or listen "
            "on 127.0.0.1"
        )
    wyoming = settings.wyoming_port is not None
    if wyoming and not is_loopback(settings.wyoming_host) and not settings.wyoming_open:
        raise ConfigError(
            f"WYOMING_HOST {settings.wyoming_host} is reachable from other machines and "
            "Wyoming has no keys: set WYOMING_OPEN=1 once a firewall lets only Home "
            "Assistant reach WYOMING_PORT, or listen on 127.0.0.1"
        )
