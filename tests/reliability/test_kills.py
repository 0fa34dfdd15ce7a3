"""Kills: a writer killed with SIGKILL at any point leaves the file it replaces whole.

Every place that rewrites a file the user keeps is driven in a child process and
killed after a random delay: `callpin.record(path)`, `callpin.pin(mode="update")`, the
pytest plugin's `--callpin-update`, `callpin normalize IN IN` and `callpin bless`
(baselines/MANIFEST). The child says `ready` just before the write; the delays are
spread over [0, 1.2 x] the time an unkilled run takes from there to its exit. After
every kill the file is either the previous version or the complete new one, byte for
byte, and the writers' temporary files never pile up: the next writer of the same path
removes those of dead processes (docs/FORMAT.md, "Writing").
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

import callpin
from callpin import manifest
from callpin.manifest import Entry

from .conftest import Figures, Scale

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

SEED = 20240611
TARGET = "callpin_kill_target"
SPY = [f"{TARGET}.send"]

TARGET_SOURCE = """
def send(number, blob, tag=None):
    return None


def run(events, first=0):
    for number in range(first, first + events):
        send(number, b"%08d" % number * 128, tag="item-%d" % number)
"""

# The writer in the child process. It prints `ready` when only the write (and the
# process's exit) is left, so that the kills land in the write window.
DRIVER = f"""
import sys

import callpin
import {TARGET} as target
from callpin.cli import main

kind, path, events = sys.argv[1], sys.argv[2], int(sys.argv[3])
spy = {SPY!r}


def ready():
    print("ready", flush=True)


if kind == "record":
    with callpin.record(path, spy=spy):
        target.run(events)
        ready()
elif kind == "pin-update":
    with callpin.pin(path, spy=spy, mode="update"):
        target.run(events)
        ready()
elif kind == "normalize":
    ready()
    main(["normalize", path, path, "--rule", "item=item-[0-9]+"])
elif kind == "bless":
    ready()
    main(["bless", "renew.cpin", "--reason", "billing refactor", "--baselines", sys.argv[4]])
else:
    raise SystemExit("unknown kind " + kind)
"""

# The pytest plugin's update path: a test pinned with the `callpin` fixture, run
# with --callpin-update.
PINNED_TEST = f"""
import os

import {TARGET} as target


def test_send(callpin):
    with callpin.pin(spy={SPY!r}):
        target.run(int(os.environ["CALLPIN_KILL_EVENTS"]))
        print("ready", flush=True)
"""


@dataclass
class Writer:
    """One way callpin rewrites a kept file, set up in its own folder."""

    kind: str
    path: Path  # the file the user keeps
    command: list[str]
    cwd: Path
    old: bytes = b""
    new: bytes = b""
    window: float = 0.0  # seconds from `ready` to the replace of `path`

    @property
    def folder(self) -> Path:
        return self.path.parent

    def leftovers(self) -> list[str]:
        """Every name in the kept file's folder other than the kept files."""
        kept = {self.path.name, "renew.cpin"}
        return sorted(name for name in os.listdir(self.folder) if name not in kept)

    def restore(self) -> None:
        """Put the previous version back, by a rename that leaves no file behind."""
        staging = self.cwd / f"restore-{self.kind}"
        staging.write_bytes(self.old)
        os.replace(staging, self.path)


def _env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CI", None)
    env.pop("CALLPIN_MODE", None)
    env.pop("CALLPIN_OUTPUT_DIR", None)
    env.pop("PYTEST_ADDOPTS", None)
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _start(writer: Writer, env: dict[str, str]) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        writer.command,
        cwd=writer.cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    for line in child.stdout:
        if line.strip() == "ready":
            return child
    child.wait()
    assert child.stderr is not None
    raise AssertionError(f"{writer.kind} writer exited before it was ready: {child.stderr.read()}")


def _run_whole(writer: Writer, env: dict[str, str]) -> float:
    """Run the writer unkilled; the seconds from `ready` until `path` is replaced."""
    before = writer.path.stat().st_ino
    child = _start(writer, env)
    began = time.monotonic()
    replaced = None
    while replaced is None and child.poll() is None:
        if writer.path.stat().st_ino != before:
            replaced = time.monotonic() - began
        time.sleep(0.0005)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, f"{writer.kind}: {out}{err}"
    return time.monotonic() - began if replaced is None else replaced


def _setup(
    root: Path,
    make_module: Callable[..., ModuleType],
    events: int,
    entries: int,
) -> list[Writer]:
    """Each writer's folder with its previous version in place."""
    (root / f"{TARGET}.py").write_text(TARGET_SOURCE)
    driver = root / "driver.py"
    driver.write_text(DRIVER)
    python = [sys.executable, str(driver)]
    module = make_module(TARGET, TARGET_SOURCE)
    writers = []

    for kind in ("record", "pin-update"):
        path = root / kind / "renew.cpin"
        with callpin.record(path, spy=SPY):
            module.run(3)
        writers.append(Writer(kind, path, [*python, kind, str(path), str(events)], root))

    plugin = root / "plugin"
    plugin.mkdir()
    (plugin / "pytest.ini").write_text("[pytest]\n")
    (plugin / "test_pinned.py").write_text(PINNED_TEST)
    path = plugin / "baselines" / "test_pinned" / "test_send.cpin"
    with callpin.record(path, spy=SPY):
        module.run(3)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-s",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "--callpin-update",
        "test_pinned.py",
    ]
    writers.append(Writer("plugin-update", path, command, plugin))

    # normalize rewrites a big log in place with one more rule.
    path = root / "normalize" / "renew.cpin"
    with callpin.record(path, spy=SPY):
        module.run(events)
    writers.append(Writer("normalize", path, [*python, "normalize", str(path), "0"], root))

    # bless rewrites a big manifest with one line changed.
    folder = root / "bless"
    with callpin.record(folder / "renew.cpin", spy=SPY):
        module.run(5)
    others = [Entry(f"tests/test_{n:06d}/test_case.cpin", f"{n:016x}", n, "characterized") for n in range(entries)]
    manifest.write(folder, [*others, Entry("renew.cpin", "0" * 16, 3, "first")])
    command = [*python, "bless", str(folder / manifest.NAME), "0", str(folder)]
    writers.append(Writer("bless", folder / manifest.NAME, command, root))

    for writer in writers:
        writer.old = writer.path.read_bytes()
    return writers


def _check_new(writer: Writer, events: int, entries: int) -> None:
    """The unkilled result is a whole file of its kind, different from the previous one."""
    assert writer.new != writer.old, writer.kind
    if writer.kind == "bless":
        blessed = manifest.parse(writer.new.decode())
        assert blessed["renew.cpin"].reason == "billing refactor"
        assert len(blessed) == entries + 1
    else:
        log = callpin.load(writer.path)
        log.verify()
        assert len(log) == events


def test_a_killed_writer_leaves_the_previous_file_or_the_whole_new_one(
    tmp_path: Path,
    make_module: Callable[..., ModuleType],
    scale: Scale,
    figures: Figures,
) -> None:
    kills = scale.pick(20, 200)
    # Events of about 1 KiB each: a log write of 4 or 20 MB, long enough to be hit.
    events = scale.pick(4_000, 20_000)
    entries = scale.pick(5_000, 100_000)
    env = {**_env(tmp_path), "CALLPIN_KILL_EVENTS": str(events)}
    writers = _setup(tmp_path, make_module, events, entries)
    for writer in writers:
        writer.window = _run_whole(writer, env)
        writer.new = writer.path.read_bytes()
        _check_new(writer, events, entries)
        assert writer.leftovers() == [], f"{writer.kind} left {writer.leftovers()}"
        writer.restore()

    rng = random.Random(SEED)
    outcomes: Counter[str] = Counter()
    most_left: Counter[str] = Counter()
    lost: list[str] = []
    for number in range(kills):
        writer = writers[number % len(writers)]
        delay = rng.uniform(0, 1.2 * writer.window)
        child = _start(writer, env)
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=120)
        after = writer.path.read_bytes() if writer.path.exists() else None
        if after == writer.old:
            outcomes["old"] += 1
        elif after == writer.new:
            outcomes["new"] += 1
            writer.restore()
        else:
            outcomes["lost"] += 1
            size = "missing" if after is None else f"{len(after)} bytes"
            lost.append(f"kill {number} ({writer.kind}, {delay:.3f} s): {size}")
            writer.restore()
        most_left[writer.kind] = max(most_left[writer.kind], len(writer.leftovers()))

    # The next unkilled write of each path removes what the killed writers left.
    left = 0
    for writer in writers:
        _run_whole(writer, env)
        assert writer.path.read_bytes() == writer.new, writer.kind
        left += len(writer.leftovers())

    figures.add("kills", "kills", kills)
    figures.add("kills", "old baseline intact", outcomes["old"])
    figures.add("kills", "new log complete", outcomes["new"])
    figures.add("kills", "baselines lost or partial", outcomes["lost"], zero=True)
    figures.add("kills", "temp files left", left, zero=True)
    assert lost == []
    # Each writer removes the dead writers' temporary files before it makes its own.
    assert max(most_left.values()) <= 1, dict(most_left)
    assert left == 0, {writer.kind: writer.leftovers() for writer in writers}
