"""What of a chat message is read aloud: whether (the reading rules, as one pure function,
`verdict`, over what a message is, `Posted`, for chat, edits and "Speak this message" alike)
and in which words (`MessageWords`: its text, forward, files, stickers, poll or poll result,
with "NAME said" or without; `bot.text.words` does the wording), with the facts about a
message both need (its thread, a forum post's title, its poll).

How often a server's messages are read is here too (`ReadRates`): each author's share of a
window, a webhook's names each an author of their own and the webhook as a whole a larger share.

Where a message is written and where the bot is (read channels, voice) are auto-reading's own
(bot/services/autoread.py): a member asking for a message chose both."""

from __future__ import annotations

import collections
import enum
import time
from collections.abc import Callable
from dataclasses import dataclass

import cachetools
import discord

from bot.i18n.translate import tr
from bot.services.wording import (
    Wording,
    capped,
    names_in_use,
    names_of_owner,
    owners_names,
    rendered,
    said_as,
)
from bot.storage.database import Database, MemberSettings
from bot.storage.server_settings import ServerSettings
from bot.text.words import (
    MAX_POLL_ANSWERS,
    MessageFacts,
    Names,
    PollFacts,
    PollOutcome,
    ReadOptions,
    announce_both,
    lead_phrase,
    poll_answer_text,
    poll_facts,
    poll_outcome,
    poll_result_line,
)

MAX_EMBED_FIELDS = 25  # Discord's limit on an embed's fields
POLL_RESULT_EMBED = "poll_result"
READ_TYPES = (discord.MessageType.default, discord.MessageType.reply)


def thread_of(message: discord.Message) -> discord.Thread | None:
    """The thread a message is in (None outside one). discord.py gives the threads it knows
    (GUILD_CREATE's active ones, THREAD_CREATE, THREAD_LIST_SYNC: the guilds intent's) as
    such; a thread it did not know when the message came is a PartialMessageable of the
    payload's `channel_id`, looked up in the cache again (it may have come since)."""
    channel = message.channel
    if isinstance(channel, discord.Thread):
        return channel
    if isinstance(channel, discord.PartialMessageable) and message.guild is not None:
        return message.guild.get_thread(channel.id)
    return None


def is_poll_result(message: discord.Message) -> bool:
    return message.type == discord.MessageType.poll_result


def others_words(message: discord.Message) -> bool:
    """The message's words are not its author's: a poll's result (Discord's) or a forward
    (another message's, whoever wrote it). They are said in the server's built-in voice,
    never in the author's cloned voice, which says only its owner's words."""
    return is_poll_result(message) or bool(getattr(message, "message_snapshots", None))


def poll_of(message: discord.Message) -> PollFacts | None:
    """The message's poll, bounded (Discord's limits) before anything is made of it."""
    poll = getattr(message, "poll", None)
    if poll is None:
        return None
    answers = []
    for answer in poll.answers[:MAX_POLL_ANSWERS]:
        emoji = answer.media.emoji
        answers.append(
            poll_answer_text(
                answer.text,
                getattr(emoji, "name", None),
                getattr(emoji, "id", None),
                bool(getattr(emoji, "animated", False)),
            )
        )
    return poll_facts(poll.question or "", answers)


def poll_result_of(message: discord.Message) -> PollOutcome | None:
    """A poll result message's outcome, from its `poll_result` embed's fields (None when the
    message has no such embed: nothing to read)."""
    if not is_poll_result(message):
        return None
    for embed in message.embeds[:10]:
        if embed.type == POLL_RESULT_EMBED:
            fields = {
                str(f.name)[:64]: str(f.value)[:1024] for f in embed.fields[:MAX_EMBED_FIELDS]
            }
            outcome = poll_outcome(fields)
            return outcome if outcome.question.strip() else None
    return None


def written(message: discord.Message) -> str:
    """What the author wrote, for telling its language: its text, a forward's, or its poll's
    question ('' for a poll result: Discord's words, not theirs)."""
    if is_poll_result(message):
        return ""
    snapshots = getattr(message, "message_snapshots", None) or []
    content = message.content or (snapshots[0].content if snapshots else "")
    poll = getattr(message, "poll", None)
    if not content.strip() and poll is not None:
        return poll.question or ""
    return content


def in_forum(thread: discord.Thread) -> bool:
    """A forum's (or a media channel's) post: a thread-only channel holds nothing else, so
    its posts are read whatever `read_threads` says."""
    return isinstance(thread.parent, discord.ForumChannel)


def forum_title(message: discord.Message, *, cloned: bool = False) -> str:
    """A forum post's title when `message` is its first (its starter message has the
    thread's id); '' for any other message. Never in a cloned voice (`cloned`): the title
    read is the thread's name now, which anyone with Manage Threads may have renamed, and
    Discord does not say who did: a clone speaks only what its owner wrote."""
    thread = thread_of(message)
    if cloned:
        return ""
    if thread is None or thread.id != message.id or not in_forum(thread):
        return ""
    return thread.name


def nothing_written(message: discord.Message) -> bool:
    """Nothing at all to render: no text, file, sticker, forward or poll (a poll result:
    no outcome)."""
    if is_poll_result(message):
        return poll_result_of(message) is None
    return not (
        message.content.strip()
        or message.attachments
        or message.stickers
        or getattr(message, "message_snapshots", None)
        or getattr(message, "poll", None) is not None
    )


class MessageWords:
    """A message's words under its server's settings."""

    def __init__(self, db: Database, wording: Wording, language: str) -> None:
        self.db = db
        self.wording = wording
        self.language = language  # of what the bot adds: "NAME said", "a link to", ...

    async def render(
        self,
        message: discord.Message,
        settings: ServerSettings,
        *,
        say_name: bool,
        language: str | None = None,
        attested: bool = False,
        author: MemberSettings | None = None,
    ) -> str:
        """The words for a message under the server's settings ('' when none)."""
        named, unnamed = await self.render_both(
            message, settings, language, attested=attested, author=author
        )
        return (named if say_name else unnamed)[0]

    async def render_both(
        self,
        message: discord.Message,
        settings: ServerSettings,
        language: str | None = None,
        *,
        attested: bool = False,
        author: MemberSettings | None = None,
        sounds: bool = False,
    ) -> tuple[tuple[str, str], tuple[str, str]]:
        """The words for a message with its author's name and without, each with the phrase
        it starts with if any ("Alice said"). `attested`: the author is named by their Discord
        username, which they cannot make another member's (a cloned voice's speech);
        `author`: the author's settings here, when read already (their /set nick); `sounds`:
        words with a sound are marked (`bot.text.words.sound_parts`), for the speaker."""
        guild = message.guild
        assert guild is not None
        language = language or self.language
        # A cloned voice says only its owner's words: no other member's name, no role's or
        # channel's name and no dictionary entry (docs/reading-rules.md)
        options = await self.wording.options(
            guild.id, settings, language, sounds=sounds, cloned=attested
        )
        names = (
            owners_names(message.author.id, message.author.name)
            if attested
            else await self._names(message, guild, author)
        )
        outcome = poll_result_of(message)
        if outcome is not None:  # Discord's words, not the author's: never named
            line = poll_result_line(outcome, names, options)
            return (line, ""), (line, "")
        facts = await self._facts(message, settings, names, options, attested)
        lines = await rendered(facts.content, lambda: announce_both(facts, names, options))
        leads = (
            lead_phrase(facts, options, say_name=True),
            lead_phrase(facts, options, say_name=False),
        )
        named, unnamed = (
            (line, lead if lead and line.startswith(lead) else "")
            for line, lead in zip(lines, leads, strict=True)
        )
        return named, unnamed

    async def _facts(
        self,
        message: discord.Message,
        settings: ServerSettings,
        names: Names,
        options: ReadOptions,
        attested: bool,
    ) -> MessageFacts:
        """What is said of a message: its text (or its forward's), files, stickers, who it
        replies to, whether a webhook poses as a member, a forum post's title, its poll."""
        assert message.guild is not None
        snapshots = getattr(message, "message_snapshots", None) or []
        content = capped(
            message.content or (snapshots[0].content if snapshots else ""), settings.max_length
        )
        attachments = list(message.attachments)
        if snapshots and not attachments:
            attachments = list(snapshots[0].attachments)
        named_as = (
            message.author.name
            if attested
            else names.users.get(message.author.id, message.author.display_name)
        )
        reply_to = self._reply_author(message, names, options.phrases.someone if attested else None)
        resolved = message.reference.resolved if message.reference else None
        replied = resolved if isinstance(resolved, discord.Message) and reply_to else None
        if attested:  # a replied-to name is not said in a clone: no webhook's to tell apart
            replied = None
        author_webhook, reply_to_webhook = await self._posing(
            message.guild, (message, named_as), (replied, reply_to)
        )
        return MessageFacts(
            content=content,
            author=named_as,
            attachment_types=tuple(a.content_type or "" for a in attachments),
            stickers=len(message.stickers),
            reply_to=reply_to,
            forwarded=bool(snapshots),
            author_webhook=author_webhook,
            reply_to_webhook=reply_to_webhook,
            title=forum_title(message, cloned=attested),
            poll=poll_of(message),
        )

    async def _posing(
        self, guild: discord.Guild, *authors: tuple[discord.Message | None, str | None]
    ) -> list[bool]:
        """For each (a message, the name its author is said by): whether a webhook posted it
        under a name a member here goes by, so that it is said as a webhook's and cannot pass
        for theirs. The members' names are read only when a webhook is named. While the
        server owner's names cannot be known (not cached, and the fetch failed lately), every
        webhook is said as one: it might be posing as them."""
        hooked = [
            message is not None and message.webhook_id is not None and name is not None
            for message, name in authors
        ]
        if not any(hooked):
            return hooked
        taken = await names_in_use(self.db, guild)
        if await names_of_owner(guild) is None:
            return hooked
        return [
            hook and name is not None and said_as(name) in taken
            for hook, (_, name) in zip(hooked, authors, strict=True)
        ]

    @staticmethod
    def _reply_author(
        message: discord.Message, names: Names, unnamed: str | None = None
    ) -> str | None:
        """The replied-to author's name as `names` calls them; one it does not name is
        `unnamed` when given (a cloned voice's: "someone"), else their display name."""
        if message.type != discord.MessageType.reply or message.reference is None:
            return None
        resolved = message.reference.resolved
        if isinstance(resolved, discord.Message):
            shown = resolved.author.display_name if unnamed is None else unnamed
            return names.users.get(resolved.author.id, shown)
        return "a deleted message"

    async def _names(
        self, message: discord.Message, guild: discord.Guild, author: MemberSettings | None
    ) -> Names:
        """Who is named in the message, by their /set nick if they have one here (`author`:
        the author's settings, read already: then only the others' nicks are read)."""
        people: dict[int, str] = {message.author.id: message.author.display_name}
        for user in message.mentions:
            people[user.id] = user.display_name
        reference = message.reference.resolved if message.reference else None
        if isinstance(reference, discord.Message):
            people.setdefault(reference.author.id, reference.author.display_name)
        return await self.wording.names(guild, people, author_id=message.author.id, author=author)


# ---- whether it is read ----------------------------------------------------------------------
class Verdict(enum.StrEnum):
    """Whether a message is read, else why not (its value: the log's words): the server's
    reading rules (`verdict`), and where the message is and where the bot is (auto-reading's
    own, bot/services/autoread.py)."""

    READ = "read"
    # where it was written, by whom
    NOT_IN_A_SERVER = "not in a server"
    NOT_A_MEMBER = "not a member"
    OWN_MESSAGE = "own message"
    NOT_A_READ_CHANNEL = "not a read channel"
    THREADS_NOT_READ = "threads are not read"
    # where the bot is
    NOT_IN_VOICE = "not in voice"
    READ_ELSEWHERE = "read in another voice channel"
    AUTHOR_NOT_IN_READ_VOICE = "author not in the read channel's voice channel"
    AUTHOR_NOT_WITH_BOT = "author not in the bot's voice channel"
    CANNOT_JOIN = "cannot join"
    # what it says, how often
    NOTHING_TO_SAY = "nothing to say"
    RATE_LIMITED = "rate limited"
    # the server's reading rules (`verdict`)
    PRIVATE_THREAD = "a private thread"
    FROM_A_BOT = "from a bot"
    SYSTEM_MESSAGE = "system message"
    SILENT = "a @silent message"
    SKIP_PREFIX = "skip prefix"
    MISSING_ROLE = "missing the required role"
    IGNORED_ROLE = "has the ignored role"
    STAGE_AUDIENCE = "in the stage audience"
    BLOCKED = "blocked by a moderator"
    OPTED_OUT = "member opted out"


@dataclass(frozen=True)
class Posted:
    """What the rules read of a message and its author."""

    content: str = ""
    webhook: bool = False  # posted by a webhook: no member, hence no roles, never in voice
    from_bot: bool = False
    system: bool = False  # neither a plain message, a reply nor a poll's result
    silent: bool = False  # sent with @silent (suppress_notifications)
    private_thread: bool = False
    roles: frozenset[int] = frozenset()  # the author's roles (a webhook has none)
    stage_audience: bool = False  # the author is in a stage channel's audience
    blocked: bool = False  # the author, by the server's moderators
    opted_out: bool = False  # the author asked not to be read (/set autoread)


def verdict(posted: Posted, settings: ServerSettings, *, asked: bool = False) -> Verdict:
    """Whether `posted` is read under the server's `settings`, else why not. `asked`: a
    member asked for it now ("Speak this message"): a @silent message, a system message's
    type and the stage audience do not count then. A private thread is never read: without
    the members intent the bot cannot know who may see it."""
    if posted.private_thread:
        return Verdict.PRIVATE_THREAD
    if settings.bot_ignore and (posted.from_bot or posted.webhook):
        return Verdict.FROM_A_BOT
    if posted.system and not asked:
        return Verdict.SYSTEM_MESSAGE
    if settings.skip_silent and posted.silent and not asked:
        return Verdict.SILENT
    if settings.skip_prefix and posted.content.startswith(settings.skip_prefix):
        return Verdict.SKIP_PREFIX
    if settings.required_role and settings.required_role not in posted.roles:
        return Verdict.MISSING_ROLE
    if settings.ignored_role and settings.ignored_role in posted.roles:
        return Verdict.IGNORED_ROLE
    if settings.audience_ignore and posted.stage_audience and not asked:
        return Verdict.STAGE_AUDIENCE
    if posted.blocked and not posted.webhook:
        return Verdict.BLOCKED
    if posted.opted_out and not posted.webhook:
        return Verdict.OPTED_OUT
    return Verdict.READ


def in_stage_audience(member: discord.Member | discord.User) -> bool:
    """In a stage channel's audience (not a speaker): Discord "suppresses" them there."""
    voice = getattr(member, "voice", None)
    return voice is not None and isinstance(voice.channel, discord.StageChannel) and voice.suppress


def in_private_thread(message: discord.Message) -> bool:
    """In a private thread (type 12): only the members it was opened to (and Manage Threads)
    see it, and without the members intent the bot cannot know who they are, nor does
    `Thread.permissions_for` (the parent's permissions): such a message is never read aloud.
    A thread discord.py does not know is no read channel's either."""
    thread = thread_of(message)
    return thread is not None and thread.type == discord.ChannelType.private_thread


def posted_of(
    message: discord.Message, author: discord.Member | discord.User | None = None
) -> Posted:
    """What the reading rules read of a message (`author`: its author as a member, when
    fetched for the server's role rules)."""
    author = author or message.author
    return Posted(
        content=message.content,
        webhook=message.webhook_id is not None,
        from_bot=author.bot,
        system=message.type not in READ_TYPES and not is_poll_result(message),
        silent=message.flags.suppress_notifications,
        private_thread=in_private_thread(message),
        roles=frozenset(r.id for r in author.roles)
        if isinstance(author, discord.Member)
        else frozenset(),
        stage_audience=in_stage_audience(author),
    )


def refusal(rules: Verdict, settings: ServerSettings) -> str:
    """What "Speak this message" answers when the rules skip the message."""
    match rules:
        case Verdict.PRIVATE_THREAD:
            return tr("That message is in a private thread: I don't read private threads aloud.")
        case Verdict.FROM_A_BOT:
            return tr("This server does not have messages from bots read aloud.")
        case Verdict.SKIP_PREFIX:
            return tr(
                "Messages starting with “{prefix}” are not read aloud in this server.",
                prefix=settings.skip_prefix,
            )
        case Verdict.MISSING_ROLE:
            return tr("Only messages of members with the server's reading role are read.")
        case Verdict.IGNORED_ROLE:
            return tr("Messages of members with the server's ignored role are not read.")
        case Verdict.BLOCKED:
            return tr("A moderator has stopped me reading this member's messages in this server.")
        case _:  # opted out (a @silent message, the stage audience: not when asked)
            return tr("Its author has asked not to have their messages read aloud.")


# ---- how often: each author's share of a window (chat, edits, "Speak this message") ------
RATE_WINDOW_S = 10.0
MAX_TRACKED = 10_000  # servers or (server, member) pairs remembered at once
# Who wrote a message, for "NAME said" and the rate limit: a member's id, or for a webhook its
# id with the name it posted under (one webhook carries many people: Tupperbox's personas, a
# bridge's members), each an author of its own.
Author = int | tuple[int, str]
# A webhook as a whole is read at most WEBHOOK_NAMES x rate_limit times a window, beside each
# name's own rate_limit: a name is free to take, and 60 names were 60 members' shares.
WEBHOOK_NAMES = 5


def author_of(message: discord.Message) -> Author:
    if message.webhook_id is not None:
        return (message.webhook_id, message.author.name)
    return message.author.id


def limits_of(message: discord.Message, rate_limit: int) -> list[tuple[Author, int]]:
    """The rate limits a message counts against: its author's, and for a webhook's also the
    webhook's as a whole (its id: never a member's)."""
    limits: list[tuple[Author, int]] = [(author_of(message), rate_limit)]
    if message.webhook_id is not None:
        limits.append((message.webhook_id, rate_limit * WEBHOOK_NAMES))
    return limits


class ReadRates:
    """Recent reads per (server, author), and apart from them recent edits: an edit now and
    then costs no message. Entries older than the window are useless, so each table is bounded
    by what happened in the last RATE_WINDOW_S (and MAX_TRACKED)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.reads: cachetools.TTLCache[tuple[int, Author], collections.deque[float]] = (
            cachetools.TTLCache(maxsize=MAX_TRACKED, ttl=RATE_WINDOW_S, timer=clock)
        )
        self.edits: cachetools.TTLCache[tuple[int, Author], collections.deque[float]] = (
            cachetools.TTLCache(maxsize=MAX_TRACKED, ttl=RATE_WINDOW_S, timer=clock)
        )

    def limited(
        self,
        guild_id: int,
        limits: list[tuple[Author, int]],
        now: float | None = None,
        *,
        edit: bool = False,
    ) -> bool:
        """Whether one of `limits` (an author and how many reads it has in a window) is
        reached; if none is, the read counts for each of them."""
        now = self.clock() if now is None else now
        table = self.edits if edit else self.reads
        recents = []
        for author, limit in limits:
            recent = table.get((guild_id, author)) or collections.deque()
            while recent and now - recent[0] > RATE_WINDOW_S:
                recent.popleft()
            if len(recent) >= limit:
                return True
            recents.append((author, recent))
        for author, recent in recents:
            recent.append(now)
            table[(guild_id, author)] = recent  # (re)starts its time to live
        return False

    def forget_guild(self, guild_id: int) -> None:
        """The bot left a server: drop what it remembered there."""
        for table in (self.reads, self.edits):
            for key in [k for k in table if k[0] == guild_id]:
                table.pop(key, None)
