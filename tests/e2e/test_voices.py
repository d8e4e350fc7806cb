"""Voices end to end: /clone with an uploaded file, /voice ..., /settings, buttons."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import soundfile

from bot.storage.voice_metadata import owner_in, with_owner
from tests.audio_samples import audio_file, encode, speech_like
from tests.conftest import RunningBot, shown_settings
from tests.fakediscord import FakeDiscord
from tests.fakediscord.server import FakeInteraction

VOICE = FakeDiscord.VOICE_ID
MANAGE_GUILD = 1 << 5
CLIP = encode(speech_like(4.0), "wav")


def alice_id(fake: FakeDiscord) -> int:
    return int(fake.humans["alice"].id)


def voice_files(running: RunningBot, user: str = "alice") -> list[Path]:
    folder = running.bot.config.data_dir / "voices" / running.fake.humans[user].id
    return sorted(folder.iterdir()) if folder.exists() else []


async def voice_rows(running: RunningBot, user: str = "alice") -> list[str]:
    voices = await running.bot.app.voices.library.records.list_for(
        int(running.fake.humans[user].id)
    )
    return [v.name for v in voices]


async def clone(
    fake: FakeDiscord,
    name: str,
    data: bytes = CLIP,
    user: str = "alice",
    consent: bool = True,
    filename: str = "me.wav",
) -> FakeInteraction:
    clip = fake.attachment(filename, data)
    return await fake.interaction(
        "clone", {"name": name, "clip": clip, "consent": consent}, user=user
    )


def button(response: dict, prefix: str) -> str:
    ids = [c["custom_id"] for row in response.get("components", []) for c in row["components"]]
    return next(i for i in ids if i.startswith(prefix))


async def test_clone_use_say_delete(running_bot: RunningBot) -> None:
    fake, bot = running_bot.fake, running_bot.bot
    inter = await clone(
        fake, "Alice", filename="voice-message.ogg", data=encode(speech_like(5), "opus")
    )
    ready = await inter.wait_content("is ready")
    assert inter.responses[0]["flags"] & 64
    assert "Checking your clip…" in inter.contents
    assert any(c.startswith("Learning your voice from 5.") for c in inter.contents)
    assert ready["content"].startswith("Your voice “Alice” is ready (5 s of speech used).")
    assert await voice_rows(running_bot) == ["Alice"]
    assert [p.suffix for p in voice_files(running_bot)] == [".flac", ".safetensors"]

    preview = await fake.click(ready, button(ready, "pv:preview:"))
    answer = await preview.wait_content("Here is “Alice”")
    audio, rate = soundfile.read(io.BytesIO(answer["_files"]["preview.ogg"]))
    assert rate == 24_000 and len(audio) > 0

    used = await (await fake.interaction("voice use", {"name": "alice"})).wait_final()
    assert used["content"] == "You will now speak with “Alice” in this server."
    await fake.set_voice_state("alice", VOICE)
    await (await fake.interaction("say", {"text": "In my own voice."})).wait_final()
    speaker = bot.app.speakers.get(int(FakeDiscord.GUILD_ID))
    await fake.wait_for(lambda: speaker is not None and len(speaker.history) == 1, 20, "speech")
    state_path = next(p for p in voice_files(running_bot) if p.suffix == ".safetensors")
    assert speaker.history[0].voice == str(state_path)  # the engine got Alice's state
    assert speaker.history[0].error is None and speaker.history[0].frames_played > 0

    # the member's own voice as a file, shown to them alone: the state the bot speaks with
    exported = await fake.interaction("voice export", {"name": "alice"})
    answer = await exported.wait_content("as a file")
    assert exported.responses[0]["flags"] & 64  # ephemeral
    assert answer["content"].startswith("Your voice “Alice” as a file")
    given = answer["_files"]["Alice.safetensors"]
    owner = owner_in(given)  # with whose it is in its header (tests/e2e/test_voice_export.py)
    assert owner is not None and owner.owner_id == alice_id(fake)
    assert given == with_owner(state_path.read_bytes(), owner.owner_id, owner.consented_at)

    deleted = await (await fake.interaction("voice delete", {"name": "Alice"})).wait_final()
    assert deleted["content"] == "Deleted “Alice” and its recording."
    assert await voice_rows(running_bot) == [] and voice_files(running_bot) == []
    await (await fake.interaction("say", {"text": "Back to the default."})).wait_final()
    await fake.wait_for(lambda: len(speaker.history) == 2, 20, "speech")
    assert speaker.history[1].voice is None


async def test_clone_while_in_voice_speaks_a_sample(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    await fake.set_voice_state("alice", VOICE)
    ready = await (await clone(fake, "Mine")).wait_content("is ready")
    assert ready["content"].endswith(f"Playing a short sample in <#{VOICE}>.")
    assert not ready.get("components")
    speaker = running_bot.bot.app.speakers.get(int(FakeDiscord.GUILD_ID))
    await fake.wait_for(lambda: speaker is not None and len(speaker.history) == 1, 20, "sample")
    assert speaker.history[0].voice is not None and speaker.history[0].voice.endswith(
        ".safetensors"
    )
    assert speaker.history[0].text == "alice said: Hello! This is how I sound with the voice Mine."


async def test_bad_clone_requests_get_clear_answers_and_change_nothing(
    running_bot: RunningBot,
) -> None:
    fake, bot = running_bot.fake, running_bot.bot
    silence = encode(np.zeros(24_000 * 5, dtype=np.float32), "wav")
    # refused by its length, read from the header: silence does (speech made and encoded as
    # MP3 took 11 CPU-s)
    ten_minutes = audio_file(600.0, 8_000, 1)
    cases = [
        ("Text", b"just some text, not audio" * 50, "That is not an audio file I can read."),
        ("Cut", CLIP[: len(CLIP) // 2], "That audio file seems damaged or cut short."),
        ("Short", encode(speech_like(0.5), "wav"), "I heard only 0.5 s of speech"),
        ("Long", ten_minutes, "That recording is 10.0 minutes long"),
        ("Silent", silence, "I could not hear any speech in that clip"),
        ("", CLIP, "Please give the voice a name."),
        ("x" * 40, CLIP, "That name is 40 characters long; please keep it to 32."),
    ]
    for name, data, answer in cases:
        inter = await clone(fake, name, data)
        await inter.wait_content(answer)
        assert await voice_rows(running_bot) == [] and voice_files(running_bot) == [], name

    huge = fake.attachment("huge.wav", bytes(11 * 1024 * 1024))
    inter = await fake.interaction("clone", {"name": "Huge", "clip": huge, "consent": True})
    await inter.wait_content("That file is 11.0 MB; the limit is 10 MB.")
    assert huge.downloads == 0  # refused before downloading

    no_consent = fake.attachment("me.wav", CLIP)
    inter = await fake.interaction("clone", {"name": "Mine", "clip": no_consent, "consent": False})
    await inter.wait_content("Nothing was saved. To clone a voice, set `consent` to True")
    assert no_consent.downloads == 0

    for name in ("One", "Two", "Three"):
        await (await clone(fake, name)).wait_content("is ready")
    await (await clone(fake, "one")).wait_content("You already have 3 voices, the most allowed.")
    await (await fake.interaction("voice delete", {"name": "Three"})).wait_final()
    await (await clone(fake, "ONE")).wait_content("You already have a voice named “ONE”.")
    assert await voice_rows(running_bot) == ["One", "Two"]
    assert len(voice_files(running_bot)) == 4

    # cloning switched off: only admins may do it, and then it applies
    inter = await fake.interaction("config speech cloning", {"value": False}, user="bob")
    assert (await inter.wait_final())["content"] == (
        "You need the Manage Server permission to change this server's settings."
    )
    inter = await fake.interaction(
        "config speech cloning",
        {"value": False},
        permissions=fake.EVERYONE_PERMISSIONS | MANAGE_GUILD,
    )
    assert (await inter.wait_final())["content"] == "cloning is now off."
    await (await clone(fake, "Bobs", user="bob")).wait_content(
        "Voice cloning is switched off in this server by its admins."
    )
    assert await voice_rows(running_bot, "bob") == []

    # weights without voice cloning
    await bot.app.voices.db.guilds.set_cloning(int(FakeDiscord.GUILD_ID), True)
    bot.app.engine._can_clone = False
    try:
        await (await clone(fake, "Bobs", user="bob")).wait_content(
            "Voice cloning is not available on this bot yet"
        )
    finally:
        bot.app.engine._can_clone = True
    assert await voice_rows(running_bot, "bob") == []


async def test_members_cannot_touch_each_others_voices(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    ready = await (await clone(fake, "Secret")).wait_content("is ready")
    files_before = voice_files(running_bot)
    for command, options in [
        ("voice use", {"name": "Secret"}),
        ("voice preview", {"name": "Secret"}),
        ("voice rename", {"name": "Secret", "new_name": "Mine now"}),
        ("voice delete", {"name": "Secret"}),
        ("voice export", {"name": "Secret"}),
    ]:
        inter = await fake.interaction(command, options, user="bob")
        assert "no voice named “Secret”" in (await inter.wait_final())["content"], command
    completion = await fake.interaction("voice use", {"name": "Sec"}, user="bob", focused="name")
    choices = (await completion.wait_response())["choices"]
    assert all(c["name"] != "Secret" for c in choices)
    mine = await fake.interaction("voice use", {"name": "Sec"}, focused="name")
    assert [c["name"] for c in (await mine.wait_response())["choices"]] == ["Secret"]
    stolen = await fake.click(ready, button(ready, "pv:preview:"), user="bob")
    assert "for the voice's owner" in (await stolen.wait_final())["content"]
    assert await voice_rows(running_bot) == ["Secret"]
    assert voice_files(running_bot) == files_before


async def test_forget_me_deletes_everything_after_confirmation(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    await (await clone(fake, "One")).wait_content("is ready")
    await (await clone(fake, "Bobs", user="bob")).wait_content("is ready")
    await (await fake.interaction("voice use", {"name": "one", "everywhere": True})).wait_final()
    ask = await (await fake.interaction("voice forget-me")).wait_final()
    assert "deletes your 1 voice" in ask["content"]
    assert await voice_rows(running_bot) == ["One"]  # nothing before the confirmation
    refused = await fake.click(ask, button(ask, "pv:forget:"), user="bob")
    assert "Only the member who asked" in (await refused.wait_final())["content"]
    assert await voice_rows(running_bot) == ["One"]
    done = await fake.click(ask, button(ask, "pv:forget:"))
    assert (await done.wait_final())[
        "content"
    ] == "Done: deleted 1 voice and all your voice choices."
    assert await voice_rows(running_bot) == [] and voice_files(running_bot) == []
    choice = await running_bot.bot.app.voices.db.choices.for_user(alice_id(fake), None)
    assert choice is None
    assert await voice_rows(running_bot, "bob") == ["Bobs"]


async def test_list_rename_and_server_default_voice(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    await (await clone(fake, "Mine")).wait_content("is ready")
    renamed = await (
        await fake.interaction("voice rename", {"name": "mine", "new_name": "Me"})
    ).wait_final()
    assert renamed["content"] == "Renamed to “Me”."
    via_set = await fake.interaction("set voice", {"name": "alba", "everywhere": True})
    assert (await via_set.wait_final())[
        "content"
    ] == "You will now speak with “alba” in every server."
    await (await fake.interaction("voice use", {"name": "Me"})).wait_final()
    listed = (await (await fake.interaction("voice list")).wait_final())["content"]
    assert "• Me: 4 s of speech" in listed and "(in use here)" in listed
    # the built-in voices recorded in the server's language first, then the others
    built_in, others = listed.split("**Built-in voices in english**: ")[1].split("\n")
    assert "alba" in built_in.split(", ") and "estelle" not in built_in
    assert others.startswith("Other built-in voices (they speak english with an accent): ")
    assert "estelle" in others and "alba" not in others
    admin = fake.EVERYONE_PERMISSIONS | MANAGE_GUILD
    bad = await fake.interaction("config speech default_voice", {"value": "Me"}, permissions=admin)
    assert "is not a built-in voice" in (await bad.wait_final())["content"]
    good = await fake.interaction(
        "config speech default_voice", {"value": "Marius"}, permissions=admin
    )
    assert (await good.wait_final())["content"] == "default_voice is now marius."
    shown = await (await fake.interaction("settings")).wait_response(2)
    fields = shown_settings(shown)
    assert fields["default_voice"].startswith("marius · ")
    assert fields["cloning"].startswith("on · ")
