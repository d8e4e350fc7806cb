"""The service's page in a real browser: Debian's chromium, headless, driven by selenium
through Debian's chromedriver. The page plays the speech as it comes: audio plays before
the stream has ended."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import soundfile
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from bot.synthesis.engine import TTSEngine
from tests.conftest import TinyModel
from tests.speech_api.service import KEY, running_service

pytestmark = pytest.mark.process  # chromedriver and chromium

CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",
    "--window-size=390,844",  # a phone's
)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[webdriver.Chrome]:
    driver = chromium(tmp_path)
    try:
        yield driver
    finally:
        driver.quit()


def chromium(tmp_path: Path, *flags: str) -> webdriver.Chrome:
    """Headless chromium with the tests' flags and `flags`."""
    if not Path(CHROMEDRIVER).exists() or shutil.which("chromium") is None:
        # a failure, not a skip: the page would go untested where ./test.sh was not run
        pytest.fail("Debian's chromium and chromium-driver are missing: ./test.sh installs them")
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or ""
    for flag in (*FLAGS, *flags, f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        options.add_argument(flag)
    options.add_experimental_option(
        "prefs",
        {
            "download.default_directory": str(tmp_path / "downloads"),
            "download.prompt_for_download": False,
        },
    )
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_script_timeout(30)
    return driver


def state(driver: webdriver.Chrome) -> dict[str, object]:
    return driver.execute_script("return Object.assign({}, window.speech)")  # type: ignore[no-any-return]


async def wait_for(driver: webdriver.Chrome, check, what: str, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not check(state(driver)):
        assert time.monotonic() < end, f"the page never {what}: {state(driver)}"
        await asyncio.sleep(0.05)


async def test_the_page_speaks_as_the_speech_is_made(
    tmp_path: Path, full_engine: TTSEngine, tiny_model: TinyModel, browser: webdriver.Chrome
) -> None:
    async with running_service(tmp_path, full_engine, tiny_model) as server:
        # a listener's 1.5 s ahead, not 5: a short text's stream still runs as it plays
        server.streams.scheduler.choice.ahead_s = 1.5
        await asyncio.to_thread(browser.get, f"{server.url}/")
        await wait_for(
            browser,
            lambda _: browser.find_elements(By.CSS_SELECTOR, "#voice option[value=narrator]"),
            "listed the voices",
        )
        text = browser.find_element(By.ID, "text")
        text.clear()
        text.send_keys("A page that speaks.")
        text.send_keys(Keys.CONTROL, Keys.ENTER)  # the keyboard's way to Speak
        await wait_for(browser, lambda s: s["running"] or s["ended"], "started")
        await wait_for(browser, lambda s: s["ended"], "ended", timeout=120)
        final = state(browser)
        assert final["error"] is None, final
        # audio played while the stream was still coming in
        assert final["playedAtEnd"] > 0.2, final  # type: ignore[operator]
        assert final["decoded"] > final["playedAtEnd"]  # type: ignore[operator]
        first_audio = browser.find_element(By.ID, "first-audio").text
        assert first_audio.endswith(" ms") and int(first_audio.split()[0]) < 30_000
        assert browser.find_element(By.ID, "rtf").text.endswith("×")
        # nothing comes from outside the service: every resource is its own
        urls = browser.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
        )
        assert urls and all(url.startswith(server.url) for url in urls), urls
        # the downloads: an Ogg Opus file made by the service, as a link the browser saves
        browser.find_element(By.ID, "ogg").click()
        await wait_for(
            browser,
            lambda _: (
                browser.find_element(By.ID, "download").get_attribute("download") == "speech.ogg"
            ),
            "made the Ogg file",
        )
        saved = tmp_path / "downloads" / "speech.ogg"
        end = time.monotonic() + 30
        while not saved.exists():
            assert time.monotonic() < end, "the browser saved no speech.ogg"
            await asyncio.sleep(0.1)
        with soundfile.SoundFile(saved) as sound:
            assert sound.format == "OGG" and sound.subtype == "OPUS"
            assert len(sound.read(24_000 * 30)) > 0.5 * 24_000
        # the page fits a phone's width: no sideways scrolling
        assert browser.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth"
        )


def status(driver: webdriver.Chrome) -> str:
    return driver.find_element(By.ID, "status").text


async def until(check, what: str, timeout: float = 30) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, f"the page never {what}"
        await asyncio.sleep(0.05)


async def test_a_service_without_keys_shows_no_key_field(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel, browser: webdriver.Chrome
) -> None:
    """Before, the CSS's flex row showed the field its `hidden` attribute hid."""
    async with running_service(tmp_path, engine, tiny_model) as server:
        await asyncio.to_thread(browser.get, f"{server.url}/")
        await until(
            lambda: browser.find_elements(By.CSS_SELECTOR, "#voice option[value=narrator]"),
            "listed the voices",
        )
        assert not browser.find_element(By.ID, "key").is_displayed()
        assert not browser.find_element(By.ID, "key-row").is_displayed()
        assert status(browser) == ""


async def test_the_key_field_asks_refuses_and_accepts_a_key(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel, browser: webdriver.Chrome
) -> None:
    """A service with keys: the field shows, asking for one; a wrong key is said refused; the
    right one clears the request (before, "needs an API key" stayed) and the page speaks."""
    async with running_service(tmp_path, engine, tiny_model, SPEECH_API_KEYS=KEY) as server:
        await asyncio.to_thread(browser.get, f"{server.url}/")
        await until(lambda: "needs an API key" in status(browser), "asked for a key")
        key = browser.find_element(By.ID, "key")
        assert key.is_displayed()
        key.send_keys("not-the-key-0123456789", Keys.TAB)  # (`change` fires on leaving it)
        await until(lambda: "refused" in status(browser), "refused a wrong key")
        assert "needs an API key" not in status(browser)
        key.clear()
        key.send_keys(KEY, Keys.TAB)
        await until(lambda: status(browser) == "", "took the right key")
        assert key.is_displayed()  # (to change it)
        await until(
            lambda: browser.find_elements(By.CSS_SELECTOR, "#voice option[value=narrator]"),
            "listed the voices",
        )
        browser.find_element(By.ID, "speak").click()
        await wait_for(browser, lambda s: s["ended"], "ended", timeout=120)
        final = state(browser)
        assert final["error"] is None and final["decoded"] > 0, final  # type: ignore[operator]


async def test_a_refused_host_is_said_as_such(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    """The page reached by another name than 127.0.0.1 or localhost (as a DNS rebinding
    would) on a service without keys: it says why, not that a key is needed."""
    driver = chromium(tmp_path, "--host-resolver-rules=MAP pocketvoice.test 127.0.0.1")
    try:
        async with running_service(tmp_path, engine, tiny_model) as server:
            await asyncio.to_thread(driver.get, f"http://pocketvoice.test:{server.port}/")
            await until(lambda: status(driver) != "", "said anything")
            said = status(driver)
            assert "127.0.0.1 or localhost" in said and "API key" not in said, said
            assert not driver.find_element(By.ID, "key").is_displayed()
    finally:
        driver.quit()


async def test_the_page_speaks_in_the_voice_of_a_clip_it_uploads(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel, browser: webdriver.Chrome
) -> None:
    """A clip chosen on the page goes with the request (a form, `voice_file`), which speaks
    in its voice; with SPEECH_CLIPS=0 the page offers no upload."""
    async with running_service(tmp_path, engine, tiny_model) as server:
        await asyncio.to_thread(browser.get, f"{server.url}/")
        await until(
            lambda: browser.find_elements(By.CSS_SELECTOR, "#voice option[value=narrator]"),
            "listed the voices",
        )
        upload = browser.find_element(By.ID, "clip")
        assert upload.is_displayed()
        upload.send_keys(str(tiny_model.clip))  # (a file input takes its path)
        assert not browser.find_element(By.ID, "voice").is_enabled()
        browser.find_element(By.ID, "speak").click()
        await wait_for(browser, lambda s: s["ended"], "ended", timeout=120)
        final = state(browser)
        assert final["error"] is None and final["decoded"] > 0, final  # type: ignore[operator]
        assert final["voice"] == "clip", final
        # and the WAV download with it
        browser.find_element(By.ID, "wav").click()
        saved = tmp_path / "downloads" / "speech.wav"
        await until(saved.exists, "saved speech.wav")
    async with running_service(tmp_path, engine, tiny_model, SPEECH_CLIPS="0") as server:
        await asyncio.to_thread(browser.get, f"{server.url}/")
        await until(
            lambda: browser.find_elements(By.CSS_SELECTOR, "#voice option[value=narrator]"),
            "listed the voices",
        )
        assert not browser.find_element(By.ID, "clip").is_displayed()
