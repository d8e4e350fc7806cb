"""Who is read and who may make the bot speak, end to end through the fake Discord: a smoke
set of blocks and webhooks (issue 23, parts 2, 4 and 5). The rules case by case (roles,
@silent, stage audiences, ranks, what a block drops, the blocked list) are unit tests with real
discord.py objects: tests/services/test_autoread.py and test_blocks.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.playback import connection as connection_module
from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord
from tests.e2e.test_autoread import ADMIN, VOICE, outcome, setup_read_channel, speaker
from tests.e2e.test_voices import button, clone
from tests.fakediscord import FakeDiscord, FakeInteraction

STAGE = FakeDiscord.STAGE_ID
EVERYONE = FakeDiscord.EVERYONE_PERMISSIONS
MANAGE_MESSAGES = EVERYONE | (1 << 13)
MODERATE_MEMBERS = EVERYONE | (1 << 40)
EPHEMERAL = 1 << 6
SILENT = 1 << 12  # SUPPRESS_NOTIFICATIONS
NOTICE = "A moderator has stopped me speaking for you in this server."


async def final(inter: FakeInteraction) -> str:
    return (await inter.wait_final())["content"]


async def withdrawn(inter: FakeInteraction, fake: FakeDiscord) -> bool:
    """The bot deleted its (deferred, ephemeral) response without a word."""
    await fake.wait_for(
        lambda: any(r.get("_deleted") for r in inter.responses), 20, "the withdrawal"
    )
    return not any(r.get("content") for r in inter.responses)


async def spoken_texts(running: RunningBot, count: int) -> list[str]:
    await running.fake.wait_for(
        lambda: len(speaker(running).history) >= count, 20, f"{count} readings"
    )
    return [r.text for r in speaker(running).history]


async def block(
    fake: FakeDiscord, who: str, reason: str | None = None, permissions: int = MANAGE_MESSAGES
) -> str:
    options: dict[str, object] = {"member": fake.humans[who]}
    if reason is not None:
        options["reason"] = reason
    return await final(await fake.interaction("block", options, permissions=permissions))


async def unblock(fake: FakeDiscord, who: str) -> str:
    inter = await fake.interaction(
        "unblock", {"member": fake.humans[who]}, permissions=MANAGE_MESSAGES
    )
    return await final(inter)


async def test_a_blocked_member_is_not_read_and_told_once(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model) as running:
        fake = running.fake
        await setup_read_channel(fake)
        await fake.set_voice_state("alice", VOICE)
        await fake.set_voice_state("bob", VOICE)
        before = await fake.post("bob", "before the block")
        assert await outcome(running, before) == "read"
        # only moderators, checked by the bot too (Discord's defaults can be changed)
        refused = await final(
            await fake.interaction(
                "block", {"member": fake.humans["alice"]}, user="bob", permissions=EVERYONE
            )
        )
        assert "Manage Messages or Moderate Members" in refused
        # Manage Messages granted in this channel only: not a server-wide block
        in_channel = await final(
            await fake.interaction(
                "block", {"member": fake.humans["alice"]}, user="bob", permissions=MANAGE_MESSAGES
            )
        )
        assert "Manage Messages or Moderate Members" in in_channel
        too_long = await block(fake, "bob", reason="x" * 201)
        assert too_long == "Please keep the reason to 200 characters."
        assert "cannot block yourself" in await final(
            await fake.interaction(
                "block", {"member": fake.humans["alice"]}, user="alice", permissions=MANAGE_MESSAGES
            )
        )
        blocked = await block(fake, "bob", "spamming the channel", MODERATE_MEMBERS)
        assert blocked.startswith("<@1200000000000000002> is blocked")
        # never read: silently skipped (the decision log says why)
        after = await fake.post("bob", "after the block")
        assert await outcome(running, after) == "blocked by a moderator"
        assert await outcome(running, await fake.post("alice", "alice still is")) == "read"
        # told once, privately, on the first try; later tries get no words
        say = await fake.interaction("say", {"text": "hello"}, user="bob")
        assert await final(say) == NOTICE
        assert say.responses[0]["flags"] & EPHEMERAL
        again = await fake.interaction("say", {"text": "hello?"}, user="bob")
        assert await withdrawn(again, fake)
        tts = await fake.interaction("tts", {"text": "a file"}, user="bob")
        assert await withdrawn(tts, fake)
        # each way of speaking is refused: a new block tells again, once
        for name, options in (
            ("tts", {"text": "a file"}),
            (
                "clone",
                {"name": "Mine", "clip": fake.attachment("me.wav", b"RIFF"), "consent": True},
            ),
            ("voice preview", {"name": "alba", "text": "my words"}),
        ):
            assert await unblock(fake, "bob") == "<@1200000000000000002> is no longer blocked."
            await block(fake, "bob")
            first = await fake.interaction(name, options, user="bob")
            assert await final(first) == NOTICE, name
            later = await fake.interaction(name, options, user="bob")
            assert await withdrawn(later, fake), name
        await unblock(fake, "bob")
        await block(fake, "bob")
        menu = await fake.interaction("Speak this message", user="bob", target=before)
        assert await final(menu) == NOTICE
        # nor are their messages read on request
        theirs = await fake.interaction("Speak this message", user="alice", target=before)
        assert "stopped me reading this member's messages" in await final(theirs)
        texts = await spoken_texts(running, 2)
        assert texts == ["Bob said before the block", "Alice said alice still is"]
        listing = (await fake.interaction("blocked", permissions=MANAGE_MESSAGES)).wait_final()
        shown = await listing
        assert shown["embeds"][0]["title"] == "Blocked members (1)"
        assert "<@1200000000000000002>" in shown["embeds"][0]["fields"][0]["value"]
    # the block and that bob was told survive a restart
    async with bot_on_fake_discord(tmp_path, tiny_model) as running:
        fake = running.fake
        await fake.set_voice_state("bob", VOICE)
        assert await outcome(running, await fake.post("bob", "still me")) == (
            "blocked by a moderator"
        )
        after_restart = await fake.interaction("say", {"text": "hello"}, user="bob")
        assert await withdrawn(after_restart, fake)
        assert await unblock(fake, "bob") == "<@1200000000000000002> is no longer blocked."
        assert await outcome(running, await fake.post("bob", "free again")) == "read"
        nobody = await fake.interaction("blocked", permissions=MANAGE_MESSAGES)
        assert await final(nobody) == "No one is blocked in this server."


async def test_webhook_messages_are_read_under_the_webhooks_name(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    await setup_read_channel(fake)
    await fake.set_voice_state("alice", VOICE)
    # bot_ignore is on by default: webhooks and bots are not read
    hook = await fake.post_webhook("Bridge Bob", "from the other side")
    assert await outcome(running_bot, hook) == "from a bot"
    off = await fake.interaction("config reading bot_ignore", {"value": False}, permissions=ADMIN)
    assert await final(off) == "bot_ignore is now off."
    # a webhook is never in voice: it cannot bring the bot there
    assert await outcome(running_bot, await fake.post_webhook("Bridge Bob", "hi")) == (
        "not in voice"
    )
    assert await outcome(running_bot, await fake.post("alice", "hello")) == "read"
    # ... but once the bot is in voice, require_voice (on) does not keep it out
    bridged = await fake.post_webhook("Bridge Bob", "from the other side")
    assert await outcome(running_bot, bridged) == "read"
    texts = await spoken_texts(running_bot, 2)
    assert texts == ["Alice said hello", "Bridge Bob said from the other side"]
    # a webhook has no roles: with a required role it is not read
    role = await fake.add_role("Readers")
    await (
        await fake.interaction("config reading required_role", {"value": role}, permissions=ADMIN)
    ).wait_final()
    assert await outcome(running_bot, await fake.post_webhook("Bridge Bob", "again")) == (
        "missing the required role"
    )


async def test_each_name_a_webhook_posts_under_is_an_author_of_its_own(
    running_bot: RunningBot,
) -> None:
    """Tupperbox and bridges post many people through one webhook (one id): "NAME said" and
    the rate limit go by the name it posts under, not by the webhook."""
    fake = running_bot.fake
    await setup_read_channel(fake)
    await fake.set_voice_state("alice", VOICE)
    for setting, value in (("reading bot_ignore", False), ("limits rate_limit", 2)):
        await (
            await fake.interaction(f"config {setting}", {"value": value}, permissions=ADMIN)
        ).wait_final()
    assert await outcome(running_bot, await fake.post("alice", "hello")) == "read"
    carol = [await fake.post_webhook("Carol", text, hook="Tupperbox") for text in ("one", "two")]
    assert carol[0]["webhook_id"] == carol[1]["webhook_id"]
    for message in carol:
        assert await outcome(running_bot, message) == "read"
    third = await fake.post_webhook("Carol", "three", hook="Tupperbox")
    assert await outcome(running_bot, third) == "rate limited"  # Carol's own limit ...
    dave = await fake.post_webhook("Dave", "four", hook="Tupperbox")
    assert dave["webhook_id"] == carol[0]["webhook_id"]
    assert await outcome(running_bot, dave) == "read"  # ... not Dave's
    # a name a member here goes by is said as a webhook's (issue 33, item 12)
    posing = await fake.post_webhook("alice", "five", hook="Tupperbox")
    assert await outcome(running_bot, posing) == "read"
    texts = await spoken_texts(running_bot, 5)
    # Carol's second message goes without her name again; Dave's is never taken for hers
    assert texts == [
        "Alice said hello",
        "Carol said one",
        "two",
        "Dave said four",
        "a webhook named alice said five",
    ]


def joins(fake: FakeDiscord) -> int:
    """Voice channel joins the bot asked the gateway for."""
    return sum(1 for p in fake.gateway_log if p["op"] == 4 and p["d"]["channel_id"])


async def test_what_waits_for_the_voice_link_is_not_said_after_a_block(
    tmp_path: Path, tiny_model: TinyModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message or a /say that passed the block check, then waited for the bot to join,
    is not said when a moderator blocks its member meanwhile."""
    monkeypatch.setattr(connection_module, "CONNECT_ATTEMPT_S", 2.0)
    async with bot_on_fake_discord(tmp_path, tiny_model) as running:
        fake = running.fake
        await setup_read_channel(fake)
        await fake.set_voice_state("bob", VOICE)
        fake.unanswered_voice_joins = 1  # the first join hangs: the message waits for it
        message = await fake.post("bob", "said before the block")
        await fake.wait_for(lambda: joins(fake) == 1, 10, "the join")
        await block(fake, "bob")
        assert await outcome(running, message, 30) == "blocked by a moderator"
        assert fake.bot_voice_channel == VOICE  # (it did join, on its second try)

        await unblock(fake, "bob")
        await final(await fake.interaction("leave", user="bob"))
        await fake.wait_for(lambda: fake.bot_voice_channel is None, 10, "the bot to leave")
        fake.unanswered_voice_joins = 1
        say = await fake.interaction("say", {"text": "said before the block"}, user="bob")
        await fake.wait_for(lambda: joins(fake) == 3, 10, "the join")
        await block(fake, "bob")
        assert await final(say) == NOTICE
        assert say.responses[0]["flags"] & EPHEMERAL
        await fake.wait_for(lambda: fake.bot_voice_channel == VOICE, 30, "the join")
        found = running.bot.app.speakers.get(int(FakeDiscord.GUILD_ID))
        assert found is None or not found.history  # nothing was said


async def test_a_blocked_member_chooses_no_name_to_be_spoken(running_bot: RunningBot) -> None:
    """Their /set nick is refused, and the one they set before is not said in others'
    messages (mentions, replies): their server name is."""
    fake = running_bot.fake
    await setup_read_channel(fake)
    await fake.set_voice_state("alice", VOICE)
    nick = await fake.interaction("set nick", {"name": "Mallory"}, user="bob")
    assert await final(nick) == "I will call you “Mallory” when reading your messages."
    await block(fake, "bob")
    again = await fake.interaction("set nick", {"name": "Your Admin"}, user="bob")
    assert await final(again) == NOTICE
    assert again.responses[0]["flags"] & EPHEMERAL
    mention = await fake.post("alice", "hello <@1200000000000000002>", mentions=("bob",))
    assert await outcome(running_bot, mention) == "read"
    assert await spoken_texts(running_bot, 1) == ["Alice said hello Bob"]


async def test_a_blocked_member_cannot_press_preview(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    ready = await (await clone(fake, "Mine", user="bob")).wait_content("Press Preview")
    await block(fake, "bob")
    pressed = await fake.click(ready, button(ready, "pv:preview:"), user="bob")
    assert await final(pressed) == NOTICE
    assert not any(r.get("_files") for r in pressed.responses)
