"""Shared fixtures: the implementations under test."""

from __future__ import annotations

from typing import Any

import pytest

from callpin import _impl, codec

IMPLEMENTATIONS: dict[str, Any] = {"python": codec.Encoder}
if _impl.IMPLEMENTATION == "c":
    IMPLEMENTATIONS["c"] = _impl.Encoder


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def encoder_class(request: pytest.FixtureRequest) -> Any:
    """Each available encoder implementation in turn (C only where it is built and live)."""
    return IMPLEMENTATIONS[request.param]
