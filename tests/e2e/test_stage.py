"""The bot on a stage: Discord puts whoever joins a stage in its audience, where nobody hears
them. A stage moderator (Mute Members there) may speak at once; anyone else asks to speak."""

from __future__ import annotations

from tests.conftest import RunningBot
from tests.e2e.test_speech import audio_packets
from tests.fakediscord import FakeDiscord
from tests.fakediscord.server import MUTE_MEMBERS

STAGE = FakeDiscord.STAGE_ID


async def say_on_stage(running: RunningBot) -> None:
    fake = running.fake
    await fake.set_voice_state("alice", STAGE)  # a speaker on the stage
    said = await (await fake.interaction("say", {"text": "Hello, stage."})).wait_final()
    assert said["content"] == f"Speaking in <#{STAGE}>.", said["content"]
    await fake.wait_for(lambda: fake.bot_voice_channel == STAGE, 10, "the bot on the stage")


async def test_as_a_stage_moderator_the_bot_speaks_on_the_stage(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    fake.allow_the_bot(STAGE, MUTE_MEMBERS)
    await fake.resend_guild()
    await say_on_stage(running_bot)
    await fake.wait_for(lambda: len(audio_packets(fake.udp.packets)) > 10, 30, "its speech")
    assert (fake.GUILD_ID, fake.bot.id) not in fake.suppressed
    assert fake.speak_requests == []


async def test_elsewhere_on_a_stage_the_bot_asks_to_speak(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    await say_on_stage(running_bot)
    await fake.wait_for(lambda: fake.speak_requests == [fake.GUILD_ID], 10, "a request to speak")
    await fake.wait_for(lambda: fake.udp.unheard > 10, 30, "speech nobody hears yet")
    assert (fake.GUILD_ID, fake.bot.id) in fake.suppressed  # until a stage moderator lets it
