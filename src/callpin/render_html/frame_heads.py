"""Read each event frame's kind, label, thread and depth from its bytes, without decoding the frame.

Placing a long log's events needs only these four fields of each frame, and decoding
whole frames (their arguments and values) was most of the time of placing them. A
frame is read here when its bytes say plainly where the fields are: the head byte
`0x98`, a kind below 4, a label of at most 255 bytes (fixstr or str8), no error, and a
thread and depth of one byte each (positive fixints, below 128). Any other frame is
left to the decoder (its key is None).
"""

from __future__ import annotations

import re
from operator import getitem, itemgetter
from typing import TYPE_CHECKING, Final, NamedTuple, cast

from ..codec import FRAME_HEAD
from ..frame_keys import UNCUT, label_cut

if TYPE_CHECKING:
    from collections.abc import Sequence

# The shortest frame the columns below can read without running off its start.
_SHORTEST: Final = 10
# A frame's last three bytes 0xc0, t, d are a nil error, thread t and depth d unless
# t or d is the tail of a wider int: the head of that int (uint or int of 16, 32 or 64
# bits) would stand at one of these distances from the end.
_WIDER_HEADS: Final = {
    -4: rb"[\xcd\xd1]",
    -5: rb"[\xce\xd2]",
    -6: rb"[\xce\xd2]",
    -9: rb"[\xcf\xd3]",
    -10: rb"[\xcf\xd3]",
}


class FrameHeads(NamedTuple):
    """Per frame: its key (kind byte and encoded label), its thread and its depth;
    `unread` holds the indices of the frames to decode instead (their key is None,
    their thread and depth bytes meaningless)."""

    keys: list[bytes | None]
    threads: bytes
    depths: bytes
    unread: set[int]


def frame_heads(frames: Sequence[bytes]) -> FrameHeads:
    """The keys, threads and depths of `frames`, read in passes over columns of bytes."""
    if not frames:
        return FrameHeads([], b"", b"", set())
    if min(map(len, frames)) < _SHORTEST:
        # Too short to hold a wider int, so the padding never reads as one.
        frames = [frame if len(frame) >= _SHORTEST else bytes(_SHORTEST) + frame for frame in frames]
    heads = list(map(itemgetter(slice(0, 4)), frames))
    cuts = {head: _label_cut(head) for head in set(heads)}
    keys = cast("list[bytes | None]", list(map(getitem, frames, map(cuts.__getitem__, heads))))
    # Each frame's last _SHORTEST bytes back to back: column k of them is every
    # _SHORTEST-th byte from k.
    tails = b"".join(map(itemgetter(slice(-_SHORTEST, None)), frames))
    depths = tails[_SHORTEST - 1 :: _SHORTEST]
    threads = tails[_SHORTEST - 2 :: _SHORTEST]
    unread: set[int] = set()
    if UNCUT in cuts.values():
        unread.update(k for k, key in enumerate(keys) if not key)
    unread.update(found.start() for found in re.finditer(rb"[\x80-\xff]", depths))
    unread.update(found.start() for found in re.finditer(rb"[\x00\x80-\xff]", threads))
    unread.update(found.start() for found in re.finditer(rb"[^\xc0]", tails[_SHORTEST - 3 :: _SHORTEST]))
    for distance, wider in _WIDER_HEADS.items():
        unread.update(found.start() for found in re.finditer(wider, tails[_SHORTEST + distance :: _SHORTEST]))
    for k in unread:
        keys[k] = None
    return FrameHeads(keys, threads, depths, unread)


def _label_cut(head: bytes) -> slice:
    """The slice of a frame holding its kind byte and encoded label, from its first four bytes."""
    if len(head) < 4 or head[0] != FRAME_HEAD or head[1] > 3:
        return UNCUT
    return label_cut(head[2:4])
