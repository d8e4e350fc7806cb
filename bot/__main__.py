"""Command line: `python -m bot run | say | sync`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
import time
from pathlib import Path

from bot.config import ConfigError, Settings, load_settings

log = logging.getLogger("bot")


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)-7s %(name)s: %(message)s", force=True
    )
    # pocket-tts logs every generation at INFO; keep it for debugging.
    logging.getLogger("pocket_tts").setLevel(max(logging.WARNING, logging.getLevelName(level)))


async def run_bot(settings: Settings) -> None:
    import discord

    from bot.client import PocketVoiceBot

    bot = PocketVoiceBot(settings)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, lambda: asyncio.ensure_future(bot.close()))
    try:
        async with bot:
            await bot.start(settings.discord_token or "")
    except discord.LoginFailure:
        raise SystemExit("DISCORD_TOKEN was rejected by Discord: check the token in .env") from None
    except discord.PrivilegedIntentsRequired as error:
        raise SystemExit(f"Discord refused the gateway intents: {error}") from None


async def sync_commands(settings: Settings) -> None:
    from bot.client import PocketVoiceBot

    async with PocketVoiceBot(settings, load_engine=False) as bot:
        await bot.login(settings.discord_token or "")
        count = await bot.sync_commands()
    print(f"Registered {count} slash commands.")


async def say(settings: Settings, text: str, out: Path, voice: str | None) -> None:
    from bot.audio import FILE_FORMATS, write_audio_file
    from bot.engine import TTSEngine

    if out.suffix.lower() not in FILE_FORMATS:
        raise SystemExit(f"--out must end in .wav or .ogg, not {out.suffix or 'nothing'}")
    if not text.strip():
        raise SystemExit("There is nothing to say: give some text.")
    engine = await TTSEngine.load(settings)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pocketvoice", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("run", help="run the Discord bot")
    commands.add_parser("sync", help="register the slash commands with Discord")
    say_parser = commands.add_parser("say", help="speak a line into a file, without Discord")
    say_parser.add_argument("text")
    say_parser.add_argument("--out", type=Path, required=True, help="a .wav or .ogg file")
    say_parser.add_argument("--voice", help="built-in voice name, audio clip or .safetensors")
    args = parser.parse_args(argv)

    try:
        settings = load_settings(require_token=args.command != "say")
    except ConfigError as error:
        print(f"Configuration error: {error}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level)

    from bot.audio import OpusMissingError
    from bot.engine import ModelUnavailableError, VoiceError

    try:
        if args.command == "run":
            asyncio.run(run_bot(settings))
        elif args.command == "sync":
            asyncio.run(sync_commands(settings))
        else:
            asyncio.run(say(settings, args.text, args.out, args.voice))
    except ModelUnavailableError as error:
        print(f"Error: {error}", file=sys.stderr)
        return 1
    except VoiceError as error:
        print(f"Voice error: {error}", file=sys.stderr)
        return 1
    except OpusMissingError as error:
        print(f"Error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
