"""Turn a log or a diff into one self-contained HTML page people can read: the report.

The page needs nothing from outside: the stylesheet and the script are inline.
Every text taken from a log (labels, values, messages, meta, paths) passes through
`html.escape`, so a log cannot inject markup, and the script is a constant (the
page's script writes what it draws from a log as text, never as markup). The
parts: `sequence` places events on lifelines (`frame_heads` reads what placing
needs from frames that are not decoded), `cells` draws one event, `packing` packs
the rows left to the script (as markup, or as the events' frames), `page`
assembles the document, `diff_page` and `log_page` draw the two kinds of report,
`assets` holds the stylesheet and reads the script, `report.js`, which also draws
packed frames as `cells` draws events.
"""

from __future__ import annotations

from .assets import LANE_WIDTH, OP_COLORS, OP_TINTS, RAISE_COLOR, lane_width
from .cells import LONG_CHARS, THREAD_COLORS
from .diff_page import INLINE_FOLD, render_html
from .log_page import FIRST_ROWS, render_log_html
from .packing import CHUNK_ROWS
from .sequence import CALLER

__all__ = [
    "CALLER",
    "CHUNK_ROWS",
    "FIRST_ROWS",
    "INLINE_FOLD",
    "LANE_WIDTH",
    "LONG_CHARS",
    "OP_COLORS",
    "OP_TINTS",
    "RAISE_COLOR",
    "THREAD_COLORS",
    "lane_width",
    "render_html",
    "render_log_html",
]
