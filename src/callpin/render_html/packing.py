"""Pack the rows a page leaves to its script: as markup, or as the events' own frames.

A page's size must grow with what a reader looks at, not with the log: rows past
the first screenfuls (the equal runs of a diff, the later events of a long log) are
compressed with raw deflate and base64-encoded, CHUNK_ROWS rows per chunk, in inert
`<script type="text/x-callpin-...">` elements that the page's script unpacks when
their block is opened or scrolled to. A chunk holds either rows' markup
(`text/x-callpin-rows`) or, for a diff's folded equal runs, the events' frames
(`text/x-callpin-frames`), which the script decodes and draws as the Python cells
would: writing a million rows' markup was most of the time of writing a long diff.

A frames chunk's payload is the frames' lengths (uint32, little-endian), then the
frames back to back; when some old event's frame differs from its new one (fields
left out of the comparison), the old side's lengths and frames follow. Its
attributes give the first new and old index (`data-old` is empty when the events
have no aligned old side) and the open calls of both sides before its first event.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from bisect import bisect_right
from typing import TYPE_CHECKING, Final, NamedTuple

from ..text import SHOWN_DEPTH
from .cells import INDENT_DEPTH, LONG_CHARS, LONG_HEAD, THREAD_COLORS, escape

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ..diff import Diff
    from .sequence import Stacks

CHUNK_ROWS: Final = 400
# zlib's level 1 packs these rows (markup that repeats itself) about 6% larger than
# level 6, in about a third of the time: at 200,000 equal events, 4.54 MB against
# 4.29 MB for the page, 0.12 s against 0.35 s of packing.
LEVEL: Final = 1
# Ext types whose text the page's script does not draw as Python does: decimals,
# dates, times and paths are re-parsed, a big int may be past Python's limit for
# decimal text, and a str with lone surrogates has no faithful JavaScript string. A
# chunk whose frames may hold one is drawn as markup instead. An ext's type byte follows its head (fixext 1-16,
# 0xd4-0xd8) or its 1, 2 or 4 length bytes (ext 8, 16, 32: 0xc7, 0xc8, 0xc9); the
# bytes are first mapped to those classes (1 to 4, type bytes 5, others 0), where
# each shape is a literal search (a match may also lie inside other bytes: then
# the chunk is drawn as markup, which is only slower).
_PYTHON_DRAWN_TYPES: Final = b"\x04\x05\x07\x08\x09\x0a\x0b\x12"
_EXT_CLASSES: Final = bytes(
    1
    if 0xD4 <= b <= 0xD8
    else 2
    if b == 0xC7
    else 3
    if b == 0xC8
    else 4
    if b == 0xC9
    else 5 * (b in _PYTHON_DRAWN_TYPES)
    for b in range(256)
)
_WIDE_EXTS: Final = (
    re.compile(rb"\x02[\s\S]\x05"),
    re.compile(rb"\x03[\s\S]{2}\x05"),
    re.compile(rb"\x04[\s\S]{4}\x05"),
)


class FrameChunk(NamedTuple):
    """Up to CHUNK_ROWS equal events of a fold: from new index `new` (and old index
    `old`, None when they are aligned with no old event), `length` of them; `drawn`
    when their rows are written as markup rather than as frames."""

    new: int
    old: int | None
    length: int
    drawn: bool


def packed_rows(rows: Iterable[str]) -> tuple[list[str], int]:
    """The rows as compressed chunks of markup and how many rows there were."""
    chunks: list[str] = []
    batch: list[str] = []
    count = 0
    for row in rows:
        batch.append(row)
        count += 1
        if len(batch) == CHUNK_ROWS:
            chunks.append(_markup_chunk(batch))
            batch = []
    if batch:
        chunks.append(_markup_chunk(batch))
    return chunks, count


def _markup_chunk(batch: list[str]) -> str:
    return f'<script type="text/x-callpin-rows">{_packed("".join(batch).encode("utf-8"))}</script>'


def _packed(data: bytes) -> str:
    packer = zlib.compressobj(LEVEL, zlib.DEFLATED, -15)
    return base64.b64encode(packer.compress(data) + packer.flush()).decode("ascii")


def frame_chunks(diff: Diff, folds: Iterable[range]) -> list[list[FrameChunk]]:
    """The chunks of each fold's equal events: cut where the aligned old indices stop
    running on, and every CHUNK_ROWS events; each marked `drawn` when its frames may
    hold what the script does not draw (see _EXT_CLASSES)."""
    runs = diff.runs
    starts = [run.new for run in runs]
    planned: list[list[FrameChunk]] = []
    for folded in folds:
        chunks: list[FrameChunk] = []
        j, end = folded.start, folded.stop
        while j < end:
            k = bisect_right(starts, j) - 1
            if k >= 0 and j < runs[k].new + runs[k].length:
                old: int | None = runs[k].old + (j - runs[k].new)
                stop = min(end, runs[k].new + runs[k].length)
            else:
                old = None
                stop = min(end, starts[k + 1]) if k + 1 < len(starts) else end
            for first in range(j, stop, CHUNK_ROWS):
                count = min(CHUNK_ROWS, stop - first)
                start = None if old is None else old + (first - j)
                chunks.append(FrameChunk(first, start, count, _needs_python(diff, first, start, count)))
            j = stop
        planned.append(chunks)
    return planned


def _needs_python(diff: Diff, new: int, old: int | None, count: int) -> bool:
    new_frames = diff.new.frames[new : new + count]
    if _may_hold_python_drawn(new_frames):
        return True
    if old is None:
        return False
    old_frames = diff.old.frames[old : old + count]
    return old_frames != new_frames and _may_hold_python_drawn(old_frames)


def _may_hold_python_drawn(frames: Sequence[bytes]) -> bool:
    classes = b"".join(frames).translate(_EXT_CLASSES)
    return b"\x01\x05" in classes or any(shape.search(classes) for shape in _WIDE_EXTS)


def frames_chunk(diff: Diff, chunk: FrameChunk, stacks: tuple[Stacks, Stacks]) -> str:
    """A chunk of equal events as their frames (see the module docstring)."""
    new_frames = diff.new.frames[chunk.new : chunk.new + chunk.length]
    payload = _framed(new_frames)
    paired = ""
    if chunk.old is not None:
        old_frames = diff.old.frames[chunk.old : chunk.old + chunk.length]
        if old_frames != new_frames:
            payload += _framed(old_frames)
            paired = ' data-pairs="1"'
    old = "" if chunk.old is None else str(chunk.old)
    opened = json.dumps([_stacks_json(stacks[0]), _stacks_json(stacks[1])], separators=(",", ":"))
    return (
        f'<script type="text/x-callpin-frames" data-new="{chunk.new}" data-old="{old}"'
        f' data-count="{chunk.length}"{paired} data-stacks="{escape(opened)}">{_packed(payload)}</script>'
    )


def _framed(frames: Sequence[bytes]) -> bytes:
    return struct.pack(f"<{len(frames)}I", *map(len, frames)) + b"".join(frames)


def _stacks_json(stacks: Stacks) -> list[list[int]]:
    """Each thread's open calls as [thread, depth, lane, depth, lane, ...]."""
    return [[thread, *(n for call in calls for n in call)] for thread, calls in stacks]


def lazy_rows(chunks: list[str], *, more: str, fallback: str) -> str:
    """The inner part of a lazy block: the place rows go, the chunks, a "more" button,
    and what a reader without JavaScript is told instead."""
    return (
        '<div class="rows"></div>'
        + "".join(chunks)
        + f'<button type="button" class="more js-only">{escape(more)}</button>'
        + f'<noscript><p class="more">{escape(fallback)}</p></noscript>'
    )


def page_facts(lanes: dict[str, int]) -> str:
    """What the script needs to draw frames as the Python cells do: each lane's
    number and the cells' limits, as JSON (ASCII only, `<` written as an escape, so
    no text from a log can end the element)."""
    facts = {
        "lanes": lanes,
        "longChars": LONG_CHARS,
        "longHead": LONG_HEAD,
        "indentDepth": INDENT_DEPTH,
        "shownDepth": SHOWN_DEPTH,
        "threadColors": len(THREAD_COLORS),
    }
    text = json.dumps(facts, separators=(",", ":")).replace("<", "\\u003c")
    return f'<script type="application/json" id="callpin-facts">{text}</script>'
