"""/block, /unblock and /blocked (`bot/services/blocks.py`): who may block whom, as Discord ranks
moderators, with the moderator and the member as discord.py resolves a slash command's user and
its user option (tests/e2e/test_reading_rules.py runs them end to end)."""

from __future__ import annotations

from collections.abc import Awaitable

import discord
import pytest

from bot.core.errors import UserError
from bot.services.blocks import (
    BLOCKED_NOTICE,
    PAGE_SIZE,
    _check_rank,
    _reason,
    require_moderator,
    server_permissions,
)
from bot.services.replies import QuietRefusal
from tests.services.discord_objects import (
    ADMINISTRATOR,
    EVERYONE,
    MANAGE_GUILD,
    MANAGE_MESSAGES,
    MODERATE_MEMBERS,
    TEXT_ID,
    VOICE_ID,
    Person,
    Server,
)
from tests.services.wiring import Bot

BELOW = "You can only block members whose highest role is below yours."
ADMINS = "Administrators cannot be blocked."
MANAGE_NICKNAMES = discord.Permissions(manage_nicknames=True).value
# name: (position, permissions); "admins" ranks low, but its permission outranks every rank
ROLES = {"mods": (3, 0), "helpers": (2, 0), "juniors": (1, 0), "admins": (1, ADMINISTRATOR)}


def _people(server: Server, moderator: tuple[str, ...], member: tuple[str, ...]) -> None:
    roles = {
        key: server.role(key.title(), position=p, permissions=v) for key, (p, v) in ROLES.items()
    }
    server.add("bob", roles=tuple(roles[r] for r in moderator))
    server.add("carol", roles=tuple(roles[r] for r in member))
    server.start()


def _block(
    server: Server,
    by: str,
    whom: Person,
    *,
    permissions: int = MANAGE_MESSAGES,
    their_permissions: int = EVERYONE,
) -> tuple[discord.Member, discord.Permissions, discord.Member | discord.User]:
    """The moderator, their permissions and the member, as /block's callback gets them."""
    interaction, (member,) = server.slash_command(
        by, "block", users=(whom,), permissions=permissions, their_permissions=their_permissions
    )
    assert isinstance(interaction.user, discord.Member)
    return interaction.user, interaction.permissions, member


def _refusal(call: object) -> str | None:
    try:
        call()  # type: ignore[operator]
    except UserError as error:
        return error.message
    return None


RANKS = {
    "below the moderator": (("mods",), ("helpers",), None),
    "no role: below anyone with one": (("juniors",), (), None),
    "the same top role": (("mods",), ("mods",), BELOW),
    "above the moderator": (("helpers",), ("mods",), BELOW),
    "the member's highest role counts": (("helpers",), ("juniors", "mods"), BELOW),
    "the moderator's highest role counts": (("juniors", "mods"), ("helpers",), None),
    "neither has a role": ((), (), BELOW),
    "an administrator's role, however low": (("mods",), ("admins",), ADMINS),
    "an administrator above the moderator": (("juniors",), ("admins", "mods"), ADMINS),
}


@pytest.mark.parametrize(("moderator", "member", "refused"), RANKS.values(), ids=RANKS.keys())
async def test_moderators_block_only_below_their_rank(
    server: Server, moderator: tuple[str, ...], member: tuple[str, ...], refused: str | None
) -> None:
    _people(server, moderator, member)
    mod, _, target = _block(server, "bob", server["carol"])
    assert isinstance(target, discord.Member)
    assert server.guild is not None
    assert _refusal(lambda: _check_rank(server.guild, mod, target)) == refused


OWNER = {
    "above every role": (("mods",), EVERYONE, None),
    "not above an administrator's role": (("admins",), EVERYONE, ADMINS),
    "not above the administrator permission": ((), ADMINISTRATOR, ADMINS),
}


@pytest.mark.parametrize(("member", "permissions", "refused"), OWNER.values(), ids=OWNER.keys())
async def test_the_owner_outranks_everyone_but_administrators(
    server: Server, member: tuple[str, ...], permissions: int, refused: str | None
) -> None:
    _people(server, (), member)
    owner, _, target = _block(server, "alice", server["carol"], their_permissions=permissions)
    assert server.guild is not None
    assert _refusal(lambda: _check_rank(server.guild, owner, target)) == refused


async def test_administrator_by_the_permissions_discord_resolved(server: Server) -> None:
    """No administrator role, but Discord's `permissions` of the option's member say so."""
    _people(server, ("mods",), ())
    mod, _, target = _block(server, "bob", server["carol"], their_permissions=ADMINISTRATOR)
    assert isinstance(target, discord.Member) and target.resolved_permissions is not None
    assert server.guild is not None
    assert _refusal(lambda: _check_rank(server.guild, mod, target)) == ADMINS


async def test_a_member_who_left_has_no_rank(server: Server) -> None:
    _people(server, ("juniors",), ("mods",))
    server.leave_server("carol")
    mod, _, target = _block(server, "bob", server["carol"])
    assert type(target) is discord.User  # no member in the option's resolved data
    assert server.guild is not None
    assert _refusal(lambda: _check_rank(server.guild, mod, target)) is None


PERMISSIONS = {
    "everyone's": (EVERYONE, False),
    "Manage Server only": (EVERYONE | MANAGE_GUILD, False),
    "Manage Messages": (EVERYONE | MANAGE_MESSAGES, True),
    "Moderate Members": (EVERYONE | MODERATE_MEMBERS, True),
    "Administrator": (ADMINISTRATOR, True),
}


@pytest.mark.parametrize(("value", "allowed"), PERMISSIONS.values(), ids=PERMISSIONS.keys())
def test_who_is_a_moderator(value: int, allowed: bool) -> None:
    refused = _refusal(lambda: require_moderator(discord.Permissions(value)))
    assert refused == (
        None
        if allowed
        else "You need the Manage Messages or Moderate Members permission to block members."
    )


@pytest.mark.parametrize(
    ("raw", "kept"),
    [(None, None), ("   ", None), ("  spamming\n the  channel ", "spamming the channel")],
)
def test_a_reason_is_kept_on_one_line(raw: str | None, kept: str | None) -> None:
    assert _reason(raw) == kept


def test_a_reason_too_long_is_refused() -> None:
    assert _refusal(lambda: _reason("x" * 201)) == "Please keep the reason to 200 characters."


WHO = {
    "themselves": (
        "bob",
        "You cannot block yourself. To have your own messages left unread, use /set autoread off.",
    ),
    "the bot": ("the bot", "I cannot block myself."),
    "the owner": ("alice", "The server's owner cannot be blocked."),
    "an administrator": ("erin", ADMINS),
    "a moderator of the same rank": ("dave", BELOW),
}


@pytest.mark.parametrize(("whom", "refused"), WHO.values(), ids=WHO.keys())
async def test_who_cannot_be_blocked(bot: Bot, server: Server, whom: str, refused: str) -> None:
    mods = server.role("Mods", position=3)
    admins = server.role("Admins", position=1, permissions=ADMINISTRATOR)
    server.add("bob", roles=(mods,))
    server.add("dave", roles=(mods,))
    server.add("erin", roles=(admins,))
    guild = server.start()
    target = server.bot if whom == "the bot" else server[whom]
    moderator, permissions, member = _block(server, "bob", target)
    with pytest.raises(UserError) as error:
        await bot.blocks.block(permissions, guild, moderator, member, None)
    assert error.value.message == refused
    assert not await bot.blocks.is_blocked(guild.id, int(target.id))


async def test_a_block_and_its_reason(bot: Bot, server: Server) -> None:
    server.add("bob")
    guild = server.start()
    moderator, permissions, member = _block(server, "alice", server["bob"])
    replies = [
        (await bot.blocks.block(permissions, guild, moderator, member, reason)).content
        for reason in ("spamming", None, "flooding")
    ]
    mention = f"<@{server['bob'].id}>"
    assert replies == [
        f"{mention} is blocked: I will not read their messages or speak for them in this "
        "server. /unblock undoes it.",
        f"{mention} was blocked already.",
        f"{mention} was blocked already; the reason is updated.",
    ]
    listing = await bot.blocks.listing(permissions, guild)
    assert listing.title == "Blocked members (1)"
    assert listing.fields == [("1.", f"{mention} · by <@{server['alice'].id}> · flooding")]


async def test_a_block_drops_what_the_member_has_waiting(bot: Bot, server: Server) -> None:
    server.add("bob")
    server.in_voice("alice", VOICE_ID)
    server.in_voice("bob", VOICE_ID)
    guild = server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID))
    for who, text in (("bob", "one"), ("alice", "two"), ("bob", "three")):
        assert await bot.autoread.handle(server.post(who, text)) == "read"
    epoch = bot.planner.block_epoch
    moderator, permissions, member = _block(server, "alice", server["bob"])
    await bot.blocks.block(permissions, guild, moderator, member, None)
    assert bot.planner.blocked_since(guild.id, member.id, epoch)
    assert not bot.planner.blocked_since(guild.id, moderator.id, epoch)
    assert not bot.planner.blocked_since(guild.id, member.id, bot.planner.block_epoch)
    assert bot.speaker.play() == ["Alice said two"]


@pytest.mark.parametrize("unblocked", [False, True])
async def test_a_block_while_say_connects_drops_it(
    bot: Bot, server: Server, monkeypatch: pytest.MonkeyPatch, unblocked: bool
) -> None:
    """A /say that passed the block check, then waited for the bot to join, is not said when
    its member is blocked meanwhile (the planner's `blocked_since`); unblocked again before
    the join, it is."""
    server.add("bob")
    server.in_voice("bob", VOICE_ID)
    guild = server.start()
    bob = guild.get_member(int(server["bob"].id))
    assert bob is not None
    connect = bot.connections.ensure_connected

    async def blocked_while_connecting(
        channel: discord.VoiceChannel | discord.StageChannel,
    ) -> discord.VoiceProtocol:
        moderator, permissions, member = _block(server, "alice", server["bob"])
        await bot.blocks.block(permissions, guild, moderator, member, None)
        if unblocked:
            await bot.blocks.unblock(permissions, guild, moderator, member)
        return await connect(channel)

    monkeypatch.setattr(bot.connections, "ensure_connected", blocked_while_connecting)
    if unblocked:
        assert await bot.speech.say(bob, "hello") == f"Speaking in <#{VOICE_ID}>."
        assert bot.speaker.play() == ["hello"]
    else:
        assert await _refused(bot.speech.say(bob, "hello")) == BLOCKED_NOTICE
        assert bot.speaker.play() == []


async def test_a_blocked_member_is_told_once(bot: Bot, server: Server) -> None:
    bob = server.add("bob")
    guild = server.start()
    await bot.db.blocks.add(guild.id, int(bob.id), int(server.owner.id), None)
    with pytest.raises(UserError) as first:
        await bot.blocks.check(int(bob.id), guild.id)
    assert type(first.value) is UserError and first.value.message == BLOCKED_NOTICE
    for _ in range(2):
        with pytest.raises(QuietRefusal):
            await bot.blocks.check(int(bob.id), guild.id)
    await bot.blocks.check(int(bob.id), None)  # no block in direct messages


UNBLOCKS = {
    "another moderator unblocks": ("alice", "bob", True, "<@{bob}> is no longer blocked."),
    "not blocked": ("alice", "carol", False, "<@{carol}> is not blocked."),
    "nobody unblocks themselves": (
        "bob",
        "bob",
        True,
        "You cannot unblock yourself: ask another moderator.",
    ),
}


@pytest.mark.parametrize(
    ("by", "whom", "blocked", "answer"), UNBLOCKS.values(), ids=UNBLOCKS.keys()
)
async def test_unblock(
    bot: Bot, server: Server, by: str, whom: str, blocked: bool, answer: str
) -> None:
    server.add("bob")
    server.add("carol")
    guild = server.start()
    target = server[whom]
    if blocked:
        await bot.db.blocks.add(guild.id, int(target.id), int(server.owner.id), None)
    moderator, permissions, member = _block(server, by, target)
    try:
        reply = (await bot.blocks.unblock(permissions, guild, moderator, member)).content
    except UserError as error:
        reply = error.message
    assert reply == answer.format(bob=server["bob"].id, carol=server["carol"].id)


@pytest.mark.parametrize(
    ("blocks", "page", "shown"),
    [
        (0, 1, "No one is blocked in this server."),
        (3, 1, "Page 1 of 1."),
        (PAGE_SIZE + 2, 1, "Page 1 of 2."),
        (PAGE_SIZE + 2, 2, "Page 2 of 2."),
        (PAGE_SIZE + 2, 3, "There are 2 pages: choose one from 1 to 2."),
    ],
)
async def test_the_blocked_list_pages(
    bot: Bot, server: Server, blocks: int, page: int, shown: str
) -> None:
    guild = server.start()
    for n in range(blocks):
        await bot.db.blocks.add(guild.id, 1_500_000_000_000_000_000 + n, 1, f"reason {n}")
    permissions = discord.Permissions(MANAGE_MESSAGES)
    try:
        reply = await bot.blocks.listing(permissions, guild, page)
    except UserError as error:
        assert error.message == shown
        return
    assert reply.content == shown
    if blocks:
        assert len(reply.fields) == min(PAGE_SIZE, blocks - (page - 1) * PAGE_SIZE)


# ---- server-wide permissions and rank, wherever a moderator acts (issue 33, item 4) -------------
async def _refused(call: Awaitable[object]) -> str | None:
    """What a member is told when the call refuses them, or None."""
    try:
        await call
    except UserError as error:
        return error.message
    return None


@pytest.mark.parametrize(
    ("roles", "channel_permissions", "refused"),
    [
        ((), MANAGE_MESSAGES, True),  # Manage Messages in this channel only: no server-wide block
        (("mods",), MANAGE_MESSAGES, False),
    ],  # from a role: server-wide
)
async def test_a_block_needs_the_permission_server_wide(
    bot: Bot, server: Server, roles: tuple[str, ...], channel_permissions: int, refused: bool
) -> None:
    mods = server.role("Mods", position=3, permissions=MANAGE_MESSAGES)
    server.add("bob", roles=(mods,) if roles else ())
    server.add("carol")
    guild = server.start()
    moderator, permissions, member = _block(
        server, "bob", server["carol"], permissions=channel_permissions
    )
    assert permissions.manage_messages  # what the interaction itself says, in its channel
    answer = await _refused(
        bot.blocks.block(server_permissions(moderator), guild, moderator, member, None)
    )
    assert (answer is not None and "Manage Messages" in answer) is refused


@pytest.mark.parametrize("action", ["unblock", "name"])
@pytest.mark.parametrize(
    ("by", "whom", "refused"),
    [
        ("bob", "carol", False),  # mods over juniors
        ("carol", "bob", True),  # juniors cannot lift a mod's block, nor rename them
        ("bob", "owner", True),
    ],  # nobody but the owner lifts the owner's, or renames them
)
async def test_unblock_and_naming_keep_the_rank_rule(
    bot: Bot, server: Server, by: str, whom: str, refused: bool, action: str
) -> None:
    _people(server, ("mods",), ("juniors",))
    guild = server.guild
    assert guild is not None
    target = server.owner if whom == "owner" else server[whom]
    if action == "unblock":  # (blocked by the actor: the block's own moderator, see below)
        await bot.db.blocks.add(guild.id, int(target.id), int(server.people[by].id), None)
    actor, permissions, member = _block(
        server, by, target, permissions=MANAGE_NICKNAMES | MANAGE_MESSAGES
    )
    if action == "unblock":
        answer = await _refused(bot.blocks.unblock(permissions, guild, actor, member))
        done = not await bot.db.blocks.is_blocked(guild.id, int(target.id))
    else:
        assert isinstance(member, discord.Member)
        answer = await _refused(bot.members.set_nick(actor, permissions, guild, "Renamed", member))
        nicks = await bot.db.members.nicks(guild.id, [int(target.id)])
        done = nicks.get(int(target.id)) == "Renamed"
    verb = "unblock" if action == "unblock" else "name"
    assert (answer == f"You can only {verb} members whose highest role is below yours.") is refused
    assert done is not refused


@pytest.mark.parametrize("command", ["skip", "stop", "clear", "leave", "join"])
async def test_a_blocked_member_cannot_control_the_bot(
    bot: Bot, server: Server, command: str
) -> None:
    """A blocked troll in the channel kept /skip, /stop, /clear, /leave and /join, and so
    could silence everyone (issue 33, item 13)."""
    server.add("bob")
    server.in_voice("bob", VOICE_ID)
    guild = server.start()
    server.bot_joins(VOICE_ID)
    bob = guild.get_member(int(server["bob"].id))
    assert bob is not None
    await bot.db.blocks.add(guild.id, bob.id, int(server.owner.id), None)
    everyone = discord.Permissions(EVERYONE)
    calls = {
        "skip": lambda: bot.voice.skip(guild, bob, everyone),
        "stop": lambda: bot.voice.stop(guild, bob, everyone),
        "clear": lambda: bot.voice.clear(guild, bob, everyone),
        "leave": lambda: bot.voice.leave(guild, bob, everyone),
        "join": lambda: bot.voice.join(bob),
    }
    assert await _refused(calls[command]()) == BLOCKED_NOTICE
    assert guild.voice_client is not None  # still there, for everyone else
