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
from tests.speech_api.service import running_service

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
    if not Path(CHROMEDRIVER).exists() or shutil.which("chromium") is None:
        # a failure, not a skip: the page would go untested where ./test.sh was not run
        pytest.fail("Debian's chromium and chromium-driver are missing: ./test.sh installs them")
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or ""
    for flag in (*FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}"):
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
    try:
        yield driver
    finally:
        driver.quit()


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
