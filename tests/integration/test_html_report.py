"""The HTML report in a real browser: headless Chromium loads a known diff's page,
dumps its DOM and takes a screenshot; each op is checked in the DOM and in the pixels.

Chromium is Debian's `chromium` package, found (or installed) by `make browser`, a step
of `make test`; a test never installs anything. Without it the tests skip and say why.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from collections import Counter

import pytest
from click.testing import CliRunner

from callpin.cli import cli
from callpin.render_html import OP_COLORS, OP_TINTS
from html_dom import parse, stylesheet_rules
from sample_logs import call, mark, ret, write

BROWSER_TIMEOUT = 120
WINDOW = (2400, 640)

# The renewals swap (the receipt before the charge), a changed amount, an extra
# call on a second thread and a missing one; the look-up nests a cache call.
LOOKUP = [
    call("accounts.lookup", "cust_1"),
    call("cache.get", "cust_1", depth=1),
    ret("accounts.lookup", {"card": "card_A"}),
]
CHARGE = call("billing.charge_card", "card_A", amount=1500, currency="usd")
RECEIPT = call("billing.send_receipt", "card_A", "renewed")
OLD = [
    *LOOKUP,
    CHARGE,
    RECEIPT,
    call("ledger.record", "renewal", 1500),
    call("audit.log", "renew"),
    mark("returned", {"ok": True}),
]
NEW = [
    *LOOKUP,
    RECEIPT,
    CHARGE,
    call("ledger.record", "renewal", 0),
    call("notify.slack", "renewed", thread=2),
    mark("returned", {"ok": True}),
]
KNOWN_OPS = {
    ("moved", "billing.send_receipt"),
    ("moved", "billing.charge_card"),
    ("changed", "ledger.record"),
    ("missing", "audit.log"),
    ("extra", "notify.slack"),
}


@pytest.fixture(scope="session")
def chromium() -> str:
    """The path of headless Chromium: `make browser` (part of `make test`) finds or installs it."""
    path = os.environ.get("CALLPIN_CHROMIUM") or shutil.which("chromium")
    if path is None:
        pytest.skip("headless Chromium is needed: `make browser` installs Debian's chromium package")
    return path


@pytest.fixture(scope="module")
def report(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The known diff's page written by the CLI, its DOM as Chromium built it, and a screenshot."""
    folder = tmp_path_factory.mktemp("html-report")
    old, new = write(folder / "old.cpin", *OLD), write(folder / "new.cpin", *NEW)
    page = folder / "report.html"
    result = CliRunner().invoke(cli, ["diff", old, new, "--format", "html", "-o", str(page)])
    assert result.exit_code == 1, result.output
    screenshot = folder / "report.png"
    browser = [
        chromium,
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--no-first-run",
        "--hide-scrollbars",
        "--force-color-profile=srgb",
        "--force-device-scale-factor=1",
        f"--user-data-dir={folder / 'profile'}",
    ]
    dom = subprocess.run(
        [*browser, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=BROWSER_TIMEOUT,
        check=True,
    ).stdout
    subprocess.run(
        [
            *browser,
            f"--screenshot={screenshot}",
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=BROWSER_TIMEOUT,
        check=True,
    )
    return {"page": page, "dom": parse(dom), "screenshot": screenshot}


def test_the_browser_built_every_op_of_the_known_diff(report):
    rows = report["dom"].find_all("div", cls="op")
    assert {(row.attrs["data-op"], row.attrs["data-label"]) for row in rows} == KNOWN_OPS
    for row in rows:
        kind = row.attrs["data-op"]
        assert f"op-{kind}" in row.classes
        assert row.find(cls="tag").text() == kind
    tally = Counter(row.attrs["data-op"] for row in rows)
    # A moved event stands at its old and at its new place.
    assert tally == {"moved": 4, "changed": 1, "missing": 1, "extra": 1}
    (changed,) = [row for row in rows if row.attrs["data-op"] == "changed"]
    assert changed.find("li").text() == "args[1]: 1500 → 0"


def test_each_op_class_has_its_kind_colour_in_the_page_stylesheet(report):
    rules = stylesheet_rules(report["dom"])
    assert len(set(OP_COLORS.values())) == len(OP_COLORS)
    for kind, color in OP_COLORS.items():
        assert f"background:{color}" in rules[f".op-{kind} .tag"]
        assert f"background:{OP_TINTS[kind]}" in rules[f".op-{kind}"]


def test_the_screenshot_shows_every_op_colour(report):
    screenshot = report["screenshot"]
    assert screenshot.parent.parent == report["page"].parent.parent
    width, height, pixels = read_png(screenshot.read_bytes())
    assert (width, height) == WINDOW
    seen = Counter(pixels)
    for kind, color in OP_COLORS.items():
        assert seen[_rgb(color)] >= 100, f"{kind} ({color}) barely on screen: {seen[_rgb(color)]} pixels"
        assert seen[_rgb(OP_TINTS[kind])] >= 1000, kind


def _rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def read_png(data: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """Width, height and RGB pixels of an 8-bit RGB or RGBA PNG, non-interlaced."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, idat = 8, b""
    while position < len(data):
        (length,), kind = (
            struct.unpack(">I", data[position : position + 4]),
            data[position + 4 : position + 8],
        )
        chunk = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color_type, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and color_type in (2, 6) and interlace == 0
        elif kind == b"IDAT":
            idat += chunk
        position += 12 + length
    channels = 3 if color_type == 2 else 4
    stride = width * channels
    raw = zlib.decompress(idat)
    previous = bytearray(stride)
    pixels: list[tuple[int, int, int]] = []
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        _unfilter(kind, line, previous, channels)
        pixels.extend(zip(line[0::channels], line[1::channels], line[2::channels], strict=True))
        previous = line
    return width, height, pixels


def _unfilter(kind: int, line: bytearray, above: bytearray, step: int) -> None:
    if kind == 1:
        for i in range(step, len(line)):
            line[i] = (line[i] + line[i - step]) & 0xFF
    elif kind == 2:
        for i in range(len(line)):
            line[i] = (line[i] + above[i]) & 0xFF
    elif kind == 3:
        for i in range(len(line)):
            left = line[i - step] if i >= step else 0
            line[i] = (line[i] + (left + above[i]) // 2) & 0xFF
    elif kind == 4:
        for i in range(len(line)):
            a = line[i - step] if i >= step else 0
            b = above[i]
            c = above[i - step] if i >= step else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
