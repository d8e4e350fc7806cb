"""What `/help` shows and what the bot says when it joins a server: what it can do, how it is
set up in this server, and what to do next."""

from __future__ import annotations

import logging

import discord

from bot.i18n.translate import Phrase, localize, tr
from bot.services.replies import Reply
from bot.services.settings_commands import read_channels_line
from bot.storage.database import Database, ReadChannel
from bot.storage.server_settings import ServerSettings

log = logging.getLogger(__name__)

COMMANDS = [
    (
        tr("Speak"),
        tr(
            "`/say` a line in your voice channel · `/tts` sends it to you as a file · "
            "`/join` · `/leave` · `/skip` · `/stop` · `/clear`"
        ),
    ),
    (
        tr("Your voice"),
        tr(
            "`/clone` makes a voice from a recording of **your own** voice · "
            "`/voice list` · `/voice use` · `/voice preview` · `/voice delete` · "
            "`/voice forget-me`"
        ),
    ),
    (
        tr("You"),
        tr(
            "`/set nick` the name I call you · `/set autoread` whether I read your "
            "messages · `/set my_language` the language I read them in · "
            "`/set my_rate` how fast · `/set my_pitch` how high · `/dictionary list` "
            "how words are said here"
        ),
    ),
    (
        tr("Server (Manage Server)"),
        tr(
            "`/setup add` a channel I read (up to 5, each with its "
            "voice channel if you like) · `/setup remove` · "
            "`/config …` reading rules, `/config joining home_voice` "
            "a voice channel I stay in · `/settings` shows them all · "
            "`/dict` how words are said · `/dict sound` a sound in "
            "place of a word"
        ),
    ),
    (
        tr("Moderators"),
        tr("`/block` a member I should not read or speak for · `/unblock` · `/blocked` lists them"),
    ),
    (tr("Bot"), tr("`/botstats` how fast and how busy I am")),
]

# The attribution Kyutai's weights ask for (CC BY 4.0), and our own licence: `/help` ends with
# it, in a DM too (NOTICE.md).
ABOUT = (
    tr("About"),
    tr(
        "I speak with [Kyutai's Pocket TTS](https://huggingface.co/kyutai/pocket-tts): model "
        "weights © Kyutai, [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/). "
        "PocketVoice is free software, [GPL-3.0-or-later](https://www.gnu.org/licenses/gpl-3.0.html)."
    ),
)

WELCOME = tr(
    "Hello! I read a text channel aloud in voice, in each member's own voice if they clone it. "
    "To start, someone with Manage Server runs `/setup add` and picks a channel to read; then "
    "join a voice channel and write there, or use `/say`. `/help` shows everything."
)


async def help_reply(db: Database | None, guild: discord.Guild | None, can_clone: bool) -> Reply:
    fields = list(COMMANDS)
    if guild is None:
        fields.append(
            (
                tr("Here"),
                tr("In a DM only `/tts`, `/voice` and `/help` work; the rest is for servers."),
            )
        )
        return Reply("", title=tr("What I can do"), fields=[*fields, ABOUT])
    settings = await db.guilds.get(guild.id) if db is not None else None
    reads = await db.read_channels.list(guild.id) if db is not None else []
    channel = read_channels_line(reads)
    reading = _reading_here(guild, settings, reads, channel)
    if not can_clone:
        cloning = tr("Voice cloning is not available on this bot (only built-in voices).")
    elif settings is not None and not settings.cloning:
        cloning = tr("Voice cloning is switched off in this server.")
    else:
        cloning = tr("Members may clone their own voice (`/clone`).")
    fields.append(
        (tr("In this server"), tr("{reading} {cloning}", reading=reading, cloning=cloning))
    )
    if reads:
        next_step = tr(
            "Join a voice channel and write in {channel}, or use `/say`.", channel=channel
        )
    else:
        next_step = tr(
            "Someone with Manage Server runs `/setup add` and picks a channel to "
            "read. Until then, `/say` works in any voice channel."
        )
    fields.append((tr("What next"), next_step))
    return Reply("", title=tr("What I can do"), fields=[*fields, ABOUT])


def _reading_here(
    guild: discord.Guild,
    settings: ServerSettings | None,
    reads: list[ReadChannel],
    channel: Phrase,
) -> Phrase:
    """What the bot reads aloud in this server: its channels, forums, threads, polls, the
    language rule and the home channel."""
    if not reads:
        reading = tr("No channel is read aloud yet.")
    else:
        reading = tr("I read {channel} aloud.", channel=channel)
    forums = [r for r in reads if isinstance(guild.get_channel(r.channel_id), discord.ForumChannel)]
    if forums and len(forums) == len(reads):
        reading = tr("{reading} Its posts are read, each title first.", reading=reading)
    elif forums:
        reading = tr("{reading} A forum's posts are read, each title first.", reading=reading)
    if reads and settings is not None and settings.read_threads and len(forums) < len(reads):
        reading = (
            tr("{reading} Threads are read too.", reading=reading)
            if len(reads) > 1
            else (tr("{reading} Its threads are read too.", reading=reading))
        )
    if reads:
        reading = tr(
            "{reading} Polls are read with their options, and their results while I am in voice.",
            reading=reading,
        )
    if reads and settings is not None and settings.detect_language:
        reading = tr(
            "{reading} Each message is read in the language it is written in (of those "
            "I speak), unless its author chose theirs with `/set my_language`.",
            reading=reading,
        )
    home = settings.home_voice if settings is not None else None
    if home is not None:
        reading = tr(
            "{reading} I stay in {home}, where webhooks' messages are read too.",
            reading=reading,
            home=f"<#{home}>",
        )
    return reading


async def welcome(guild: discord.Guild) -> bool:
    """Say hello in the server's system channel, if the bot may post there; never pings."""
    log.info("joined server %s (%s members)", guild.id, guild.member_count)
    channel = guild.system_channel
    if channel is None or not channel.permissions_for(guild.me).send_messages:
        return False
    try:
        welcome_text = localize(WELCOME, guild.preferred_locale)
        await channel.send(welcome_text, allowed_mentions=discord.AllowedMentions.none())
    except discord.HTTPException as error:
        log.warning("could not post the welcome in server %s: %s", guild.id, error)
        return False
    return True
