"""How every command answers: deferred at once, ephemeral, never pinging, errors in words."""

from __future__ import annotations

import contextlib
import io
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

import discord

from bot.app import App
from bot.client import PocketVoiceBot
from bot.i18n.translate import localize, tr
from bot.services.replies import Confirmation, Reply, reply_for

log = logging.getLogger(__name__)

Action = Callable[[], Awaitable[str | Reply] | str | Reply]


def services(interaction: discord.Interaction) -> App:
    """The bot's services, for what has only the interaction (a button, an autocomplete)."""
    client = interaction.client
    if not isinstance(client, PocketVoiceBot):
        raise TypeError(f"an interaction of {type(client).__name__}, not of the bot")
    return client.app


class PreviewButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=r"pv:preview:(?P<voice_id>\d+)",
):
    """Sends the owner an audio preview of a voice; survives restarts (custom_id holds all)."""

    def __init__(self, voice_id: int) -> None:
        super().__init__(
            discord.ui.Button(
                label="Preview",
                emoji="▶️",
                style=discord.ButtonStyle.primary,
                custom_id=f"pv:preview:{voice_id}",
            )
        )
        self.voice_id = voice_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str]
    ) -> PreviewButton:
        return cls(int(match["voice_id"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        service = services(interaction).voices
        await respond(
            interaction,
            lambda: service.preview_button(interaction.user, self.voice_id, interaction.guild_id),
        )


class ForgetButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=r"pv:forget:(?P<user_id>\d+)",
):
    """Confirms `/voice forget-me`; only the member who asked can press it."""

    def __init__(self, user_id: int) -> None:
        super().__init__(
            discord.ui.Button(
                label="Delete everything",
                style=discord.ButtonStyle.danger,
                custom_id=f"pv:forget:{user_id}",
            )
        )
        self.user_id = user_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str]
    ) -> ForgetButton:
        return cls(int(match["user_id"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        service = services(interaction).voices
        await respond(interaction, lambda: service.forget(interaction.user.id, self.user_id))


class ConfirmView(discord.ui.View):
    """A change shown before it is made: its button makes it, Cancel drops it, and so does
    the timeout (the message then says so). Only the member who asked can press."""

    def __init__(self, confirmation: Confirmation, asked: discord.Interaction) -> None:
        super().__init__(timeout=confirmation.timeout_s)
        self.confirmation = confirmation
        self.asked = asked
        locale = asked.locale
        confirm: discord.ui.Button[ConfirmView] = discord.ui.Button(
            label=localize(confirmation.label, locale), style=discord.ButtonStyle.success
        )
        cancel: discord.ui.Button[ConfirmView] = discord.ui.Button(
            label=localize(tr("Cancel"), locale), style=discord.ButtonStyle.secondary
        )
        # a button's callback is meant to be set this way (discord.py's docs)
        confirm.callback = self._confirm  # type: ignore[method-assign]
        cancel.callback = self._cancel  # type: ignore[method-assign]  # as above
        self.add_item(confirm)
        self.add_item(cancel)

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        return interaction.user.id == self.confirmation.owner_id

    async def _confirm(self, interaction: discord.Interaction) -> None:
        self.stop()  # pressed once: a second press is not dispatched
        await interaction.response.defer()
        try:
            reply = await self.confirmation.apply(interaction.permissions)
        except Exception as error:
            reply = reply_for(error, getattr(self.asked.command, "name", "a confirmation"))
        await interaction.edit_original_response(
            content=localize(reply.content, interaction.locale), view=None
        )

    async def _cancel(self, interaction: discord.Interaction) -> None:
        self.stop()
        content = localize(self.confirmation.cancelled, interaction.locale)
        await interaction.response.edit_message(content=content, view=None)

    async def on_timeout(self) -> None:
        content = localize(self.confirmation.expired, self.asked.locale)
        with contextlib.suppress(discord.HTTPException):  # the message may be gone
            await self.asked.edit_original_response(content=content, view=None)


def _view_for(reply: Reply, interaction: discord.Interaction) -> discord.ui.View | None:
    if reply.confirm is not None:
        return ConfirmView(reply.confirm, interaction)
    if reply.preview_voice_id is None and reply.confirm_forget is None:
        return None
    view = discord.ui.View(timeout=None)
    if reply.preview_voice_id is not None:
        view.add_item(PreviewButton(reply.preview_voice_id))
    if reply.confirm_forget is not None:
        view.add_item(ForgetButton(reply.confirm_forget))
    return view


def guild_of(interaction: discord.Interaction) -> discord.Guild:
    """The server a guild-only command came from, called inside `respond`'s action. Discord
    never sends a guild-only command from a DM (and discord.py makes a partial server of any
    `guild_id`), so no server is a bug of ours, not the member's mistake: no `UserError` but
    the generic reply with an error id (an `assert` before `respond` left the member with no
    reply at all, and goes with `python -O`)."""
    guild = interaction.guild
    if guild is None:
        command = getattr(interaction.command, "qualified_name", "a command")
        raise RuntimeError(f"/{command} came without a server (guild_id {interaction.guild_id})")
    return guild


async def respond(interaction: discord.Interaction, action: Action) -> None:
    """Acknowledge at once (ephemeral), run the action, then show its reply or error: the
    member's own mistake in words, anything else as a generic reply with an error id."""
    await interaction.response.defer(ephemeral=True, thinking=True)
    try:
        result = action()
        if not isinstance(result, str | Reply):
            result = await result
        reply = result if isinstance(result, Reply) else Reply(result)
    except Exception as error:
        reply = reply_for(error, getattr(interaction.command, "name", "a command"))
    if reply.withdrawn:  # refused in words before: the "thinking…" just goes away
        try:
            await interaction.delete_original_response()
        except discord.HTTPException as error:
            log.info(
                "could not withdraw the reply to /%s: %s",
                getattr(interaction.command, "name", "?"),
                error,
            )
        return
    files = [discord.File(io.BytesIO(reply.file[1]), reply.file[0])] if reply.file else []
    view = _view_for(reply, interaction)
    locale = interaction.locale
    kwargs: dict[str, object] = {"content": localize(reply.content, locale), "attachments": files}
    if reply.title is not None:
        title = localize(reply.title, locale)
        embed = discord.Embed(title=title, colour=discord.Colour.blurple())
        for name, value in reply.fields[:25]:
            shown = localize(value, locale)[:1024]
            embed.add_field(name=localize(name, locale), value=shown, inline=False)
        kwargs["embed"] = embed
    if view is not None:
        kwargs["view"] = view
    await interaction.edit_original_response(**kwargs)  # type: ignore[arg-type]  # typed per key


async def choose_voice(interaction: discord.Interaction, name: str, everywhere: bool) -> None:
    """`/voice use` and `/set voice`: the same choice, two places members look for it."""
    service = services(interaction).voices
    await respond(
        interaction, lambda: service.use(interaction.user, guild_of(interaction), name, everywhere)
    )


def progress_reporter(interaction: discord.Interaction) -> Callable[[str], Awaitable[None]]:
    async def report(step: str) -> None:
        await interaction.edit_original_response(content=localize(step, interaction.locale))

    return report
