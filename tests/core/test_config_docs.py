"""The README's table of variables and `.env.example` are written from `Config`'s declarations
(scripts/config_docs.py): they match them, and what they show is accepted."""

from __future__ import annotations

import importlib.util
import io
import re
from pathlib import Path
from types import ModuleType

import pytest
from dotenv import dotenv_values
from pydantic import SecretStr

from bot.core.config import OTHER_VARIABLES, Config, ConfigError, load_config

ROOT = Path(__file__).resolve().parents[2]
PATHS = {"TTS_CONFIG", "TTS_CONFIG_DIR", "DISCORD_CA_FILE"}  # examples of the operator's files


def config_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("config_docs", ROOT / "scripts/config_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_table_and_env_example_are_the_declarations() -> None:
    docs = config_docs()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert docs.readme_with_table(readme) == readme, "run scripts/config_docs.py"
    assert (ROOT / ".env.example").read_text(encoding="utf-8") == docs.env_example()
    table = docs.readme_table()
    for name in [*Config.model_fields, *(v.name.lower() for v in OTHER_VARIABLES)]:
        assert re.search(rf"^\| `{name.upper()}` \|", table, re.MULTILINE), name


def test_a_stale_document_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = config_docs()
    stale = tmp_path / ".env.example"
    stale.write_text(docs.env_example().replace("MAX_TEXT_LENGTH", "MAX_TEXT"), encoding="utf-8")
    monkeypatch.setattr(docs, "ENV_EXAMPLE", stale)
    assert docs.main(["--check"]) == 1
    assert docs.main([]) == 0 and docs.main(["--check"]) == 0
    assert stale.read_text(encoding="utf-8") == docs.env_example()


def test_what_env_example_sets_and_shows_is_accepted() -> None:
    """Its values as they are, then each commented example alone: none is refused."""
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    shown = {k: v or "" for k, v in dotenv_values(stream=io.StringIO(text)).items()}
    base = {**shown, "DISCORD_TOKEN": "MTAx.token"}
    load_config(base, dotenv_path=None)
    examples = dict(re.findall(r"^# ([A-Z_]+)=(.*)$", text, re.MULTILINE))
    assert set(examples) | set(shown) >= {name.upper() for name in Config.model_fields}
    for name, value in examples.items():
        if name in PATHS or name not in {n.upper() for n in Config.model_fields}:
            continue
        extra = {"SHARD_COUNT": "2"} if name == "SHARD_IDS" else {}
        load_config({**base, **extra, name: value}, dotenv_path=None)


def test_secrets_are_never_shown() -> None:
    url = "postgresql://bot:hunter2-secret@db:5432/pocketvoice"
    settings = load_config(
        {"DISCORD_TOKEN": "MTAx.token-secret", "DATABASE_URL": url, "HF_TOKEN": "hf_secret"},
        dotenv_path=None,
    )
    for name in ("discord_token", "database_url", "hf_token"):
        assert isinstance(getattr(settings, name), SecretStr)
    for shown in (repr(settings), str(settings), settings.model_dump_json()):
        assert "secret" not in shown
    assert settings.database_url is not None and settings.database_url.get_secret_value() == url
    with pytest.raises(ConfigError) as caught:
        load_config(
            {"DISCORD_TOKEN": "x", "DATABASE_URL": "mysql://a:hunter2@b/c"}, dotenv_path=None
        )
    assert "hunter2" not in str(caught.value) and "DATABASE_URL" in str(caught.value)


def test_the_process_environment_and_dotenv_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a mapping, pydantic-settings reads the environment over the `.env` file."""
    dotenv = tmp_path / ".env"
    dotenv.write_text("DISCORD_TOKEN=MTAx.token\nTTS_MODELS=5\nTTS_BATCH=4\n", encoding="utf-8")
    monkeypatch.setenv("TTS_BATCH", " 2 ")
    monkeypatch.setenv("LOG_LEVEL", "")  # empty: unset
    settings = load_config(dotenv_path=dotenv)
    assert (settings.tts_models, settings.tts_batch, settings.log_level) == (5, 2, "INFO")
    monkeypatch.setenv("TTS_MODELS", "17")
    with pytest.raises(ConfigError, match=r"^TTS_MODELS must be a whole number from 1 to 16$"):
        load_config(dotenv_path=dotenv)
