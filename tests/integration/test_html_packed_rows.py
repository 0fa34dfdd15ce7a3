"""The folded rows the page's script draws from frames, against the rows Python writes.

A diff page keeps each long equal run as its events' frames, decoded and drawn by
render_html/report.js when the fold is opened. The same diff written with every fold
drawn by Python (render_html.cells) is the reference: in headless Chromium, every row
of every opened fold must serialize to the same markup (text, classes, styles), so the
two renderers cannot drift. The browser is conftest.py's.
"""

from __future__ import annotations

import dataclasses
import enum
import uuid
from collections import namedtuple

from callpin import diff
from callpin.logfile import Log
from callpin.normalize import DEFAULT_RULES
from callpin.render_html import INLINE_FOLD, LONG_CHARS, diff_page, render_html
from chromium import Browser
from sample_logs import call, frames_of, log_of, mark, raised, ret

HOSTILE = "</script><img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"


class Colour(enum.Enum):
    RED = 1


@dataclasses.dataclass
class Card:
    number: str
    limit: float


Point = namedtuple("Point", "x y")


class Gateway:
    def __init__(self) -> None:
        self.url = "https://pay.example/v1"
        self.retries = 3


def varied_events() -> list:
    """Events of every shape a fold can hold: nesting, raises, marks, threads, long and
    unicode text, hostile strings, floats and ints at their edges, sets, ext values."""
    long_text = "Dear customer, " + "your subscription was renewed. " * (LONG_CHARS // 20)
    return [
        call("accounts.lookup", "cust_1", 42, None, True, False),
        call("cache.get", "cust_1", depth=1),
        call("cache.backend.fetch", "cust_1", timeout=2.5, depth=2),
        ret("cache.backend.fetch", None, depth=2),
        raised("cache.get", "cache.Miss", "no entry for 'cust_1'", depth=1),
        ret("accounts.lookup", {"card": "card_A", "limits": [1, 2.5, (3,)], 7: (), (1, "a"): b"\x00ab'\"\\"}),
        call("billing.charge_card", "card_A", amount=1500, currency="usd"),
        call("vault.token", "card_A", depth=1),
        raised("vault.token", "vault.Locked", "", depth=1),
        raised("billing.charge_card", "billing.Declined", "amount over the limit\nsecond line"),
        call("mail.send", "ada@example.com", long_text),
        call("mail.send", long_text + "\u00e9\U0001f389"),
        mark("returned", {"ok": False, "note": "it's \"quoted\" 'both'"}),
        call("floats.take", 0.1, 1.5, 1e16, 1e-05, 0.0001, -0.0, 123456789.0, 1e22, 2.5e-300, float("inf")),
        call("floats.take", float("-inf"), float("nan"), 1 / 3, 5e-324, 1.7976931348623157e308),
        call("ints.take", 2**63 - 1, -(2**63), 2**64 - 1, -1, 0, 255, 65536),
        call("text.take", "caf\u00e9", "\u4e2d\u6587", "tab\there", "esc\x1b[31m", "zw\u200bsp", "nb\u00a0sp", "\x7f"),
        call("text.take", "it's", 'say "hi"', "both ' and \"", "back\\slash", "\U0001f600", "\ue000", "\U000e0001"),
        call(HOSTILE, HOSTILE, key=HOSTILE),
        call("values.take", Colour.RED, Card("4242", 1000.0), Point(1, 2), ValueError("bad", 3)),
        call("values.take", uuid.UUID("12345678-1234-5678-1234-567812345678"), Gateway(), [[[[]]]]),
        call("values.take", {"nested": {"deeper": {"deepest": [1, {"k": None}]}}}, ()),
        call("sets.take", {3, 1, 2}, {"b", "a", "\U0001f600", "\uff01", "A"}, frozenset({(1, "x"), (0, "y")}), set()),
        call("sets.take", frozenset(), {1, "a", None, 2.5}, {frozenset({2, 1}), frozenset()}, {-1, 10, 9}),
        call("threads.work", "from t2", thread=2),
        call("threads.inner", thread=2, depth=1),
        ret("threads.inner", "done", thread=2, depth=1),
        call("threads.work", "from t7", thread=7),
        call("deep.down", depth=30),
        ret("deep.down", [1, 2], depth=30),
        mark("checkpoint", None),
        call("label.\u00e9\u00e8.\u4e2d", "x"),
        call("nodot", "x"),
        call(".leading", "x"),
    ]


# Opens every fold, waits until each has drawn all its chunks, and returns each
# folded row's markup as the browser serializes it.
FOLDED_ROWS = """(async () => {
  document.querySelectorAll('details.skip').forEach(d => { d.open = true; });
  for (let i = 0; i < 400; i++) {
    const left = document.querySelector("details.skip script[type^='text/x-callpin-']");
    if (!left) break;
    document.querySelectorAll('details.skip .more').forEach(b => b.click());
    await new Promise(r => setTimeout(r, 25));
  }
  return {
    rows: [...document.querySelectorAll('details.skip .row')].map(row => row.outerHTML),
    left: document.querySelectorAll("details.skip script[type^='text/x-callpin-']").length,
    title: document.title,
    images: document.querySelectorAll('img').length,
  };
})()"""


def folded_rows(browser: Browser, page) -> dict:
    browser.open(page.as_uri(), 1280, 720)
    return browser.evaluate(FOLDED_ROWS)


def pages_of(result, folder, monkeypatch) -> tuple:
    """The page as written, and the same diff with every fold drawn by Python."""
    packed = folder / "packed.html"
    packed.write_text(render_html(result), encoding="utf-8")
    monkeypatch.setattr(diff_page, "INLINE_FOLD", 10**9)
    drawn = folder / "drawn.html"
    drawn.write_text(render_html(result), encoding="utf-8")
    return packed, drawn


def test_the_script_draws_folded_rows_exactly_as_python_writes_them(browser, tmp_path, monkeypatch):
    events = varied_events() * 3
    assert len(events) > INLINE_FOLD
    old = log_of(*events, call("end.mark", "old"), path="old.cpin")
    new = log_of(*events, call("end.mark", "new"), path="new.cpin")
    packed, drawn = pages_of(diff(old, new), tmp_path, monkeypatch)
    written = packed.read_text(encoding="utf-8")
    assert 'type="text/x-callpin-frames"' in written
    assert 'type="text/x-callpin-rows"' not in written  # every chunk is drawn by the script
    assert 'type="text/x-callpin-frames"' not in drawn.read_text(encoding="utf-8")
    by_script, by_python = folded_rows(browser, packed), folded_rows(browser, drawn)
    assert by_script["left"] == 0
    assert len(by_script["rows"]) == len(events) - 3
    for ours, theirs in zip(by_script["rows"], by_python["rows"], strict=True):
        assert ours == theirs
    assert by_script["images"] == 0 and by_script["title"] != "pwned"


def test_a_fold_whose_old_and_new_frames_differ_draws_each_side_from_its_own(browser, tmp_path, monkeypatch):
    # Left out of the comparison, the arguments differ between the two sides of equal events.
    old_events = [call(f"svc{k % 3}.step", f"old-{k}", depth=k % 2) for k in range(60)]
    new_events = [call(f"svc{k % 3}.step", f"new-{k}", depth=k % 2) for k in range(60)]
    result = diff(log_of(*old_events, mark("end", 1)), log_of(*new_events, mark("end", 2)), ignore=["args"])
    packed, drawn = pages_of(result, tmp_path, monkeypatch)
    assert 'data-pairs="1"' in packed.read_text(encoding="utf-8")
    by_script, by_python = folded_rows(browser, packed), folded_rows(browser, drawn)
    assert by_script["rows"] == by_python["rows"]
    assert "old-5" in by_script["rows"][5] and "new-5" in by_script["rows"][5]


def test_an_unreadable_frame_in_a_fold_shows_as_a_row_of_its_own(browser, tmp_path):
    frames = frames_of(*[call("svc.step", f"customer-{k}") for k in range(60)])
    # Its label and its thread and depth read, its argument is not UTF-8.
    frames[20] = frames[20].replace(b"customer-20", b"customer\xff20")
    old = Log.from_frames([*frames, *frames_of(mark("end", 1))], rules=DEFAULT_RULES)
    new = Log.from_frames([*frames, *frames_of(mark("end", 2))], rules=DEFAULT_RULES)
    page = tmp_path / "page.html"
    page.write_text(render_html(diff(old, new)), encoding="utf-8")
    rows = folded_rows(browser, page)["rows"]
    assert len(rows) == 57
    assert rows[20].count('class="tx bad"') == 2
    assert "unreadable event: text that is not UTF-8" in rows[20]
    assert "customer-21" in rows[21]


def test_folds_of_a_diff_by_thread_are_drawn_as_python_writes_them(browser, tmp_path, monkeypatch):
    events = [call(f"svc{k % 3}.step", k, thread=1 + k % 2, depth=k % 3 // 2) for k in range(200)]
    old = log_of(*events, mark("end", 1))
    new = log_of(*events[:100], call("audit.extra", 1), *events[100:], mark("end", 2))
    packed, drawn = pages_of(diff(old, new, order="thread"), tmp_path, monkeypatch)
    by_script, by_python = folded_rows(browser, packed), folded_rows(browser, drawn)
    assert len(by_script["rows"]) > 150
    assert by_script["rows"] == by_python["rows"]


def test_a_chunk_cut_short_says_so_in_its_fold_and_the_others_still_draw(browser, tmp_path):
    import base64
    import re
    import zlib

    events = [call("svc.step", f"customer-{k}") for k in range(500)]
    old, new = log_of(*events, mark("end", 1)), log_of(*events, mark("end", 2))
    text = render_html(diff(old, new))
    first = re.search(r'(<script type="text/x-callpin-frames"[^>]*>)([^<]*)</script>', text)
    assert first is not None
    payload = zlib.decompress(base64.b64decode(first.group(2)), -15)
    packer = zlib.compressobj(1, zlib.DEFLATED, -15)
    cut = base64.b64encode(packer.compress(payload[: len(payload) // 2]) + packer.flush()).decode("ascii")
    page = tmp_path / "page.html"
    page.write_text(text.replace(first.group(0), first.group(1) + cut + "</script>"), encoding="utf-8")
    browser.open(page.as_uri(), 1280, 720)
    seen = browser.evaluate(
        FOLDED_ROWS.replace("rows: [", "bad: [...document.querySelectorAll('p.bad')].map(p => p.textContent), rows: [")
    )
    assert seen["bad"] == ["These events could not be drawn: a chunk cut short"]
    assert seen["left"] == 0
    assert len(seen["rows"]) == len(events) - 3 - 400  # the second chunk drew its rows
