"""What a member's own settings in a server do (`/set my_language`, `my_rate`, `my_pitch`,
`nick`, `autoread`), apart from the command glue; and a reading name set for another member
by one with Manage Nicknames."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TypeVar

import discord

from bot.core.errors import UserError
from bot.i18n.translate import language_name, tr
from bot.services.blocks import BlockService, outranks
from bot.services.change_limits import ChangeLimit, wait_minutes
from bot.services.dictionary_commands import unkeepable
from bot.services.language_choice import LanguageChoice
from bot.services.replies import Reply, require_manage_nicknames
from bot.services.wording import names_in_use, said_as
from bot.storage.database import Database
from bot.storage.server_settings import parse_pitch, parse_rate, show_pitch, show_rate

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_NICK = 32
# Each reading name a member is given is new audio ("NAME said", "NAME joined") for the phrase
# cache, in every voice it is said in: at most this many per member and server.
NICK_CHANGES = 5
NICK_CHANGES_WINDOW_S = 600.0


class MemberSettings:
    def __init__(
        self,
        db: Database,
        language: LanguageChoice,
        *,
        blocks: BlockService,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`blocks`: a blocked member cannot choose the name they are read by."""
        self.db = db
        self.language = language
        self.blocks = blocks
        self.nick_changes = ChangeLimit(NICK_CHANGES, NICK_CHANGES_WINDOW_S, clock)

    async def set_language(
        self, member: discord.Member | discord.User, guild: discord.Guild, raw: str
    ) -> Reply:
        """A member's own language in this server ('none': the server's)."""
        if raw.strip().lower() in ("", "none", "reset"):
            await self.db.members.set_language(member.id, guild.id, None)
            return Reply(tr("I will speak your messages in this server's language again."))
        language = await self.language.choose(raw, ("member", member.id), member_of=guild.id)
        await self.db.members.set_language(member.id, guild.id, language)
        return Reply(
            tr(
                "I will speak your messages in {language} in this server.",
                language=language_name(language),
            )
        )

    async def set_rate(
        self, member: discord.Member | discord.User, guild: discord.Guild, raw: str
    ) -> Reply:
        """A member's own speaking rate in this server ('none': the server's)."""
        parse = partial(parse_rate, name="my_rate")
        rate = await _member_own(raw, parse, partial(self.db.members.set_rate, member.id, guild.id))
        if rate is None:
            return Reply(tr("Your messages are read at this server's speaking rate again."))
        return Reply(
            tr("Your messages are read at {rate} speed in this server.", rate=show_rate(rate))
        )

    async def set_pitch(
        self, member: discord.Member | discord.User, guild: discord.Guild, raw: str
    ) -> Reply:
        """A member's own pitch in this server, in semitones ('none': the server's)."""
        parse = partial(parse_pitch, name="my_pitch")
        store = partial(self.db.members.set_pitch, member.id, guild.id)
        pitch = await _member_own(raw, parse, store)
        if pitch is None:
            return Reply(tr("Your messages are read at this server's pitch again."))
        return Reply(
            tr(
                "Your messages are read at a pitch of {pitch} semitones in this server.",
                pitch=show_pitch(pitch),
            )
        )

    async def set_nick(
        self,
        invoker: discord.Member | discord.User,
        permissions: discord.Permissions,
        guild: discord.Guild,
        nick: str,
        member: discord.Member | None = None,
    ) -> Reply:
        """The name a member is read by here: their own, or with `member` another member's,
        for members with Manage Nicknames (checked here too, as server settings are). Never a
        name another member goes by; and whoever sets it, a cloned voice's speech is still
        named by its owner's username (bot/services/autoread.py, speech.py)."""
        target = member if member is not None else invoker
        own = target.id == invoker.id
        if not own:
            require_manage_nicknames(permissions)
            if not outranks(guild, invoker, target):
                raise UserError(tr("You can only name members whose highest role is below yours."))
        else:  # a name they choose is spoken (others' messages, join notices)
            await self.blocks.check(invoker.id, guild.id)
        nick = " ".join(nick.split())
        if nick.lower() in ("", "none", "reset"):
            await self.db.members.set_nick(target.id, guild.id, None)
            if own:
                return Reply(tr("I will call you by your server name again."))
            return Reply(
                tr("I will call {member} by their server name again.", member=target.mention)
            )
        await self._check_nick(guild, target, nick)
        self._take_nick_change(guild, target, own)  # (a reset costs no new name)
        await self.db.members.set_nick(target.id, guild.id, nick)
        if own:
            return Reply(tr("I will call you “{nick}” when reading your messages.", nick=nick))
        log.info(
            "user %s set the reading name of user %s in server %s", invoker.id, target.id, guild.id
        )
        return Reply(
            tr(
                "I will call {member} “{nick}” when reading their messages.",
                member=target.mention,
                nick=nick,
            )
        )

    async def _check_nick(
        self, guild: discord.Guild, target: discord.Member | discord.User, nick: str
    ) -> None:
        """A reading name that can be kept and said, and that no other member goes by."""
        if len(nick) > MAX_NICK:
            raise UserError(tr("Please keep the name to {most} characters.", most=MAX_NICK))
        if (character := unkeepable(nick)) is not None:
            raise UserError(tr("The name holds {character}: remove it.", character=character))
        if said_as(nick) in await names_in_use(self.db, guild, target.id):
            raise UserError(
                tr("“{nick}” is the name of another member here: please choose another.", nick=nick)
            )

    def _take_nick_change(
        self, guild: discord.Guild, target: discord.Member | discord.User, own: bool
    ) -> None:
        """Counts a change of `target`'s reading name; refused past NICK_CHANGES lately."""
        wait_s = self.nick_changes.take((guild.id, target.id))
        if not wait_s:
            return
        if own:
            raise UserError(
                tr(
                    "Your reading name was changed {count} times in the last few minutes: please "
                    "wait {minutes} min before changing it again.",
                    count=NICK_CHANGES,
                    minutes=wait_minutes(wait_s),
                )
            )
        raise UserError(
            tr(
                "The reading name of {member} was changed {count} times in the last few "
                "minutes: please wait {minutes} min before changing it again.",
                member=target.mention,
                count=NICK_CHANGES,
                minutes=wait_minutes(wait_s),
            )
        )

    async def set_autoread(
        self, member: discord.Member | discord.User, guild: discord.Guild, enabled: bool
    ) -> Reply:
        await self.db.members.set_autoread(member.id, guild.id, enabled)
        if enabled:
            return Reply(tr("Your messages are read aloud again in this server."))
        return Reply(tr("Your messages will not be read aloud in this server."))


async def _member_own(
    raw: str, parse: Callable[[str], T], store: Callable[[T | None], Awaitable[None]]
) -> T | None:
    """Store a member's own setting (`parse`d: a SettingError is theirs to fix), or forget it
    ('none', 'reset' or nothing: the server's again). What was stored."""
    value = None if raw.strip().lower() in ("", "none", "reset") else parse(raw)
    await store(value)
    return value
