import os
from pathlib import Path

import pytest

from bot.core.config import (
    DEFAULT_API_BASE,
    ConfigError,
    default_pipelines,
    default_workers,
    load_config,
    usable_cores,
)

TOKEN = "MTAx.secret-token-value"


def settings(**env: str):
    return load_config(env, dotenv_path=None)


def test_defaults() -> None:
    s = settings(DISCORD_TOKEN=TOKEN)
    assert s.tts_language == "english"
    assert s.tts_config is None
    assert s.tts_quantize is True  # int8 by default: faster at every batch size
    assert s.default_voice is None
    assert s.data_dir == Path(".")
    assert s.discord_api_base == DEFAULT_API_BASE
    assert s.discord_gateway_url.startswith("wss://")
    assert s.max_text_length == 1000
    assert s.sync_commands is False


def test_token_never_in_repr() -> None:
    assert TOKEN not in repr(settings(DISCORD_TOKEN=TOKEN))


def test_missing_token_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="DISCORD_TOKEN"):
        settings()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TTS_QUANTIZE", "maybe"),
        ("TTS_CONFIG", "/nonexistent/model.yaml"),
        ("DISCORD_API_BASE", "ftp://example"),
        ("DISCORD_GATEWAY_URL", "https://not-a-websocket"),
        ("DISCORD_CA_FILE", "/nonexistent/ca.pem"),
        ("LOG_LEVEL", "LOUD"),
        ("TTS_LANGUAGE", "../etc"),
        ("SYNC_COMMANDS", "2"),
        ("SHARD_COUNT", "0"),
        ("SHARD_IDS", "0"),  # ids without a count
    ],
)
def test_bad_value_names_the_variable_not_the_token(name: str, value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        settings(DISCORD_TOKEN=TOKEN, **{name: value})
    assert name in str(caught.value)
    assert TOKEN not in str(caught.value)


def test_dotenv_file_is_read_and_environment_wins(tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text(f"DISCORD_TOKEN={TOKEN}\nTTS_LANGUAGE=french\nTTS_QUANTIZE=1\n")
    s = load_config({"TTS_LANGUAGE": "german"}, dotenv_path=dotenv)
    assert s.discord_token is not None and s.discord_token.get_secret_value() == TOKEN
    assert s.tts_language == "german"
    assert s.tts_quantize is True


def test_say_needs_no_token() -> None:
    assert load_config({}, dotenv_path=None, require_token=False).discord_token is None


@pytest.mark.parametrize(
    ("count", "ids", "expected"),
    [
        ("", "", (None, None)),
        ("4", "", (4, None)),
        ("2", "1", (2, (1,))),
        ("4", "0-2", (4, (0, 1, 2))),
        ("8", "0-1, 5,1", (8, (0, 1, 5))),
    ],
)
def test_shards(count: str, ids: str, expected: tuple[object, object]) -> None:
    s = settings(DISCORD_TOKEN=TOKEN, SHARD_COUNT=count, SHARD_IDS=ids)
    assert (s.shard_count, s.shard_ids) == expected


@pytest.mark.parametrize("ids", ["2", "0-4", "a", "1-", "-1"])
def test_shard_ids_outside_the_count_are_refused(ids: str) -> None:
    with pytest.raises(ConfigError, match="SHARD_IDS"):
        settings(DISCORD_TOKEN=TOKEN, SHARD_COUNT="2", SHARD_IDS=ids)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("TTS_MEMORY_MB", "-1", "TTS_MEMORY_MB must be a whole number of megabytes (0: no limit)"),
        ("TTS_MODELS", "17", "TTS_MODELS must be a whole number from 1 to 16"),
        ("MAX_TEXT_LENGTH", "0", "MAX_TEXT_LENGTH must be a whole number from 1 to 4000"),
        ("TTS_WORKERS", "two", "TTS_WORKERS must be a whole number from 1 to 16"),
        ("TTS_BATCH", "33", "TTS_BATCH must be a whole number from 1 to 32"),
        ("TTS_PIPELINES", "0", "TTS_PIPELINES must be a whole number from 1 to 64"),
        ("TTS_PIPELINES", "65", "TTS_PIPELINES must be a whole number from 1 to 64"),
        (
            "METRICS_PORT",
            "65536",
            "METRICS_PORT must be a port number from 1 to 65535 (unset: off)",
        ),
        (
            "SHARD_COUNT",
            "4097",
            "SHARD_COUNT must be a whole number from 1 to 4096 (unset: automatic)",
        ),
    ],
)
def test_a_whole_number_out_of_its_range_is_refused_in_words(
    name: str, value: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        settings(DISCORD_TOKEN=TOKEN, **{name: value})
    assert str(caught.value) == message


def test_whole_numbers_unset_take_their_defaults_and_set_are_read() -> None:
    unset = settings(DISCORD_TOKEN=TOKEN)
    assert (unset.tts_memory_mb, unset.tts_models, unset.metrics_port, unset.shard_count) == (
        0,
        3,
        None,
        None,
    )
    given = settings(
        DISCORD_TOKEN=TOKEN,
        TTS_MEMORY_MB=" 2048 ",
        TTS_MODELS="16",
        MAX_TEXT_LENGTH="4000",
        TTS_WORKERS="1",
        TTS_BATCH="32",
        METRICS_PORT="9100",
        SHARD_COUNT="1",
    )
    assert (
        given.tts_memory_mb,
        given.tts_models,
        given.max_text_length,
        given.tts_workers,
        given.tts_batch,
        given.metrics_port,
        given.shard_count,
    ) == (
        2048,
        16,
        4000,
        1,
        32,
        9100,
        1,
    )


def test_the_usable_cores_follow_the_cpu_affinity() -> None:
    """A container's cpuset or `taskset` leaves fewer cores than the host has: the capacity
    and the default workers count those (os.cpu_count() counts the host's)."""
    before = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(before)})  # this thread only: restored below
        assert usable_cores() == 1
        assert default_workers() == 1
        assert default_pipelines() == 1
        assert settings(DISCORD_TOKEN=TOKEN).tts_pipelines == 1
    finally:
        os.sched_setaffinity(0, before)
    assert usable_cores() == len(before)
    # one pipeline per 2 cores of the affinity (this machine's 2: one, the engine unchanged)
    assert default_pipelines() == max(1, len(before) // 2)
    assert settings(DISCORD_TOKEN=TOKEN).tts_pipelines == default_pipelines()
    assert settings(DISCORD_TOKEN=TOKEN, TTS_PIPELINES="4").tts_pipelines == 4
