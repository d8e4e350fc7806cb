"""What `/join`, `/leave`, `/skip`, `/stop` and `/clear` do, independent of the slash-command
glue, and the bot's own comings and goings in voice: leave when alone or idle (never the home
channel), drop the queue when kicked, forget a server it left.

Each command either returns the reply for the member or raises `UserError`."""

from __future__ import annotations

import logging

import discord

from bot.core.errors import UserError
from bot.i18n.translate import plural, tr
from bot.playback.connection import VoiceChannel, VoiceConnections, humans_in
from bot.playback.speakers import Speakers
from bot.services.blocks import BlockService
from bot.services.speech import SpeechService

log = logging.getLogger(__name__)


def moves_members_in(channel: VoiceChannel, member: discord.Member | discord.User) -> bool:
    """The member may move members in `channel` (the bot's voice channel): the permission
    there, overwrites applied, not in the channel a command was typed in (a temp-voice bot
    grants Move Members on a member's own channel, which must not reach the bot's)."""
    return isinstance(member, discord.Member) and channel.permissions_for(member).move_members


class VoiceControl:
    """The bot in a server's voice channel: who may control it, and when it leaves."""

    def __init__(
        self, speakers: Speakers, connections: VoiceConnections, blocks: BlockService
    ) -> None:
        self.speakers = speakers
        self.connections = connections
        self.blocks = blocks

    async def join(self, member: discord.Member | discord.User) -> str:
        channel = SpeechService.caller_channel(member)
        await self.blocks.check(member.id, channel.guild.id)
        await self.connections.ensure_connected(channel)
        return tr("Joined {channel}.", channel=channel.mention)

    async def check_control(
        self,
        guild: discord.Guild,
        member: discord.Member | discord.User,
        permissions: discord.Permissions,
    ) -> None:
        """/skip, /stop, /clear and /leave: for members in the bot's voice channel, and for
        members who may move members there or manage the server; never for a blocked member
        (a blocked troll in the channel would silence everyone). `permissions`: the
        invoker's in the channel the command was typed in: its Manage Server is the
        server's (not a channel permission), but its Move Members may be that channel's
        alone, so Move Members is read in the bot's channel."""
        await self.blocks.check(member.id, guild.id)
        voice_client = guild.voice_client
        channel = getattr(voice_client, "channel", None)
        if channel is None or permissions.manage_guild or moves_members_in(channel, member):
            return
        voice = getattr(member, "voice", None)
        if voice is None or voice.channel != channel:
            raise UserError(
                tr(
                    "Only members in {channel} (or with the Move Members permission) can do that.",
                    channel=channel.mention,
                )
            )

    async def leave(
        self,
        guild: discord.Guild,
        member: discord.Member | discord.User,
        permissions: discord.Permissions,
    ) -> str:
        if guild.voice_client is None:
            raise UserError(tr("I'm not in a voice channel."))
        await self.check_control(guild, member, permissions)
        if self.at_home(guild):  # it would be back at once: say why it stays
            raise UserError(
                tr(
                    "{channel} is my home channel here: I stay in it. Someone with Manage Server "
                    "can change that with `/config joining home_voice`.",
                    channel=f"<#{self.connections.home_of(guild.id)}>",
                )
            )
        await self.disconnect(guild)
        return tr("Left the voice channel.")

    async def skip(
        self,
        guild: discord.Guild,
        member: discord.Member | discord.User,
        permissions: discord.Permissions,
    ) -> str:
        await self.check_control(guild, member, permissions)
        speaker = self.speakers.get(guild.id)
        if speaker is None or not speaker.skip():
            raise UserError(tr("Nothing is being spoken right now."))
        return tr("Skipped.")

    async def clear(
        self,
        guild: discord.Guild,
        member: discord.Member | discord.User,
        permissions: discord.Permissions,
    ) -> str:
        await self.check_control(guild, member, permissions)
        speaker = self.speakers.get(guild.id)
        dropped = speaker.clear_waiting() if speaker is not None else 0
        if dropped == 0:
            raise UserError(tr("Nothing is waiting to be read."))
        return tr("Cleared {messages}.", messages=plural(dropped, "waiting message"))

    async def stop(
        self,
        guild: discord.Guild,
        member: discord.Member | discord.User,
        permissions: discord.Permissions,
    ) -> str:
        await self.check_control(guild, member, permissions)
        speaker = self.speakers.get(guild.id)
        dropped = speaker.clear() if speaker is not None else 0
        if dropped == 0:
            raise UserError(tr("Nothing is being spoken or queued."))
        return tr("Stopped and cleared {messages}.", messages=plural(dropped, "message"))

    async def disconnect(self, guild: discord.Guild) -> None:
        speaker = self.speakers.get(guild.id)
        if speaker is not None:
            speaker.clear()
        await self.connections.leave(guild)

    def at_home(self, guild: discord.Guild) -> bool:
        """The bot is in the server's home voice channel (which it never leaves idle)."""
        home = self.connections.home_of(guild.id)
        channel = getattr(guild.voice_client, "channel", None)
        return home is not None and getattr(channel, "id", None) == home

    async def leave_if_idle(self, guild: discord.Guild, timeout_s: int) -> bool:
        """Leave voice after `timeout_s` of quiet (0: never); never the home channel (away
        from it, the bot then goes back there)."""
        speaker = self.speakers.get(guild.id)
        if guild.voice_client is None or timeout_s <= 0 or self.at_home(guild):
            return False
        if speaker is not None and speaker.idle_seconds < timeout_s:
            return False
        log.info("leaving voice in guild %s after %d s of quiet", guild.id, timeout_s)
        await self.disconnect(guild)
        return True

    async def forget_guild(self, guild: discord.Guild) -> None:
        """The bot left a server: drop its speaker and queue, and its voice link."""
        await self.speakers.forget(guild.id)
        await self.connections.leave(guild)
        self.connections.forget(guild.id)

    async def on_channel_deleted(self, guild: discord.Guild, channel_id: int) -> None:
        voice_client = guild.voice_client
        if voice_client is not None and getattr(voice_client.channel, "id", None) == channel_id:
            await self.disconnect(guild)

    async def on_voice_state_change(
        self, guild: discord.Guild, member: discord.Member, now_in: VoiceChannel | None
    ) -> None:
        """Leave when no human is left in the bot's channel; drop the queue when kicked."""
        if member == guild.me and now_in is None:
            # kicked, or a reconnect (discord.py's, or a heal: each leaves and joins again):
            # drop the queue only if no link is left once that settles
            if await self.connections.on_own_voice_state(guild):
                speaker = self.speakers.get(guild.id)
                if speaker is not None:
                    speaker.clear()
            return
        voice_client = guild.voice_client
        if voice_client is None:
            return  # not in voice here (or a link being healed): nothing to leave
        channel = voice_client.channel
        if self.at_home(guild):
            return  # the home channel is kept, listeners or not
        # a voice client's channel is typed Connectable: a voice or stage channel here
        if channel is not None and not humans_in(channel):  # type: ignore[arg-type]
            log.info("leaving voice in guild %s: no human left", guild.id)
            await self.disconnect(guild)
