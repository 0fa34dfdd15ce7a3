"""The HTML report in a real browser: headless Chromium loads a known diff's page,
dumps its DOM and takes a screenshot; each op is checked in the DOM and in the pixels.

Chromium is Debian's `chromium` package. When it is missing and this process is
root, the set-up installs it with apt-get (updating the package lists first when
apt does not know the package yet); elsewhere the tests skip and say why.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import struct
import subprocess
import time
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from callpin import diff
from callpin.render_html import OP_COLORS, render_html
from sample_logs import call, log_of, mark, ret

APT_TIMEOUT = 900
BROWSER_TIMEOUT = 120
WINDOW = (1800, 900)


def _install_chromium(lock_folder: Path) -> str | None:
    """Chromium's path, installing Debian's package when missing; None when it cannot be had."""
    found = shutil.which("chromium")
    if found:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return None
    # pytest-xdist runs this once per worker: the lock lets one worker install
    # while the others wait, and they find the browser when they get the lock.
    with open(lock_folder / "chromium-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = shutil.which("chromium")
        if found:
            return found
        environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        install = ["apt-get", "install", "-y", "--no-install-recommends",
                   "-o", "DPkg::Lock::Timeout=300", "chromium"]
        started = time.monotonic()
        done = subprocess.run(install, env=environment, capture_output=True, text=True,
                              timeout=APT_TIMEOUT, check=False)
        if done.returncode != 0:
            # A fresh machine may not have the package lists yet.
            subprocess.run(["apt-get", "update"], env=environment, capture_output=True,
                           timeout=APT_TIMEOUT, check=False)
            done = subprocess.run(install, env=environment, capture_output=True, text=True,
                                  timeout=APT_TIMEOUT, check=False)
        print(f"installed chromium in {time.monotonic() - started:.0f}s (exit {done.returncode})")
    return shutil.which("chromium")


@pytest.fixture(scope="session")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The path of a headless-capable Chromium, installed when missing and possible."""
    path = _install_chromium(tmp_path_factory.getbasetemp().parent)
    if path is None:
        reason = "not root" if os.geteuid() != 0 else "apt-get could not install it"
        pytest.skip(f"Chromium is not installed and cannot be installed here ({reason})")
    return path
