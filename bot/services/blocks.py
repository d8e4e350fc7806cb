"""What `/block`, `/unblock` and `/blocked` do, and the check every way of making the bot speak
for a member makes (`/say`, `/tts`, `/clone`, "Speak this message"; auto-reading asks
`is_blocked` and skips silently).

A blocked member is told once per block, privately, on their first try: whether they were
told is kept with the block in the store (`told_at`), so a restart or another process
sharing the store does not tell them again, and a new block after `/unblock` tells again.
Later tries get no words: the command's "thinking…" reply is withdrawn (`QuietRefusal`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import discord

from bot.core.errors import UserError
from bot.i18n.translate import tr
from bot.services.replies import QuietRefusal, Reply
from bot.storage.database import Database

MAX_REASON = 200  # characters of a block's reason
PAGE_SIZE = 10  # blocks shown per page of /blocked
MAX_PAGE = 1_000  # past it a page number is refused, not looked up

BLOCKED_NOTICE = tr("A moderator has stopped me speaking for you in this server.")


def require_moderator(permissions: discord.Permissions) -> None:
    """Manage Messages or Moderate Members, checked here too: Discord's default permissions
    can be changed by server admins."""
    if not (
        permissions.manage_messages or permissions.moderate_members or permissions.administrator
    ):
        raise UserError(
            tr("You need the Manage Messages or Moderate Members permission to block members.")
        )


def _reason(raw: str | None) -> str | None:
    reason = " ".join((raw or "").split())
    if len(reason) > MAX_REASON:
        raise UserError(tr("Please keep the reason to {most} characters.", most=MAX_REASON))
    return reason or None


def server_permissions(member: discord.Member | discord.User) -> discord.Permissions:
    """What a member may do across the server, from their roles. An interaction's own
    permissions are the channel's: Manage Messages granted in one channel must not block
    server-wide."""
    if isinstance(member, discord.Member):
        return member.guild_permissions
    return discord.Permissions.none()


def outranks(
    guild: discord.Guild,
    moderator: discord.Member | discord.User,
    member: discord.Member | discord.User,
) -> bool:
    """As Discord ranks moderators: the owner outranks everyone; others outrank a member whose
    highest role is below theirs (and never the owner)."""
    if moderator.id == guild.owner_id:
        return True
    if member.id == guild.owner_id:
        return False
    if not isinstance(member, discord.Member):
        return True  # not in the server any more: no rank to outrank
    if not isinstance(moderator, discord.Member):
        return False
    return member.top_role < moderator.top_role


def _check_rank(
    guild: discord.Guild,
    moderator: discord.Member | discord.User,
    member: discord.Member | discord.User,
) -> None:
    """As Discord ranks moderators: no blocking an administrator, nor anyone whose highest
    role is as high as the moderator's (the owner excepted)."""
    if not isinstance(member, discord.Member):
        return  # not in the server any more: no rank to outrank
    resolved = member.resolved_permissions
    if member.guild_permissions.administrator or (resolved is not None and resolved.administrator):
        raise UserError(tr("Administrators cannot be blocked."))
    if not outranks(guild, moderator, member):
        raise UserError(tr("You can only block members whose highest role is below yours."))


async def _member_or_none(guild: discord.Guild, user_id: int) -> discord.Member | None:
    """A member of the server (None: not in it any more). Without the members intent a member
    out of voice is not cached: asked of Discord; an answer that does not come refuses."""
    cached = guild.get_member(user_id)
    if cached is not None:
        return cached
    try:
        async with asyncio.timeout(10):
            return await guild.fetch_member(user_id)
    except discord.NotFound:
        return None
    except (discord.HTTPException, TimeoutError):
        raise UserError(
            tr("I could not check that block's moderator just now: please try again in a moment.")
        ) from None


async def _may_lift(
    guild: discord.Guild, moderator: discord.Member | discord.User, blocker_id: int
) -> bool:
    """A block is lifted (or taken over) by the moderator who made it, or by one who
    outranks them: never by a junior moderator over a senior's (or the owner's) block."""
    if blocker_id == moderator.id or moderator.id == guild.owner_id:
        return True
    if blocker_id == guild.owner_id:
        return False
    blocker = await _member_or_none(guild, blocker_id)
    return blocker is None or outranks(guild, moderator, blocker)


BLOCKED_BY_A_SENIOR = tr(
    "Only the moderator who blocked them, or one ranked above that moderator, can change "
    "that block."
)


class BlockService:
    def __init__(
        self,
        db: Database,
        on_block: Callable[[int, int], object] | None = None,
        on_unblock: Callable[[int, int], object] | None = None,
    ) -> None:
        """`on_block(server, member)`, called when a member is blocked: the bot drops what
        they have waiting to be said, and the planner notes it, so that what they asked for
        before and is still being prepared is not spoken (`services.speech.block_noted`).
        `on_unblock(server, member)`: the planner forgets it (`SpeechPlanner.noted_unblock`)."""
        self.db = db
        self.on_block = on_block
        self.on_unblock = on_unblock

    async def is_blocked(self, guild_id: int, user_id: int) -> bool:
        return await self.db.blocks.is_blocked(guild_id, user_id)

    async def check(self, user_id: int, guild_id: int | None, blocked: bool | None = None) -> None:
        """Refuse a member blocked in this server (none in direct messages): in words the
        first time for this block, without words after. `blocked`: as their member settings
        read it already (no query then)."""
        if guild_id is None:
            return
        if blocked is None:
            blocked = await self.db.blocks.is_blocked(guild_id, user_id)
        if not blocked:
            return
        if await self.db.blocks.mark_told(guild_id, user_id):
            raise UserError(BLOCKED_NOTICE)
        raise QuietRefusal(BLOCKED_NOTICE)

    # ---- moderators ------------------------------------------------------------------------
    async def block(
        self,
        permissions: discord.Permissions,
        guild: discord.Guild,
        moderator: discord.Member | discord.User,
        member: discord.Member | discord.User,
        reason: str | None,
    ) -> Reply:
        require_moderator(permissions)
        reason = _reason(reason)
        if member.id == moderator.id:
            raise UserError(
                tr(
                    "You cannot block yourself. To have your own messages left unread, use "
                    "/set autoread off."
                )
            )
        if guild.me is not None and member.id == guild.me.id:
            raise UserError(tr("I cannot block myself."))
        if member.id == guild.owner_id:
            raise UserError(tr("The server's owner cannot be blocked."))
        _check_rank(guild, moderator, member)
        blocker = await self.db.blocks.blocker(guild.id, member.id)
        if blocker is not None and not await _may_lift(guild, moderator, blocker):
            raise UserError(BLOCKED_BY_A_SENIOR)  # (a re-block would make it theirs to lift)
        added = await self.db.blocks.add(guild.id, member.id, moderator.id, reason)
        if not added:
            if reason is None:  # the reason given before is kept
                return Reply(tr("{member} was blocked already.", member=member.mention))
            return Reply(
                tr("{member} was blocked already; the reason is updated.", member=member.mention)
            )
        if self.on_block is not None:
            # what they have waiting, or is being prepared, is not spoken either
            self.on_block(guild.id, member.id)
        return Reply(
            tr(
                "{member} is blocked: I will not read their messages or speak for them in this "
                "server. /unblock undoes it.",
                member=member.mention,
            )
        )

    async def unblock(
        self,
        permissions: discord.Permissions,
        guild: discord.Guild,
        moderator: discord.Member | discord.User,
        member: discord.Member | discord.User,
    ) -> Reply:
        require_moderator(permissions)
        if member.id == moderator.id and member.id != guild.owner_id:
            raise UserError(tr("You cannot unblock yourself: ask another moderator."))
        if member.id != moderator.id and not outranks(guild, moderator, member):
            raise UserError(tr("You can only unblock members whose highest role is below yours."))
        blocker = await self.db.blocks.blocker(guild.id, member.id)
        if blocker is not None and not await _may_lift(guild, moderator, blocker):
            raise UserError(BLOCKED_BY_A_SENIOR)
        if not await self.db.blocks.remove(guild.id, member.id):
            raise UserError(tr("{member} is not blocked.", member=member.mention))
        if self.on_unblock is not None:
            self.on_unblock(guild.id, member.id)
        return Reply(tr("{member} is no longer blocked.", member=member.mention))

    async def listing(
        self, permissions: discord.Permissions, guild: discord.Guild, page: int = 1
    ) -> Reply:
        require_moderator(permissions)
        total = await self.db.blocks.count(guild.id)
        if total == 0:
            return Reply(tr("No one is blocked in this server."))
        pages = -(-total // PAGE_SIZE)
        if not 1 <= page <= min(pages, MAX_PAGE):
            raise UserError(
                tr("There are {pages} pages: choose one from 1 to {pages}.", pages=pages)
            )
        blocks = await self.db.blocks.page(guild.id, (page - 1) * PAGE_SIZE, PAGE_SIZE)
        fields = [
            (
                tr("{number}.", number=(page - 1) * PAGE_SIZE + i),
                tr(
                    "<@{member}> · by <@{moderator}> · {reason}",
                    member=b.user_id,
                    moderator=b.moderator_id,
                    reason=b.reason or tr("no reason given"),
                ),
            )
            for i, b in enumerate(blocks, 1)
        ]
        return Reply(
            tr("Page {page} of {pages}.", page=page, pages=pages),
            title=tr("Blocked members ({count})", count=total),
            fields=fields,
        )
