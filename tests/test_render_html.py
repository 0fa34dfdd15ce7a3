"""The HTML report: page structure, the sequence diagram, op rows, escaping, folding and size."""

from __future__ import annotations

import re

import pytest

from callpin import diff
from callpin.logfile import Log
from callpin.normalize import DEFAULT_RULES
from callpin.render_diff import rows
from callpin.render_html import (
    CALLER,
    LABEL_CHARS,
    LANE_WIDTH,
    OP_COLORS,
    THREAD_COLORS,
    TITLE_CHARS,
    render_html,
    render_log_html,
)
from html_dom import parse, stylesheet_rules
from sample_logs import call, frames_of, log_of, mark, raised, renewal, ret

LOOKUP = call("accounts.lookup", "cust_1")
CHARGE = call("billing.charge_card", "card_A", amount=1500, currency="usd")
RECEIPT = call("billing.send_receipt", "card_A", "renewed")
DONE = mark("returned", {"ok": True})


def known_diff():
    """The renewals swap, a changed amount, an extra call and a missing one."""
    old = log_of(
        LOOKUP,
        CHARGE,
        RECEIPT,
        call("ledger.record", "renewal", 1500),
        call("audit.log", "renew"),
        DONE,
    )
    new = log_of(
        LOOKUP,
        RECEIPT,
        CHARGE,
        call("ledger.record", "renewal", 0),
        call("notify.slack", "renewed"),
        DONE,
    )
    return diff(old, new)


def op_rows(page: str, kind: str | None = None):
    return [
        element for element in parse(page).find_all("div", cls="op") if kind is None or element.attrs["data-op"] == kind
    ]


def lane_names(element) -> list[str]:
    return [group.find("text").text() for group in element.find("svg", cls="head").find_all("g")]


def arrow_ends(svg) -> tuple[int, int]:
    """The x where an event's arrow starts and where it ends."""
    start, end = re.match(r"M(\d+) \d+H(\d+)", svg.find("path").attrs["d"]).groups()
    return int(start), int(end)


def center(lane: int) -> int:
    return lane * LANE_WIDTH + LANE_WIDTH // 2


# ---------------------------------------------------------------------------
# A diff: the page and its op rows.


def test_a_diff_page_is_one_document_with_the_summary_and_the_count_table():
    page = render_html(known_diff())
    root = parse(page)
    assert page.startswith("<!DOCTYPE html>")
    assert len(root.find_all("html")) == 1
    assert root.find("p", cls="summary").text() == ("5 differences: 2 moved, 1 missing, 1 extra, 1 changed")
    table = root.find("table", cls="counts")
    cells = [[cell.text() for cell in row.find_all("td")] for row in table.find_all("tr")[1:]]
    assert [cell.text() for cell in table.find_all("th")][:2] == ["label", "calls"]
    assert ["audit.log", "1 → 0"] == cells[[row[0] for row in cells].index("audit.log")][:2]
    assert ["notify.slack", "0 → 1"] == cells[[row[0] for row in cells].index("notify.slack")][:2]
    assert ["billing.charge_card", "1 → 1"] == cells[[row[0] for row in cells].index("billing.charge_card")][:2]
    assert [row.attrs.get("class") for row in table.find_all("tr")[1:] if "audit" in row.text()] == ["differs"]


def test_each_op_of_a_diff_is_a_row_classed_by_its_kind_with_its_label_and_indices():
    page = render_html(known_diff())
    found = {
        (
            row.attrs["data-op"],
            row.attrs["data-label"],
            row.attrs.get("data-old"),
            row.attrs.get("data-new"),
        )
        for row in op_rows(page)
    }
    assert found == {
        ("moved", "billing.send_receipt", "2", None),
        ("moved", "billing.send_receipt", "2", "1"),
        ("moved", "billing.charge_card", "1", None),
        ("moved", "billing.charge_card", "1", "2"),
        ("changed", "ledger.record", "3", "3"),
        ("missing", "audit.log", "4", None),
        ("extra", "notify.slack", None, "4"),
    }
    for row in op_rows(page):
        assert f"op-{row.attrs['data-op']}" in row.classes
        assert row.find(cls="tag").text() == row.attrs["data-op"]


def test_every_op_row_has_a_unique_id_by_its_side_and_index():
    ids = [row.attrs["id"] for row in op_rows(render_html(known_diff()))]
    assert len(ids) == len(set(ids))
    assert set(ids) == {"old-1", "old-2", "new-1", "new-2", "new-3", "old-4", "new-4"}


def test_a_moved_event_is_shown_at_both_places_and_each_links_to_the_other():
    page = render_html(known_diff())
    by_id = {row.attrs["id"]: row for row in op_rows(page, "moved")}
    assert by_id["old-1"].find("a", cls="tag").attrs["href"] == "#new-2"
    assert by_id["new-2"].find("a", cls="tag").attrs["href"] == "#old-1"
    assert by_id["old-2"].find("a", cls="tag").attrs["href"] == "#new-1"
    assert by_id["new-1"].find("a", cls="tag").attrs["href"] == "#old-2"
    # Each place draws the event on its own side only.
    assert len(by_id["old-1"].find_all("svg", cls="seq")) == 1
    assert len(by_id["new-2"].find_all("svg", cls="seq")) == 1


def test_each_side_reads_in_its_own_log_order():
    page = render_html(known_diff(), context=10)
    root = parse(page)
    old_side, new_side = [], []
    for row in root.find("main").find_all("div", cls="row")[1:]:
        cells = [child for child in row.children if not isinstance(child, str)]
        index_cells = [cell for cell in cells if "ix" in cell.classes]
        old_ix, new_ix = (cell.text().split(" ")[0] for cell in index_cells)
        drawn = [cell.tag == "svg" for cell in cells if "seq" in cell.classes]
        if drawn[0]:
            old_side.append(int(old_ix))
        if drawn[1]:
            new_side.append(int(new_ix))
    assert old_side == [0, 1, 2, 3, 4, 5]
    assert new_side == [0, 1, 2, 3, 4, 5]


def test_a_changed_row_lists_each_field_change():
    (row,) = op_rows(render_html(known_diff()), "changed")
    assert [item.text() for item in row.find("ul", cls="fields").find_all("li")] == ["args[1]: 1500 → 0"]


def test_missing_and_extra_rows_draw_only_the_side_they_are_on():
    page = render_html(known_diff())
    (missing,) = op_rows(page, "missing")
    (extra,) = op_rows(page, "extra")
    assert [cell.tag for cell in missing.children if not isinstance(cell, str) and "seq" in cell.classes] == [
        "svg",
        "i",
    ]
    assert [cell.tag for cell in extra.children if not isinstance(cell, str) and "seq" in cell.classes] == ["i", "svg"]


def test_each_op_kind_has_its_own_colour_in_the_stylesheet():
    rules = stylesheet_rules(parse(render_html(known_diff())))
    assert len(set(OP_COLORS.values())) == 4
    for kind, color in OP_COLORS.items():
        assert f"background:{color}" in rules[f".op-{kind} .tag"]
        assert "background:" in rules[f".op-{kind}"]


def test_the_op_colours_are_used_only_by_op_rows():
    page = render_html(known_diff())
    style = parse(page).find("style").text()
    for kind, color in OP_COLORS.items():
        assert page.count(color) == 1
        assert re.search(rf"\.op-{kind} \.tag\{{background:{color}\}}", style)


def test_an_identical_diff_is_one_folded_run_of_equal_events():
    same = diff(log_of(*renewal()), log_of(*renewal()))
    root = parse(render_html(same))
    assert root.find("p", cls="summary").text() == "identical: 4 events"
    (folded,) = root.find_all("details")
    assert folded.find("summary").text() == "4 equal events"
    assert len(folded.find_all("div", cls="eq")) == 4
    assert not root.find_all(cls="op")


# ---------------------------------------------------------------------------
# Folding equal runs.


def test_equal_runs_beyond_the_context_fold_into_details_that_hold_their_events():
    steps = [call("svc.step", k) for k in range(40)]
    changed = list(steps)
    changed[20] = call("svc.step", "twenty")
    root = parse(render_html(diff(log_of(*steps), log_of(*changed)), context=2))
    folded = root.find_all("details", cls="skip")
    assert [item.find("summary").text() for item in folded] == [
        "18 equal events",
        "17 equal events",
    ]
    assert len(folded[0].find_all("div", cls="eq")) == 18
    first_indices = [row.find("span", cls="ix").text() for row in folded[0].find_all("div", cls="eq")]
    assert first_indices == [str(k) for k in range(18)]
    assert "open" not in folded[0].attrs
    shown = [row for row in root.find("main").find_all("div", cls="row") if row.parent.tag == "main"]
    assert len(shown) == 1 + 2 + 1 + 2  # lane heads, context, the change, context


def test_one_folded_event_is_named_in_the_singular():
    steps = [call("svc.step", k) for k in range(5)]
    root = parse(render_html(diff(log_of(*steps), log_of(*steps[:4], call("svc.other"))), context=3))
    assert root.find("details").find("summary").text() == "1 equal event"


# ---------------------------------------------------------------------------
# The sequence diagram.


def test_there_is_a_lifeline_for_the_caller_and_each_collaborator_module():
    root = parse(render_log_html(log_of(LOOKUP, CHARGE, RECEIPT, call("pkg.mod.Class.method"), DONE)))
    assert lane_names(root.find("div", cls="heads")) == [
        CALLER,
        "accounts",
        "billing",
        "pkg.mod.Class",
    ]


def test_a_call_arrow_runs_from_the_caller_lifeline_to_its_module_in_order():
    root = parse(render_log_html(log_of(LOOKUP, CHARGE, RECEIPT)))
    drawings = root.find("main").find_all("svg", cls="seq")[1:]
    assert [arrow_ends(svg) for svg in drawings] == [
        (center(0), center(1)),
        (center(0), center(2)),
        (center(0), center(2)),
    ]
    assert [svg.find("text").text() for svg in drawings] == [
        "lookup('cust_1')",
        "charge_card('card_A', amount=1500, currency='us…",
        "send_receipt('card_A', 'renewed')",
    ]


def test_a_long_call_is_shortened_on_its_arrow_and_whole_in_its_tooltip():
    argument = "x" * 3 * LABEL_CHARS
    root = parse(render_log_html(log_of(call("svc.f", argument))))
    svg = root.find("main").find_all("svg", cls="seq")[1]
    label = svg.find("text").text()
    assert len(label) == LABEL_CHARS
    assert label.endswith("…")
    assert svg.find("title").text() == f"#0 svc.f('{argument}')"


def test_a_tooltip_is_bounded():
    root = parse(render_log_html(log_of(call("svc.f", "y" * 10 * TITLE_CHARS))))
    title = root.find("main").find_all("svg", cls="seq")[1].find("title").text()
    assert len(title) == TITLE_CHARS
    assert title.endswith("…")


def test_a_nested_call_runs_from_the_lane_of_the_call_it_is_inside():
    log = log_of(
        call("billing.charge_card", "card_A"),
        call("vault.token", "card_A", depth=1),
        ret("vault.token", "tok", depth=1),
        ret("billing.charge_card", {"ok": True}),
        call("mail.send", "a"),
    )
    root = parse(render_log_html(log))
    drawings = root.find("main").find_all("svg", cls="seq")[1:]
    caller, billing, vault, mail = (center(lane) for lane in range(4))
    ends = [arrow_ends(svg) for svg in drawings]
    assert ends[0] == (caller, billing)
    assert ends[1][0] in range(billing, billing + 8) and ends[1][1] == vault
    assert ends[2][0] == vault and ends[2][1] in range(billing, billing + 8)
    assert ends[3] == (billing, caller)
    assert ends[4] == (caller, mail)
    # Activation bars: the charge stays open over the nested call and its return.
    assert [len(svg.find_all("rect", cls="bar")) for svg in drawings] == [1, 2, 2, 1, 1]
    assert [svg.find("title").text() for svg in drawings][1] == "#1 vault.token('card_A') (depth 1)"


def test_returns_and_raises_are_dashed_arrows_back_and_marks_sit_on_the_caller():
    log = log_of(
        call("svc.f"),
        ret("svc.f", 3),
        call("svc.g"),
        raised("svc.g", "ValueError", "bad"),
        mark("done", 1),
    )
    drawings = parse(render_log_html(log)).find("main").find_all("svg", cls="seq")[1:]
    assert [svg.find("path").attrs["class"] for svg in drawings] == [
        "call",
        "ret",
        "call",
        "raise",
        "mk",
    ]
    assert [svg.find("text").text() for svg in drawings] == [
        "f()",
        "f → 3",
        "g()",
        "g !! ValueError: bad",
        "mark done = 1",
    ]
    assert drawings[4].find("path").attrs["d"].startswith(f"M{center(0)} ")
    rules = stylesheet_rules(parse(render_log_html(log)))
    assert "stroke-dasharray" in rules[".seq .ret"] and "stroke-dasharray" in rules[".seq .raise"]


def test_threads_are_told_apart_by_colour_and_tag():
    log = log_of(call("svc.f"), call("svc.g", thread=2), call("svc.h", thread=3))
    root = parse(render_log_html(log))
    drawings = root.find("main").find_all("svg", cls="seq")[1:]
    assert [svg.classes[1] for svg in drawings] == ["t1", "t2", "t3"]
    tags = [row.find("span", cls="ix").text() for row in root.find("main").find_all("div", cls="row")[1:]]
    assert tags == ["0", "1 t2", "2 t3"]
    assert root.find("p", cls="threads").text() == "threads: t1 t2 t3"
    rules = stylesheet_rules(root)
    assert f"--t:{THREAD_COLORS[1]}" in rules[".t2"]
    assert len(set(THREAD_COLORS)) == len(THREAD_COLORS)
    assert not set(THREAD_COLORS) & set(OP_COLORS.values())


def test_a_single_thread_log_has_no_thread_legend():
    assert not parse(render_log_html(log_of(*renewal()))).find_all("p", cls="threads")


def test_a_log_page_names_the_log_and_draws_every_event():
    log = Log.from_frames(frames_of(*renewal()), rules=DEFAULT_RULES, meta={"scenario": "renew"}, path="renew.cpin")
    root = parse(render_log_html(log))
    assert root.find("title").text() == "callpin log: renew.cpin"
    facts = root.find("p", cls="sides").text()
    assert facts == f"renew.cpin (4 events) · fingerprint {log.fingerprint} · rules: uuid, timestamp, address"
    assert root.find("p", cls="meta").text() == "meta: {'scenario': 'renew'}"
    rows_shown = root.find("main").find_all("div", cls="row")[1:]
    assert [row.find("span", cls="ix").text() for row in rows_shown] == ["0", "1", "2", "3"]


def test_the_same_input_gives_the_same_page():
    assert render_html(known_diff()) == render_html(known_diff())


# ---------------------------------------------------------------------------
# Escaping.

HOSTILE = "<script>alert(1)</script> & \"quoted\" 'single' </svg></div>"


def hostile_diff():
    old = Log.from_frames(
        frames_of(call("svc.<b>old&</b>", HOSTILE), mark("m", HOSTILE)),
        rules=DEFAULT_RULES,
        meta={"note": HOSTILE},
        path="<script>old.cpin",
    )
    new = Log.from_frames(
        frames_of(
            call('svc."q"&<script>x</script>', HOSTILE, key=HOSTILE),
            raised("svc.f", "ValueError", HOSTILE),
            mark("m", HOSTILE + "!"),
        ),
        rules=DEFAULT_RULES,
        meta={"note": HOSTILE},
        path="new&<script>.cpin",
    )
    return old, new


@pytest.mark.parametrize("page", ["diff", "old log", "new log"])
def test_no_markup_from_a_log_reaches_the_page(page):
    old, new = hostile_diff()
    text = {
        "diff": lambda: render_html(diff(old, new)),
        "old log": lambda: render_log_html(old),
        "new log": lambda: render_log_html(new),
    }[page]()
    assert "<script" not in text.lower()
    assert "<b>" not in text
    assert "&lt;/svg&gt;&lt;/div&gt;" in text
    assert len(parse(text).find_all("html")) == 1


def test_escaped_text_reads_back_as_the_original():
    old, new = hostile_diff()
    root = parse(render_html(diff(old, new), context=5))
    labels = {row.attrs["data-label"] for row in root.find_all(cls="op")}
    assert labels == {"svc.<b>old&</b>", 'svc."q"&<script>x</script>', "svc.f", "m"}
    titles = [title.text() for title in root.find("main").find_all("title")]
    assert f"#0 svc.<b>old&</b>({HOSTILE!r})" in titles
    assert f"#1 svc.f !! ValueError: {HOSTILE}" in titles
    assert root.find("title").text() == "callpin diff: <script>old.cpin → new&<script>.cpin"
    assert "<script>old.cpin" in root.find("p", cls="sides").text()
    changed = root.find(cls="op-changed")
    assert changed.find("li").text() == f"value: {HOSTILE!r} → {HOSTILE + '!'!r}"
    log_root = parse(render_log_html(new))
    assert log_root.find("p", cls="meta").text() == f"meta: {{'note': {HOSTILE!r}}}"


# ---------------------------------------------------------------------------
# Self-contained, and bounded at 5,000 events.


def many_events(count: int) -> list:
    specs = []
    for k in range(count // 4):
        specs += [
            call("billing.charge_card", f"card_{k}", amount=1500 + k, currency="usd"),
            ret("billing.charge_card", {"ok": True, "id": f"ch_{k}"}),
            call("mail.send_receipt", f"customer{k}@example.com", 1500 + k, reference=f"ref-{k}"),
            call("ledger.record", "renewal", k, thread=1 + k % 2),
        ]
    return specs


@pytest.fixture(scope="module")
def big_logs():
    specs = many_events(5000)
    changed = list(specs)
    changed[2000], changed[2002] = changed[2002], changed[2000]
    del changed[4000]
    changed.insert(100, call("audit.log", "extra"))
    return log_of(*specs), log_of(*changed)


def test_a_5000_event_log_page_stays_under_5_mb(big_logs):
    old, _ = big_logs
    page = render_log_html(old)
    assert len(old) == 5000
    assert len(page.encode()) < 5 * 1024 * 1024
    assert len(parse(page).find("main").find_all("div", cls="row")) == 5001


def test_a_5000_event_diff_page_stays_under_5_mb_and_folds_its_equal_runs(big_logs):
    old, new = big_logs
    page = render_html(diff(old, new))
    assert len(page.encode()) < 5 * 1024 * 1024
    root = parse(page)
    folded = root.find_all("details", cls="skip")
    assert len(folded) == 4
    hidden = sum(int(item.find("summary").text().split()[0]) for item in folded)
    assert hidden == sum(len(item.find_all("div", cls="eq")) for item in folded)
    assert hidden > 4900


@pytest.mark.parametrize("page", ["diff", "log"])
def test_a_page_needs_nothing_from_outside(page, big_logs):
    old, new = big_logs
    text = render_html(diff(old, new)) if page == "diff" else render_log_html(old)
    lowered = text.lower()
    for needle in ("http://", "https://", "<link", "<script", "src=", "@import", "url(", "<iframe"):
        assert needle not in lowered
    assert lowered.count("<style>") == 1


# ---------------------------------------------------------------------------
# The layout the page is drawn from.


def test_with_origins_a_moved_event_is_also_placed_at_its_old_position():
    result = diff(log_of(*renewal()), log_of(*renewal(swapped=True)))
    plain = [(row.kind, row.old, row.new) for row in rows(result)]
    both = [(row.kind, row.old, row.new) for row in rows(result, origins=True)]
    assert plain == [("equal", 0, 0), ("moved", 2, 1), ("moved", 1, 2), ("equal", 3, 3)]
    assert both == [
        ("equal", 0, 0),
        ("moved", 1, None),
        ("moved", 2, None),
        ("moved", 2, 1),
        ("moved", 1, 2),
        ("equal", 3, 3),
    ]


def test_an_origin_far_from_its_new_place_brings_its_own_context():
    steps = [call("svc.step", k) for k in range(30)]
    moved = [*steps[:5], *steps[6:25], steps[5], *steps[25:]]
    laid_out = rows(diff(log_of(*steps), log_of(*moved)), context=1, origins=True)
    assert [(row.kind, row.old, row.new) for row in laid_out if row.kind != "skip"] == [
        ("equal", 4, 4),
        ("moved", 5, None),
        ("equal", 6, 5),
        ("equal", 24, 23),
        ("moved", 5, 24),
        ("equal", 25, 25),
    ]


@pytest.mark.parametrize("page", ["diff", "log"])
def test_control_characters_and_lone_surrogates_of_a_log_are_escaped_on_the_page(page):
    label = "svc.\x1b[2J\ud800"
    log = log_of(call(label, "\ud800"), mark("m\x00", 1))
    text = render_html(diff(log_of(LOOKUP), log)) if page == "diff" else render_log_html(log)
    text.encode("utf-8")
    assert "\x1b" not in text
    assert "\x00" not in text
    assert "svc.\\x1b[2J\\ud800" in text
