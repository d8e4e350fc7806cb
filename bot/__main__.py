"""Command line: `python -m bot run | serve | say | sync | migrate | doctor | voices | db`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
import time
from pathlib import Path

from bot.core.config import (
    Config,
    ConfigError,
    export_hf_token,
    load_config,
    one_stream,
    revealed,
)
from bot.core.errors import OperatorError
from bot.core.log_privacy import WithheldWords
from bot.i18n.translate import plural

log = logging.getLogger("bot")
DATABASE_DRIVERS = ("aiosqlite", "asyncpg")


def configure_logging(
    level: str, log_format: str = "text", discord_level: str | None = None
) -> None:
    """Plain lines, or with LOG_FORMAT=json one JSON object per line for log shippers.

    discord.py's loggers stay at INFO when LOG_LEVEL is DEBUG: its DEBUG lines hold every
    gateway payload (what members wrote, voice keys). `discord_level` (DISCORD_LOG_LEVEL)
    sets them apart, for an operator who knowingly asks."""
    handler = logging.StreamHandler()
    if log_format == "json":
        from pythonjsonlogger.json import JsonFormatter

        handler.setFormatter(
            JsonFormatter(
                "{asctime}{levelname}{name}{message}",
                style="{",
                rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            )
        )
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    # pocket-tts writes members' words into some of its warnings: withheld above DEBUG (the
    # worker processes withhold them in theirs: bot/synthesis/pipeline_processes.py)
    handler.addFilter(WithheldWords())
    logging.basicConfig(level=level, handlers=[handler], force=True)
    # pocket-tts logs every generation at INFO; keep it for debugging.
    logging.getLogger("pocket_tts").setLevel(max(logging.WARNING, logging.getLevelName(level)))
    logging.getLogger("discord").setLevel(
        discord_level or max(logging.INFO, logging.getLevelName(level))
    )
    # The database drivers log every statement with its parameters at DEBUG: nicknames,
    # block reasons, dictionary entries, a whole voice recording. Never below INFO.
    for driver in DATABASE_DRIVERS:
        logging.getLogger(driver).setLevel(max(logging.INFO, logging.getLevelName(level)))


async def run_bot(config: Config) -> None:
    import discord

    from bot.client import PocketVoiceBot
    from bot.ops.endpoints import EndpointError

    bot = PocketVoiceBot(config)
    loop = asyncio.get_running_loop()
    closing: set[asyncio.Task[None]] = set()  # kept, so the shutdown task is not collected

    def shut_down() -> None:
        task = asyncio.ensure_future(bot.close())
        closing.add(task)
        task.add_done_callback(closing.discard)

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, shut_down)
    try:
        async with bot:
            await bot.start(revealed(config.discord_token) or "")
    except discord.LoginFailure:
        raise SystemExit("DISCORD_TOKEN was rejected by Discord: check the token in .env") from None
    except EndpointError as error:
        raise SystemExit(str(error)) from None
    except discord.PrivilegedIntentsRequired:
        raise SystemExit(
            "Discord refused the Message Content intent, which reading channels aloud needs. "
            "Switch it on: Developer Portal > your application > Bot > Privileged Gateway "
            "Intents > Message Content Intent, then start again."
        ) from None


async def sync_commands(config: Config) -> None:
    from bot.client import CommandClient

    async with CommandClient(config) as client:
        await client.login(revealed(config.discord_token) or "")
        count = await client.sync_commands()
    print(f"Registered {count} slash commands.")


async def say(config: Config, text: str, out: Path, voice: str | None) -> None:
    from bot.synthesis.audio_files import FILE_FORMATS, write_audio_file

    if out.suffix.lower() not in FILE_FORMATS:
        raise SystemExit(f"--out must end in .wav or .ogg, not {out.suffix or 'nothing'}")
    if not text.strip():
        raise SystemExit("There is nothing to say: give some text.")
    from bot.storage.voice_metadata import owner_of

    # a member's exported voice (/voice export) says whose it is: whoever speaks with it is
    # told whose voice it is, as each use of a cloned voice in the bot is logged
    owner = owner_of(Path(voice)) if voice else None
    if owner is not None:
        print(
            f"The voice {voice} is a cloned voice of member {owner.owner_id} "
            f"(consent given {owner.consented_at or 'at an unknown time'})."
        )
    from bot.synthesis.engine_loading import load_engine

    engine = await load_engine(one_stream(config))
    try:
        await engine.voice_state(voice)  # resolve the voice first: not part of the latency
        stream = engine.stream(text, voice)
        chunks = []
        async with stream:
            async for chunk in stream:
                chunks.append(chunk)
        stats = stream.stats
    finally:
        await engine.close()
    import numpy as np

    audio = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)
    await asyncio.to_thread(write_audio_file, out, audio)
    elapsed = (stats.finished or time.monotonic()) - stats.started
    latency = stats.first_chunk_latency or 0.0
    print(f"Wrote {out} ({stats.audio_seconds:.2f} s of audio).")
    print(
        f"First chunk after {latency * 1000:.0f} ms; "
        f"real-time factor {stats.audio_seconds / elapsed:.2f}x"
    )


async def migrate(config: Config) -> None:
    from bot.storage.database import Database, database_location

    location = database_location(revealed(config.database_url), config.data_dir)
    db = await Database.open(location, migrate=False)
    try:
        applied = await db.migrate()
        current = await db.applied_migrations()
    finally:
        await db.close()
    done = ", ".join(f"{v:04d}" for v in applied) if applied else "nothing to do"
    print(f"Migrations applied: {done}. Schema version {current[-1] if current else 0}.")


async def db_copy(config: Config, to: str | None) -> int:
    from bot.storage.copy_to_postgres import CopyError, copy_store
    from bot.storage.database import DATABASE_NAME, Database, is_postgres_url
    from bot.storage.voice_records import keep_old_recordings

    target_url = to or revealed(config.database_url)
    if not target_url or not is_postgres_url(target_url):
        print(
            "Give the PostgreSQL database: --to postgresql://... or DATABASE_URL", file=sys.stderr
        )
        return 2
    path = config.data_dir / DATABASE_NAME
    if not path.is_file():
        print(f"There is no SQLite store to copy at {path} (DATA_DIR).", file=sys.stderr)
        return 2
    source = await Database.open(path)
    try:
        for lost in await keep_old_recordings(source, config.data_dir):
            print(f"Voice {lost.id} has no recording left to copy ({lost.clip_path}).")
        target = await Database.open(target_url)
        try:
            copied = await copy_store(source, target)
        finally:
            await target.close()
    except CopyError as error:
        print(f"Nothing was copied: {error}", file=sys.stderr)
        return 1
    finally:
        await source.close()
    rows = ", ".join(f"{table} {count}" for table, count in copied.items())
    print(f"Copied into PostgreSQL and checked: {rows}. Set DATABASE_URL to use it.")
    return 0


async def doctor(config: Config) -> int:
    from bot.doctor import Check, run_checks

    # The checks say what is wrong themselves; log lines would only repeat it.
    logging.getLogger().setLevel(max(logging.ERROR, logging.getLogger().level))

    def show(check: Check) -> None:
        print("\n".join(check.lines()), flush=True)

    ok = await run_checks(config, show)
    print("All checks passed." if ok else "Some checks failed: see the fixes above.")
    return 0 if ok else 1


async def service_voices_command(config: Config, args: argparse.Namespace) -> int:
    """`voices import --service NAME FILE` and `voices export --service NAME --out FILE`:
    the speech service's own voices (DATA_DIR/service-voices/), never a member's."""
    from bot.speech_api.voices import STATE_SUFFIX, ServiceVoices, import_voice

    if args.action == "import":
        try:
            path = await asyncio.to_thread(import_voice, config.data_dir, args.service, args.clip)
        except ValueError as error:
            print(f"Error: {error}", file=sys.stderr)
            return 1
        print(f"Added the service voice “{args.service}” ({path}).")
        return 0
    out: Path = args.out
    if out.suffix != STATE_SUFFIX:
        print(f"Error: --out must end in {STATE_SUFFIX}", file=sys.stderr)
        return 1
    found = ServiceVoices(config.data_dir, config.tts_language).operator_files()
    source = found.get(args.service)
    if source is None:
        print(
            f"Error: no service voice “{args.service}” in {config.data_dir}/service-voices "
            f"(there are: {', '.join(found) or 'none'})",
            file=sys.stderr,
        )
        return 1
    if source.suffix == STATE_SUFFIX:
        await asyncio.to_thread(out.write_bytes, source.read_bytes())
    else:  # a clip: its voice state, made once by the model (loads faster, needs no cloning)
        from bot.synthesis.clip import read_file
        from bot.synthesis.engine_loading import load_engine

        engine = await load_engine(one_stream(config))
        try:
            clip = await asyncio.to_thread(read_file, source)
            await engine.call(lambda model: engine.clone_sync(clip, out, model))
        finally:
            await engine.close()
    print(f"Wrote {out}: the voice state of “{args.service}”.")
    return 0


async def voices_command(config: Config, args: argparse.Namespace) -> int:
    from bot.storage.database import Database, database_location
    from bot.storage.voice_records import VoiceLibraryError
    from bot.synthesis.voice_library import VoiceLibrary, consent_now

    engine = None
    if args.action == "import":  # the only action that needs the model
        from bot.synthesis.engine_loading import load_engine

        engine = await load_engine(one_stream(config))
    db = await Database.open(database_location(revealed(config.database_url), config.data_dir))
    library = VoiceLibrary(db, engine, config.data_dir)
    try:
        if args.action == "list":
            records = (
                await library.records.list_for(args.user)
                if args.user
                else await library.records.list_all()
            )
            for r in records:
                print(f"{r.owner_id}\t{r.id}\t{r.name}\t{r.duration_s:.1f} s\t{r.created_at}")
            print(f"{plural(len(records), 'voice')}.")
        elif args.action == "import":
            data = await asyncio.to_thread(args.clip.read_bytes)
            record = await library.create(args.user, args.name, data, consented_at=consent_now())
            print(
                f"Imported voice {record.id} “{record.name}” for user {args.user} "
                f"({record.duration_s:.1f} s of speech)."
            )
        elif args.all:
            count = await library.forget_user(args.user)
            print(f"Deleted {count} voices and all choices of user {args.user}.")
        else:
            record = await library.delete(args.user, args.name)
            print(f"Deleted voice {record.id} “{record.name}” of user {args.user}.")
    except VoiceLibraryError as error:
        print(f"Error: {error}", file=sys.stderr)
        return 1
    finally:
        await db.close()
        if engine is not None:
            await engine.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pocketvoice", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("run", help="run the Discord bot")
    commands.add_parser(
        "serve", help="the speech service alone: a web page, OpenAI's API, Wyoming (no Discord)"
    )
    commands.add_parser("sync", help="register the slash commands with Discord")
    say_parser = commands.add_parser("say", help="speak a line into a file, without Discord")
    say_parser.add_argument("text")
    say_parser.add_argument("--out", type=Path, required=True, help="a .wav or .ogg file")
    say_parser.add_argument("--voice", help="built-in voice name, audio clip or .safetensors")
    commands.add_parser("migrate", help="bring the database schema up to date")
    commands.add_parser("doctor", help="check the whole setup before going live")
    db_parser = commands.add_parser("db", help="move the database")
    db_actions = db_parser.add_subparsers(dest="action", required=True)
    copy_parser = db_actions.add_parser(
        "copy", help="copy the SQLite store of DATA_DIR into an empty PostgreSQL database"
    )
    copy_parser.add_argument(
        "--to", help="postgresql://user:password@host:port/database (default: DATABASE_URL)"
    )
    voices_parser = commands.add_parser("voices", help="manage members' voices")
    voice_actions = voices_parser.add_subparsers(dest="action", required=True)
    list_parser = voice_actions.add_parser("list", help="list voices")
    list_parser.add_argument("--user", type=int, help="only this Discord user id")
    import_parser = voice_actions.add_parser(
        "import", help="make a voice from a clip for a user, or add a speech service voice"
    )
    owner = import_parser.add_mutually_exclusive_group(required=True)
    owner.add_argument("--user", type=int, help="the owner's Discord id")
    owner.add_argument(
        "--service", metavar="NAME", help="a voice of the speech service (a clip or a .safetensors)"
    )
    import_parser.add_argument("--name", help="the voice's name (with --user)")
    import_parser.add_argument("clip", type=Path, help="the owner's own recording")
    export_parser = voice_actions.add_parser(
        "export", help="a speech service voice as a .safetensors voice state"
    )
    export_parser.add_argument("--service", metavar="NAME", required=True)
    export_parser.add_argument("--out", type=Path, required=True, help="a .safetensors file")
    delete_parser = voice_actions.add_parser("delete", help="delete a voice, or all of a user's")
    delete_parser.add_argument("--user", type=int, required=True)
    which = delete_parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--name")
    which.add_argument("--all", action="store_true", help="every voice and choice of the user")
    args = parser.parse_args(argv)

    try:
        settings = load_config(require_token=args.command in ("run", "sync"))
    except ConfigError as error:
        print(f"{error.label}: {error}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format, settings.discord_log_level)
    export_hf_token(settings)

    if args.command in ("run", "serve"):  # sockets, pipes, files: as many as the box allows
        from bot.core.descriptors import raise_soft_limit

        raise_soft_limit()
    try:
        if args.command == "run":
            asyncio.run(run_bot(settings))
        elif args.command == "serve":
            from bot.core.config import check_speech_binds

            check_speech_binds(settings)  # before the model libraries' seconds of importing
            from bot.speech_api.server import serve

            asyncio.run(serve(settings))
        elif args.command == "sync":
            asyncio.run(sync_commands(settings))
        elif args.command == "migrate":
            asyncio.run(migrate(settings))
        elif args.command == "doctor":
            return asyncio.run(doctor(settings))
        elif args.command == "voices" and getattr(args, "service", None):
            return asyncio.run(service_voices_command(settings, args))
        elif args.command == "voices":
            if args.action == "import" and not args.name:
                parser.error("voices import --user needs --name")
            return asyncio.run(voices_command(settings, args))
        elif args.command == "db":
            return asyncio.run(db_copy(settings, args.to))
        else:
            asyncio.run(say(settings, args.text, args.out, args.voice))
    except OperatorError as error:  # a missing library, the weights, a voice, the database
        print(f"{error.label}: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
