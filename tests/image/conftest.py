"""The image tests' container storage: one of its own per run, removed at the end, so that each
run builds the stand-in bases and the image from nothing, as a new machine does."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.image.podman import Storage, why_podman_cannot_run


@pytest.fixture(scope="session")
async def podman_storage(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Storage]:
    if why_podman_cannot_run() is not None:
        pytest.skip(str(why_podman_cannot_run()))
    storage = Storage(tmp_path_factory.mktemp("podman-storage")).create()
    try:
        yield storage
    finally:
        await storage.remove()
