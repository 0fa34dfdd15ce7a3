"""Render a comparison of two folders of baselines as text, JSON or one HTML page.

Each pair reads as one summary line; the details of a pair that differs are the
single-log renderings (`render_diff`, `render_html`), reused as they are.
"""

from __future__ import annotations

import html
import json
from typing import Any

from .folder_diff import FolderDiff, Pair
from .render_diff import render_json, render_text, summary_line
from .render_html import render_html
from .render_log import json_text
from .text import printable


def pair_line(pair: Pair) -> str:
    """`billing/renew.cpin: 2 differences: ...`, `...: identical: 4 events`, `...: only in old`."""
    if pair.diff is not None:
        return printable(f"{pair.path}: {summary_line(pair.diff)}")
    if pair.error is not None:
        return printable(f"{pair.path}: cannot compare: {pair.error}")
    return printable(f"{pair.path}: {pair.status}")


def folder_summary(result: FolderDiff) -> str:
    """`3 logs: 1 identical, 1 different, 1 only in old, 0 only in new`."""
    statuses = ("identical", "different", "only in old", "only in new", "cannot compare")
    tally = {status: sum(pair.status == status for pair in result.pairs) for status in statuses}
    parts = ", ".join(f"{n} {status}" for status, n in tally.items() if n or status != "cannot compare")
    total = len(result.pairs)
    return f"{total} log{'s' if total != 1 else ''}: {parts}"


def render_folder_text(result: FolderDiff, *, context: int = 3, color: bool = False) -> str:
    """One summary line per pair, the totals, then each differing pair's diff under its path."""
    lines = [pair_line(pair) for pair in result.pairs]
    lines.append(folder_summary(result))
    for pair in result.pairs:
        if pair.diff is not None and not pair.diff.same:
            lines.extend(["", f"== {printable(pair.path)}", render_text(pair.diff, context=context, color=color)])
    return "\n".join(lines)


def render_folder_json(result: FolderDiff) -> str:
    """`{"same", "pairs": [{"path", "status", "error"?, "diff"?}]}`; "diff" is `render_json`'s document."""
    pairs: list[dict[str, Any]] = []
    for pair in result.pairs:
        item: dict[str, Any] = {"path": pair.path, "status": pair.status}
        if pair.error is not None:
            item["error"] = pair.error
        if pair.diff is not None:
            item["diff"] = json.loads(render_json(pair.diff))
        pairs.append(item)
    return json_text({"same": result.same, "pairs": pairs})


def render_folder_html(result: FolderDiff, *, context: int = 3) -> str:
    """One page: the summary lines, then each differing pair's own page framed under its path."""
    items = "".join(f"<li>{html.escape(pair_line(pair))}</li>" for pair in result.pairs)
    body = [
        f"<h1>{html.escape(printable(result.old))} → {html.escape(printable(result.new))}</h1>",
        f"<ul class='pairs'>{items}</ul>",
        f"<p class='summary'>{html.escape(folder_summary(result))}</p>",
    ]
    for pair in result.pairs:
        if pair.diff is not None and not pair.diff.same:
            page = html.escape(render_html(pair.diff, context=context), quote=True)
            body.append(
                f"<section data-path='{html.escape(printable(pair.path), quote=True)}'>"
                f"<h2>{html.escape(printable(pair.path))}</h2>"
                f"<iframe srcdoc=\"{page}\" style='width:100%;height:40em;border:1px solid #ccc'></iframe></section>"
            )
    return (
        "<!doctype html>\n<html><head><meta charset='utf-8'><title>callpin folder diff</title></head><body>"
        + "".join(body)
        + "</body></html>\n"
    )
