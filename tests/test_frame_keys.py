"""Each event's kind+label key cut from its frame, and the tallies of the distinct keys."""

from __future__ import annotations

from typing import Any

import pytest

from callpin import _impl, frame_keys
from sample_logs import call, frames_of, mark, ret

IMPLEMENTATIONS: dict[str, Any] = {"python": frame_keys.frame_keys}
if _impl.IMPLEMENTATION == "c":
    IMPLEMENTATIONS["c"] = _impl.frame_keys


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def keys_of(request: pytest.FixtureRequest) -> Any:
    """Each available implementation of frame_keys in turn (C only where it is live)."""
    return IMPLEMENTATIONS[request.param]


class Parser:
    """A parser that records the frames it is given and cuts a key of its own."""

    def __init__(self) -> None:
        self.indices: list[int] = []

    def __call__(self, frame: bytes, index: int) -> bytes:
        self.indices.append(index)
        return b"parsed"


def test_keys_are_the_kind_and_label_bytes_tallied_in_order_of_first_appearance(keys_of):
    frames = frames_of(call("svc.b", 1), call("svc.a"), ret("svc.b", 2), call("svc.b", 3), mark("done", 1))
    parse = Parser()
    keys, key_of, counts, firsts = keys_of(frames, parse)
    assert keys == [b"\x00\xa5svc.b", b"\x00\xa5svc.a", b"\x01\xa5svc.b", b"\x03\xa4done"]
    assert key_of == [0, 1, 2, 0, 3]
    assert counts == [2, 1, 1, 1]
    assert firsts == [0, 1, 2, 4]
    assert parse.indices == []


def test_a_label_of_up_to_255_bytes_is_cut_without_the_parser(keys_of):
    frames = frames_of(call("x" * 31), call("y" * 32), call("z" * 255))
    parse = Parser()
    keys, *_ = keys_of(frames, parse)
    assert keys == [b"\x00\xbf" + b"x" * 31, b"\x00\xd9\x20" + b"y" * 32, b"\x00\xd9\xff" + b"z" * 255]
    assert parse.indices == []


def test_only_a_longer_label_is_given_to_the_parser(keys_of):
    frames = frames_of(call("svc.a"), call("w" * 256), call("svc.a"), call("w" * 256))
    parse = Parser()
    keys, key_of, counts, firsts = keys_of(frames, parse)
    assert parse.indices == [1, 3]
    assert (keys, key_of, counts, firsts) == ([b"\x00\xa5svc.a", b"parsed"], [0, 1, 0, 1], [2, 2], [0, 1])


@pytest.mark.parametrize("odd", [b"\x98", b"\x97\x00\xa1a", b"\x98\x80\xa1a"])
def test_one_frame_not_opening_as_an_event_sends_every_frame_to_the_parser(keys_of, odd):
    frames = [*frames_of(call("svc.a"), call("svc.b")), odd]
    parse = Parser()
    keys, key_of, counts, firsts = keys_of(frames, parse)
    assert parse.indices == [0, 1, 2]
    assert (keys, key_of, counts, firsts) == ([b"parsed"], [0, 0, 0], [3], [0])


def test_a_label_cut_short_by_its_frame_is_what_the_frame_holds(keys_of):
    keys, *_ = keys_of([b"\x98\x00\xa9abc"], Parser())
    assert keys == [b"\x00\xa9abc"]


def test_the_parser_error_of_the_first_frame_it_fails_on_propagates(keys_of):
    def parse(frame: bytes, index: int) -> bytes:
        raise ValueError(f"event {index} is malformed")

    with pytest.raises(ValueError, match="event 0 is malformed"):
        keys_of([b"\x98\x00\xa1a", b"\x98"], parse)


def test_no_frames_no_keys(keys_of):
    assert keys_of([], Parser()) == ([], [], [], [])
