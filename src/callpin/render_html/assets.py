"""The report's inline stylesheet and script: the page's only style and only code.

The script is a constant (nothing from a log is ever built into it). It adds what
the static page cannot do alone: next / previous difference (buttons and the keys
n / p, j / k), the current difference in the URL fragment, and the rows kept
compressed in the page (folded equal runs, the later pages of a long log), drawn
only when a reader opens them. Without JavaScript the first screen, the summary's
links, moved pairs' links and the list view still work.
"""

from __future__ import annotations

from importlib import resources
from typing import Final

from .cells import THREAD_COLORS

# Each op kind has a strong colour (its tag) and a tint (its row); no other part
# of the page uses them, so a row's colour always says its kind.
OP_COLORS: Final = {
    "moved": "#b7791f",
    "missing": "#c53030",
    "extra": "#2f855a",
    "changed": "#2b6cb0",
}
OP_TINTS: Final = {
    "moved": "#fdf3d7",
    "missing": "#fde2e1",
    "extra": "#dcf5e6",
    "changed": "#dde9f8",
}
RAISE_COLOR: Final = "#9b2c2c"
ROW_HEIGHT: Final = 22
# Lanes share at most this width per side, each between the two bounds.
DIAGRAM_WIDTH: Final = 176
LANE_WIDTH: Final = 24
MIN_LANE_WIDTH: Final = 8
# The height a packed chunk is taken to have before it is first laid out.
CHUNK_HEIGHT: Final = 400 * ROW_HEIGHT


def lane_width(lanes: int) -> int:
    """The width of one lane: LANE_WIDTH, narrower when many lanes must share DIAGRAM_WIDTH."""
    return max(MIN_LANE_WIDTH, min(LANE_WIDTH, DIAGRAM_WIDTH // max(lanes, 1)))


def stylesheet(lanes: int, *, sides: int, head_height: int) -> str:
    """The page's stylesheet for `lanes` lifelines on each of `sides` sides (1 or 2)."""
    w = lane_width(lanes)
    side = "4.5em var(--dw) minmax(0,1fr)"
    columns = side if sides == 1 else f"5.5em {side} {side}"
    rules = [
        f":root{{--w:{w}px;--dw:{w * lanes}px;--hh:{head_height}px}}",
        "body{font:14px system-ui,sans-serif;color:#1a202c;margin:0 .75em .75em}",
        "h1{font-size:1.3em;margin:.5em 0 .3em}header p{margin:.2em 0}",
        ".summary{font-weight:bold}.meta{font-family:monospace;overflow-wrap:anywhere}",
        ".nav{position:sticky;top:0;z-index:3;background:#fff;border-bottom:1px solid #cbd2d9}",
        ".bar-top{display:flex;gap:1em;align-items:center;padding:4px 0;font-size:13px}",
        ".bar-top button{font:inherit;padding:1px .6em}",
        f".row{{display:grid;grid-template-columns:{columns};align-items:stretch;min-height:{ROW_HEIGHT}px}}",
        ".row>*{min-width:0}",
        f".ix{{font:11px/{ROW_HEIGHT}px monospace;text-align:right;padding-right:.5em;color:#4a5568;"
        "white-space:nowrap}",
        ".ix a{color:inherit}",
        # The diagram column: lifelines drawn as a repeating background, one per lane.
        ".g{position:relative;width:var(--dw);background:linear-gradient(90deg,transparent calc(var(--w)/2 - 1px),"
        "#cbd2d9 calc(var(--w)/2 - 1px),#cbd2d9 calc(var(--w)/2 + 1px),transparent calc(var(--w)/2 + 1px))"
        " 0 0/var(--w) 100% repeat-x}",
        ".g>*{position:absolute;box-sizing:border-box}",
        ".bar{top:0;bottom:0;width:6px;background:#fff;border:1px solid var(--t);"
        "left:calc((var(--l) + .5)*var(--w) - 3px + var(--k)*3px)}",
        ".bar.top{top:8px}.bar.end{bottom:auto;height:14px}",
        ".ar{top:10px;height:0;border-top:2px solid var(--t);z-index:1;"
        "left:calc((var(--a) + .5)*var(--w));width:calc(var(--n)*var(--w))}",
        ".ar::after{content:'';position:absolute;top:-6px;border:5px solid transparent}",
        ".ar.r::after{right:-2px;border-left:7px solid var(--t);border-right:0}",
        ".ar.l::after{left:-2px;border-right:7px solid var(--t);border-left:0}",
        ".ar.ret,.ar.raise{border-top-style:dashed}",
        ".ar.self{top:5px;width:10px;height:9px;border:2px solid var(--t);border-left:0}",
        ".ar.self::after{display:none}",
        f".ar.raise{{border-top-color:{RAISE_COLOR}}}.ar.raise.r::after{{border-left-color:{RAISE_COLOR}}}",
        f".ar.raise.l::after{{border-right-color:{RAISE_COLOR}}}",
        # A raise's marker: a cross where the exception leaves its collaborator.
        f".ar.raise::before{{content:'✕';position:absolute;top:-8px;font:bold 11px/1 sans-serif;color:{RAISE_COLOR}}}",
        ".ar.raise.r::before{left:-4px}.ar.raise.l::before{right:-4px}",
        ".mk{top:6px;width:9px;height:9px;background:var(--t);transform:rotate(45deg);"
        "left:calc((var(--a) + .5)*var(--w) - 4px)}",
        # The text column: the whole event, wrapped, indented by depth.
        ".tx{font:12px/17px ui-monospace,monospace;padding:2px .5em 2px calc(.5em + var(--d,0)*1.2em);"
        "white-space:pre-wrap;overflow-wrap:anywhere}",
        # A no-break space after each kind's glyph: the glyph never ends a line alone.
        ".k-call::before{content:'→\\0000a0';color:#718096}",
        ".k-return{color:#4a5568}.k-return::before{content:'←\\0000a0';color:#718096}",
        f".k-raise{{color:{RAISE_COLOR};background:#fff5f5}}.k-raise::before{{content:'✕\\0000a0';font-weight:bold}}",
        ".k-raise .err{font-weight:bold}",
        ".k-mark{font-style:italic}.k-mark::before{content:'◆\\0000a0';color:#718096;font-style:normal}",
        ".dp{color:#718096}.long summary{cursor:pointer}.long em{color:#718096}",
        # Lane names stand upright above their lifelines, so any number of them fit.
        ".heads{background:#fff;align-items:end}.heads .tx{font:bold 12px sans-serif;align-self:end}",
        ".g.head{background:none;height:var(--hh)}",
        ".head .ln{bottom:2px;left:calc(var(--a)*var(--w));width:var(--w);writing-mode:vertical-rl;"
        "transform:rotate(180deg);font:min(11px,calc(var(--w) - 1px))/var(--w) sans-serif;white-space:nowrap;"
        "text-align:left;"
        "overflow:hidden;max-height:calc(var(--hh) - 4px)}",
        ".tag{font:bold 11px/18px sans-serif;color:#fff;text-align:center;margin:2px 4px;"
        "border-radius:3px;text-decoration:none;align-self:start}",
        ".fields{grid-column:2/-1;margin:0 0 4px 5em;padding:0;list-style:none;"
        "font:12px monospace;white-space:pre-wrap;overflow-wrap:anywhere}",
        ".fields .fp{font-weight:bold}.fields del{color:#9b2c2c}.fields ins{color:#276749;text-decoration:none}",
        ".op{scroll-margin-top:calc(var(--hh) + 60px)}",
        ".op.current{outline:3px solid #1a202c;outline-offset:-1px}",
        ".skip>summary{font:12px sans-serif;color:#4a5568;padding:3px 0 3px 1em;cursor:pointer;"
        "background:#f7fafc;border-top:1px dashed #cbd2d9;border-bottom:1px dashed #cbd2d9}",
        ".more{margin:.5em 1em;font:12px sans-serif}",
        # An event the page's script could not read from its frame says so in its row.
        f".bad{{color:{RAISE_COLOR};font-style:italic}}p.bad{{margin:.5em 1em;font-size:12px}}",
        # A drawn chunk off screen is neither laid out nor painted until scrolled to.
        f".chunk{{content-visibility:auto;contain-intrinsic-size:auto {CHUNK_HEIGHT}px}}",
        # Many labels scroll inside their box, so the first difference stays near the top.
        ".countbox{max-height:18em;overflow:auto}",
        ".counts{border-collapse:collapse;margin:0 0 .5em;font:13px monospace}",
        ".counts caption{text-align:left;font:bold 14px sans-serif}",
        ".counts td,.counts th{padding:1px 1em 1px 0;text-align:left}",
        ".counts .differs{font-weight:bold}.counts .differs td:last-child::after{content:' ≠'}",
        ".overview{display:flex;flex-wrap:wrap;gap:0 3em;align-items:flex-start}",
        ".diffs{margin:.3em 0;padding-left:2.5em;font:12px monospace;max-height:16em;overflow:auto}",
        ".diffs .tag{display:inline-block;min-width:5em;margin:1px .5em 1px 0}",
        ".threads b{font-family:monospace}",
        # The list view: one line per event, the diagrams folded away (no script needed).
        "#list-view:checked~main{--dw:0px}",
        "#list-view:checked~main .g{visibility:hidden}",
        "#list-view:checked~main .tx{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}",
        "#list-view:checked~main .tx:hover{white-space:pre-wrap}",
        "#list-view:checked~main .heads .g{height:0}",
        ".js-only{display:none}.js .js-only{display:inline}",
    ]
    for n, color in enumerate(THREAD_COLORS, start=1):
        rules.append(f".t{n}{{--t:{color}}}b.t{n}{{color:{color}}}")
    for kind, color in OP_COLORS.items():
        rules.append(f".op-{kind}{{background:{OP_TINTS[kind]}}}.op-{kind} .tag{{background:{color}}}")
    return "\n".join(rules)


# The page's script, shipped beside this module (report.js) and read once.
SCRIPT: Final = (resources.files(__package__) / "report.js").read_text(encoding="utf-8")
