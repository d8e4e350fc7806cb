from pathlib import Path

import pytest

from bot.core.config import DEFAULT_API_BASE, ConfigError, load_settings

TOKEN = "MTAx.secret-token-value"


def settings(**env: str):
    return load_settings(env, dotenv_path=None)


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
    s = load_settings({"TTS_LANGUAGE": "german"}, dotenv_path=dotenv)
    assert s.discord_token == TOKEN
    assert s.tts_language == "german"
    assert s.tts_quantize is True


def test_say_needs_no_token() -> None:
    assert load_settings({}, dotenv_path=None, require_token=False).discord_token is None


@pytest.mark.parametrize(
    ("count", "ids", "expected"),
    [("", "", (None, None)), ("4", "", (4, None)), ("2", "1", (2, (1,))),
     ("4", "0-2", (4, (0, 1, 2))), ("8", "0-1, 5,1", (8, (0, 1, 5)))],
)  # fmt: skip
def test_shards(count: str, ids: str, expected: tuple[object, object]) -> None:
    s = settings(DISCORD_TOKEN=TOKEN, SHARD_COUNT=count, SHARD_IDS=ids)
    assert (s.shard_count, s.shard_ids) == expected


@pytest.mark.parametrize("ids", ["2", "0-4", "a", "1-", "-1"])
def test_shard_ids_outside_the_count_are_refused(ids: str) -> None:
    with pytest.raises(ConfigError, match="SHARD_IDS"):
        settings(DISCORD_TOKEN=TOKEN, SHARD_COUNT="2", SHARD_IDS=ids)
