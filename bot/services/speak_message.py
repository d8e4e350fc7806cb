""" "Speak this message": a member asks for a message to be read now, in its author's voice,
in the voice channel they are in."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import discord

from bot.core.errors import UserError
from bot.i18n.translate import tr
from bot.services.blocks import BlockService
from bot.services.message_reading import (
    MessageWords,
    ReadRates,
    Verdict,
    others_words,
    posted_of,
    refusal,
    verdict,
)
from bot.services.speech import SpeechService, humans_in
from bot.services.speech_plan import SpeechPlanner, VoiceFrom
from bot.storage.database import Database


class SpeakThisMessage:
    """The message command: the reading rules as a member asked (`verdict(asked=True)`), the
    invoker's rate limit shared with auto-reading's, and only to people who can see it."""

    def __init__(
        self,
        db: Database,
        speech: SpeechService,
        planner: SpeechPlanner,
        blocks: BlockService,
        words: MessageWords,
        rates: ReadRates,
    ) -> None:
        """`speech`: where it is said; `planner`: its plan; `blocks`: whom moderators stopped;
        `words`, `rates`: auto-reading's words and rate limits, shared."""
        self.db = db
        self.speech = speech
        self.planner = planner
        self.blocks = blocks
        self.words = words
        self.rates = rates

    async def speak(self, invoker: discord.Member | discord.User, message: discord.Message) -> str:
        """Read `message` in its author's voice where `invoker` is, under the same rules as
        auto-reading: the author's opt-out, a block (of the invoker or the
        author), `bot_ignore`, `required_role`, `ignored_role`, `skip_prefix` and the invoker's
        rate limit; and only to people who can see it. `skip_silent` and `audience_ignore`
        do not apply: a member asked for this message to be read now."""
        guild = message.guild
        if guild is None:
            raise UserError(tr("I can only speak messages from a server."))
        await self.blocks.check(invoker.id, guild.id)
        settings = await self.db.guilds.get(guild.id)
        author = message.author
        webhook = message.webhook_id is not None
        if not webhook and (settings.required_role or settings.ignored_role):
            author = await self._member_for_roles(guild, author)
        # (a plain User: a message in an interaction's resolved data, its settings read too)
        spoken = await self.planner.resolve(author.id, guild.id, server=settings)
        posted = replace(
            posted_of(message, author),
            blocked=not webhook and await self.blocks.is_blocked(guild.id, author.id),
            opted_out=not spoken.member.autoread,
        )
        rules = verdict(posted, settings, asked=True)
        if rules is not Verdict.READ:
            raise UserError(refusal(rules, settings))
        channel = self.speech.speaking_channel(invoker)
        if any(not message.channel.permissions_for(m).read_messages for m in humans_in(channel)):
            raise UserError(
                tr(
                    "Someone in {channel} cannot see that message's channel, so I won't read it "
                    "there.",
                    channel=channel.mention,
                )
            )
        if self.rates.limited(guild.id, [(invoker.id, settings.rate_limit)]):
            raise UserError(tr("That is a lot of reading at once: please wait a few seconds."))
        # said where the invoker is: the voice channel's chat hears of a fallback, once
        plan = await self.planner.plan(
            spoken, voice=VoiceFrom.SERVER if others_words(message) else VoiceFrom.MEMBER
        )
        text = await self.words.render(
            message,
            settings,
            say_name=True,
            language=plan.language,
            attested=plan.cloned,
            author=spoken.member,
        )
        if not text:
            raise UserError(tr("That message has nothing I can read aloud."))
        channel = await self.speech.speak_in_callers_channel(invoker, text, plan, announced=True)
        return tr("Speaking that message in {channel}.", channel=channel.mention)

    @staticmethod
    async def _member_for_roles(
        guild: discord.Guild, author: discord.Member | discord.User
    ) -> discord.Member:
        """The author as a member, for the server's role rules. A message in an interaction's
        resolved data carries no member, and without the members intent a member out of voice
        is not cached: fetch them, or refuse rather than skip the rules."""
        if isinstance(author, discord.Member):
            return author
        cached = guild.get_member(author.id)
        if cached is not None:
            return cached
        try:
            async with asyncio.timeout(10):
                return await guild.fetch_member(author.id)
        except discord.NotFound:
            raise UserError(
                tr(
                    "Its author is no longer in this server, so I cannot check the server's "
                    "reading roles: I won't read it."
                )
            ) from None
        except (discord.HTTPException, TimeoutError):
            raise UserError(
                tr("I could not check its author's roles just now: please try again in a moment.")
            ) from None
