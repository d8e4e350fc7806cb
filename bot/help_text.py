"""What `/help` shows and what the bot says when it joins a server: what it can do, how it is
set up in this server, and what to do next."""

from __future__ import annotations

import logging

import discord

from bot.db import Database
from bot.replies import Reply

log = logging.getLogger(__name__)

COMMANDS = [
    ("Speak", "`/say` a line in your voice channel · `/tts` sends it to you as a file · "
              "`/join` · `/leave` · `/skip` · `/stop` · `/clear`"),
    ("Your voice", "`/clone` makes a voice from a recording of **your own** voice · "
                   "`/voice list` · `/voice use` · `/voice preview` · `/voice delete` · "
                   "`/voice forget-me`"),
    ("You", "`/set nick` the name I call you · `/set autoread` whether I read your messages"),
    ("Server (Manage Server)", "`/setup` the channel I read · `/set …` reading rules · "
                               "`/settings` shows them all · `/dict` pronunciations"),
    ("Bot", "`/botstats` how fast and how busy I am"),
]  # fmt: skip

WELCOME = (
    "Hello! I read a text channel aloud in voice, in each member's own voice if they clone it. "
    "To start, someone with Manage Server runs `/setup` and picks the channel to read; then "
    "join a voice channel and write there, or use `/say`. `/help` shows everything."
)


async def help_reply(db: Database | None, guild: discord.Guild | None, can_clone: bool) -> Reply:
    fields = list(COMMANDS)
    if guild is None:
        fields.append(("Here", "In a DM only `/tts`, `/voice` and `/help` work; the rest is for "
                               "servers."))  # fmt: skip
        return Reply("", title="What I can do", fields=fields)
    settings = await db.guilds.get(guild.id) if db is not None else None
    read = settings.read_channel if settings is not None else None
    reading = f"I read <#{read}> aloud." if read else "No channel is read aloud yet."
    if not can_clone:
        cloning = "Voice cloning is not available on this bot (only built-in voices)."
    elif settings is not None and not settings.cloning:
        cloning = "Voice cloning is switched off in this server."
    else:
        cloning = "Members may clone their own voice (`/clone`)."
    fields.append(("In this server", f"{reading} {cloning}"))
    if read:
        next_step = f"Join a voice channel and write in <#{read}>, or use `/say`."
    else:
        next_step = ("Someone with Manage Server runs `/setup` and picks the channel to read. "
                     "Until then, `/say` works in any voice channel.")  # fmt: skip
    fields.append(("What next", next_step))
    return Reply("", title="What I can do", fields=fields)


async def welcome(guild: discord.Guild) -> bool:
    """Say hello in the server's system channel, if the bot may post there; never pings."""
    log.info("joined server %s (%s members)", guild.id, guild.member_count)
    channel = guild.system_channel
    if channel is None or not channel.permissions_for(guild.me).send_messages:
        return False
    try:
        await channel.send(WELCOME, allowed_mentions=discord.AllowedMentions.none())
    except discord.HTTPException as error:
        log.warning("could not post the welcome in server %s: %s", guild.id, error)
        return False
    return True
