"""Hostile option values for every slash command, through the fake Discord: every interaction
is answered, nothing unexpected is logged, and the bot goes on speaking afterwards."""

from __future__ import annotations

import logging
import random
from typing import Any

from discord import AppCommandOptionType, app_commands

from tests.conftest import RunningBot
from tests.e2e.test_speech import speaker_of
from tests.fakediscord import FakeDiscord

ADMIN = FakeDiscord.EVERYONE_PERMISSIONS | (1 << 5)
HOSTILE_TEXT = [
    "",
    " ",
    "\u200b\u200b",  # zero-width spaces only
    "@everyone @here <@1200000000000000002> <@&1> <#1>",
    "**__~~||spoiler||~~__**" * 20,
    "```" + "x" * 500 + "```",
    "\u202eevil right-to-left\u202c",
    "🙂" * 300,
    "a" * 5000,
    "\x00\x01\x7f control",
    "../../etc/passwd",
    "'; DROP TABLE voices; --",
    "%s %n {0} {name}",
    "https://example.com/" + "x" * 300,
    "<:custom:123456789012345678> <a:anim:1>",
    "NaN",
    "-1",
    "ｆｕｌｌｗｉｄｔｈ",
]
HOSTILE_INT = [0, -1, 1, 2**31, -(2**31), 2**53, -(2**53), 999_999_999]
HOSTILE_FLOAT = [0.0, -1.5, 1e308, -1e308]


def value_for(parameter: app_commands.Parameter, rng: random.Random, fake: FakeDiscord) -> Any:
    kind = parameter.type
    if kind is AppCommandOptionType.string:
        return rng.choice(HOSTILE_TEXT)
    if kind is AppCommandOptionType.integer:
        return rng.choice(HOSTILE_INT)
    if kind is AppCommandOptionType.number:
        return rng.choice(HOSTILE_FLOAT)
    if kind is AppCommandOptionType.boolean:
        return rng.random() < 0.5
    if kind is AppCommandOptionType.attachment:
        junk = bytes(rng.randrange(256) for _ in range(rng.choice([0, 10, 5000])))
        return fake.attachment(rng.choice(["a.wav", "b.mp3", "c"]), junk)
    if kind is AppCommandOptionType.channel and parameter.name == "channel":
        return rng.choice([FakeDiscord.TEXT_ID, "1"])
    return None  # roles and other kinds: left out (they are optional or the command is skipped)


async def test_hostile_options_for_every_command_are_all_answered(
    running_bot: RunningBot, caplog: Any
) -> None:
    caplog.set_level(logging.ERROR)
    fake, bot = running_bot.fake, running_bot.bot
    await fake.set_voice_state("alice", FakeDiscord.VOICE_ID)
    rng = random.Random(7)
    commands = [
        c for c in bot.tree.walk_commands() if isinstance(c, app_commands.Command)
    ]  # leaves only: groups have no callback
    sent = 0
    for round_ in range(3):
        for command in commands:
            options: dict[str, Any] = {}
            skip = False
            for parameter in command.parameters:
                value = value_for(parameter, rng, fake)
                if value is None:
                    skip = skip or parameter.required
                    continue
                if parameter.required or rng.random() < 0.7:
                    options[parameter.name] = value
            if skip:
                continue
            permissions = ADMIN if round_ % 2 else None
            inter = await fake.interaction(
                command.qualified_name,
                options,
                user=rng.choice(["alice", "bob"]),
                permissions=permissions,
            )
            reply = await inter.wait_final(60)
            sent += 1
            text = (reply.get("content") or "") + str(reply.get("embeds") or "")
            assert text, f"/{command.qualified_name} {options}: an empty answer"
            assert "Something went wrong" not in text, f"/{command.qualified_name} {options}"
    assert sent > 60
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text[-3000:]
    # and the bot still speaks
    await fake.set_voice_state("alice", FakeDiscord.VOICE_ID)
    speaker = speaker_of(running_bot)
    done = len(speaker.history)
    reply = await (await fake.interaction("say", {"text": "Still fine."})).wait_final(30)
    assert "in <#" in reply["content"], reply["content"]
    await fake.wait_for(  # as the fuzzed settings say it ("Stil fine." past repeated_characters 1)
        lambda: any("fine." in r.text for r in list(speaker.history)[done:]),
        60,
        "the last message",
    )
