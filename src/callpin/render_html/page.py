"""Assemble the report page: its frame (controls, lane names, threads) and its document."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .assets import SCRIPT, lane_width
from .cells import escape, thread_class

if TYPE_CHECKING:
    from collections.abc import Iterable

# Longer lane names are cut (with an ellipsis; the full name is the lane's title).
LANE_NAME_CHARS: Final = 24


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


def thread_legend(threads: Iterable[int]) -> str:
    """Which colour is which thread, when there is more than one."""
    seen = sorted(set(threads))
    if len(seen) < 2:
        return ""
    items = " ".join(f'<b class="{thread_class(t)}">t{t}</b>' for t in seen)
    return f'<p class="threads">threads: {items}</p>'
