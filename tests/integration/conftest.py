"""Fixtures of the integration tests that drive headless Chromium."""

from __future__ import annotations

import pytest

from chromium import Browser, find_chromium


@pytest.fixture(scope="session")
def chromium() -> str:
    """The path of headless Chromium: `make browser` (part of `make test`) finds or installs it."""
    path = find_chromium()
    if path is None:
        pytest.skip("headless Chromium is needed: `make browser` installs Debian's chromium package")
    return path


@pytest.fixture(scope="module")
def browser(chromium: str, tmp_path_factory: pytest.TempPathFactory):
    """One browser for a test module, with a profile of its own."""
    with Browser(chromium, str(tmp_path_factory.mktemp("chromium-profile"))) as driven:
        yield driven
