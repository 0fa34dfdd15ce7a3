"""Shared fixtures: the implementations under test, throw-away modules to spy on."""

from __future__ import annotations

import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from callpin import _impl, codec, pinning

IMPLEMENTATIONS: dict[str, Any] = {"python": codec.Encoder}
if _impl.IMPLEMENTATION == "c":
    IMPLEMENTATIONS["c"] = _impl.Encoder


# Settings callpin reads from the environment. A test starts without them, so the suite means the
# same thing on a developer's machine and under a CI service that exports CI=true; a test about
# one of them sets it itself (monkeypatch.setenv), and child processes inherit the cleaned view.
AMBIENT_SETTINGS = ("CI", "CALLPIN_MODE", "CALLPIN_OUTPUT_DIR", "CALLPIN_PROBE", "CALLPIN_TODAY")


@pytest.fixture(autouse=True)
def _without_ambient_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in AMBIENT_SETTINGS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _outside_any_run_of_pins(monkeypatch: pytest.MonkeyPatch) -> None:
    # A plain callpin.pin() reports to the pytest run it is part of. The pins these tests
    # make are the subject under test, not pins of this suite: each test starts with no
    # run registered (a child pytest it starts registers its own).
    monkeypatch.setattr(pinning, "_observers", [])


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def encoder_class(request: pytest.FixtureRequest) -> Any:
    """Each available encoder implementation in turn (C only where it is built and live)."""
    return IMPLEMENTATIONS[request.param]


@pytest.fixture
def make_module() -> Iterator[Callable[..., types.ModuleType]]:
    """Build in-memory modules from source, importable by name for one test only."""
    made: list[str] = []

    def make(name: str, source: str = "") -> types.ModuleType:
        module = types.ModuleType(name)
        module.__file__ = f"<{name}>"
        sys.modules[name] = module
        made.append(name)
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)
        exec(compile(textwrap.dedent(source), f"<{name}>", "exec"), module.__dict__)
        return module

    yield make
    for name in reversed(made):
        sys.modules.pop(name, None)
