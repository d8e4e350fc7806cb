"""A voice from a clip sent with one request (issue 59): a multipart form as pocket-tts's own
server and other OpenAI-compatible servers take a reference clip (`voice_file`), sent by
OpenAI's SDK the way it sends its own uploads; bounded before it is decoded, never kept,
refused where it is switched off or the weights cannot clone. The page's upload is tested in
Chromium (tests/speech_api/test_page.py)."""

from __future__ import annotations

import asyncio
import functools
import io
import os
from pathlib import Path
from typing import Any

import httpx2 as httpx  # (the HTTP client of the openai SDK installed)
import numpy as np
import openai
import pytest
import soundfile

from bot.speech_api.errors import BadRequest
from bot.synthesis.engine import TTSEngine
from tests.conftest import TinyModel
from tests.speech_api.service import running_service


def sdk(port: int) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="-", max_retries=0)


async def with_clip(
    api: openai.AsyncOpenAI,
    clip: bytes,
    headers: dict[str, str] | None = None,
    **fields: Any,
) -> httpx.Response:
    """`POST /v1/audio/speech` as a form with the clip, by the SDK's own multipart encoding
    (as `audio.transcriptions.create` uploads a file)."""
    body = {"model": "tts-1", "input": "Hello in my own voice.", "response_format": "wav"}
    return await api.post(
        "/audio/speech",
        cast_to=httpx.Response,
        body={**body, **fields},
        files=[("voice_file", ("me.wav", clip, "audio/wav"))],
        options={"headers": {"Content-Type": "multipart/form-data", **(headers or {})}},
    )


def wav_header(seconds: float, rate: int = 24_000) -> bytes:
    """A WAV file's first bytes claiming `seconds` of 16-bit mono audio (the rest not sent)."""
    out = io.BytesIO()
    with soundfile.SoundFile(
        out, "w", samplerate=rate, channels=1, format="WAV", subtype="PCM_16"
    ) as sound:
        sound.write(np.zeros(rate // 10, dtype=np.int16))
    data = bytearray(out.getvalue())
    size = int(seconds * rate) * 2
    data[40:44] = size.to_bytes(4, "little")  # the data chunk's length
    data[4:8] = (size + 36).to_bytes(4, "little")
    return bytes(data)


@functools.cache
def ten_minutes() -> bytes:
    """Ten minutes of silence as FLAC: a small file whose header says 600 s."""
    out = io.BytesIO()
    soundfile.write(out, np.zeros(8_000 * 600, dtype=np.int16), 8_000, format="FLAC")
    return out.getvalue()


@pytest.mark.slow  # seconds of model work: a clone, then speech twice
async def test_a_clip_with_the_request_speaks_in_its_voice_and_is_not_kept(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    async with running_service(tmp_path, engine, tiny_model) as server:
        api = sdk(server.port)
        listing = await api.get("/audio/voices", cast_to=httpx.Response)
        assert listing.json()["voice_clips"] is True
        asked: list[str | None] = []
        stream = server.streams.open

        async def open_(text: str, voice: Any, **kwargs: Any) -> Any:
            asked.append(voice.spec)
            assert voice.spec is not None and Path(voice.spec).is_file()  # there while spoken
            return await stream(text, voice, **kwargs)

        server.streams.open = open_  # type: ignore[method-assign]
        speech = await with_clip(api, tiny_model.clip.read_bytes(), speed="1.5")
        assert speech.status_code == 200, speech.text
        assert speech.headers["X-Voice"] == "clip" and speech.headers["X-Speed-Applied"] == "1.5"
        with soundfile.SoundFile(io.BytesIO(speech.content)) as sound:
            assert sound.samplerate == 24_000 and len(sound.read(24_000 * 5)) > 0
        # spoken from a file of its own, gone once the request ended (its handler's end,
        # just after the answer's last byte); its state dropped
        (spec,) = asked
        assert spec is not None
        for _ in range(100):
            if not Path(spec).exists() and engine.voice_cache.get(spec) is None:
                break
            await asyncio.sleep(0.05)
        assert not Path(spec).exists()
        assert engine.voice_cache.get(spec) is None
        assert server.clips.folder is not None and not os.listdir(server.clips.folder)
        assert not list((tmp_path / "service-voices").glob("*.wav"))
        # the voice named in the form is not used: the clip is
        speech = await with_clip(api, tiny_model.clip.read_bytes(), voice="narrator")
        assert speech.headers["X-Voice"] == "clip"
        await api.close()


@pytest.mark.parametrize(
    ("clip", "status", "code"),
    [
        (b"not audio at all" * 100, 400, "invalid_clip"),
        (wav_header(600), 400, "invalid_clip"),  # a WAV cut short of its header's length
        (np.zeros(24_000 * 5, dtype=np.int16).tobytes(), 400, "invalid_clip"),  # no header
        pytest.param(  # over CLIP_LIMITS (8 MB through the SDK: seconds)
            b"\0" * (8 * 1024 * 1024 + 70_000), 413, "body_too_large", marks=pytest.mark.slow
        ),
    ],
    ids=["junk", "cut-short", "raw", "too-big"],
)
async def test_a_clip_is_bounded_before_it_is_decoded(
    tmp_path: Path,
    engine: TTSEngine,
    tiny_model: TinyModel,
    clip: bytes,
    status: int,
    code: str,
) -> None:
    async with running_service(tmp_path, engine, tiny_model) as server:
        api = sdk(server.port)
        with pytest.raises(openai.APIStatusError) as refused:
            await with_clip(api, clip)
        assert refused.value.status_code == status
        assert refused.value.body["code"] == code, refused.value.body  # type: ignore[index]
        await api.close()


async def test_ten_minutes_said_by_a_header_are_refused_before_decoding(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The header's duration refuses it: not a block of it is decoded."""
    from bot.synthesis import clip as clips

    decoded: list[int] = []
    blocks = clips._decode_blocks
    monkeypatch.setattr(clips, "_decode_blocks", lambda *a: decoded.append(1) or blocks(*a))
    async with running_service(tmp_path, engine, tiny_model) as server:
        api = sdk(server.port)
        with pytest.raises(openai.BadRequestError, match="long"):
            await with_clip(api, ten_minutes())
        assert not decoded
        await api.close()


async def test_clips_switched_off_or_from_another_site_are_refused(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    async with running_service(tmp_path, engine, tiny_model, SPEECH_CLIPS="0") as server:
        api = sdk(server.port)
        listing = await api.get("/audio/voices", cast_to=httpx.Response)
        assert listing.json()["voice_clips"] is False
        with pytest.raises(openai.BadRequestError) as refused:
            await with_clip(api, tiny_model.clip.read_bytes())
        assert refused.value.body["code"] == "clips_off"  # type: ignore[index]
        await api.close()
    async with running_service(tmp_path, engine, tiny_model) as server:
        # a form from a page of another site (a browser sends one without asking first)
        api = sdk(server.port)
        for headers in (
            {"Sec-Fetch-Site": "cross-site", "Origin": "http://elsewhere.test"},
            {"Origin": "http://elsewhere.test"},  # (a browser that sends no Sec-Fetch-Site)
        ):
            with pytest.raises(openai.PermissionDeniedError) as refused:
                await with_clip(api, tiny_model.clip.read_bytes(), headers=headers)
            assert refused.value.body["code"] == "cross_origin"  # type: ignore[index]
        # the service's own page behind a proxy that ends TLS: https in Origin, http here
        mine = {"Sec-Fetch-Site": "same-origin", "Origin": f"https://127.0.0.1:{server.port}"}
        speech = await with_clip(api, tiny_model.clip.read_bytes(), headers=mine)
        assert speech.status_code == 200
        await api.close()


async def test_without_cloning_weights_a_clip_is_refused_unread() -> None:
    from bot.speech_api.voices import RequestClips

    forgotten: list[str] = []

    async def forget(spec: str) -> None:
        forgotten.append(spec)

    clips = RequestClips(True, lambda: False, forget)
    assert not clips.available()
    with pytest.raises(BadRequest) as refused:
        await clips.voice(b"RIFF")
    assert refused.value.code == "cloning_unavailable"
    await asyncio.sleep(0)


async def test_clips_held_at_once_are_bounded(tiny_model: TinyModel) -> None:
    """Each clip waits in the temporary folder while spoken (a container's /tmp is a small
    tmpfs): past CLIPS_HELD at once, 429, before a byte is decoded; each end gives one back."""
    from bot.speech_api.errors import TooMany
    from bot.speech_api.voices import CLIPS_HELD, RequestClips

    async def forget(spec: str) -> None:
        pass

    clips = RequestClips(True, lambda: True, forget)
    try:
        held = [await clips.voice(tiny_model.clip.read_bytes()) for _ in range(CLIPS_HELD)]
        with pytest.raises(TooMany):
            await clips.voice(tiny_model.clip.read_bytes())
        await clips.done(held.pop())
        held.append(await clips.voice(tiny_model.clip.read_bytes()))
        for voice in held:
            await clips.done(voice)
        assert clips.held == 0 and clips.folder is not None and not os.listdir(clips.folder)
    finally:
        clips.close()


async def test_a_form_without_its_length_is_refused_unread(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    """A form sent in chunks (no Content-Length) could not be bounded before it is read:
    411, on a raw socket."""
    async with running_service(tmp_path, engine, tiny_model) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        part = b'--b\r\nContent-Disposition: form-data; name="input"\r\n\r\nHello.\r\n--b--\r\n'
        writer.write(
            f"POST /v1/audio/speech HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            "Content-Type: multipart/form-data; boundary=b\r\nTransfer-Encoding: chunked\r\n"
            f"Connection: close\r\n\r\n{len(part):x}\r\n".encode()
            + part
            + b"\r\n0\r\n\r\n"
        )
        answer = await asyncio.wait_for(reader.read(), 30)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 411"), answer[:300]


async def test_a_form_in_two_pieces_is_read_whole(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    """The clip's form written in two pieces, the second a moment later, on a raw socket."""
    clip = tiny_model.clip.read_bytes()
    body = (
        b'--b\r\nContent-Disposition: form-data; name="input"\r\n\r\nHello.\r\n'
        b'--b\r\nContent-Disposition: form-data; name="response_format"\r\n\r\nwav\r\n'
        b'--b\r\nContent-Disposition: form-data; name="voice_file"; filename="me.wav"\r\n'
        b"Content-Type: audio/wav\r\n\r\n" + clip + b"\r\n--b--\r\n"
    )
    async with running_service(tmp_path, engine, tiny_model) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(
            f"POST /v1/audio/speech HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            "Content-Type: multipart/form-data; boundary=b\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body[: len(body) // 2]
        )
        await writer.drain()
        await asyncio.sleep(0.3)
        writer.write(body[len(body) // 2 :])
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 60)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
    assert b"X-Voice: clip" in answer.split(b"\r\n\r\n")[0]
