"""What `/clone`, `/voice ...` and `/settings ...` do, apart from the slash-command glue.

Methods return a `Reply` (text plus an optional file or button) or raise `UserError`.
Members only ever see and change their own voices.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import re
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path

import discord

from bot.core.errors import UserError
from bot.i18n.translate import language_name, lines, plural, tr
from bot.services.blocks import BlockService
from bot.services.downloads import read_capped
from bot.services.replies import Reply
from bot.services.speech import SpeechService
from bot.services.speech_plan import SpeechPlan, SpeechPlanner
from bot.storage.database import Database, VoiceRecord, utc_now
from bot.storage.voice_metadata import with_owner
from bot.synthesis import clip as clips
from bot.synthesis.audio_files import encode_audio
from bot.synthesis.engine import BUILTIN_VOICES, TTSEngine, builtin_voices_for
from bot.synthesis.voice_library import VoiceLibrary

log = logging.getLogger(__name__)

Progress = Callable[[str], Awaitable[None]]  # a `Phrase`, said in the member's language
PREVIEW_TEXT = "Hello! This is how I sound with the voice {name}."
CLONING_OFF_FOR_MEMBERS = tr(
    "Voice cloning is not available on this bot yet: its operator needs the voice-cloning "
    "model weights (a Hugging Face token with the model licence accepted). Built-in voices "
    "work as usual: see /voice list."
)


class VoiceService:
    def __init__(
        self,
        library: VoiceLibrary,
        speech: SpeechService,
        engine: TTSEngine,
        ssl_context: ssl.SSLContext | None = None,
        *,
        planner: SpeechPlanner,
        blocks: BlockService,
    ) -> None:
        """`speech`: where previews are said, `planner` how; `blocks`: whom moderators
        stopped; `ssl_context`: the one Discord's files are fetched with (the default's if
        None)."""
        self.ssl_context = ssl_context
        self.library = library
        self.speech = speech
        self.planner = planner
        self.blocks = blocks
        self.engine = engine

    @property
    def db(self) -> Database:
        return self.library.records.db

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
        await self.blocks.check(member.id, guild.id)
        if not consent:
            raise UserError(
                tr(
                    "Nothing was saved. To clone a voice, set `consent` to True: it confirms that "
                    "the recording is your own voice and that you agree that this bot speaks with "
                    "it."
                )
            )
        if not (await self.db.guilds.get(guild.id)).cloning:
            raise UserError(tr("Voice cloning is switched off in this server by its admins."))
        if not self.engine.has_voice_cloning:
            raise UserError(CLONING_OFF_FOR_MEMBERS)
        clips.check_size(attachment.size, self.library.limits.clip)
        name = await self.library.records.check_can_create(member.id, name)
        async with self.library.admitted(member.id, guild.id):  # before the download
            await progress(tr("Downloading your clip…"))
            # capped as it is read: the size Discord declares is the uploader's to fake
            data = await read_capped(
                attachment, self.library.limits.clip.max_bytes, self.ssl_context
            )
            record = await self.library.create(
                member.id,
                name,
                data,
                consented_at=utc_now(),
                progress=progress,
                guild_id=guild.id,
            )
        ready = tr(
            "Your voice “{name}” is ready ({seconds:.0f} s of speech used). "
            "Use `/voice use {name}` to speak with it.",
            name=record.name,
            seconds=record.duration_s,
        )
        sample = PREVIEW_TEXT.format(name=record.name)
        channel = await self._speak_if_in_voice(member, sample, record)
        if channel is not None:
            return Reply(
                tr(
                    "{ready} Playing a short sample in {channel}.",
                    ready=ready,
                    channel=channel.mention,
                )
            )
        return Reply(
            tr("{ready} Press Preview to hear it.", ready=ready), preview_voice_id=record.id
        )

    async def _speak_if_in_voice(
        self, member: discord.Member | discord.User, text: str, voice: str | VoiceRecord
    ) -> discord.abc.GuildChannel | None:
        """Speak in `voice` in the member's voice channel when they are in one the bot can
        use, planned for the model of their language there."""
        try:
            channel = self.speech.speaking_channel(member)
            spoken = await self.speech.spoken(member.id, channel.guild.id)
            plan = await self.planner.plan(spoken, voice=voice)
            return await self.speech.speak_in_callers_channel(member, text, plan)
        except UserError:
            return None

    # ---- listing and choosing --------------------------------------------------------------
    async def list(self, member: discord.Member | discord.User, guild: discord.Guild) -> Reply:
        voices = await self.library.records.list_for(member.id)
        choice = await self.db.choices.for_user(member.id, guild.id)
        shown: list[str] = []
        if voices:
            shown.append(tr("**Your voices**"))
            for voice in voices:
                chosen = ""
                if choice is not None and choice.voice_id == voice.id:
                    chosen = tr(" (in use here)") if choice.guild_id else tr(" (in use everywhere)")
                shown.append(
                    tr(
                        "• {name}: {seconds:.0f} s of speech, made {day}{chosen}",
                        name=voice.name,
                        seconds=voice.duration_s,
                        day=voice.created_at[:10],
                        chosen=chosen,
                    )
                )
            shown.append(
                tr(
                    "({count} of {quota} allowed)",
                    count=len(voices),
                    quota=self.library.limits.quota,
                )
            )
        else:
            shown.append(tr("You have no voices of your own yet: make one with /clone."))
        if choice is not None and choice.builtin_name:
            shown.append(tr("You speak with the built-in voice {name}.", name=choice.builtin_name))
        language = await self.speech.language_of(member.id, guild.id)
        fitting, others = builtin_voices_for(language)
        named = language_name(language)
        if fitting:
            shown.append(
                tr(
                    "**Built-in voices in {language}**: {names}",
                    language=named,
                    names=", ".join(fitting),
                )
            )
        if others:
            shown.append(
                tr(
                    "Other built-in voices (they speak {language} with an accent): {names}",
                    language=named,
                    names=", ".join(others),
                )
            )
        return Reply(lines(*shown))

    async def use(
        self,
        member: discord.Member | discord.User,
        guild: discord.Guild,
        name: str,
        everywhere: bool,
    ) -> Reply:
        chosen = await self.library.use(member.id, name, None if everywhere else guild.id)
        if everywhere:
            return Reply(tr("You will now speak with “{name}” in every server.", name=chosen))
        return Reply(tr("You will now speak with “{name}” in this server.", name=chosen))

    async def names_for(
        self, user_id: int, current: str, builtin: bool
    ) -> builtins.list[str]:  # (`list` here is the method above)
        """Autocomplete: the member's own voices (and the built-in ones) matching `current`."""
        own = [v.name for v in await self.library.records.list_for(user_id)]
        names = own + (list(BUILTIN_VOICES) if builtin else [])
        needle = current.casefold().strip()
        return [n for n in names if needle in n.casefold()][:25]

    # ---- preview ---------------------------------------------------------------------------
    async def _voice_for_name(self, user_id: int, name: str) -> tuple[str, str | VoiceRecord]:
        """(display name, voice) of one of the member's voices or a built-in one."""
        own = await self.db.voices.get(user_id, name)
        if own is not None:
            return own.name, own
        builtin = " ".join(name.split()).lower()
        if builtin in BUILTIN_VOICES:
            return builtin, builtin
        raise UserError(
            tr(
                "There is no voice named “{name}” among yours or the built-in ones. See /voice "
                "list.",
                name=" ".join(name.split())[:40],
            )
        )

    async def preview(
        self,
        member: discord.Member | discord.User,
        name: str,
        text: str | None,
        guild_id: int | None = None,
    ) -> Reply:
        await self.blocks.check(member.id, guild_id)  # its text is said like /say's
        shown, voice = await self._voice_for_name(member.id, name)
        line = PREVIEW_TEXT.format(name=shown)
        guild = getattr(member, "guild", None)
        spoken = await self.speech.spoken(member.id, guild.id if guild else None)
        if guild is not None and spoken.server is not None:  # (a DM's preview is a file)
            self.speech.check_rate(guild.id, member.id, spoken.server.rate_limit)
        if text:  # the words /say would make of it: dictionary, mentions, links, max_length
            line = await self.speech.words(
                self.speech.check_text(text),
                guild,
                spoken,
                spoken.language,
                cloned=isinstance(voice, VoiceRecord),
            )
        channel = await self._speak_if_in_voice(member, line, voice)
        if channel is not None:
            return Reply(
                tr(
                    "Playing a preview of “{name}” in {channel}.",
                    name=shown,
                    channel=channel.mention,
                )
            )
        plan = await self.planner.plan(spoken, voice=voice)
        return await self._preview_file(member, guild_id, shown, plan, line)

    async def preview_button(
        self, member: discord.Member | discord.User, voice_id: int, guild_id: int | None
    ) -> Reply:
        await self.blocks.check(member.id, guild_id)  # as /voice preview
        record = await self.db.voices.get_by_id(voice_id)
        if record is None or record.owner_id != member.id:
            raise UserError(tr("This preview is for the voice's owner, and only while it exists."))
        plan = await self.planner.plan(await self.speech.spoken(member.id, guild_id), voice=record)
        line = PREVIEW_TEXT.format(name=record.name)
        return await self._preview_file(member, guild_id, record.name, plan, line)

    async def _preview_file(
        self,
        member: discord.Member | discord.User,
        guild_id: int | None,
        shown: str,
        plan: SpeechPlan,
        line: str,
    ) -> Reply:
        """A preview as a file: background work, attributed like any speech in a cloned voice."""
        line = self.planner.attributed(
            plan, member.name, line, "a preview file", (member.id, guild_id)
        )
        owner = (member.id, guild_id)
        samples = await self.speech.synthesize_file(line, plan, owner, fallback=False)
        data = await asyncio.to_thread(encode_audio, samples, ".ogg")
        return Reply(tr("Here is “{name}”.", name=shown), file=("preview.ogg", data))

    # ---- a member's own voice as a file ---------------------------------------------------
    async def export(
        self, member: discord.Member | discord.User, guild: discord.Guild, name: str
    ) -> Reply:
        """One of the member's own voices as its voice state file (`.safetensors`), for them
        alone (the reply is ephemeral): a voice is a small file they can carry. Never another
        member's, and never offered anywhere else (the speech service has no members' voices).
        Not where the server's admins switched cloning off: a clone carried out of there is
        one. The file says whose it is (their id, when they consented, "a cloned voice"), so
        that whoever holds it later can tell (`bot.storage.voice_metadata`)."""
        if not (await self.db.guilds.get(guild.id)).cloning:
            raise UserError(
                tr(
                    "Voice cloning is switched off in this server by its admins, so voices "
                    "cannot be exported here."
                )
            )
        own = await self.db.voices.get(member.id, name)
        if own is None:
            raise UserError(
                tr(
                    "You have no voice named “{name}”. See /voice list.",
                    name=" ".join(name.split())[:40],
                )
            )
        spec = await self.library.states.state_spec(own)
        data = await asyncio.to_thread(Path(spec).read_bytes)
        data = with_owner(data, own.owner_id, own.consented_at)
        log.info("voice %s exported by its owner %s", own.id, member.id)
        return Reply(
            tr(
                "Your voice “{name}” as a file: a Pocket TTS voice state, for you alone. "
                "Anyone holding it can speak with your voice: keep it private.",
                name=own.name,
            ),
            file=(f"{re.sub(r'[^A-Za-z0-9_-]+', '_', own.name)}.safetensors", data),
        )

    # ---- changing and deleting -------------------------------------------------------------
    async def rename(
        self, member: discord.Member | discord.User, name: str, new_name: str
    ) -> Reply:
        record = await self.library.records.rename(member.id, name, new_name)
        return Reply(tr("Renamed to “{name}”.", name=record.name))

    async def delete(self, member: discord.Member | discord.User, name: str) -> Reply:
        record = await self.library.delete(member.id, name)
        return Reply(tr("Deleted “{name}” and its recording.", name=record.name))

    async def ask_forget(self, member: discord.Member | discord.User) -> Reply:
        count = len(await self.library.records.list_for(member.id))
        return Reply(
            tr(
                "This deletes your {voices}, their recordings and all your voice choices, in "
                "every server. It cannot be undone. Are you sure?",
                voices=plural(count, "voice"),
            ),
            confirm_forget=member.id,
        )

    async def forget(self, clicker_id: int, owner_id: int) -> Reply:
        if clicker_id != owner_id:
            raise UserError(tr("Only the member who asked can confirm this."))
        count = await self.library.forget_user(owner_id)
        return Reply(
            tr("Done: deleted {voices} and all your voice choices.", voices=plural(count, "voice"))
        )
