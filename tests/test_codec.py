"""The canonical codec: natives match msgpack, ext types round-trip, encoding is pure."""

from __future__ import annotations

import msgpack
import pytest

from callpin import codec
from callpin.normalize import NO_RULES


@pytest.mark.parametrize(
    "value",
    [None, True, False, 0, 127, 128, -32, -33, 255, 256, 65535, 65536, 2**32, 2**64 - 1,
     -(2**63), 1.5, -0.0, "", "x" * 31, "x" * 32, "x" * 256, "é" * 70000, b"", b"x" * 300,
     [], list(range(16)), {}, {str(i): i for i in range(16)}],
)
def test_natives_are_the_bytes_msgpack_writes(encoder_class, value):
    assert encoder_class(NO_RULES).encode(value) == msgpack.packb(value, use_bin_type=True)
