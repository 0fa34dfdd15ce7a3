"""Assemble the report page: its frame (controls, lane names, threads), its document, its packed rows.

A page's size must grow with what a reader looks at, not with the log: rows past
the first screenfuls (the equal runs of a diff, the later events of a long log) are
written as markup compressed with raw deflate and base64-encoded, CHUNK_ROWS rows
per chunk, in inert `<script type="text/x-callpin-rows">` elements; the page's
script inflates a chunk when its block is opened or scrolled to.
"""

from __future__ import annotations

import base64
import zlib
from typing import TYPE_CHECKING, Final

from .assets import SCRIPT, lane_width
from .cells import escape, thread_class

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .sequence import Step

CHUNK_ROWS: Final = 400
# Longer lane names are cut (with an ellipsis; the full name is the lane's title).
LANE_NAME_CHARS: Final = 24
# zlib's level 1 packs these rows (markup that repeats itself) about 6% larger than
# level 6, in about a third of the time: at 200,000 equal events, 4.54 MB against
# 4.29 MB for the page, 0.12 s against 0.35 s of packing.
LEVEL: Final = 1


def packed_rows(rows: Iterable[str]) -> tuple[list[str], int]:
    """The rows as compressed chunks (see the module docstring) and how many rows there were."""
    chunks: list[str] = []
    batch: list[str] = []
    count = 0
    for row in rows:
        batch.append(row)
        count += 1
        if len(batch) == CHUNK_ROWS:
            chunks.append(_pack(batch))
            batch = []
    if batch:
        chunks.append(_pack(batch))
    return chunks, count


def _pack(batch: list[str]) -> str:
    packer = zlib.compressobj(LEVEL, zlib.DEFLATED, -15)
    data = packer.compress("".join(batch).encode("utf-8")) + packer.flush()
    return f'<script type="text/x-callpin-rows">{base64.b64encode(data).decode("ascii")}</script>'


def lazy_rows(chunks: list[str], *, more: str, fallback: str) -> str:
    """The inner part of a lazy block: the place rows go, the chunks, a "more" button,
    and what a reader without JavaScript is told instead."""
    return (
        '<div class="rows"></div>'
        + "".join(chunks)
        + f'<button type="button" class="more js-only">{escape(more)}</button>'
        + f'<noscript><p class="more">{escape(fallback)}</p></noscript>'
    )


def page(title: str, stylesheet: str, body: list[str]) -> str:
    """The whole document: the stylesheet, the body's parts, and the page's script last."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width">'
        f"<title>{escape(title)}</title><style>{stylesheet}</style></head><body>\n"
        + "\n".join(part for part in body if part)
        + f"\n<script>{SCRIPT}</script>\n</body></html>\n"
    )


def controls(differences: int) -> str:
    """The bar above the lanes: previous / next difference (with the script) and the list view switch."""
    stepping = ""
    if differences:
        stepping = (
            '<span class="js-only">'
            '<button type="button" id="prev" title="previous difference (p or k)">◀ prev</button> '
            f'<span id="position">? / {differences}</span> '
            '<button type="button" id="next" title="next difference (n or j)">next ▶</button></span>'
        )
    return f'<div class="bar-top">{stepping}<label for="list-view" class="switch">☰ list view</label></div>'


def head_height(lanes: dict[str, int]) -> int:
    """The height in pixels of the lane names written upright: the longest one's."""
    longest = max((len(_lane_name(name)) for name in lanes), default=0)
    # About 0.62 em a character, in the font the stylesheet gives narrow lanes.
    font = min(11, lane_width(len(lanes)) - 1)
    return round(0.62 * font * longest) + 10


def lane_heads(lanes: dict[str, int]) -> str:
    """The diagram header: each lane's name upright above its lifeline (the full name as its title)."""
    names = "".join(
        f'<span class="ln" style="--a:{lane}" title="{escape(name)}">{escape(_lane_name(name))}</span>'
        for name, lane in lanes.items()
    )
    return f'<span class="g head">{names}</span>'


def _lane_name(name: str) -> str:
    return name if len(name) <= LANE_NAME_CHARS else name[: LANE_NAME_CHARS - 1] + "…"


def thread_legend(*sides: Iterable[Step]) -> str:
    """Which colour is which thread, when there is more than one."""
    threads = sorted({step.event.thread for steps in sides for step in steps})
    if len(threads) < 2:
        return ""
    items = " ".join(f'<b class="{thread_class(t)}">t{t}</b>' for t in threads)
    return f'<p class="threads">threads: {items}</p>'
