"""Cut each event's kind+label key from its frame's bytes and tally the distinct keys (reference of the C speedups).

A diff counts events per label and aligns the events of a gap on their kind and
label, so it needs each event's kind byte and label bytes, a prefix of its frame. A
label of up to 255 bytes (fixstr or str8) gives its length in the two bytes after the
kind, so the key is cut from the frame without a parser; any other frame is given to
the caller's parser. `_speedups.frame_keys` does the same in C, with the same results
and the same calls of the parser; `_impl.frame_keys` is the live one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from itertools import compress, repeat
from operator import getitem, is_, itemgetter
from typing import cast

from . import codec

# FrameKeys: (keys, key_of, counts, firsts). `keys` are the distinct kind+label keys in
# order of first appearance; `key_of[i]` is the position in `keys` of event i's key;
# `counts[k]` how many events have key k and `firsts[k]` the first of them.
FrameKeys = tuple[list[bytes], list[int], list[int], list[int]]


def frame_keys(frames: list[bytes], parse: Callable[[bytes, int], bytes]) -> FrameKeys:
    """The kind+label keys of `frames`, tallied; `parse(frame, index)` gives the key of a
    frame that cannot be cut (and raises for a malformed one).

    When some frame does not open as an event array with a small kind, every frame
    is parsed, in order, so the first malformed one is the one reported.
    """
    heads: list[bytes] = list(map(itemgetter(slice(2, 4)), frames))
    well_formed = (
        min(map(len, frames), default=4) >= 4
        and set(map(itemgetter(0), frames)) <= {codec.FRAME_HEAD}
        and max(map(itemgetter(1), frames), default=0) < 0x80
    )
    if not well_formed:
        keys = list(map(parse, frames, range(len(frames))))
    else:
        cuts = {head: label_cut(head) for head in set(heads)}
        keys = cast("list[bytes]", list(map(getitem, frames, map(cuts.__getitem__, heads))))
        if UNCUT in cuts.values():
            for index in compress(range(len(frames)), map(is_, map(cuts.get, heads), repeat(UNCUT))):
                keys[index] = parse(frames[index], index)
    positions: dict[bytes, int] = {}
    key_of = [positions.setdefault(key, len(positions)) for key in keys]
    tally = Counter(key_of)
    # Read backwards, each key's last entry is its first event.
    first = dict(zip(reversed(key_of), range(len(key_of) - 1, -1, -1), strict=True))
    distinct = range(len(positions))
    return list(positions), key_of, [tally[k] for k in distinct], [first[k] for k in distinct]


# The cut of a frame whose label is longer or not a plain str: it needs the parser.
UNCUT = slice(0, 0)


def label_cut(head: bytes) -> slice:
    """The slice of a frame holding its kind and label, from the label's first two bytes
    (the frame's third and fourth): UNCUT when the label is not a str of at most 255 bytes."""
    if 0xA0 <= head[0] <= 0xBF:
        return slice(1, 3 + (head[0] & 0x1F))
    if head[0] == 0xD9:
        return slice(1, 4 + head[1])
    return UNCUT
