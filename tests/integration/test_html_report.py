"""The HTML report in a real browser: headless Chromium loads report pages at 1,280 px,
and each is checked in the DOM as laid out (full text visible, nothing under a
lifeline, the raise's own form, both sides on screen), by keyboard, and in pixels.

Chromium is Debian's `chromium` package, found (or installed) by `make browser`, a step
of `make test`; a test never installs anything. Without it the tests skip and say why.
It is driven over the DevTools pipe by tests/chromium.py. No test here times anything:
the load times are measured by benchmarks/bench_html.py.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections import Counter

import pytest
from click.testing import CliRunner

from callpin import diff, load
from callpin.cli import cli
from callpin.event import render_event
from callpin.render_html import LONG_CHARS, OP_COLORS, OP_TINTS, RAISE_COLOR, render_html
from chromium import Browser
from sample_logs import call, mark, raised, ret, write

WIDTH, HEIGHT = 1280, 720

# The demo's drift: the unsafe refactor sends the receipt before the charge.
DEMO_CHARGE = call("billing.charge_card", "card_A", 1500, "usd", idempotency_key="renewal-42-<uuid:1>")
DEMO_RECEIPT = call(
    "billing.send_receipt", "ada@example.com", 1500, "usd", reference="renewal-42-<uuid:1>", renewed_at="<ts:1>"
)
DEMO_DONE = mark("returned", {"case": 42, "status": "renewed", "amount": 1500, "charged": True})
DEMO = ([DEMO_CHARGE, DEMO_RECEIPT, DEMO_DONE], [DEMO_RECEIPT, DEMO_CHARGE, DEMO_DONE])

# Nested calls three deep, a raise inside them, and an argument long enough to fold.
LETTER = "Dear customer, " + "your subscription was renewed. " * (LONG_CHARS // 20)
NESTED_OLD = [
    call("accounts.lookup", "cust_1"),
    call("cache.get", "cust_1", depth=1),
    call("cache.backend.fetch", "cust_1", timeout=2.5, depth=2),
    ret("cache.backend.fetch", None, depth=2),
    ret("cache.get", None, depth=1),
    ret("accounts.lookup", {"card": "card_A"}),
    call("billing.charge_card", "card_A", amount=1500, currency="usd"),
    call("vault.token", "card_A", depth=1),
    ret("vault.token", "tok_1", depth=1),
    ret("billing.charge_card", {"ok": True}),
    call("mail.send_receipt", "ada@example.com", LETTER),
    mark("returned", {"ok": True}),
]
NESTED_NEW = [
    *NESTED_OLD[:7],
    call("vault.token", "card_A", depth=1),
    raised("vault.token", "vault.Locked", "card_A is locked for 24 hours", depth=1),
    raised("billing.charge_card", "billing.Declined", "amount 1500 over the daily limit of 1000 for card_A"),
    mark("returned", {"ok": False}),
]

# Seven collaborators, each called with a long argument list.
MODULES = ["accounts", "billing", "ledger", "mail", "audit", "notify", "vault"]
WIDE_OLD = [
    call(f"{module}.operation_{k}", f"customer-{k}@example.com", k * 1500, reference=f"renewal-{k}-{module}")
    for k in range(6)
    for module in MODULES
]
WIDE_NEW = list(WIDE_OLD)
WIDE_NEW[10], WIDE_NEW[11] = WIDE_NEW[11], WIDE_NEW[10]
WIDE_NEW[20] = call("vault.operation_2", "customer-2@example.com", 0, reference="renewal-2-vault")
del WIDE_NEW[30]
WIDE_NEW.insert(35, call("notify.operation_9", "renewed", channel="#billing"))


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Each report written by the CLI: the demo's drift, the nested and raising diff, the wide diff."""
    folder = tmp_path_factory.mktemp("html-report")
    written = {}
    for name, (old_events, new_events) in {
        "demo": DEMO,
        "nested": (NESTED_OLD, NESTED_NEW),
        "wide": (WIDE_OLD, WIDE_NEW),
    }.items():
        old = write(folder / f"{name}-old.cpin", *old_events)
        new = write(folder / f"{name}-new.cpin", *new_events)
        page = folder / f"{name}.html"
        result = CliRunner().invoke(cli, ["diff", old, new, "--format", "html", "-o", str(page)])
        assert result.exit_code == 1, result.output
        written[name] = {"page": page, "old": old, "new": new}
    return written


def expected_texts(*paths: str) -> set[str]:
    """Every event's whole text, as the report writes it (no thread tag, no indentation)."""
    return {render_event(event._replace(thread=1, depth=0)) for path in paths for event in load(path)}


# A report of the laid-out page: every text cell's visible text (each folded long
# text opened once first), whether any is clipped, and any text box that meets a
# lifeline or an arrow of its row.
LAYOUT = """(() => {
  document.querySelectorAll('main details').forEach(d => { d.open = true; });
  const w = parseFloat(getComputedStyle(document.documentElement).getPropertyValue('--w'));
  const out = {texts: [], clipped: [], overlaps: [], offscreen: [], sides: []};
  for (const row of document.querySelectorAll('main .row:not(.heads)')) {
    const lines = [], arrows = [];
    for (const g of row.querySelectorAll(':scope > .g')) {
      const box = g.getBoundingClientRect();
      for (let x = box.left + w / 2; x < box.right; x += w) lines.push([x, box.top, box.bottom]);
      for (const a of g.querySelectorAll('.ar')) arrows.push(a.getBoundingClientRect());
    }
    for (const tx of row.querySelectorAll(':scope > .tx')) {
      const text = tx.innerText;
      if (!text.trim()) continue;
      out.texts.push(text);
      const box = tx.getBoundingClientRect();
      if (tx.scrollWidth > tx.clientWidth + 1 || tx.scrollHeight > tx.clientHeight + 1) out.clipped.push(text);
      if (box.right > innerWidth + 0.5 || box.width < 1) out.offscreen.push(text);
      for (const [x, top, bottom] of lines)
        if (x > box.left && x < box.right && bottom > box.top && top < box.bottom)
          out.overlaps.push(['lifeline', text]);
      for (const a of arrows)
        if (a.right > box.left && a.left < box.right && a.bottom >= box.top && a.top <= box.bottom)
          out.overlaps.push(['arrow', text]);
    }
  }
  for (const head of document.querySelectorAll('.heads > .tx')) {
    const box = head.getBoundingClientRect();
    out.sides.push([box.left, box.right]);
  }
  return out;
})()"""


def open_page(browser: Browser, page, *, script: bool = True) -> None:
    browser.open(page.as_uri(), WIDTH, HEIGHT, script=script)


@pytest.mark.parametrize("name", ["demo", "nested", "wide"])
def test_every_event_is_visible_in_full_and_no_text_meets_a_lifeline_or_an_arrow(browser, pages, name, tmp_path):
    written = pages[name]
    open_page(browser, written["page"])
    browser.screenshot(tmp_path / f"{name}.png")
    layout = browser.evaluate(LAYOUT)
    shown = layout["texts"]
    for text in expected_texts(written["old"], written["new"]):
        assert any(text in seen for seen in shown), f"not shown in full: {text[:80]}"
    assert layout["clipped"] == []
    assert layout["overlaps"] == []
    assert layout["offscreen"] == []
    # Both sides usable at 1,280 px: each text column on screen and wide enough to read.
    assert len(layout["sides"]) == 2
    for left, right in layout["sides"]:
        assert right <= WIDTH and right - left >= 300, layout["sides"]


def test_a_nested_call_is_indented_by_depth_with_its_full_label(browser, pages):
    open_page(browser, pages["nested"]["page"])
    browser.evaluate("document.querySelectorAll('main details').forEach(d => { d.open = true; })")
    starts = browser.evaluate(
        """Object.fromEntries([...document.querySelectorAll('main .row:not(.heads) > .tx')]
           .filter(t => t.innerText.trim()).map(t => {
             const range = document.createRange(); range.selectNodeContents(t);
             return [t.innerText, range.getClientRects()[0].left - t.getBoundingClientRect().left]; }))"""
    )
    depth0 = starts["accounts.lookup('cust_1')"]
    depth1 = starts["cache.get('cust_1')"]
    depth2 = starts["cache.backend.fetch('cust_1', timeout=2.5)"]
    assert depth0 < depth1 < depth2
    assert depth2 - depth1 == pytest.approx(depth1 - depth0, abs=1)


def test_a_raise_has_its_own_class_colour_and_marker(browser, pages):
    open_page(browser, pages["nested"]["page"])
    raises = browser.evaluate(
        """[...document.querySelectorAll('.tx.k-raise')].map(t => [t.innerText, getComputedStyle(t).color,
             getComputedStyle(t.previousElementSibling.querySelector('.ar.raise')).borderTopColor,
             getComputedStyle(t.previousElementSibling.querySelector('.ar.raise'), '::before').content])"""
    )
    red = "rgb({}, {}, {})".format(*_rgb(RAISE_COLOR))
    assert [text for text, *_ in raises] == [
        "vault.token !! vault.Locked: card_A is locked for 24 hours",
        "billing.charge_card !! billing.Declined: amount 1500 over the daily limit of 1000 for card_A",
    ]
    assert all(color == red and arrow == red and marker == '"✕"' for _, color, arrow, marker in raises)
    returns = browser.evaluate("[...document.querySelectorAll('.tx.k-return')].map(t => getComputedStyle(t).color)")
    assert returns and red not in returns


def test_the_lane_heads_stay_visible_while_scrolling(browser, pages):
    open_page(browser, pages["wide"]["page"])
    browser.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    heads = browser.evaluate(
        "[...document.querySelectorAll('.heads .ln')].map(n => { const b = n.getBoundingClientRect();"
        " return [n.textContent, Math.round(b.top), Math.round(b.bottom)]; })"
    )
    assert browser.evaluate("scrollY") > HEIGHT
    assert {name for name, _, _ in heads} == {"code under test", *MODULES}
    assert all(0 <= top and bottom <= HEIGHT for _, top, bottom in heads)


def test_the_list_view_shows_one_line_per_event_with_the_sides_aligned(browser, pages, tmp_path):
    open_page(browser, pages["wide"]["page"])
    browser.evaluate("document.querySelector('label.switch').click()")
    browser.screenshot(tmp_path / "wide-list.png")
    rows = browser.evaluate(
        """[...document.querySelectorAll('main .row:not(.heads)')].map(r => {
             const t = [...r.querySelectorAll(':scope > .tx')].map(x => x.getBoundingClientRect());
             return [t.map(b => Math.round(b.height)), t.map(b => Math.round(b.top))]; })"""
    )
    assert browser.evaluate("getComputedStyle(document.querySelector('main .row .g')).visibility") == "hidden"
    for heights, tops in rows:
        assert max(heights) <= 22
        assert len(set(tops)) == 1  # both sides on one line


def test_keys_and_buttons_step_from_difference_to_difference_and_name_it_in_the_url(browser, pages):
    open_page(browser, pages["wide"]["page"])
    ids = browser.evaluate("[...document.querySelectorAll('.op')].map(r => r.id)")
    assert len(ids) >= 5

    def current():
        return browser.evaluate("[document.querySelector('.op.current')?.id, location.hash]")

    browser.press("n")
    assert current() == [ids[0], f"#{ids[0]}"]
    browser.press("n")
    assert current() == [ids[1], f"#{ids[1]}"]
    browser.press("j")
    assert current() == [ids[2], f"#{ids[2]}"]
    browser.press("k")
    assert current() == [ids[1], f"#{ids[1]}"]
    browser.press("p")
    assert current() == [ids[0], f"#{ids[0]}"]
    browser.evaluate("document.getElementById('next').click()")
    assert current() == [ids[1], f"#{ids[1]}"]
    assert browser.evaluate("document.getElementById('position').textContent") == f"2 / {len(ids)}"
    # The row named by the URL is on screen.
    top = browser.evaluate(f"document.getElementById({json.dumps(ids[1])}).getBoundingClientRect().top")
    assert 0 <= top < HEIGHT


def test_a_shared_link_to_a_difference_opens_on_it(browser, pages):
    ids_page = pages["wide"]["page"]
    open_page(browser, ids_page)
    last = browser.evaluate("[...document.querySelectorAll('.op')].pop().id")
    browser.open(f"{ids_page.as_uri()}#{last}", WIDTH, HEIGHT)
    assert browser.evaluate("document.querySelector('.op.current').id") == last
    assert 0 <= browser.evaluate(f"document.getElementById('{last}').getBoundingClientRect().top") < HEIGHT


def test_a_moved_event_links_both_ways(browser, pages):
    open_page(browser, pages["demo"]["page"])
    browser.evaluate("document.querySelector('#old-0 a.tag').click()")
    assert browser.evaluate("location.hash") == "#new-1"
    browser.evaluate("document.querySelector('#new-1 a.tag').click()")
    assert browser.evaluate("location.hash") == "#old-0"


def test_without_javascript_the_first_screen_of_differences_reads_in_full(browser, pages):
    written = pages["nested"]
    open_page(browser, written["page"], script=False)
    assert browser.evaluate("document.documentElement.classList.contains('js')") is False
    first = browser.evaluate(
        "(() => { const r = document.querySelector('.op'); const b = r.getBoundingClientRect();"
        " return [r.innerText, b.top, b.height]; })()"
    )
    text, top, height = first
    assert "vault.token → 'tok_1'" in text
    assert height > 0 and 0 <= top < HEIGHT  # on the first screen
    links = browser.evaluate("[...document.querySelectorAll('.diffs a')].map(a => a.getAttribute('href'))")
    assert links and all(link.startswith("#") for link in links)


# ---------------------------------------------------------------------------
# The known diff's colours in pixels, and a large diff's size and folds.


def test_the_screenshot_shows_every_op_colour(browser, pages, tmp_path):
    open_page(browser, pages["wide"]["page"])
    browser.evaluate("document.querySelector('.op').scrollIntoView()")
    shot = tmp_path / "wide.png"
    browser.screenshot(shot, full_page=True)
    width, _, pixels = read_png(shot.read_bytes())
    assert width == WIDTH
    seen = Counter(pixels)
    for kind, color in OP_COLORS.items():
        assert seen[_rgb(color)] >= 100, f"{kind} ({color}) barely on screen: {seen[_rgb(color)]} pixels"
        assert seen[_rgb(OP_TINTS[kind])] >= 1000, kind


# The 14 differences of the large diff: two swapped pairs (two moved events each),
# four changed calls, three extra and three missing.
BIG_EDITS = (
    "swap",
    "change",
    "insert",
    "delete",
    "change",
    "insert",
    "swap",
    "delete",
    "change",
    "insert",
    "delete",
    "change",
)


def big_pair(count: int):
    """A log of `count` events and a copy with BIG_EDITS spread over it."""
    old = [call(f"svc{k % 9}.step", f"customer-{k}", k % 1000) for k in range(count)]
    new = list(old)
    gap = count // (len(BIG_EDITS) + 1)
    # From the end backwards, so each edit leaves the places of the ones before it alone.
    for n in reversed(range(len(BIG_EDITS))):
        spot, edit = gap * (n + 1), BIG_EDITS[n]
        if edit == "swap":
            new[spot], new[spot + 1] = new[spot + 1], new[spot]
        elif edit == "change":
            new[spot] = call(f"svc{spot % 9}.step", f"customer-{spot}", -1)
        elif edit == "insert":
            new.insert(spot, call("audit.extra", spot))
        else:
            del new[spot]
    return old, new


@pytest.fixture(scope="module")
def big_page(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("html-big")
    old, new = big_pair(50_000)
    result = diff(write(folder / "old.cpin", *old), write(folder / "new.cpin", *new))
    page = folder / "big.html"
    page.write_text(render_html(result), encoding="utf-8")
    return page, result


def test_a_50000_event_diff_with_14_differences_is_at_most_2_mb(big_page):
    page, result = big_page
    assert len(result.new) == 50_000
    assert result.summary == {"moved": 4, "missing": 3, "extra": 3, "changed": 4}
    assert page.stat().st_size <= 2 * 1024 * 1024


def test_a_large_diff_shows_its_first_difference_on_load_and_draws_a_fold_when_opened(browser, big_page):
    page, result = big_page
    open_page(browser, page)
    first = browser.evaluate("document.querySelector('.op').id")
    ids = {f"new-{op.new}" for op in result.ops if op.new is not None}
    assert first in ids | {f"old-{op.old}" for op in result.ops if op.new is None or op.op == "moved"}
    before = browser.evaluate("document.querySelectorAll('.row').length")
    assert before < 500  # the equal runs are not drawn yet
    drawn = browser.evaluate(
        """(async () => {
             const fold = document.querySelector('details.lazy');
             fold.open = true;
             for (let i = 0; i < 200 && !fold.querySelector('.rows .row'); i++)
               await new Promise(r => setTimeout(r, 25));
             return [...fold.querySelectorAll('.rows .row .ix')].slice(0, 3).map(x => x.textContent);
           })()"""
    )
    assert drawn == ["0", "0", "1"]  # the old and new index of the run's first event, then the next
    assert browser.evaluate("document.querySelectorAll('.row').length") > before


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
