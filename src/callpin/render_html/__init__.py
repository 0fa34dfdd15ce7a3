"""Turn a log or a diff into one self-contained HTML page people can read: the report.

The page needs nothing from outside: the stylesheet and the script are inline.
Every text taken from a log (labels, values, messages, meta, paths) passes through
`html.escape`, so a log cannot inject markup, and the script is a constant. The
parts: `sequence` places events on lifelines, `cells` draws one event, `page`
assembles the document and packs long runs of rows, `diff_page` and `log_page`
draw the two kinds of report, `assets` holds the stylesheet and the script.
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
