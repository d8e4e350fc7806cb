"""Operator settings, read once from the environment and `.env`, validated at start.

Each variable is declared once, in its section of `Config` (`Section`: the model, voices,
your data, speech, logs, health, proxies, the speech service): its type, bounds, default and
whether it is a secret, with the words the README's table and `.env.example` show
(`setting(...)`); `scripts/config_docs.py` writes those two files from here, and a test
checks they match. The variables' names are the fields' (`config.speech_port` is
`SPEECH_PORT`), whatever their section. Adding a variable: one `setting` field in its section
(a check of its own, if its type and bounds do not say it all, goes in a `field_validator` of
`Config`), then `.venv/bin/python scripts/config_docs.py`.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from dotenv import dotenv_values
from pydantic import (
    BaseModel,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.config import JsonDict
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from bot.core.errors import OperatorError

DEFAULT_API_BASE = "https://discord.com/api/v10"
DEFAULT_GATEWAY_URL = "wss://gateway.discord.gg/"
LOG_LEVELS = "one of DEBUG, INFO, WARNING, ERROR"


class ConfigError(OperatorError):
    """A bad or missing setting; the message names the variable and never shows its value."""

    label = "Configuration error"


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
    decoder run in two threads), and a second replica on 2 cores adds little aggregate speed
    while halving each stream's, so 2 cores get one worker.
    """
    return max(1, usable_cores() // 2)


MAX_PIPELINES = 64


def default_pipelines() -> int:
    """Pipelines of the batched engine when TTS_PIPELINES is unset: one per 2 cores.

    A pipeline is one LM thread and one decoder thread: it keeps at most about 1.7 cores
    busy (docs/performance.md), so 2 cores get one.
    """
    return max(1, min(MAX_PIPELINES, usable_cores() // 2))


def setting(
    default: Any = None,
    meaning: str = "",
    *,
    shown: str | None = None,
    example: str | None = None,
    default_text: str | None = None,
    must: str | None = None,
    **bounds: Any,
) -> Any:
    """A variable's declaration: its default (`default_factory=` for a computed one), its
    bounds (`ge`, `le`), and for the documents: `meaning` (the README's words, Markdown),
    `default_text` (the table's default column, when not the default itself), `shown` (the
    value `.env.example` sets) or `example` (one it shows commented out) and `must` (what a
    bad value is told it must be; from the bounds when not given). `.env.example`'s
    headings are the sections' (`heading`)."""
    extra: JsonDict = {
        "meaning": meaning,
        "shown": shown,
        "example": example,
        "default_text": default_text,
        "must": must,
    }
    if "default_factory" in bounds:
        return Field(json_schema_extra=extra, **bounds)
    return Field(default, json_schema_extra=extra, **bounds)


Tokens = Annotated[tuple[str, ...], NoDecode]  # a comma-separated list, not JSON
Shards = Annotated[tuple[int, ...] | None, NoDecode]

# A mapping given to `load_config` in place of the process environment (tests, benchmarks)
_GIVEN_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("given_environ", default=None)


class Section(BaseModel):
    """A part of `Config`: the variables of one concern, under one heading."""

    heading: ClassVar[str]  # .env.example's heading above its variables


class _Token(Section):
    """The bot's token."""

    heading: ClassVar[str] = (
        "The bot token from https://discord.com/developers/applications (Bot tab). Never share it."
    )

    discord_token: SecretStr | None = setting(
        None,
        "the bot token; never logged or printed",
        shown="",
        default_text="(required for `run`)",
    )


class _Model(Section):
    """The model: its language, its files, how many are kept and how they compute."""

    heading: ClassVar[str] = "The model"

    tts_language: str = setting(
        "english",
        "a pocket-tts language (`english`, `french`, `german`, `italian`, "
        "`spanish`, `portuguese`, `dutch`, ...), or a smaller English model, "
        "`english_18m_2026-10` or `english_7m_2026-10`, for more servers at once on a small CPU",
        shown="english",
        must="a pocket-tts language name such as 'english'",
    )
    tts_config: Path | None = setting(
        None,
        "path to a pocket-tts model config `.yaml` for `TTS_LANGUAGE`'s model (local or "
        "custom weights)",
        example="/path/to/model.yaml",
    )
    tts_languages: Tokens = setting(
        (),
        "the languages servers and members may choose, comma-separated (`TTS_LANGUAGE` is "
        "always one); `all`: every language pocket-tts has",
        default_text="`TTS_LANGUAGE` alone",
        example="english,french,german",
        must="language names separated by commas",
    )
    tts_config_dir: Path | None = setting(
        None,
        "a folder of `<language>.yaml` configs: other languages' local weights (else "
        "they download by name)",
        example="/path/to/configs",
        must="a folder of <language>.yaml configs",
    )
    tts_models: int = setting(
        3,
        "most language models loaded at once; past it the least recently used idle one is unloaded",
        example="3",
        ge=1,
        le=16,
    )
    tts_memory_mb: int = setting(
        0,
        "most megabytes of model weights loaded at once (the same rule)",
        default_text="`0` (no limit)",
        example="0",
        must="a whole number of megabytes (0: no limit)",
        ge=0,
    )
    tts_quantize: bool = setting(
        True,
        "`1`: the flow model's transformer runs in int8 (pocket-tts's own quantization); "
        "`0`: fp32, slower and larger "
        "([figures](docs/performance.md#precision-int8-and-fp32-tts_quantize))",
        default_text="`1`",
        shown="1",
        must="0 or 1",
    )
    tts_decoder_precision: Literal["auto", "fp32", "bf16"] = setting(
        "auto",
        "`auto`: the audio decoder runs in bfloat16 where the CPU has AVX512-BF16 or "
        "AMX (1.45x faster decodes at 8 rows), else fp32; `fp32`, `bf16` to choose "
        "([figures](docs/performance.md#the-decoder-in-bfloat16-tts_decoder_precision))",
        example="auto",
        must="auto, fp32 or bf16",
    )


class _Voices(Section):
    """The default voice, and the cloning weights' token."""

    heading: ClassVar[str] = "Voices"

    default_voice: str | None = setting(
        None,
        "built-in voice name, clip path or `.safetensors` path",
        default_text="the language's default",
        example="alba",
    )
    hf_token: SecretStr | None = setting(
        None,
        "Hugging Face token, for the gated voice-cloning weights",
        example="",
    )


class _Data(Section):
    """Where the data lives: the folder, the database, the shards."""

    heading: ClassVar[str] = "Your data"

    data_dir: Path = setting(
        Path("."),
        "where the database and `voices/` live",
        shown=".",
    )
    # PostgreSQL shared by several bot processes (None: SQLite in DATA_DIR); holds a password
    database_url: SecretStr | None = setting(
        None,
        "`postgresql://user:password@host:port/database`: the data in PostgreSQL "
        "([scaling out](docs/scaling-out.md)); never logged",
        default_text="(SQLite in `DATA_DIR`)",
        example="postgresql://pocketvoice:password@localhost:5432/pocketvoice",
        must="a postgresql://user:password@host:port/database URL (unset: SQLite in DATA_DIR)",
    )
    # Gateway shards this process holds: None for both is discord.py's automatic sharding
    # (Discord's recommended count, every shard here).
    shard_count: int | None = setting(
        None,
        "gateway shards across every process ([scaling out](docs/scaling-out.md))",
        default_text="(automatic)",
        example="2",
        must="a whole number from 1 to 4096 (unset: automatic)",
        ge=1,
        le=4096,
    )
    shard_ids: Shards = setting(
        None,
        "the shards this process holds: `0,1`, `0-3`, ...; needs `SHARD_COUNT`",
        default_text="every shard",
        example="0",
        must="shard numbers such as 0,1 or 0-3",
    )


class _Speech(Section):
    """Speech: the text's length, the batch, its workers and pipelines, the commands' sync."""

    heading: ClassVar[str] = "Speech"

    max_text_length: int = setting(
        1000,
        "longest `/say` text, in characters",
        shown="1000",
        ge=1,
        le=4000,
    )
    tts_batch: int = setting(
        16,
        "the largest batch (the step times measured at start and live decide how many rows "
        "run within it, ramping up 1.5x at a time and keeping a third of the frame for a "
        "machine that slows under load): every stream being spoken is one row of one model "
        "step, and a server starts speaking only while one more row stays in real time; `1` "
        "turns batching off",
        example="16",
        ge=1,
        le=32,
    )
    tts_workers: int = setting(
        meaning="threads (model replicas sharing the weights) that make voice states and "
        "clones; without batching they synthesize, one stream each, plus a spare thread for "
        "urgent units",
        default_text="one per 2 cores",
        example="1",
        default_factory=default_workers,
        ge=1,
        le=16,
    )
    tts_pipelines: int = setting(
        meaning="independent batches of the batched engine, an LM thread and a decoder thread "
        "each, with their own rows; a new stream goes to the one with the most room",
        default_text="one per 2 cores",
        example="1",
        default_factory=default_pipelines,
        ge=1,
        le=MAX_PIPELINES,
    )
    tts_pipeline_mode: Literal["auto", "threads", "processes"] = setting(
        "auto",
        "`processes`: each pipeline runs in a worker process of its own, with its own copy of "
        "the model (threads share one interpreter lock, which holds more than a few pipelines "
        "back); `threads`: in the bot's process; `auto`: processes when there is more than "
        "one pipeline ([figures](docs/performance.md#more-cores-pipelines))",
        example="auto",
        must="auto, threads or processes",
    )
    sync_commands: bool = setting(
        False,
        "`1` registers slash commands at start (or once: `./run.sh sync`)",
        default_text="`0`",
        shown="0",
        must="0 or 1",
    )


class _Logs(Section):
    """The logs."""

    heading: ClassVar[str] = "Logs"

    log_level: str = setting(
        "INFO",
        "`DEBUG`, `INFO`, `WARNING`, `ERROR`",
        shown="INFO",
        must=LOG_LEVELS,
    )
    # discord.py's own loggers (None: LOG_LEVEL, but never below INFO): its DEBUG lines carry
    # whole gateway payloads, members' messages and voice keys among them
    discord_log_level: str | None = setting(
        None,
        "discord.py's own loggers; its `DEBUG` lines hold whole gateway events (what "
        "members wrote, voice keys), so only set it to debug discord.py itself",
        default_text="`LOG_LEVEL`, never below `INFO`",
        example="DEBUG",
        must=LOG_LEVELS,
    )
    log_format: Literal["text", "json"] = setting(
        "text",
        "`json`: one JSON object per line",
        example="json",
        must="text or json",
    )


class _Health(Section):
    """The health and Prometheus endpoints."""

    heading: ClassVar[str] = "Health and Prometheus metrics"

    metrics_port: int | None = setting(
        None,
        "serve `/metrics`, `/healthz` and `/livez` on this port",
        default_text="(off)",
        example="9108",
        must="a port number from 1 to 65535 (unset: off)",
        ge=1,
        le=65535,
    )
    metrics_host: str = setting(
        "127.0.0.1",
        "the address they listen on (`0.0.0.0` in a container)",
        example="127.0.0.1",
    )


class _Proxies(Section):
    """Discord's addresses and CA, for proxies and tests."""

    heading: ClassVar[str] = "Only for proxies and tests"

    discord_api_base: str = setting(
        DEFAULT_API_BASE,
        "REST base URL (for a proxy)",
        example=DEFAULT_API_BASE,
        must="a https or http URL",
    )
    discord_gateway_url: str = setting(
        DEFAULT_GATEWAY_URL,
        "gateway URL (for a proxy)",
        example=DEFAULT_GATEWAY_URL,
        must="a wss or ws URL",
    )
    discord_ca_file: Path | None = setting(
        None,
        "extra PEM CA bundle to trust for TLS (proxies, tests); verification stays on",
        example="/path/to/ca.pem",
    )


class _Service(Section):
    """The speech service (`serve`, or `SPEECH_PORT` beside the bot) and Wyoming."""

    heading: ClassVar[str] = (
        "The speech service: a page, OpenAI's /v1/audio/speech, Wyoming (docs/speech-service.md)"
    )

    speech_host: str = setting(
        "127.0.0.1",
        "the address the speech service (`./run.sh serve`, or the bot with `SPEECH_PORT`) "
        "listens on; any other than this machine's needs `SPEECH_API_KEYS`",
        example="127.0.0.1",
    )
    speech_port: int | None = setting(
        None,
        "its port; in the bot, setting it turns the service on beside Discord",
        default_text="`8000` for `serve`, off in the bot",
        example="8000",
        must="a port number from 1 to 65535 (unset: 8000 for serve, off in the bot)",
        ge=1,
        le=65535,
    )
    speech_api_keys: Tokens = setting(
        (),
        "keys clients send as `Authorization: Bearer KEY`, comma-separated, 16 characters "
        "or more each; never logged",
        default_text="(none: this machine only)",
        example="",
        must="keys of 16 characters or more, separated by commas",
        repr=False,
    )
    speech_streams_per_key: int = setting(
        4,
        "streams at once per key (or per address without keys: this machine's are one)",
        example="4",
        ge=1,
        le=64,
    )
    speech_requests_per_minute: int = setting(
        60,
        "requests a minute per key (or per address)",
        example="60",
        ge=1,
        le=100_000,
    )
    speech_queue: int = setting(
        8,
        "service streams that may wait for room at once (Discord comes first); past it, 429",
        example="8",
        ge=0,
        le=256,
    )
    speech_connections: int = setting(
        256,
        "connections the service holds open at once, HTTP and Wyoming together; past it the "
        "oldest with no request yet is closed for a new one, or the new one if all are in use "
        "(idle ones close after 30 s, ones with no request after 10)",
        example="256",
        ge=8,
        le=16_384,
    )
    speech_clips: bool = setting(
        True,
        "`0`: refuse a voice clip sent with a request (the page's upload, the API's "
        "`voice_file`), which speaks that request in the clip's voice and is never kept; "
        "offered only with the voice-cloning weights",
        default_text="`1`",
        example="1",
    )
    wyoming_port: int | None = setting(
        None,
        "Home Assistant's Wyoming protocol on this port",
        default_text="(off)",
        example="10200",
        must="a port number from 1 to 65535 (unset: off)",
        ge=1,
        le=65535,
    )
    wyoming_host: str = setting(
        "127.0.0.1",
        "the address Wyoming listens on; Wyoming has no keys, so any other than this "
        "machine's needs `WYOMING_OPEN=1`",
        example="127.0.0.1",
    )
    wyoming_open: bool = setting(
        False,
        "`1`: take a `WYOMING_HOST` beyond this machine (once a firewall lets only Home "
        "Assistant reach `WYOMING_PORT`)",
        default_text="`0`",
        example="0",
    )


# The sections, in the documents' order (scripts/config_docs.py)
SECTIONS: tuple[type[Section], ...] = (
    _Token,
    _Model,
    _Voices,
    _Data,
    _Speech,
    _Logs,
    _Health,
    _Proxies,
    _Service,
)


class Config(
    _Service, _Proxies, _Health, _Logs, _Speech, _Data, _Voices, _Model, _Token, BaseSettings
):
    """The operator's settings: one field per environment variable (its name in capitals),
    declared in its section above (listed last to first: pydantic takes a class's fields from
    its last base first, so `model_fields` keeps the documents' order too); the checks across
    sections and where the values come from, here."""

    model_config = SettingsConfigDict(
        frozen=True, env_ignore_empty=True, extra="ignore", validate_default=True
    )

    # ---- checks that the types and bounds do not say -----------------------------------------
    @field_validator("*", mode="before")
    @classmethod
    def _stripped(cls, value: Any) -> Any:
        """Spaces around a value are not part of it (`TTS_MEMORY_MB= 2048 `)."""
        return value.strip() if isinstance(value, str) else value

    @field_validator("discord_token")
    @classmethod
    def _bare_token(cls, token: SecretStr | None) -> SecretStr | None:
        raw = token.get_secret_value() if token is not None else ""
        if any(c.isspace() for c in raw) or raw.lower().startswith("bot "):
            raise ConfigError("DISCORD_TOKEN is malformed: give the bare token, without 'Bot '")
        return token

    @field_validator("tts_language")
    @classmethod
    def _language_name(cls, language: str) -> str:
        if not language.replace("_", "").replace("-", "").isalnum():
            raise ValueError
        return language

    @field_validator("tts_config", "discord_ca_file")
    @classmethod
    def _existing_file(cls, path: Path | None, info: ValidationInfo) -> Path | None:
        if path is None:
            return None
        path = path.expanduser()
        name = str(info.field_name).upper()
        if not path.is_file():
            raise ConfigError(f"{name} points to {path}, which is not a readable file")
        if name == "TTS_CONFIG" and path.suffix not in (".yaml", ".yml"):
            raise ConfigError("TTS_CONFIG must be a pocket-tts .yaml config file")
        return path

    @field_validator("tts_languages", mode="before")
    @classmethod
    def _language_list(cls, raw: Any) -> Any:
        if not isinstance(raw, str):
            return raw
        languages = tuple(dict.fromkeys(x.strip().lower() for x in raw.split(",") if x.strip()))
        if any(not x.replace("_", "").isalnum() for x in languages):
            raise ValueError
        return languages

    @field_validator("speech_api_keys", mode="before")
    @classmethod
    def _key_list(cls, raw: Any) -> Any:
        if not isinstance(raw, str):
            return raw
        keys = tuple(k.strip() for k in raw.split(",") if k.strip())
        if any(len(k) < 16 or any(c.isspace() for c in k) for k in keys):
            raise ValueError
        return keys

    @field_validator("tts_config_dir")
    @classmethod
    def _a_folder(cls, path: Path | None) -> Path | None:
        if path is not None and not path.expanduser().is_dir():
            raise ValueError
        return None if path is None else path.expanduser()

    @field_validator("tts_decoder_precision", "log_format", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value

    @field_validator("log_level", "discord_log_level")
    @classmethod
    def _level(cls, level: str | None) -> str | None:
        if level is None:
            return None
        if not isinstance(logging.getLevelName(level.upper()), int):
            raise ValueError
        return level.upper()

    @field_validator("data_dir")
    @classmethod
    def _data_dir(cls, path: Path) -> Path:
        path = path.expanduser()
        if path.exists() and not path.is_dir():
            raise ConfigError(f"DATA_DIR points to {path}, which is not a folder")
        return path

    @field_validator("database_url")
    @classmethod
    def _postgres_url(cls, url: SecretStr | None) -> SecretStr | None:
        if url is not None and not url.get_secret_value().startswith(
            ("postgresql://", "postgres://")
        ):
            raise ValueError
        return url

    @field_validator("discord_api_base", "discord_gateway_url")
    @classmethod
    def _url(cls, value: str, info: ValidationInfo) -> str:
        from urllib.parse import urlparse

        schemes = ("https", "http") if info.field_name == "discord_api_base" else ("wss", "ws")
        parsed = urlparse(value)
        if parsed.scheme not in schemes or not parsed.netloc:
            raise ValueError
        return value.rstrip("/") if info.field_name == "discord_api_base" else value

    @field_validator("shard_ids", mode="before")
    @classmethod
    def _shard_list(cls, raw: Any) -> Any:
        """ "0,1", "0-3", "0-1,4": the shards in order, each once."""
        if not isinstance(raw, str):
            return raw
        ids: list[int] = []
        for part in raw.split(","):
            first, dash, last = part.strip().partition("-")
            if not first.isdigit() or (dash and not last.isdigit()):
                raise ValueError
            ids.extend(range(int(first), int(last if dash else first) + 1))
        return tuple(dict.fromkeys(ids)) or None

    @model_validator(mode="after")
    def _together(self) -> Config:
        """The checks across variables."""
        if self.tts_languages and self.tts_language not in self.tts_languages:
            # the default is always allowed
            object.__setattr__(self, "tts_languages", (self.tts_language, *self.tts_languages))
        if self.shard_ids is not None:
            if self.shard_count is None:
                raise ConfigError(
                    "SHARD_IDS needs SHARD_COUNT: the number of shards across all processes"
                )
            if max(self.shard_ids) >= self.shard_count:
                raise ConfigError(
                    f"SHARD_IDS must be shard numbers from 0 to {self.shard_count - 1} "
                    "(SHARD_COUNT)"
                )
        return self

    # ---- where the values come from --------------------------------------------------------
    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The environment over the `.env` file; a mapping given to `load_config` stands for
        the whole environment (the process's is not read then)."""
        given = _GIVEN_ENVIRON.get()
        if given is None:
            return init_settings, env_settings, dotenv_settings
        values = {k.lower(): v.strip() for k, v in given.items() if k.lower() in cls.model_fields}
        environ = InitSettingsSource(settings_cls, {k: v for k, v in values.items() if v})
        return init_settings, environ, dotenv_settings


@dataclass(frozen=True)
class Variable:
    """A variable the bot itself does not read, documented beside its own (`Config`)."""

    name: str
    default_text: str
    meaning: str
    example: str | None = None  # shown commented out in .env.example (None: not there)


OTHER_VARIABLES = (
    Variable(
        "POSTGRES_PASSWORD",
        "",
        "`compose.shards.yaml` only: the password of its PostgreSQL",
        example="",
    ),
    Variable(
        "TORCH_INDEX_URL",
        "the PyTorch CPU index",
        "install only: where torch's CPU build comes from",
    ),
    Variable(
        "TORCH_ALLOW_CUDA",
        "`0`",
        "install only: `1` accepts a CUDA build when the CPU index cannot be reached",
    ),
)


def must_be(name: str) -> str:
    """What a field's variable must be, in words: its declared `must`, else its bounds."""
    field = Config.model_fields[name]
    extra = field.json_schema_extra
    assert isinstance(extra, dict)
    if extra.get("must"):
        return str(extra["must"])
    low = high = None
    for bound in field.metadata:
        low = getattr(bound, "ge", low)
        high = getattr(bound, "le", high)
    if low is not None and high is not None:
        return f"a whole number from {low} to {high}"
    return "a valid value"


@contextmanager
def _environ(environ: Mapping[str, str] | None) -> Iterator[None]:
    token = _GIVEN_ENVIRON.set(environ)
    try:
        yield
    finally:
        _GIVEN_ENVIRON.reset(token)


def load_config(
    environ: Mapping[str, str] | None = None,
    *,
    dotenv_path: Path | None = Path(".env"),
    require_token: bool = True,
) -> Config:
    """Settings from `environ` (default: the process environment) over the `.env` file; a
    bad value raises ConfigError naming its variable (never showing the value)."""
    env_file = dotenv_path if dotenv_path is not None and dotenv_path.is_file() else None
    if env_file is not None and environ is not None:  # both given: the mapping wins
        from_file = {k: v for k, v in dotenv_values(env_file).items() if v is not None}
        environ, env_file = {**from_file, **environ}, None
    try:
        with _environ(environ):
            settings = Config(_env_file=env_file)
    except ValidationError as error:
        first = error.errors()[0]
        name = str(first["loc"][0]) if first["loc"] else ""
        raise ConfigError(f"{name.upper()} must be {must_be(name)}") from None
    if require_token and settings.discord_token is None:
        raise ConfigError("DISCORD_TOKEN is missing: put your bot token in .env (see .env.example)")
    return settings


def revealed(secret: SecretStr | None) -> str | None:
    """A secret setting's value, for the one call that needs it (a login, a connection)."""
    return None if secret is None else secret.get_secret_value()


def export_hf_token(config: Config) -> None:
    """huggingface_hub reads HF_TOKEN from the environment only; a token given in .env is
    handed on to it here."""
    if config.hf_token and not os.environ.get("HF_TOKEN"):
        os.environ["HF_TOKEN"] = config.hf_token.get_secret_value()


def one_stream(config: Config) -> Config:
    """For a command that makes one stream or one voice (`say`, `voices import`, `doctor`):
    one worker and no batched engine, so no measuring of batch sizes at start (that takes
    tens of seconds on a small machine)."""
    return config.model_copy(update={"tts_batch": 1, "tts_workers": 1, "tts_pipelines": 1})


def is_loopback(host: str) -> bool:
    """`host` is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a name: it may resolve anywhere
        return False


def check_speech_binds(config: Config) -> None:
    """The speech service listens beyond this machine only with keys to check, and Wyoming
    (a protocol without keys) only when the operator says so."""
    if not is_loopback(config.speech_host) and not config.speech_api_keys:
        raise ConfigError(
            f"SPEECH_HOST {config.speech_host} is reachable from other machines: set "
            "SPEECH_API_KEYS (keys clients send as 'Authorization: Bearer KEY'), or listen "
            "on 127.0.0.1"
        )
    wyoming = config.wyoming_port is not None
    if wyoming and not is_loopback(config.wyoming_host) and not config.wyoming_open:
        raise ConfigError(
            f"WYOMING_HOST {config.wyoming_host} is reachable from other machines and "
            "Wyoming has no keys: set WYOMING_OPEN=1 once a firewall lets only Home "
            "Assistant reach WYOMING_PORT, or listen on 127.0.0.1"
        )
