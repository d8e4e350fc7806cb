"""`python -m bot doctor`: check everything an operator can get wrong, before going live.

Each check gives one line, ✔ or ✖ (⚠: works, but worth a look), and a failure or warning
says the exact fix. The checks run in the
order a setup is built: system libraries, torch, the model and voices, the data folder and
database, then Discord (token, intent, each server's permissions, registered commands).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.core.config import Config, one_stream, revealed

FREE_SPACE_MIN = 1 << 30  # 1 GiB: the database, voices, phrases and the model cache
HF_TIMEOUT_S = 15.0
DISCORD_TIMEOUT_S = 30.0
READ_CHANNEL_NEEDS = ("view_channel", "read_message_history")
VOICE_NEEDS = ("view_channel", "connect", "speak")


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None
    warning: bool = False  # passed, but the operator should know (does not fail the doctor)

    def lines(self) -> list[str]:
        mark = "✖" if not self.ok else "⚠" if self.warning else "✔"
        lines = [f"{mark} {self.name}: {self.detail}"]
        if (not self.ok or self.warning) and self.fix:
            lines.append(f"    fix: {self.fix}")
        return lines


def good(name: str, detail: str) -> Check:
    return Check(name, True, detail)


def bad(name: str, detail: str, fix: str) -> Check:
    return Check(name, False, detail, fix)


def warn(name: str, detail: str, fix: str) -> Check:
    return Check(name, True, detail, fix, warning=True)


# ---- this machine -------------------------------------------------------------------------
def check_opus() -> Check:
    from bot.playback.audio_source import OpusMissingError, ensure_opus

    try:
        ensure_opus()
    except OpusMissingError:
        return bad("libopus", "not found", "apt-get install libopus0 (./run.sh does it for you)")
    return good("libopus", "loaded")


def check_sndfile() -> Check:
    import soundfile

    formats = soundfile.available_formats()
    needed = {"WAV": "WAV", "FLAC": "FLAC", "OGG": "Ogg", "MP3": "MP3"}
    missing = [label for key, label in needed.items() if key not in formats]
    subtypes = soundfile.available_subtypes("OGG")
    missing += [f"Ogg {c}" for c in ("VORBIS", "OPUS") if c not in subtypes]
    if missing:
        return bad(
            "libsndfile",
            f"{soundfile.__libsndfile_version__} cannot read {', '.join(missing)}",
            "install libsndfile 1.1 or newer (Debian 12, Ubuntu 22.04 and later have it); "
            "/clone accepts WAV, FLAC, MP3, Ogg Vorbis and Ogg Opus",
        )
    return good("libsndfile", f"{soundfile.__libsndfile_version__} reads every /clone format")


def check_torch(config: Config) -> Check:
    from bot.synthesis.torch_build import torch_build

    torch = torch_build()
    build = f"CUDA {torch.cuda}" if torch.cuda else "CPU"
    engines = list(torch.int8_engines)
    detail = f"torch {torch.version}, {build} build, {torch.threads} threads"
    if not engines:
        if config.tts_quantize:
            return bad(
                "torch",
                f"{detail}, no int8 support",
                "set TTS_QUANTIZE=0: this torch build cannot run int8",
            )
        return good("torch", f"{detail}, no int8 support (TTS_QUANTIZE=1 would not work)")
    return good("torch", f"{detail}, int8 ({', '.join(engines)})")


def check_dave() -> Check:
    """DAVE, Discord's end-to-end encryption of voice, required since 2026-03-02: discord.py
    speaks it through davey, and offers Discord no DAVE without it (closed with 4017)."""
    from importlib.metadata import PackageNotFoundError, version

    from bot.playback.voice_link import dave_protocol_version

    fix = (
        'pip install "discord.py[voice]" (it brings davey; ./run.sh does it): Discord closes '
        "voice connections without DAVE (close code 4017)"
    )
    try:
        import davey  # noqa: F401  # the import is the check
    except ImportError as error:
        return bad("DAVE", f"davey cannot be imported ({error})", fix)
    offered = dave_protocol_version()
    if not offered:
        return bad("DAVE", "davey imports, but discord.py offers Discord no DAVE version", fix)
    try:
        installed = version("davey")
    except PackageNotFoundError:
        installed = "(version unknown)"
    return good(
        "DAVE",
        f"davey {installed}; discord.py speaks DAVE protocol version {offered} "
        "(end-to-end encrypted voice)",
    )


ADAPTERS = (  # the one module of each library whose private names the bot uses
    "bot.synthesis.pocket_tts_adapter",
    "bot.synthesis.torch_private",
    "bot.playback.voice_link",
)


def same_release(installed: str, written_for: str) -> bool:
    """`installed` is the release `written_for` names; a local build of it counts (torch's
    `2.13.0+cpu` is 2.13.0)."""
    return installed.partition("+")[0] == written_for.partition("+")[0]


def check_adapter(adapter: Any) -> Check:
    """A library whose private names we use, through one adapter module: installed in the
    version the adapter was written for? Another version may work, or break quietly."""
    from importlib.metadata import PackageNotFoundError, version

    library, written_for = adapter.LIBRARY, adapter.WRITTEN_FOR
    path = f"{adapter.__name__.replace('.', '/')}.py"
    name = f"{library} adapter"
    try:
        installed = version(library)
    except PackageNotFoundError:
        installed = "none"
    if not same_release(installed, written_for):
        return warn(
            name,
            f"{library} {installed} installed, {path} was written for {written_for}",
            f"install {library} {written_for} (the version tested), or check {path} "
            f"against {library} {installed} and update its WRITTEN_FOR",
        )
    return good(name, f"{library} {installed}, as {path} was written for")


def check_adapters() -> list[Check]:
    """`check_adapter` for each adapter."""
    import importlib

    return [check_adapter(importlib.import_module(module)) for module in ADAPTERS]


# ---- model and voices ----------------------------------------------------------------------
async def check_model(config: Config) -> list[Check]:
    from bot.synthesis.engine import ModelUnavailableError, UnusableVoiceError
    from bot.synthesis.engine_loading import load_engine

    spec = f"TTS_LANGUAGE={config.tts_language}"
    if config.tts_config is not None:
        spec = f"TTS_CONFIG={config.tts_config}"
    try:  # no batch measurement: doctor only needs to know the model loads
        engine = await load_engine(one_stream(config))
    except ModelUnavailableError as error:
        return [bad("model", f"{spec}: weights not cached and not downloadable", str(error))]
    except Exception as error:  # a bad config file, an unknown language, ...
        return [
            bad(
                "model",
                f"{spec} does not load ({type(error).__name__}: {error})",
                "set TTS_LANGUAGE to a pocket-tts language (english, french, ...) or "
                "TTS_CONFIG to a valid model config",
            )
        ]
    checks = [good("model", f"{spec} loads")]
    try:
        if engine.has_voice_cloning:
            checks.append(good("voice cloning", "these weights can clone voices (/clone works)"))
        elif config.hf_token:
            checks.append(
                bad(
                    "voice cloning",
                    "HF_TOKEN is set, but the weights loaded cannot clone",
                    "accept the licence at https://huggingface.co/kyutai/pocket-tts with the "
                    "account of HF_TOKEN, then run doctor again",
                )
            )
        else:
            checks.append(
                good("voice cloning", "off: no HF_TOKEN (built-in voices only; /clone says so)")
            )
        try:
            await engine.voice_state()
            checks.append(good("DEFAULT_VOICE", f"{engine.default_voice!r} works"))
        except UnusableVoiceError as error:
            checks.append(
                bad(
                    "DEFAULT_VOICE",
                    f"{engine.default_voice!r}: {error}",
                    "set DEFAULT_VOICE to a built-in voice name (alba, marius, ...), "
                    "an audio clip or a .safetensors voice state",
                )
            )
    finally:
        await engine.close()
    return checks


async def check_hf_token(config: Config) -> Check | None:
    token = revealed(config.hf_token)
    if token is None:
        return None
    from huggingface_hub import HfApi

    try:
        who = await asyncio.wait_for(asyncio.to_thread(HfApi().whoami, token=token), HF_TIMEOUT_S)
    except (TimeoutError, OSError) as error:
        return bad(
            "HF_TOKEN",
            f"Hugging Face could not be reached ({type(error).__name__})",
            "check this machine's network (huggingface.co, port 443)",
        )
    except Exception as error:
        if "401" in str(error) or "Unauthorized" in str(error):
            return bad(
                "HF_TOKEN",
                "rejected by Hugging Face",
                "make a read token at https://huggingface.co/settings/tokens",
            )
        return bad(
            "HF_TOKEN",
            f"could not be checked ({type(error).__name__})",
            "check this machine's network (huggingface.co, port 443)",
        )
    return good("HF_TOKEN", f"valid (account {who.get('name', '?')})")


# ---- data folder and database --------------------------------------------------------------
VOICES_README = "README.md"  # the one file git puts in the checkout's voices/


def tighten_voices_without_voices(voices: Path) -> bool:
    """Make `voices` private (0700) when others can read it but it holds no voice yet (nothing
    but its README): as git made it in a fresh checkout, with the umask's mode (0755), before
    the bot's first clone would have made it private. True when it was tightened. A folder
    holding voices is left for the operator (its names are members' ids), and so is one that
    is not the bot's user's or not a plain folder."""
    try:
        info = voices.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            return False
        if not stat.S_IMODE(info.st_mode) & 0o077:
            return False
        if any(entry.name != VOICES_README for entry in voices.iterdir()):
            return False
        os.chmod(voices, 0o700)
    except OSError:  # missing, or not ours to change: the check below says what to do
        return False
    return True


def check_data_dir(config: Config) -> list[Check]:
    from bot.storage.database import DATABASE_NAME

    folder = config.data_dir
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-"):
            pass
    except OSError as error:
        return [
            bad(
                "DATA_DIR",
                f"{folder} is not writable ({error.strerror})",
                f"give the bot's user write access: chown -R $(whoami) {folder}",
            )
        ]
    checks = [good("DATA_DIR", f"{folder.resolve()} is writable")]
    tightened = tighten_voices_without_voices(folder / "voices")
    exposed = [
        path
        for path in (folder / DATABASE_NAME, folder / "voices", folder / "phrases")
        if path.exists() and stat.S_IMODE(path.stat().st_mode) & 0o077
    ]
    if exposed:
        names = ", ".join(str(p) for p in exposed)
        checks.append(
            bad(
                "private files",
                f"others can read {names}",
                f"chmod -R go-rwx {' '.join(str(p) for p in exposed)}",
            )
        )
    else:
        detail = "the database and voices are readable by the bot's user only"
        if tightened:
            detail += f" ({folder / 'voices'} made so: it held no voice yet)"
        checks.append(good("private files", detail))
    free = shutil.disk_usage(folder).free
    if free < FREE_SPACE_MIN:
        checks.append(
            bad(
                "free space",
                f"{free / 2**20:.0f} MiB free in DATA_DIR",
                "free at least 1 GiB, or point DATA_DIR at a larger disk",
            )
        )
    else:
        checks.append(good("free space", f"{free / 2**30:.1f} GiB free"))
    return checks


async def check_database(config: Config) -> Check:
    from bot.storage.database import DATABASE_NAME, STORE_ERRORS, Database
    from bot.storage.migrations import discover_migrations

    newest = discover_migrations()[-1].version
    location: Path | str = config.data_dir / DATABASE_NAME
    if config.database_url:
        location = config.database_url.get_secret_value()
    elif not Path(location).exists():
        return good("database", f"none yet: created at first start (schema {newest})")
    try:
        db = await asyncio.wait_for(Database.open(location, migrate=False), 15)
        try:
            applied = await db.applied_migrations()
        finally:
            await db.close()
    except (*STORE_ERRORS, TimeoutError) as error:  # type: ignore[misc]  # mypy: an unpacked tuple
        return bad(
            "database",
            f"cannot open it: {type(error).__name__}: {error}",
            "check DATABASE_URL (host, port, user, password, database) and that PostgreSQL "
            "is running and reachable from here",
        )
    current = applied[-1] if applied else 0
    if current > newest:
        return bad(
            "database",
            f"schema {current} is newer than this PocketVoice ({newest})",
            "run the newer PocketVoice, or restore a backup of the database",
        )
    if current < newest:
        return good(
            "database",
            f"schema {current}: migrated to {newest} at start (or now with ./run.sh migrate)",
        )
    return good("database", f"schema {current}, up to date")


# ---- Discord ---------------------------------------------------------------------------------
async def check_discord(config: Config) -> list[Check]:
    import discord

    from bot.client import CommandClient

    if not config.discord_token:
        return [bad("token", "DISCORD_TOKEN is not set", "put your bot token in .env")]
    bot = CommandClient(config)
    try:
        async with bot:
            try:
                await asyncio.wait_for(
                    bot.login(config.discord_token.get_secret_value()), DISCORD_TIMEOUT_S
                )
            except discord.LoginFailure:
                return [
                    bad(
                        "token",
                        "rejected by Discord",
                        "Developer Portal > your application > Bot > Reset Token, "
                        "then put the new token in .env",
                    )
                ]
            checks = [good("token", f"valid: logged in as {bot.user}")]
            checks.append(await _check_intent(bot))
            checks += await _check_guilds(bot, config)
            checks.append(await _check_commands(bot))
            return checks
    except (discord.HTTPException, OSError, TimeoutError) as error:
        return [
            bad(
                "Discord",
                f"could not be reached ({type(error).__name__}: {error})",
                "check this machine's network (discord.com, port 443)",
            )
        ]


async def _check_intent(bot: Any) -> Check:
    info = await bot.application_info()
    flags = info.flags
    if flags.gateway_message_content or flags.gateway_message_content_limited:
        return good("Message Content intent", "on")
    return bad(
        "Message Content intent",
        "off: messages cannot be read aloud",
        "Developer Portal > your application > Bot > Privileged Gateway Intents > "
        "Message Content Intent",
    )


def _missing(permissions: Any, needed: tuple[str, ...]) -> list[str]:
    return [name.replace("_", " ").title() for name in needed if not getattr(permissions, name)]


async def _check_guilds(bot: Any, config: Config) -> list[Check]:
    import discord

    from bot.storage.database import DATABASE_NAME, Database

    db_path = config.data_dir / DATABASE_NAME
    db = None
    if config.database_url:
        db = await Database.open(config.database_url.get_secret_value(), migrate=False)
    elif db_path.exists():
        db = await Database.open(db_path, migrate=False)
    checks: list[Check] = []
    try:
        guilds = [g async for g in bot.fetch_guilds(limit=None)]
        if not guilds:
            return [
                bad(
                    "servers",
                    "the bot is in no server",
                    "invite it: Developer Portal > OAuth2 > URL Generator, scopes bot and "
                    "applications.commands",
                )
            ]
        for partial in guilds:
            guild = await bot.fetch_guild(partial.id)
            member = await guild.fetch_member(bot.user.id)
            channels = await guild.fetch_channels()
            reads = await db.read_channels.list(guild.id) if db is not None else []
            read_ids = [r.channel_id for r in reads]
            checks.append(_guild_check(guild, member, channels, read_ids, discord))
    finally:
        if db is not None:
            await db.close()
    return checks


def _guild_check(
    guild: Any, member: Any, channels: list[Any], read_ids: list[int], discord: Any
) -> Check:
    name = f"server {guild.name!r}"
    problems: list[str] = []
    for read_id in read_ids:
        read = next((c for c in channels if c.id == read_id), None)
        if read is None:
            problems.append(
                f"its read channel {read_id} no longer exists (/setup remove it, /setup add "
                "another)"
            )
        elif missing := _missing(read.permissions_for(member), READ_CHANNEL_NEEDS):
            problems.append(f"in #{read.name} (read channel) it lacks {', '.join(missing)}")
    voice = [c for c in channels if isinstance(c, discord.VoiceChannel | discord.StageChannel)]
    usable = [c for c in voice if not _missing(c.permissions_for(member), VOICE_NEEDS)]
    if voice and not usable:
        lacks = sorted({m for c in voice for m in _missing(c.permissions_for(member), VOICE_NEEDS)})
        problems.append(f"it cannot speak in any voice channel (lacks {', '.join(lacks)})")
    if problems:
        return bad(
            name,
            "; ".join(problems),
            "Server Settings > Roles (or the channel's Permissions): give the bot View "
            "Channel and Read Message History where it reads, View Channel, Connect and "
            "Speak where it speaks",
        )
    reading = (
        "no read channel set"
        if not read_ids
        else "can read its read channel"
        if len(read_ids) == 1
        else f"can read its {len(read_ids)} read channels"
    )
    return good(name, f"{reading}; can speak in {len(usable)} of {len(voice)} voice channels")


def _canonical(command: dict[str, Any]) -> Any:
    keys = ("name", "type", "description", "options", "required", "choices", "autocomplete")
    out: dict[str, Any] = {}
    for key in keys:
        value = command.get(key)
        if key == "type" and value is None:
            value = 1
        if key in ("required", "autocomplete"):
            value = bool(value)
        if key == "options":
            value = sorted((_canonical(o) for o in value or []), key=repr)
        if key == "choices":
            value = sorted(((c["name"], c["value"]) for c in value or []), key=repr)
        out[key] = value if value is not None else ""
    return out


async def _check_commands(bot: Any) -> Check:
    assert bot.application_id is not None
    local = {
        c["name"]: _canonical(c) for c in (cmd.to_dict(bot.tree) for cmd in bot.tree.get_commands())
    }
    remote_raw = await bot.http.get_global_commands(bot.application_id)
    remote = {c["name"]: _canonical(c) for c in remote_raw}
    if local == remote:
        return good("slash commands", f"the {len(local)} registered commands match this version")
    missing = sorted(set(local) - set(remote))
    extra = sorted(set(remote) - set(local))
    changed = sorted(n for n in set(local) & set(remote) if local[n] != remote[n])
    groups = (("not registered", missing), ("changed", changed), ("obsolete", extra))
    parts = [f"{label}: {', '.join('/' + n for n in names)}" for label, names in groups if names]
    return bad(
        "slash commands", "; ".join(parts), "./run.sh sync (or start once with SYNC_COMMANDS=1)"
    )


# ---- all of it -------------------------------------------------------------------------------
# ---- the speech service -----------------------------------------------------------------------
SPEECH_CLIENTS = 256  # the speech service's connections the descriptor need leaves room for


def check_workers(config: Config) -> Check:
    """What the model's worker processes need of the machine: descriptors (the soft limit is
    raised to the hard one at start: the hard limit decides), memory per worker; never
    /dev/shm (voice states go through their pipes)."""
    from bot.core import descriptors
    from bot.synthesis.engine_loading import processes
    from bot.synthesis.state_transfer import STATE_BYTES_PER_WORKER

    batched = config.tts_batch > 1
    pipelines = config.tts_pipelines if batched else 1
    workers = pipelines if batched and processes(config, pipelines) else 0
    clients = SPEECH_CLIENTS if config.speech_port is not None else 0
    need = descriptors.needed(workers, clients)
    if workers:
        states_mb = STATE_BYTES_PER_WORKER // 2**20
        what = (
            f"{workers} worker processes, each with a copy of the model's weights and up to "
            f"{states_mb} MB of voice states (no /dev/shm needed)"
        )
    else:
        what = "the model runs in the bot's process"
    hard = descriptors.limits()[1]
    if hard < need:
        return warn(
            "worker processes",
            f"{what}; the open-file limit is {hard}, under the {need} this configuration may "
            "hold at once (sockets, pipes, files): past it no voice connects",
            "raise it: LimitNOFILE=65536 in the systemd unit (deploy/pocketvoice.service has "
            "it), `ulimits: nofile: 65536` in compose or `--ulimit nofile=65536` for docker "
            "run, or `ulimit -Hn 65536` before ./run.sh",
        )
    return good("worker processes", f"{what}; open files up to {hard} (needs {need})")


def _port_free(host: str, port: int) -> str | None:
    """None when this process could listen on host:port now, else why not."""
    import socket

    try:
        with socket.create_server((host.strip("[]"), port)):
            return None
    except OSError as error:
        return error.strerror or str(error)


def check_speech_service(config: Config) -> list[Check]:
    """The speech service (SPEECH_PORT in the bot; `serve` alone): its binds, its ports,
    its voices, the formats this libsndfile writes."""
    from bot.core.config import ConfigError, check_speech_binds
    from bot.speech_api.encoders import MEDIA_TYPES, can_encode
    from bot.speech_api.voices import FOLDER, ServiceVoices

    name = "speech service"
    try:
        check_speech_binds(config)
    except ConfigError as error:
        return [bad(name, str(error), "set SPEECH_API_KEYS, or listen on 127.0.0.1")]
    checks = []
    if config.speech_port is None:
        checks.append(
            good(
                name,
                "SPEECH_PORT unset: the bot serves no speech API "
                "(./run.sh serve runs it alone, on port 8000)",
            )
        )
    else:
        ports = [("SPEECH_PORT", config.speech_host, config.speech_port)]
        if config.wyoming_port is not None:
            ports.append(("WYOMING_PORT", config.wyoming_host, config.wyoming_port))
        for variable, host, port in ports:
            why = _port_free(host, port)
            if why is not None:
                return [
                    bad(
                        name,
                        f"cannot listen on {host}:{port} ({why})",
                        f"stop what uses it, or set {variable} to a free port",
                    )
                ]
        count = len(config.speech_api_keys)
        keys = (
            f"{count} API key{'s' if count > 1 else ''}" if count else "no keys (this machine only)"
        )
        wyoming = (
            f", Wyoming on {config.wyoming_host}:{config.wyoming_port}"
            if config.wyoming_port is not None
            else ""
        )
        checks.append(good(name, f"on {config.speech_host}:{config.speech_port}, {keys}{wyoming}"))
    voices = ServiceVoices(config.data_dir, config.tts_language).operator_files()
    checks.append(
        good("service voices", f"{len(voices)} of the operator's in {config.data_dir / FOLDER}")
    )
    missing = [f for f in MEDIA_TYPES if not can_encode(f)]
    if missing:
        detail = f"this libsndfile cannot write {', '.join(missing)}"
        fix = "install libsndfile 1.1 or later, built with LAME and mpg123"
        checks.append(warn("service formats", detail, fix))
    return checks


async def run_checks(config: Config, report: Callable[[Check], Awaitable[None] | None]) -> bool:
    """Run every check, reporting each as it finishes; True when all passed."""
    ok = True

    async def emit(check: Check | None) -> None:
        nonlocal ok
        if check is None:
            return
        ok &= check.ok
        result = report(check)
        if result is not None:
            await result

    for sync_check in (check_opus, check_sndfile):
        await emit(sync_check())
    await emit(check_torch(config))
    for check in check_adapters():
        await emit(check)
    await emit(check_dave())
    for check in await check_model(config):
        await emit(check)
    await emit(await check_hf_token(config))
    data_checks = check_data_dir(config)
    for check in data_checks:
        await emit(check)
    if data_checks[0].ok:
        await emit(await check_database(config))
    for check in check_speech_service(config):
        await emit(check)
    await emit(check_workers(config))
    for check in await check_discord(config):
        await emit(check)
    return ok
