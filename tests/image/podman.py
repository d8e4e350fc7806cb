"""Podman as the image tests use it: rootful, with the runc runtime and the limits this machine
allows, building our `Dockerfile` unchanged and running what it makes.

Docker Hub cannot be reached here, so the base the Dockerfile names (`python:3.11-slim-bookworm`,
pinned by digest) is a local stand-in under that tag when no real one is present: Debian bookworm
from `debootstrap`, with Python 3.11 as a virtual environment over `/usr/local`, so that
`python`, `pip` and `site-packages` lie where the official image has them. A digest names one
image's bytes, which no stand-in can have, so the build takes the stand-in with
`podman build --from` (in place of the first FROM, every other line as written) unless the pinned
image itself is present. `postgres:15`, which
compose.shards.yaml runs, gets a stand-in too: Debian's postgresql-15 on that base, started as the
official image starts (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB, PGDATA).

Each test run has container storage of its own (`Storage`), so that every run builds the
stand-ins and the image from nothing, as a new machine does: an image left over from an earlier
run can never hide a broken first build. (The stand-in base's root file system, debootstrap's
output, is the one thing test.sh's two image-test processes share: `SHARED_ENV`.)
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BASE = "docker.io/library/python:3.11-slim-bookworm"  # the Dockerfile's FROM, by tag
# compose.shards.yaml's database, as pinned there (name:tag@sha256:digest); its stand-in takes
# the tag alone
(POSTGRES_PINNED,) = re.findall(
    r"^ {4}image: (postgres:\S+@sha256:[0-9a-f]{64})$",
    (REPO / "compose.shards.yaml").read_text(encoding="utf-8"),
    re.M,
)
POSTGRES_PINNED = f"docker.io/library/{POSTGRES_PINNED}"
POSTGRES = POSTGRES_PINNED.split("@")[0]
STAND_IN_PATH = "/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin"
STAND_INS = Path(__file__).resolve().parent / "stand_ins"
STAND_IN_LABEL = "pocketvoice.test.stand-in"
DEBIAN_MIRROR = os.environ.get("DEBIAN_MIRROR", "http://deb.debian.org/debian")
# test.sh names a folder its image-test processes share: the first to need the stand-in base
# debootstraps it there once (a minute of CPU), the others import the same tarball. Unset (pytest
# run by hand), each run makes its own. test.sh starts that debootstrap itself, before the image
# tests, at the lowest CPU priority beside the other tests (`python -m tests.image.podman
# FOLDER`): mostly downloads, it took 48 of the image tests' 175 s when they waited for it.
SHARED_ENV = "POCKETVOICE_IMAGE_SHARED"
BASE_TARBALL = "stand-in-base.tar"
# The base's C library, for the wheels pip on the host downloads for it: Debian bookworm's glibc
BASE_GLIBC = (2, 36)
TORCH_WHEEL = re.compile(r"torch-2\.13\.0\+cpu-cp311-.*\.whl")
# podman's defaults ask for more open files and processes than this machine allows. The
# engine's temporary folder (exit files, events, the "alive" mark) and the network configs are
# the run's own too: in podman's shared defaults (/run/libpod, /etc/containers/networks) another
# run's `podman system reset` wiped them, and a container killed meanwhile was never restarted
# (its `restart: unless-stopped` needs its exit file).
CONTAINERS_CONF = """[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
[engine]
runtime = "runc"
tmp_dir = "{tmp}"
[network]
network_config_dir = "{networks}"
"""


class PodmanError(RuntimeError):
    pass


def pinned_base() -> str:
    """The Dockerfile's FROM as written (name, tag and digest), fully qualified."""
    (line,) = [
        line for line in (REPO / "Dockerfile").read_text().splitlines() if line.startswith("FROM ")
    ]
    image = line.split()[1]
    return image if "/" in image.split("@")[0] else f"docker.io/library/{image}"


def why_podman_cannot_run() -> str | None:
    """None when these tests can run here, else why not (their skip reason)."""
    if sys.platform != "linux":
        return "the image tests need Linux (podman, debootstrap)"
    if os.geteuid() != 0:
        return (
            "the image tests run podman rootful and debootstrap a base image, which need root; "
            "run ./test.sh as root (CI does)"
        )
    missing = [tool for tool in ("podman", "runc", "debootstrap") if shutil.which(tool) is None]
    if missing:
        return f"not installed: {', '.join(missing)} (scripts/bootstrap.sh --test installs them)"
    return None


@dataclass
class Done:
    code: int
    out: str
    err: str

    def check(self, what: str) -> Done:
        if self.code != 0:
            raise PodmanError(
                f"{what} failed ({self.code}):\n{self.out[-3000:]}\n{self.err[-3000:]}"
            )
        return self


@dataclass(frozen=True)
class Storage:
    """Container storage for one test run (graph and run roots in a folder of its own)."""

    folder: Path

    @property
    def conf(self) -> Path:
        return self.folder / "storage.conf"

    def create(self) -> Storage:
        (self.folder / "graph").mkdir(parents=True, exist_ok=True)
        (self.folder / "run").mkdir(parents=True, exist_ok=True)
        (self.folder / "tmp").mkdir(mode=0o700, exist_ok=True)
        (self.folder / "networks").mkdir(exist_ok=True)
        self.conf.write_text(
            f'[storage]\ndriver = "overlay"\ngraphroot = "{self.folder / "graph"}"\n'
            f'runroot = "{self.folder / "run"}"\n'
        )
        return self

    async def remove(self) -> None:
        """Everything the run made, then the folder (overlay mounts included)."""
        podman = Podman(self.folder / "cleanup", self)
        await podman.run("rm", "-a", "-f", "-t", "0", timeout=120)
        await podman.run("volume", "rm", "-a", "-f", timeout=120)
        await podman.run("system", "reset", "-f", timeout=300)
        # the overlay driver mounts its own folder; a reset that failed can leave it mounted
        for mount_point in self.mount_points():
            await podman.run(mount_point, timeout=60, tool="umount")
        shutil.rmtree(self.folder, ignore_errors=True)
        left = self.mount_points()
        assert not left, f"podman left mounts behind: {left}"

    def mount_points(self) -> list[str]:
        """What is mounted inside the storage folder, deepest first."""
        inside = str(self.folder.resolve()) + os.sep
        with open("/proc/self/mounts", encoding="utf-8") as mounts:
            found = [line.split()[1] for line in mounts]
        return sorted((m for m in found if m.startswith(inside)), key=len, reverse=True)


class Podman:
    """Runs podman (and podman-compose) with this machine's settings, on a run's storage."""

    def __init__(self, folder: Path, storage: Storage) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        conf = folder / "containers.conf"
        conf.write_text(
            CONTAINERS_CONF.format(tmp=storage.folder / "tmp", networks=storage.folder / "networks")
        )
        self.env = {
            **os.environ,
            "CONTAINERS_CONF": str(conf),
            "CONTAINERS_STORAGE_CONF": str(storage.conf),
        }
        self.folder = folder
        self.storage = storage

    async def run(self, *args: str, timeout: float = 120, tool: str = "podman") -> Done:
        """`podman ARGS` (or another tool with this environment), killed past `timeout`."""
        process = await asyncio.create_subprocess_exec(
            tool,
            *args,
            env=self.env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout)
        except TimeoutError:
            process.kill()
            out, err = await process.communicate()
            err += f"\n(killed after {timeout} s)".encode()
        code = -9 if process.returncode is None else process.returncode
        return Done(code, out.decode(errors="replace"), err.decode(errors="replace"))

    async def compose(self, *args: str, timeout: float = 300) -> Done:
        tool = str(Path(sys.executable).parent / "podman-compose")
        return await self.run(*args, timeout=timeout, tool=tool)

    # ---- the base ------------------------------------------------------------------------
    async def ensure_base(self) -> str:
        """The Dockerfile's base: the real one if present, else our stand-in (made once)."""
        if (await self.run("image", "exists", BASE)).code == 0:
            return "present"
        shared = os.environ.get(SHARED_ENV)
        if shared:
            made = await shared_base_tarball(self, Path(shared))
            await self.import_base(Path(shared) / BASE_TARBALL)
            return "made from debootstrap" if made else "imported (debootstrapped by another run)"
        with tempfile.TemporaryDirectory(dir=self.folder) as tmp:
            await self.make_base_tarball(Path(tmp) / BASE_TARBALL)
            await self.import_base(Path(tmp) / BASE_TARBALL)
        return "made from debootstrap"

    async def make_base_tarball(self, tarball: Path) -> None:
        """The stand-in's root file system, from debootstrap, as a tar file at `tarball`."""
        with tempfile.TemporaryDirectory(dir=self.folder) as tmp:
            root = Path(tmp) / "rootfs"
            try:
                await self._make_base_tarball(root, tarball)
            finally:
                unmount_under(root)

    async def _make_base_tarball(self, root: Path, tarball: Path) -> None:
        await self.run_checked_local(
            [
                "debootstrap",
                "--variant=minbase",
                "--include=python3,python3-venv,ca-certificates,netbase,tzdata",
                "bookworm",
                str(root),
                DEBIAN_MIRROR,
            ],
            "debootstrap",
            timeout=600,
        )
        # Python where the official image has it: /usr/local/bin/python, pip beside it
        await self.run_checked_local(
            ["chroot", str(root), "python3", "-m", "venv", "/usr/local"], "venv"
        )
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for item in (root / cache).glob("*"):
                if item.is_file():
                    item.unlink()
        # written beside, then renamed: whoever sees `tarball` sees all of it
        partial = tarball.with_name(tarball.name + ".partial")
        await self.run_checked_local(
            ["tar", "-C", str(root), "-cf", str(partial), "."], "tar", timeout=300
        )
        partial.rename(tarball)

    async def import_base(self, tarball: Path) -> None:
        """`tarball` (from make_base_tarball) into this run's storage as the base's tag."""
        done = await self.run(
            "import",
            "--change",
            f"ENV PATH={STAND_IN_PATH}",
            "--change",
            "ENV LANG=C.UTF-8",
            "--change",
            f"LABEL {STAND_IN_LABEL}=debootstrap",
            "--change",
            'CMD ["python3"]',
            str(tarball),
            BASE,
            timeout=300,
        )
        done.check("podman import of the stand-in base")

    async def ensure_postgres(self) -> str:
        """compose.shards.yaml's PostgreSQL: the pinned one if present or pullable, else a
        stand-in built on the base under its tag (Debian's postgresql-15, the official entry
        point's variables), labelled as a stand-in."""
        if (await self.run("image", "exists", POSTGRES_PINNED)).code == 0:
            return "present"
        if (await self.run("pull", POSTGRES_PINNED, timeout=60)).code == 0:
            return "pulled"
        await self.ensure_base()
        done = await self.run(
            "build",
            "--network",
            "host",
            "--format",
            "docker",
            "--pull=never",
            "-t",
            POSTGRES,
            "-f",
            str(STAND_INS / "postgres.Containerfile"),
            str(STAND_INS),
            timeout=900,
        )
        done.check("building the postgres:15 stand-in")
        return "made from Debian's postgresql-15"

    async def run_checked_local(self, argv: list[str], what: str, timeout: float = 120) -> None:
        done = await self.run(*argv[1:], timeout=timeout, tool=argv[0])
        done.check(what)

    # ---- the build ------------------------------------------------------------------------
    async def build_args(self) -> list[str]:
        """How a build of our Dockerfile gets its Python packages here: pip in the build takes
        them from this run's wheelhouse (`wheelhouse`), mounted at /wheels, and from no index;
        it still checks each file against requirements.lock's hashes, as --require-hashes asks.
        The host's network stays the build's (apt-get reaches the Debian mirror)."""
        wheels = await self.wheelhouse()
        pip_conf = self.folder / "pip.conf"
        pip_conf.write_text("[global]\nno-index = true\nfind-links = /wheels\n")
        return [
            "--network",
            "host",
            "--format",
            "docker",
            "--pull=never",
            "-v",
            f"{wheels}:/wheels:ro",
            "-v",
            f"{pip_conf}:/etc/pip.conf:ro",
        ]

    async def wheelhouse(self) -> Path:
        """requirements.lock's files, downloaded by the host's pip once per run (from its cache
        when it has them: scripts/bootstrap.sh installed the same versions), for the image's
        Python and platform. The torch CPU wheel comes from TORCH_INDEX_URL if set, else from
        a local folder pip here takes wheels from, else from the Dockerfile's default index.
        (The build's pip downloading them itself took 12-17 s and 13 s of CPU in a 90 s build;
        here they come while the base is made, and the tampered-lock build downloads nothing.)"""
        folder = self.storage.folder / "wheels"
        complete = folder / ".complete"
        if complete.exists():
            return folder
        folder.mkdir(exist_ok=True)
        version = re.search(r"python:(\d+)\.(\d+)", BASE)
        assert version is not None, BASE
        argv = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--disable-pip-version-check",
            "--require-hashes",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--no-binary",
            "docopt",
            "--implementation",
            "cp",
            "--python-version",
            ".".join(version.groups()),
            "--abi",
            "cp" + "".join(version.groups()),
            *(f"--platform={tag}" for tag in base_platforms()),
            "-r",
            str(REPO / "requirements.lock"),
            "-d",
            str(folder),
        ]
        local_torch = any(
            TORCH_WHEEL.fullmatch(p.name) for f in find_links() for p in f.glob("torch-*.whl")
        )
        if "TORCH_INDEX_URL" in os.environ or not local_torch:
            argv += ["--extra-index-url", os.environ.get("TORCH_INDEX_URL", torch_index_url())]
        done = await self.run(*argv[1:], timeout=1800, tool=argv[0])
        done.check("downloading requirements.lock's files on the host")
        complete.touch()
        return folder

    async def base_args(self) -> list[str]:
        """How the Dockerfile's pinned base is found: as written when that very image is here,
        else `--from` the image under its tag (the stand-in, made by `ensure_base`)."""
        if (await self.run("image", "exists", pinned_base())).code == 0:
            return []
        return ["--from", BASE]

    async def build(self, tag: str, context: Path = REPO) -> float:
        """Build `context`'s Dockerfile as `tag`; the seconds it took."""
        started = time.monotonic()
        args = [*await self.build_args(), *await self.base_args()]
        done = await self.run("build", *args, "-t", tag, str(context), timeout=1800)
        done.check(f"building {tag}")
        return time.monotonic() - started

    async def inspect(self, what: str) -> dict:  # type: ignore[type-arg]
        done = (await self.run("inspect", what)).check(f"inspecting {what}")
        return json.loads(done.out)[0]

    async def remove(self, *names: str) -> None:
        for name in names:
            with contextlib.suppress(PodmanError):
                await self.run("rm", "-f", "-t", "0", name, timeout=60)


def unmount_under(root: Path) -> None:
    """Unmount whatever is still mounted in `root`: debootstrap mounts the host's /proc and
    /sys there and unmounts them only when it ends by itself (killed past its limit, it left
    them, and nobody could remove the folder)."""
    prefix = str(root.resolve())
    with open("/proc/self/mounts", encoding="utf-8") as mounts:
        points = [line.split()[1].replace("\\040", " ") for line in mounts]
    inside = [p for p in points if p == prefix or p.startswith(prefix + "/")]
    for point in sorted(inside, key=len, reverse=True):  # the deepest first
        subprocess.run(["umount", "--lazy", point], capture_output=True, timeout=60, check=False)


async def shared_base_tarball(podman: Podman, shared: Path) -> bool:
    """Make the stand-in base's tarball in `shared` unless another run has: the first to come
    makes it while it holds the folder's lock, the others wait for the lock and take the same
    file. True when this run made it."""
    shared.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + 1200  # the maker's own limits: debootstrap 600 s, tar 300 s
    with open(shared / f"{BASE_TARBALL}.lock", "w") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise PodmanError(f"waited 1200 s for another run's base in {shared}") from None
                await asyncio.sleep(0.5)
        try:
            if (shared / BASE_TARBALL).exists():
                return False
            await podman.make_base_tarball(shared / BASE_TARBALL)
            return True
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def base_platforms() -> list[str]:
    """The platform tags pip in the base accepts, as `pip download --platform` needs them
    spelt: manylinux for the base's glibc and every older one (pip widens only the legacy
    manylinux2014 tag by itself), then plain linux."""
    arch = platform.machine()
    major, newest = BASE_GLIBC
    tags = [f"manylinux_{major}_{minor}_{arch}" for minor in range(newest, 16, -1)]
    return [*tags, f"manylinux2014_{arch}", f"linux_{arch}"]


def torch_index_url() -> str:
    """The Dockerfile's default TORCH_INDEX_URL (its ARG line)."""
    (url,) = re.findall(r"^ARG TORCH_INDEX_URL=(\S+)$", (REPO / "Dockerfile").read_text(), re.M)
    return url


def find_links() -> list[Path]:
    """The local folders pip here takes wheels from (PIP_FIND_LINKS, pip's config)."""
    found = os.environ.get("PIP_FIND_LINKS", "").split()
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=60
    ).stdout
    found += re.findall(r"find-links='([^']+)'", listed)
    return [Path(f) for f in dict.fromkeys(found) if Path(f).is_dir()]


async def prepare_shared_base(shared: Path) -> str:
    """test.sh's head start: the stand-in base's tarball in `shared`, for the image tests that
    run later (they wait for it on the folder's lock, or make it themselves if this failed)."""
    if (reason := why_podman_cannot_run()) is not None:
        return f"not made: {reason}"
    folder = Path(tempfile.mkdtemp(dir=shared, prefix="prepare-"))
    try:
        # no container storage: debootstrap, chroot and tar run on the host
        podman = Podman(folder, Storage(folder / "storage"))
        made = await shared_base_tarball(podman, shared)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return "made" if made else "already there"


if __name__ == "__main__":
    print(f"the stand-in base: {asyncio.run(prepare_shared_base(Path(sys.argv[1])))}")
