"""Languages end to end: a server's and a member's language pick the model and the glue
words; other languages' models load on demand while others speak, and unload when idle
over the budget. The languages' models are tiny random-weight copies (one config each in
TTS_CONFIG_DIR, as an operator with local weights would set it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.playback.stats import UtteranceResult
from bot.synthesis.model_pool import ModelPool
from bot.text.phrasebook import phrasebook
from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord
from tests.e2e.test_autoread import ADMIN, outcome, setup_read_channel, speaker
from tests.e2e.test_speech import audio_packets
from tests.e2e.test_voices import clone, voice_files
from tests.fakediscord import FakeDiscord

VOICE = FakeDiscord.VOICE_ID


def language_configs(tmp_path: Path, base: Path, languages: tuple[str, ...]) -> Path:
    """`<language>.yaml` for each language: the tiny model, marked so each is its own model."""
    folder = tmp_path / "models"
    folder.mkdir()
    for language in languages:
        (folder / f"{language}.yaml").write_text(
            f"# the {language} model (random weights)\n" + base.read_text(), encoding="utf-8"
        )
    return folder


@pytest.fixture
def model_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, str]]:
    """Every unit the scheduler hands to a model: (language asked, model fingerprint, text)."""
    calls: list[tuple[str, str, str]] = []
    original = ModelPool.stream

    def recording(self: ModelPool, text: str, voice: str | None = None, **options: Any) -> Any:
        language = options.get("language") or self.default_language
        calls.append((language, self.engine_for(options.get("language")).fingerprint, text))
        return original(self, text, voice, **options)

    monkeypatch.setattr(ModelPool, "stream", recording)
    return calls


def env_for(tmp_path: Path, tiny_model: TinyModel, **extra: str) -> dict[str, str]:
    folder = language_configs(tmp_path, tiny_model.config, ("french", "german", "italian"))
    return {"TTS_CONFIG_DIR": str(folder), "TTS_LANGUAGES": "french,german,italian", **extra}


async def read_aloud(running: RunningBot, user: str, text: str, count: int) -> Any:
    message = await running.fake.post(user, text)
    assert await outcome(running, message, timeout=60) == "read"
    await running.fake.wait_for(lambda: len(speaker(running).history) >= count, 60, "reading")
    return speaker(running).history[count - 1]


async def test_server_and_member_languages_choose_the_model_and_the_words(
    tmp_path: Path, tiny_model: TinyModel, model_calls: list[tuple[str, str, str]]
) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model, env_for(tmp_path, tiny_model)) as run:
        fake, bot = run.fake, run.bot
        assert bot.app.models.loaded() == ["english"]
        english_model = bot.app.models.default.fingerprint
        await setup_read_channel(fake)
        await fake.set_voice_state("alice", VOICE)
        await fake.set_voice_state("bob", VOICE)

        # only admins set the server's language, and only to a language on offer
        denied = await fake.interaction("config speech language", {"value": "french"})
        assert "Manage Server" in (await denied.wait_final())["content"]
        unknown = await fake.interaction(
            "config speech language", {"value": "klingon"}, permissions=ADMIN
        )
        assert (
            "Choose one of: english, french, german, italian"
            in (await unknown.wait_final())["content"]
        )
        offered = await fake.interaction(
            "config speech language", {"value": "fr"}, permissions=ADMIN, focused="value"
        )
        assert [c["value"] for c in (await offered.wait_response())["choices"]] == ["french"]
        done = await fake.interaction(
            "config speech language", {"value": "french"}, permissions=ADMIN
        )
        assert (await done.wait_final())["content"] == "language is now french."

        # /voice list puts the built-in voices recorded in the server's language first, and a
        # member whose Discord is in French reads it in French
        listed = await (await fake.interaction("voice list")).wait_final()
        assert "**Built-in voices in french**: estelle\n" in listed["content"]
        listed = await (await fake.interaction("voice list", locale="fr")).wait_final()
        assert "**Voix intégrées en français** : estelle\n" in listed["content"]
        assert (
            "Autres voix intégrées (elles parlent français avec un accent) : "
            in (listed["content"])
        )

        said = await read_aloud(run, "alice", "look at https://example.com/page", 1)
        # the channel was told, once, why the first message waited (in the server's locale)
        notices = [m["content"] for m in fake.channel_messages if "Loading" in m["content"]]
        assert notices == ["Loading french… I'll read the messages as soon as it is ready."]
        assert all(m["allowed_mentions"] == {"parse": []} for m in fake.channel_messages)
        french = phrasebook("french")
        assert said.language == "french" and said.error is None and said.frames_played > 0
        assert said.text == "Alice a dit look at " + french.link_to.format(host="example.com")
        assert bot.app.models.loaded() == ["english", "french"]
        french_model = bot.app.models.engine_for("french").fingerprint
        assert french_model != english_model
        assert any(lang == "french" and model == french_model for lang, model, _ in model_calls)
        assert all(model == french_model for lang, model, _ in model_calls if lang == "french")

        # a member's own language wins over the server's
        mine = await fake.interaction("set my_language", {"language": "german"}, user="bob")
        assert (await mine.wait_final())["content"] == (
            "I will speak your messages in german in this server."
        )
        german_line = await read_aloud(run, "bob", "hello there", 2)
        assert german_line.language == "german"
        assert german_line.text.startswith(phrasebook("german").said.format(name="Bob"))
        german_model = bot.app.models.engine_for("german").fingerprint
        assert any(lang == "german" and m == german_model for lang, m, _ in model_calls)
        # /say speaks in the member's language too; "none" goes back to the server's
        reset = await fake.interaction("set my_language", {"language": "none"}, user="bob")
        assert "this server's language again" in (await reset.wait_final())["content"]
        back = await read_aloud(run, "bob", "hello again", 3)
        assert back.language == "french"


def started(result: UtteranceResult) -> float:
    """When an utterance's first frame was handed to the voice link (time.monotonic())."""
    assert result.first_frame_latency is not None, result
    return result.requested_at + result.first_frame_latency


@pytest.mark.timing
async def test_a_new_language_loads_while_another_server_speaks_and_the_idle_one_unloads(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    env = env_for(tmp_path, tiny_model, TTS_MODELS="2")
    env["TTS_CONFIG"] = str(tiny_model.full_length_config)  # speech of natural length
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as run:
        fake, bot = run.fake, run.bot
        bot.app.models.idle_before_unload_s = 0.0  # unload as soon as a model is idle
        await fake.set_voice_state("alice", VOICE)
        await fake.set_voice_state("bob", FakeDiscord.GUILD2_VOICE_ID)
        long_text = "This keeps the other server talking."  # ~9 s
        first = await fake.interaction("say", {"text": long_text})
        assert (await first.wait_final())["content"].startswith("Speaking in")
        # the first server is speaking (not just starting) when the second asks for italian
        await fake.wait_for(lambda: len(audio_packets(fake.udp.packets)) > 100, 30, "speech")
        admin = {"permissions": ADMIN, "user": "bob", "guild": fake.GUILD2_ID}
        changed = await fake.interaction("config speech language", {"value": "italian"}, **admin)
        await changed.wait_final()
        second = await fake.interaction("say", {"text": "Ciao."}, user="bob", guild=fake.GUILD2_ID)
        assert (await second.wait_final())["content"].startswith("Loading italian…")
        scheduler = bot.app.speakers
        speakers = [scheduler.get(int(g)) for g in (fake.GUILD_ID, fake.GUILD2_ID)]
        await fake.wait_for(
            lambda: all(s is not None and len(s.history) == 1 for s in speakers), 120, "both"
        )
        spoken, italian = speakers[0].history[0], speakers[1].history[0]  # type: ignore[union-attr]
        assert italian.language == "italian" and italian.error is None
        assert italian.frames_played > 0
        # the first server's speech went on while italian loaded (its first frame came before
        # that speech ended): no underrun
        assert spoken.error is None and spoken.underruns == 0, spoken
        assert started(italian) < spoken.ended_at, (italian, spoken)
        assert bot.app.models.loaded() == ["english", "italian"]

        # a third language, over TTS_MODELS=2: the idle italian model is unloaded
        await (
            await fake.interaction("config speech language", {"value": "german"}, **admin)
        ).wait_final()
        third = await fake.interaction("say", {"text": "Hallo."}, user="bob", guild=fake.GUILD2_ID)
        assert (await third.wait_final())["content"].startswith("Loading german…")
        await fake.wait_for(lambda: len(speakers[1].history) == 2, 60, "german")  # type: ignore[union-attr]
        assert speakers[1].history[1].language == "german"  # type: ignore[union-attr]
        assert bot.app.models.loaded() == ["english", "german"]
        assert bot.app.models.unloads == 1


@pytest.mark.timing
async def test_a_third_language_loads_while_two_servers_speak_and_the_idle_one_unloads(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    env = env_for(tmp_path, tiny_model, TTS_MODELS="3")
    env["TTS_CONFIG"] = str(tiny_model.full_length_config)  # speech of natural length
    async with bot_on_fake_discord(tmp_path, tiny_model, env, extra_guilds=1) as run:
        fake, bot = run.fake, run.bot
        bot.app.models.idle_before_unload_s = 0.0  # unload as soon as a model is idle
        third_guild = list(fake.channels)[2]
        members = [
            ("alice", fake.GUILD_ID, VOICE),
            ("bob", fake.GUILD2_ID, FakeDiscord.GUILD2_VOICE_ID),
            ("member0", third_guild, fake.channels[third_guild][1]),
        ]
        for user, guild, voice in members:
            await fake.set_voice_state(user, voice, guild)

        async def set_language(user: str, guild: str, language: str) -> None:
            change = {"value": language}
            inter = await fake.interaction(
                "config speech language", change, user, ADMIN, guild=guild
            )
            assert (await inter.wait_final())["content"] == f"language is now {language}."

        async def say(user: str, guild: str, text: str, answer: str) -> None:
            inter = await fake.interaction("say", {"text": text}, user=user, guild=guild)
            assert (await inter.wait_final())["content"].startswith(answer)

        speakers = [bot.app.speakers.speaker(bot.get_guild(int(g))) for _, g, _ in members]  # type: ignore[arg-type]

        def spoken(counts: tuple[int, int, int]) -> bool:
            return all(len(s.history) >= n for s, n in zip(speakers, counts, strict=True))

        # the second server speaks french (its model loaded first), then english again
        await set_language("bob", fake.GUILD2_ID, "french")
        await say("bob", fake.GUILD2_ID, "Bonjour.", "Loading french…")
        await fake.wait_for(lambda: spoken((0, 1, 0)), 60, "the french greeting")
        await set_language("bob", fake.GUILD2_ID, "none")
        # Two servers speak (one model: two languages' models speaking at once need twice the
        # CPU of one, which 2 cores do not have for this model; see bench/languages.py)...
        long_text = "This keeps the other server talking."  # ~9 s
        await say("alice", fake.GUILD_ID, long_text, "Speaking in")
        await say("bob", fake.GUILD2_ID, long_text, "Speaking in")
        await fake.wait_for(lambda: len(audio_packets(fake.udp.packets)) > 250, 30, "speech")
        # ...while the third asks for italian
        await set_language("member0", third_guild, "italian")
        await say("member0", third_guild, "Ciao.", "Loading italian…")
        await fake.wait_for(lambda: spoken((1, 2, 1)), 120, "all three")
        first, second = speakers[0].history[0], speakers[1].history[1]
        italian = speakers[2].history[0]
        assert (first.language, second.language, italian.language) == (None, None, "italian")
        assert italian.error is None and italian.frames_played > 0
        # the two servers' speech went on while italian loaded (its first frame came before
        # theirs ended): no underrun
        for result in (first, second):
            assert result.error is None and result.underruns == 0, result
            assert started(italian) < result.ended_at, (italian, result)
        assert bot.app.models.loaded() == ["english", "french", "italian"]

        # a fourth, over TTS_MODELS=3: the idle model used least recently is unloaded
        older = min(("french", "italian"), key=bot.app.models.last_used)
        await set_language("member0", third_guild, "german")
        await say("member0", third_guild, "Hallo.", "Loading german…")
        await fake.wait_for(lambda: spoken((1, 2, 2)), 60, "german")
        assert speakers[2].history[1].language == "german"
        assert older not in bot.app.models.loaded() and len(bot.app.models.loaded()) == 3
        assert bot.app.models.unloads == 1


def encore(run: Any) -> Any:
    """The result of the message "Encore.", once spoken."""
    return next((r for r in speaker(run).history if r.text.endswith("Encore.")), None)


async def test_a_cloned_voice_speaks_another_language_from_its_recording(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model, env_for(tmp_path, tiny_model)) as run:
        fake = run.fake
        await fake.set_voice_state("alice", VOICE)
        await (await clone(fake, "Mine")).wait_content("is ready")
        await (await fake.interaction("voice use", {"name": "Mine"})).wait_final()
        await fake.wait_for(lambda: len(speaker(run).history) == 1, 30, "the sample")
        assert [p.suffix for p in voice_files(run)] == [".flac", ".safetensors"]

        mine = await fake.interaction("set my_language", {"language": "french"})
        await mine.wait_final()
        reply = await (await fake.interaction("say", {"text": "Bonjour à tous."})).wait_final()
        assert reply["content"].startswith("Loading french…")
        await fake.wait_for(lambda: len(speaker(run).history) == 2, 60, "the french speech")
        result = speaker(run).history[1]
        assert result.language == "french" and result.error is None and result.frames_played
        assert result.text == "alice a dit: Bonjour à tous."  # attributed, by username
        made = [p for p in voice_files(run) if ".model-" in p.name]  # made from the recording
        assert len(made) == 1 and result.voice == str(made[0])
        assert made[0].stat().st_mode & 0o777 == 0o600

        # with the model loaded, a voice not yet made for it is prepared first, and said so
        # (made out of voice: a clone's sample in voice is planned for the member's model,
        # which makes its state for that model then)
        await fake.set_voice_state("alice", None)
        await (await clone(fake, "Other")).wait_content("is ready")
        await (await fake.interaction("voice use", {"name": "Other"})).wait_final()
        assert len([p for p in voice_files(run) if ".model-" in p.name]) == 1
        await fake.set_voice_state("alice", VOICE)
        reply = await (await fake.interaction("say", {"text": "Encore."})).wait_final()
        assert reply["content"].startswith("Preparing your voice “Other” for french (once)…")
        await fake.wait_for(lambda: encore(run) is not None, 60, "the second voice")
        result = encore(run)
        assert result is not None and result.language == "french" and result.error is None
        assert len([p for p in voice_files(run) if ".model-" in p.name]) == 2
        again = await (await fake.interaction("say", {"text": "Encore."})).wait_final()
        assert again["content"].startswith(("Speaking in", "Queued"))  # made once

        # deleting the voice deletes its states for every language
        for name in ("Mine", "Other"):
            deleted = await fake.interaction("voice delete", {"name": name})
            assert (await deleted.wait_final())["content"].startswith(f"Deleted “{name}”")
        assert voice_files(run) == []


async def test_a_preview_speaks_the_voice_made_for_the_model_that_speaks_it(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """A member whose language is French previews their cloned voice in voice: the French
    model speaks it with the voice's state made for that model, never the default model's
    state (the voice was once chosen for one model while the preview's model was chosen
    elsewhere, for the member's language)."""
    async with bot_on_fake_discord(tmp_path, tiny_model, env_for(tmp_path, tiny_model)) as run:
        fake = run.fake
        await (await clone(fake, "Mine")).wait_content("is ready")  # not in voice: no sample
        await (await fake.interaction("set my_language", {"language": "french"})).wait_final()
        await fake.set_voice_state("alice", VOICE)
        preview = await fake.interaction("voice preview", {"name": "Mine"})
        assert (await preview.wait_final())["content"].startswith("Playing a preview")
        await fake.wait_for(lambda: len(speaker(run).history) == 1, 60, "the preview")
        result = speaker(run).history[0]
        assert result.language == "french" and result.error is None and result.frames_played
        made = [p for p in voice_files(run) if ".model-" in p.name]  # for the french model
        assert len(made) == 1 and result.voice == str(made[0])


def unloadable_configs(folder: Path, base: Path) -> None:
    """german: a config pocket-tts cannot parse; italian: weights that cannot be had (a
    Hugging Face repository that does not exist, offline or not)."""
    (folder / "german.yaml").write_text("flow_lm: [not, a, model]\n", encoding="utf-8")
    config = yaml.safe_load(base.read_text())
    config["weights_path"] = "hf://pocketvoice-tests/no-such-model/model.safetensors"
    (folder / "italian.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


async def test_set_language_refuses_a_language_whose_model_cannot_load(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    env = env_for(tmp_path, tiny_model)
    unloadable_configs(Path(env["TTS_CONFIG_DIR"]), tiny_model.config)
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as run:
        fake, bot = run.fake, run.bot
        broken = await fake.interaction(
            "config speech language", {"value": "german"}, permissions=ADMIN
        )
        content = (await broken.wait_final())["content"]
        assert content.startswith("I cannot speak german on this bot now: its model config")
        assert "german.yaml is broken" in content
        unreachable = await fake.interaction("set my_language", {"language": "italian"})
        content = (await unreachable.wait_final())["content"]
        assert content.startswith("I cannot speak italian on this bot now: its weights")
        assert "cannot be fetched now (model.safetensors)" in content
        # nothing was stored, nothing was loaded
        guild, member = int(fake.GUILD_ID), int(fake.humans["alice"].id)
        assert (await bot.app.db.guilds.get(guild)).language is None
        assert (await bot.app.db.members.get(member, guild)).language is None
        assert bot.app.models.loaded() == ["english"] and bot.app.models.loads == 0
        # a language that can load is taken
        fine = await fake.interaction("set my_language", {"language": "french"})
        assert "in french" in (await fine.wait_final())["content"]


async def test_language_changes_are_rate_limited_per_member(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model, env_for(tmp_path, tiny_model)) as run:
        fake = run.fake

        async def change(language: str, user: str = "alice") -> str:
            inter = await fake.interaction("set my_language", {"language": language}, user=user)
            return str((await inter.wait_final())["content"])

        for language in ("french", "german", "italian"):
            assert f"in {language}" in await change(language)
        assert "this server's language again" in await change("none")  # going back is free
        assert "please wait" in await change("french")
        assert "in french" in await change("french", user="bob")  # another member may
