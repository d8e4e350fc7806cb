"""The services wired as bot/app.py wires them, on a real SQLite store, with the two parts
that would need audio replaced by recorders of what they are asked: the scheduler's speakers
(`RecordingSpeaker` keeps GuildSpeaker's queue contract: the limit, QueueFullError,
drop_oldest, drops and edits, `on_start` called in playing order) and the voice connections
(`ServerConnections`: joining is the bot's VOICE_STATE_UPDATE and a discord.py VoiceProtocol);
/tts files are asked of `RecordingDeadlines`. No engine, no model: `needs_loading` is False,
every language is "loaded"."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import discord
import numpy as np

from bot.core.errors import UserError
from bot.playback.speakers import QueueFullError, Utterance
from bot.services.autoread import AutoReader
from bot.services.blocks import BlockService
from bot.services.dictionary_commands import DictionaryCommands
from bot.services.home_voice import HomeVoice
from bot.services.join_notices import JoinNotices
from bot.services.language_choice import LanguageChoice
from bot.services.member_settings import MemberSettings
from bot.services.settings_commands import SettingsCommands
from bot.services.speak_message import SpeakThisMessage
from bot.services.speech import SpeechService, block_noted
from bot.services.speech_plan import SpeechPlanner
from bot.services.voice_control import VoiceControl
from bot.services.voices import VoiceService
from bot.services.wording import Wording
from bot.storage.database import Database
from bot.synthesis.audio_files import MODEL_RATE
from bot.synthesis.voice_library import VoiceLibrary
from tests.services.discord_objects import Server

LANGUAGES = ("english", "french", "german")
FINGERPRINT = "tiny-model-fingerprint"


class Clock:
    """The services' monotonic clock, moved by the test."""

    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class RecordingSpeaker:
    """One server's queue, as GuildSpeaker keeps it, without synthesis or playback."""

    max_queue: int = 20
    queue: list[Utterance] = field(default_factory=list)
    played: list[Utterance] = field(default_factory=list)
    phrases_loaded: list[str] = field(default_factory=list)

    @property
    def queued(self) -> int:
        return len(self.queue)

    def enqueue(self, utterance: Utterance, *, drop_oldest: bool = False) -> int:
        if self.queued >= self.max_queue:
            if not drop_oldest:
                raise QueueFullError
            while self.queued >= self.max_queue:
                self.queue.pop(0)
        ahead = self.queued
        self.queue.append(utterance)
        return ahead

    async def load_phrase(self, utterance: Utterance) -> None:
        self.phrases_loaded.append(utterance.text)

    def drop(self, message_id: int) -> bool:
        for utterance in self.queue:
            if utterance.message_id == message_id:
                self.queue.remove(utterance)
                return True
        return False

    def skip(self) -> bool:
        return False  # nothing plays here: what is queued stays queued

    def clear_waiting(self) -> int:
        dropped = self.queued
        self.queue.clear()
        return dropped

    def clear(self) -> int:
        return self.clear_waiting()

    def drop_author(self, author_id: int) -> int:
        waiting = [u for u in self.queue if u.author_id == author_id]
        for utterance in waiting:
            self.queue.remove(utterance)
        return len(waiting)

    def replace_text(self, message_id: int, text: str) -> bool:
        for utterance in self.queue:
            if utterance.message_id == message_id:
                utterance.text = text
                return True
        return False

    def play(self) -> list[str]:
        """Say what is queued, in order: each utterance's `on_start` settles its words as its
        synthesis begins (GuildSpeaker's `_start`); the texts said."""
        said = []
        while self.queue:
            utterance = self.queue.pop(0)
            if utterance.on_start is not None:
                utterance.on_start(utterance)
            self.played.append(utterance)
            said.append(utterance.text)
        return said


class RecordingDeadlines:
    """The deadline scheduler as the services see it: never at capacity, and background
    speech (a /tts file) recorded, each answered with a tenth of a second of silence."""

    def __init__(self) -> None:
        self.asked: list[str] = []  # the texts of the files asked for

    def at_capacity(self) -> bool:
        return False

    async def background_speech(
        self,
        text: str,
        voice: str | None,
        owner: tuple[int, int | None],
        language: str | None = None,
    ) -> np.ndarray:
        self.asked.append(text)
        return np.zeros(MODEL_RATE // 10, np.float32)


class RecordingScheduler:
    """Speakers' face to the services: a speaker per server, no models to load."""

    models = None  # one language model, always loaded

    def __init__(self, server: Server) -> None:
        self._speakers: dict[int, RecordingSpeaker] = {}
        self.scheduler = RecordingDeadlines()
        self.server = server

    def speaker(self, guild: discord.Guild) -> RecordingSpeaker:
        return self._speakers.setdefault(guild.id, RecordingSpeaker())

    def get(self, guild_id: int) -> RecordingSpeaker | None:
        # VoiceConnections makes a server's speaker as the bot joins its voice channel; the
        # tests put the bot there with `Server.bot_joins`, so the speaker is made here
        guild = self.server.guild
        if guild is not None and guild.id == guild_id and guild.voice_client is not None:
            return self.speaker(guild)
        return self._speakers.get(guild_id)


class ServerConnections:
    """VoiceConnections' `ensure_connected`: the bot joins the channel (`refuse`: it cannot,
    with that reason for the member); `leave`: it leaves."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.joined: list[int] = []
        self.refuse: str | None = None
        self.homes: dict[int, int] = {}  # server -> home voice channel (`set_home`)

    def set_home(self, guild_id: int, channel_id: int | None) -> None:
        if channel_id is None:
            self.homes.pop(guild_id, None)
        else:
            self.homes[guild_id] = channel_id

    def home_of(self, guild_id: int) -> int | None:
        return self.homes.get(guild_id)

    async def ensure_connected(
        self, channel: discord.VoiceChannel | discord.StageChannel
    ) -> discord.VoiceProtocol:
        if self.refuse is not None:
            raise UserError(self.refuse)
        guild = channel.guild
        if guild.voice_client is not None and guild.voice_client.channel == channel:
            return guild.voice_client  # type: ignore[return-value]
        self.joined.append(channel.id)
        return self.server.bot_joins(str(channel.id))

    async def leave(self, guild: discord.Guild) -> None:
        """The bot leaves voice: its VOICE_STATE_UPDATE, and discord.py forgets the client."""
        if guild.voice_client is not None:
            self.server.in_voice(None, None)
            self.server.remove_voice_client()


class ModelOnDisk:
    """What the voice library reads of the engine to find a cloned voice's state already on
    disk: its model's fingerprint (anything else would be model work, refused here)."""

    fingerprint = FINGERPRINT


@dataclass
class Bot:
    server: Server
    db: Database
    data_dir: Path
    clock: Clock
    speakers: RecordingScheduler
    connections: ServerConnections
    blocks: BlockService
    library: VoiceLibrary
    planner: SpeechPlanner
    speech: SpeechService
    voice: VoiceControl
    autoread: AutoReader
    speak_message: SpeakThisMessage
    notices: JoinNotices
    settings: SettingsCommands
    dictionary: DictionaryCommands
    members: MemberSettings

    @property
    def guild_id(self) -> int:
        return int(self.server.id)

    @property
    def speaker(self) -> RecordingSpeaker:
        assert self.server.guild is not None
        return self.speakers.speaker(self.server.guild)

    def voice_service(self) -> VoiceService:
        """The /voice commands on this wiring (a model whose voices are files on disk)."""
        return VoiceService(
            self.library,
            self.speech,
            ModelOnDisk(),  # type: ignore[arg-type]
            planner=self.planner,
            blocks=self.blocks,
        )

    async def configure(self, **values: object) -> None:
        """Server settings; `read_channel=` a channel to read (/setup add)."""
        for key, value in values.items():
            if key == "read_channel":
                assert isinstance(value, int)
                await self.db.read_channels.add(self.guild_id, value)
            else:
                await self.db.guilds.set(self.guild_id, key, value)

    async def clone(self, username: str, name: str = "Mine") -> int:
        """`username` has a cloned voice, its state made for the model in use, and uses it
        here."""
        owner = int(self.server[username].id)
        state = f"{owner}/{name}.safetensors"
        voice_id = await self.db.voices.insert(
            owner_id=owner,
            name=name,
            model_fingerprint=FINGERPRINT,
            state_path=state,
            clip_path=f"{owner}/{name}.flac",
            sha256="0" * 64,
            duration_s=3.0,
            state_bytes=1,
            clip_bytes=1,
            consented_at="2024-01-01T00:00:00+00:00",
        )
        path = self.data_dir / state
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"state")
        await self.db.choices.set(owner, self.guild_id, voice_id=voice_id)
        return voice_id


def wire(server: Server, db: Database, data_dir: Path) -> Bot:
    clock = Clock()
    speakers = RecordingScheduler(server)
    connections = ServerConnections(server)
    library = VoiceLibrary(db, ModelOnDisk(), data_dir)  # type: ignore[arg-type]
    planner = SpeechPlanner(library.records, library.states, LANGUAGES[0], LANGUAGES, clock=clock)
    blocks = BlockService(
        db,
        on_block=partial(block_noted, speakers, planner),  # type: ignore[arg-type]
        on_unblock=planner.noted_unblock,
    )
    speech = SpeechService(speakers, connections, 2_000, planner, blocks, Wording(db))  # type: ignore[arg-type]
    reader = AutoReader(
        db,
        planner,
        speakers,
        speech.wording,
        connections,
        clock=clock,  # type: ignore[arg-type]
    )
    notices = JoinNotices(db, planner, speech.wording, speakers, clock=clock)  # type: ignore[arg-type]
    home = HomeVoice(db, connections)  # type: ignore[arg-type]
    language = LanguageChoice(LANGUAGES, clock=clock)
    return Bot(
        server,
        db,
        data_dir,
        clock,
        speakers,
        connections,
        blocks,
        library,
        planner,
        speech,
        VoiceControl(speakers, connections, blocks),  # type: ignore[arg-type]
        reader,
        SpeakThisMessage(db, speech, planner, blocks, reader.words, reader.rates),
        notices,
        SettingsCommands(db, language, on_home_voice=home.settle),
        DictionaryCommands(db, LANGUAGES, clock=clock),
        MemberSettings(db, language, blocks=blocks, clock=clock),
    )
