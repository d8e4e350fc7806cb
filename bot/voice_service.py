"""What `/clone`, `/voice ...` and `/settings ...` do, apart from the slash-command glue.

Methods return a `Reply` (text plus an optional file or button) or raise `UserError`.
Members only ever see and change their own voices.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import discord

from bot import clip as clips
from bot.audio import encode_audio
from bot.db import Database, utc_now
from bot.engine import BUILTIN_VOICES, TTSEngine
from bot.replies import Reply, UserError, plural
from bot.speech import SpeechService
from bot.voices import VoiceLibrary

log = logging.getLogger(__name__)

Progress = Callable[[str], Awaitable[None]]
PREVIEW_TEXT = "Hello! This is how I sound with the voice {name}."
CLONING_OFF_FOR_MEMBERS = (
    "Voice cloning is not available on this bot yet: its operator needs the voice-cloning "
    "model weights (a Hugging Face token with the model licence accepted). Built-in voices "
    "work as usual: see /voice list."
)


class VoiceService:
    def __init__(self, library: VoiceLibrary, speech: SpeechService, engine: TTSEngine) -> None:
        self.library = library
        self.speech = speech
        self.engine = engine

    @property
    def db(self) -> Database:
        return self.library.db

    # ---- cloning ---------------------------------------------------------------------------
    async def clone(
        self,
        member: discord.Member | discord.User,
        guild: discord.Guild,
        name: str,
        attachment: discord.Attachment,
        consent: bool,
        progress: Progress,
    ) -> Reply:
        if not consent:
            raise UserError(
                "Nothing was saved. To clone a voice, set `consent` to True: it confirms that "
                "the recording is your own voice and that you agree that this bot speaks with it."
            )
        if not (await self.db.guilds.get(guild.id)).cloning:
            raise UserError("Voice cloning is switched off in this server by its admins.")
        if not self.engine.has_voice_cloning:
            raise UserError(CLONING_OFF_FOR_MEMBERS)
        clips.check_size(attachment.size, self.library.limits.clip)
        name = await self.library.check_can_create(member.id, name)
        await progress("Downloading your clip…")
        try:
            data = await attachment.read()
        except (discord.HTTPException, discord.NotFound) as error:
            log.warning("attachment download failed: %s", error)
            raise UserError("I could not download your file. Please try again.") from None
        record = await self.library.create(
            member.id, name, data, consented_at=utc_now(), progress=progress, guild_id=guild.id
        )
        ready = (
            f"Your voice “{record.name}” is ready ({record.duration_s:.0f} s of speech used). "
            f"Use `/voice use {record.name}` to speak with it."
        )
        spec = await self.library.state_spec(record)
        channel = await self._speak_if_in_voice(member, PREVIEW_TEXT.format(name=record.name), spec)
        if channel is not None:
            return Reply(f"{ready} Playing a short sample in {channel.mention}.")
        return Reply(f"{ready} Press Preview to hear it.", preview_voice_id=record.id)

    async def _speak_if_in_voice(
        self, member: discord.Member | discord.User, text: str, voice: str | None
    ) -> discord.abc.GuildChannel | None:
        """Speak in the member's voice channel when they are in one the bot can use."""
        try:
            return await self.speech.speak_in_callers_channel(member, text, voice)
        except UserError:
            return None

    # ---- listing and choosing --------------------------------------------------------------
    async def list(self, member: discord.Member | discord.User, guild: discord.Guild) -> Reply:
        voices = await self.library.list_for(member.id)
        choice = await self.db.choices.for_user(member.id, guild.id)
        lines = []
        if voices:
            lines.append("**Your voices**")
            for voice in voices:
                chosen = ""
                if choice is not None and choice.voice_id == voice.id:
                    chosen = " (in use here)" if choice.guild_id else " (in use everywhere)"
                lines.append(
                    f"• {voice.name}: {voice.duration_s:.0f} s of speech, "
                    f"made {voice.created_at[:10]}{chosen}"
                )
            lines.append(f"({len(voices)} of {self.library.limits.quota} allowed)")
        else:
            lines.append("You have no voices of your own yet: make one with /clone.")
        builtin = ", ".join(BUILTIN_VOICES)
        if choice is not None and choice.builtin_name:
            lines.append(f"You speak with the built-in voice {choice.builtin_name}.")
        lines.append(f"**Built-in voices**: {builtin}")
        return Reply("\n".join(lines))

    async def use(
        self, member: discord.Member | discord.User, guild: discord.Guild, name: str,
        everywhere: bool,
    ) -> Reply:  # fmt: skip
        chosen = await self.library.use(member.id, name, None if everywhere else guild.id)
        where = "in every server" if everywhere else "in this server"
        return Reply(f"You will now speak with “{chosen}” {where}.")

    async def names_for(self, user_id: int, current: str, builtin: bool) -> list[str]:
        """Autocomplete: the member's own voices (and the built-in ones) matching `current`."""
        own = [v.name for v in await self.library.list_for(user_id)]
        names = own + (list(BUILTIN_VOICES) if builtin else [])
        needle = current.casefold().strip()
        return [n for n in names if needle in n.casefold()][:25]

    # ---- preview ---------------------------------------------------------------------------
    async def _spec_for_name(self, user_id: int, name: str) -> tuple[str, str]:
        """(display name, engine spec) of one of the member's voices or a built-in one."""
        own = await self.db.voices.get(user_id, name)
        if own is not None:
            return own.name, await self.library.state_spec(own)
        builtin = " ".join(name.split()).lower()
        if builtin in BUILTIN_VOICES:
            return builtin, builtin
        raise UserError(
            f"There is no voice named “{' '.join(name.split())[:40]}” among yours or the "
            "built-in ones. See /voice list."
        )

    async def preview(
        self, member: discord.Member | discord.User, name: str, text: str | None,
        guild_id: int | None = None,
    ) -> Reply:  # fmt: skip
        shown, spec = await self._spec_for_name(member.id, name)
        line = self.speech.check_text(text) if text else PREVIEW_TEXT.format(name=shown)
        channel = await self._speak_if_in_voice(member, line, spec)
        if channel is not None:
            return Reply(f"Playing a preview of “{shown}” in {channel.mention}.")
        return await self._preview_file(member, guild_id, shown, spec, line)

    async def preview_button(
        self, member: discord.Member | discord.User, voice_id: int, guild_id: int | None
    ) -> Reply:
        record = await self.db.voices.get_by_id(voice_id)
        if record is None or record.owner_id != member.id:
            raise UserError("This preview is for the voice's owner, and only while it exists.")
        spec = await self.library.state_spec(record)
        line = PREVIEW_TEXT.format(name=record.name)
        return await self._preview_file(member, guild_id, record.name, spec, line)

    async def _preview_file(
        self, member: discord.Member | discord.User, guild_id: int | None, shown: str, spec: str,
        line: str,
    ) -> Reply:  # fmt: skip
        """A preview as a file: background work, attributed like any speech in a cloned voice."""
        line = await self.speech.attributed(member, guild_id, line, spec, "a preview file")
        owner = (member.id, guild_id)
        samples = await self.speech.synthesize_file(line, spec, owner, fallback=False)
        data = await asyncio.to_thread(encode_audio, samples, ".ogg")
        return Reply(f"Here is “{shown}”.", file=("preview.ogg", data))

    # ---- changing and deleting -------------------------------------------------------------
    async def rename(
        self, member: discord.Member | discord.User, name: str, new_name: str
    ) -> Reply:
        record = await self.library.rename(member.id, name, new_name)
        return Reply(f"Renamed to “{record.name}”.")

    async def delete(self, member: discord.Member | discord.User, name: str) -> Reply:
        record = await self.library.delete(member.id, name)
        return Reply(f"Deleted “{record.name}” and its recording.")

    async def ask_forget(self, member: discord.Member | discord.User) -> Reply:
        count = len(await self.library.list_for(member.id))
        return Reply(
            f"This deletes your {plural(count, 'voice')}, their recordings and "
            "all your voice choices, in every server. It cannot be undone. Are you sure?",
            confirm_forget=member.id,
        )

    async def forget(self, clicker_id: int, owner_id: int) -> Reply:
        if clicker_id != owner_id:
            raise UserError("Only the member who asked can confirm this.")
        count = await self.library.forget_user(owner_id)
        return Reply(f"Done: deleted {plural(count, 'voice')} and all your voice choices.")
