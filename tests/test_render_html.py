"""The HTML report: page structure, the sequence diagram, op rows, navigation, escaping, folding and size."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest

from callpin import diff
from callpin.logfile import Log
from callpin.normalize import DEFAULT_RULES
from callpin.render_diff import rows
from callpin.render_html import (
    CALLER,
    CHUNK_ROWS,
    FIRST_ROWS,
    INLINE_FOLD,
    LONG_CHARS,
    OP_COLORS,
    RAISE_COLOR,
    THREAD_COLORS,
    lane_width,
    render_html,
    render_log_html,
)
from html_dom import packed_frames, packed_rows, parse, stylesheet_rules
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


def event_rows(root):
    """The rows of a page that draw events (not the lane heads)."""
    return [row for row in root.find("main").find_all("div", cls="row") if "heads" not in row.classes]


def lane_names(root) -> list[str]:
    return [name.text() for name in root.find("span", cls="head").find_all("span", cls="ln")]


def style_vars(element) -> dict[str, int]:
    return {name: int(value) for name, value in re.findall(r"--(\w+):(\d+)", element.attrs.get("style", ""))}


def arrow(row) -> tuple[int, int]:
    """The lanes an event's arrow runs from and to."""
    drawn = row.find("i", cls="ar")
    where = style_vars(drawn)
    if "self" in drawn.classes:
        return where["a"], where["a"]
    low, high = where["a"], where["a"] + where["n"]
    return (low, high) if "r" in drawn.classes else (high, low)


def texts(root) -> list[str]:
    return [row.find("span", cls="tx").text() for row in event_rows(root)]


# ---------------------------------------------------------------------------
# A diff: the summary, the list of differences and the op rows.


def test_a_diff_page_opens_with_the_summary_and_the_count_table():
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
    # The summary and the table come before the first difference.
    assert page.index('class="counts"') < page.index('class="row op')


@pytest.mark.parametrize("collecting", [True, False])
def test_a_diff_page_is_drawn_with_the_cyclic_collector_paused_and_left_as_found(monkeypatch, collecting):
    import gc

    from callpin.render_html import diff_page

    seen = []
    real_outline = diff_page.outline

    def outline(*arguments):
        seen.append(gc.isenabled())
        return real_outline(*arguments)

    monkeypatch.setattr(diff_page, "outline", outline)
    (gc.enable if collecting else gc.disable)()
    try:
        render_html(known_diff())
        assert seen == [False]
        assert gc.isenabled() is collecting
    finally:
        gc.enable()


def test_each_count_in_the_summary_links_to_the_first_difference_of_its_kind():
    root = parse(render_html(known_diff()))
    links = {link.text(): link.attrs["href"] for link in root.find("p", cls="summary").find_all("a")}
    assert links == {"2 moved": "#old-1", "1 missing": "#old-4", "1 extra": "#new-4", "1 changed": "#new-3"}
    ids = {row.attrs["id"] for row in root.find_all("div", cls="op")}
    assert {href[1:] for href in links.values()} <= ids


def test_the_list_of_differences_links_to_every_op_row_in_reading_order():
    root = parse(render_html(known_diff()))
    listed = [link.attrs["href"][1:] for link in root.find("ol", cls="diffs").find_all("a")]
    assert listed == [row.attrs["id"] for row in root.find_all("div", cls="op")]
    first = root.find("ol", cls="diffs").find("li")
    assert first.text() == "movedold #1 billing.charge_card"


def test_a_label_that_differs_in_the_count_table_links_to_its_first_difference():
    root = parse(render_html(known_diff()))
    links = {link.text(): link.attrs["href"] for link in root.find("table", cls="counts").find_all("a")}
    assert links["audit.log"] == "#old-4"
    assert links["notify.slack"] == "#new-4"
    assert links["billing.charge_card"] == "#old-1"
    assert "accounts.lookup" not in links


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


def drawn_sides(row) -> list[bool]:
    """Per side, whether the row draws an event there (its text cell is filled)."""
    return [bool(cell.text()) for cell in row.children if not isinstance(cell, str) and "tx" in cell.classes]


def test_a_moved_event_is_shown_at_both_places_and_each_links_to_the_other():
    page = render_html(known_diff())
    by_id = {row.attrs["id"]: row for row in op_rows(page, "moved")}
    assert by_id["old-1"].find("a", cls="tag").attrs["href"] == "#new-2"
    assert by_id["new-2"].find("a", cls="tag").attrs["href"] == "#old-1"
    assert by_id["old-2"].find("a", cls="tag").attrs["href"] == "#new-1"
    assert by_id["new-1"].find("a", cls="tag").attrs["href"] == "#old-2"
    # Each place draws the event on its own side only.
    assert drawn_sides(by_id["old-1"]) == [True, False]
    assert drawn_sides(by_id["new-2"]) == [False, True]


def test_each_side_reads_in_its_own_log_order():
    root = parse(render_html(known_diff(), context=10))
    old_side, new_side = [], []
    for row in event_rows(root):
        cells = [child for child in row.children if not isinstance(child, str)]
        old_ix, new_ix = (cell.text().split(" ")[0] for cell in cells if "ix" in cell.classes)
        drawn = drawn_sides(row)
        if drawn[0]:
            old_side.append(int(old_ix))
        if drawn[1]:
            new_side.append(int(new_ix))
    assert old_side == [0, 1, 2, 3, 4, 5]
    assert new_side == [0, 1, 2, 3, 4, 5]


def test_a_changed_row_lists_each_field_change_as_path_old_new():
    (row,) = op_rows(render_html(known_diff()), "changed")
    (item,) = row.find("ul", cls="fields").find_all("li")
    assert item.text() == "args[1]: 1500 → 0"
    assert (item.find("span", cls="fp").text(), item.find("del").text(), item.find("ins").text()) == (
        "args[1]",
        "1500",
        "0",
    )


def test_missing_and_extra_rows_draw_only_the_side_they_are_on():
    page = render_html(known_diff())
    (missing,) = op_rows(page, "missing")
    (extra,) = op_rows(page, "extra")
    assert drawn_sides(missing) == [True, False]
    assert drawn_sides(extra) == [False, True]


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
    (folded,) = root.find_all("details", cls="skip")
    assert folded.find("summary").text() == "4 equal events (new #0 to #3)"
    assert len(folded.find_all("div", cls="eq")) == 4
    assert not root.find_all(cls="op")
    assert not root.find_all("ol", cls="diffs")


# ---------------------------------------------------------------------------
# Navigation: controls, keys and the list view (the script is tested in a browser).


def test_the_page_has_previous_and_next_controls_and_a_list_view_switch():
    root = parse(render_html(known_diff()))
    nav = root.find("div", cls="nav")
    assert nav.find("button", id="prev").attrs["title"] == "previous difference (p or k)"
    assert nav.find("button", id="next").attrs["title"] == "next difference (n or j)"
    assert nav.find("span", id="position").text() == "? / 7"
    assert nav.find("label", cls="switch").attrs["for"] == "list-view"
    assert root.find("input", id="list-view").attrs["type"] == "checkbox"
    # The switch works without the script: the stylesheet reads the checkbox.
    rules = stylesheet_rules(root)
    assert "visibility:hidden" in rules["#list-view:checked~main .g"]
    assert "white-space:nowrap" in rules["#list-view:checked~main .tx"]


def test_the_lane_heads_and_controls_stay_on_screen_while_scrolling():
    rules = stylesheet_rules(parse(render_html(known_diff())))
    assert "position:sticky" in rules[".nav"]
    assert "top:0" in rules[".nav"]


def test_the_page_script_is_one_constant_with_no_handler_built_from_data():
    old, new = hostile_diff()
    pages = [render_html(known_diff()), render_html(diff(old, new)), render_log_html(new)]
    scripts = [
        [script.text() for script in parse(page).find_all("script") if "type" not in script.attrs] for page in pages
    ]
    assert all(len(found) == 1 for found in scripts)
    assert scripts[0] == scripts[1] == scripts[2]
    for page in pages:
        assert not re.search(r"<[^>]*\son\w+\s*=", page, re.IGNORECASE)
        assert "javascript:" not in page.lower()


# ---------------------------------------------------------------------------
# Folding equal runs.


def test_short_equal_runs_fold_into_details_that_hold_their_events():
    steps = [call("svc.step", k) for k in range(40)]
    changed = list(steps)
    changed[20] = call("svc.step", "twenty")
    root = parse(render_html(diff(log_of(*steps), log_of(*changed)), context=2))
    folded = root.find_all("details", cls="skip")
    assert [item.find("summary").text() for item in folded] == [
        "18 equal events (new #0 to #17)",
        "17 equal events (new #23 to #39)",
    ]
    assert len(folded[0].find_all("div", cls="eq")) == 18
    first_indices = [row.find("span", cls="ix").text() for row in folded[0].find_all("div", cls="eq")]
    assert first_indices == [str(k) for k in range(18)]
    assert "open" not in folded[0].attrs
    shown = [row for row in root.find("main").find_all("div", cls="row") if row.parent.tag == "main"]
    assert len(shown) == 2 + 1 + 2  # context, the change, context


def test_a_long_equal_run_is_packed_whole_as_frames_and_drawn_only_when_opened():
    steps = [call("svc.step", k) for k in range(3 * CHUNK_ROWS)]
    changed = [*steps[:-1], call("svc.step", "last")]
    new = log_of(*changed)
    root = parse(render_html(diff(log_of(*steps), new), context=3))
    (folded,) = root.find_all("details", cls="skip")
    assert "lazy" in folded.classes
    hidden = len(steps) - 4
    assert folded.find("summary").text() == f"{hidden} equal events (new #0 to #{hidden - 1})"
    assert not folded.find_all("div", cls="eq")  # nothing drawn before it is opened
    chunks = packed_frames(folded)
    assert len(chunks) == -(-hidden // CHUNK_ROWS)
    assert [chunk.new for chunk in chunks] == list(range(0, hidden, CHUNK_ROWS))
    assert [chunk.old for chunk in chunks] == list(range(0, hidden, CHUNK_ROWS))
    assert [frame for chunk in chunks for frame in chunk.new_frames] == new.frames[:hidden]
    assert all(chunk.old_frames is None for chunk in chunks)
    assert "script" in folded.find("noscript").text()
    facts = json.loads(root.find("script", id="callpin-facts").text())
    assert facts["lanes"] == {CALLER: 0, "svc": 1}


def test_a_chunk_holding_a_value_the_script_does_not_draw_is_packed_as_python_drawn_rows():
    steps = [call("svc.step", k) for k in range(INLINE_FOLD + 10)]
    steps[5] = call("svc.step", {1, 2}, Decimal("1.50"))
    changed = [*steps[:-1], call("svc.step", "last")]
    root = parse(render_html(diff(log_of(*steps), log_of(*changed)), context=3))
    (folded,) = root.find_all("details", cls="skip")
    assert not packed_frames(folded)
    unpacked = packed_rows(folded).find_all("div", cls="eq")
    assert unpacked[5].find_all("span", cls="tx")[1].text() == "svc.step({1, 2}, Decimal('1.50'))"


def test_the_open_calls_before_a_chunk_of_frames_are_written_with_it():
    nested = [call("outer.run", 0), call("inner.step", 1, depth=1), call("inner.deeper", 2, depth=2)]
    leaves = [call("inner.leaf", k, depth=3) for k in range(INLINE_FOLD + 10)]
    old = log_of(call("svc.first", "a"), *nested, *leaves, mark("end", 1))
    new = log_of(call("svc.first", "b"), *nested, *leaves, mark("end", 2))
    root = parse(render_html(diff(old, new), context=3))
    (chunk,) = packed_frames(root.find("details", cls="skip"))
    # The change and its three events of context are shown; the fold starts inside them.
    assert (chunk.new, chunk.old) == (4, 4)
    facts = json.loads(root.find("script", id="callpin-facts").text())
    lanes = facts["lanes"]
    opened = [1, 0, lanes["outer"], 1, lanes["inner"], 2, lanes["inner"]]
    assert chunk.stacks == [[opened], [opened]]


def test_a_fold_of_up_to_inline_fold_events_is_written_out():
    steps = [call("svc.step", k) for k in range(INLINE_FOLD + 4)]
    changed = [*steps[:-1], call("svc.step", "last")]
    (folded,) = parse(render_html(diff(log_of(*steps), log_of(*changed)))).find_all("details", cls="skip")
    assert "lazy" not in folded.classes
    assert len(folded.find_all("div", cls="eq")) == INLINE_FOLD


def test_one_folded_event_is_named_in_the_singular():
    steps = [call("svc.step", k) for k in range(5)]
    root = parse(render_html(diff(log_of(*steps), log_of(*steps[:4], call("svc.other"))), context=3))
    assert root.find("details", cls="skip").find("summary").text() == "1 equal event (new #0)"


# ---------------------------------------------------------------------------
# The sequence diagram and each event's text.


def test_there_is_a_lifeline_for_the_caller_and_each_collaborator_module():
    root = parse(render_log_html(log_of(LOOKUP, CHARGE, RECEIPT, call("pkg.mod.Class.method"), DONE)))
    assert lane_names(root) == [CALLER, "accounts", "billing", "pkg.mod.Class"]
    assert [style_vars(name)["a"] for name in root.find("span", cls="head").find_all("span", cls="ln")] == [0, 1, 2, 3]


def test_a_call_arrow_runs_from_the_caller_lifeline_to_its_module_in_order():
    root = parse(render_log_html(log_of(LOOKUP, CHARGE, RECEIPT)))
    assert [arrow(row) for row in event_rows(root)] == [(0, 1), (0, 2), (0, 2)]
    assert texts(root) == [
        "accounts.lookup('cust_1')",
        "billing.charge_card('card_A', amount=1500, currency='usd')",
        "billing.send_receipt('card_A', 'renewed')",
    ]


def test_the_text_of_an_event_sits_in_its_own_column_beside_the_diagram():
    root = parse(render_log_html(log_of(LOOKUP, CHARGE)))
    for row in event_rows(root):
        cells = [child for child in row.children if not isinstance(child, str)]
        assert [cell.classes[0] for cell in cells] == ["ix", "g", "tx"]
        assert not cells[1].text()  # the diagram holds no text
    rules = stylesheet_rules(root)
    assert "white-space:pre-wrap" in rules[".tx"] and "overflow-wrap:anywhere" in rules[".tx"]


def test_a_long_call_is_written_whole_and_wraps():
    argument = "x" * (LONG_CHARS // 2)
    root = parse(render_log_html(log_of(call("svc.f", argument))))
    assert texts(root) == [f"svc.f('{argument}')"]


def test_a_very_long_call_opens_in_place_with_its_whole_text():
    argument = "y" * 3 * LONG_CHARS
    root = parse(render_log_html(log_of(call("svc.f", argument))))
    (row,) = event_rows(root)
    folded = row.find("details", cls="long")
    assert folded.find("summary").text().endswith(f"… ({len(argument) + 9:,} characters)")
    body = "".join(child if isinstance(child, str) else child.text() for child in folded.children[1:])
    assert body == f"svc.f('{argument}')"


def test_lanes_narrow_so_that_any_number_of_collaborators_fit():
    assert lane_width(2) == 24
    assert lane_width(8) == 22
    assert lane_width(40) == 8
    many = log_of(*(call(f"mod{k}.f") for k in range(30)))
    root = parse(render_log_html(many))
    assert len(lane_names(root)) == 31
    assert "--w:8px" in root.find("style").text()


def test_a_nested_call_runs_from_the_lane_of_the_call_it_is_inside_and_is_indented():
    log = log_of(
        call("billing.charge_card", "card_A"),
        call("vault.token", "card_A", depth=1),
        ret("vault.token", "tok", depth=1),
        ret("billing.charge_card", {"ok": True}),
        call("mail.send", "a"),
    )
    root = parse(render_log_html(log))
    shown = event_rows(root)
    assert [arrow(row) for row in shown] == [(0, 1), (1, 2), (2, 1), (1, 0), (0, 3)]
    # Activation bars: the charge stays open over the nested call and its return.
    assert [len(row.find_all("b", cls="bar")) for row in shown] == [1, 2, 2, 1, 1]
    assert [style_vars(row.find("span", cls="tx")).get("d", 0) for row in shown] == [0, 1, 1, 0, 0]
    assert texts(root)[1] == "vault.token('card_A')"
    assert "var(--d,0)" in stylesheet_rules(root)[".tx"]


def test_returns_raises_and_marks_each_have_their_own_form():
    log = log_of(
        call("svc.f"),
        ret("svc.f", 3),
        call("svc.g"),
        raised("svc.g", "ValueError", "bad"),
        mark("done", 1),
    )
    root = parse(render_log_html(log))
    shown = event_rows(root)
    assert [row.find("span", cls="tx").classes[1] for row in shown] == [
        "k-call",
        "k-return",
        "k-call",
        "k-raise",
        "k-mark",
    ]
    assert [row.find("i").classes[:2] for row in shown] == [
        ["ar", "call"],
        ["ar", "ret"],
        ["ar", "call"],
        ["ar", "raise"],
        ["mk"],
    ]
    assert texts(root) == ["svc.f()", "svc.f → 3", "svc.g()", "svc.g !! ValueError: bad", "mark done = 1"]
    assert shown[3].find("span", cls="err").text() == " !! ValueError: bad"
    assert style_vars(shown[4].find("i", cls="mk")) == {"a": 0}
    rules = stylesheet_rules(root)
    assert "dashed" in rules[".ar.ret"] and "dashed" in rules[".ar.raise"]
    assert RAISE_COLOR in rules[".k-raise"] and RAISE_COLOR in rules[".ar.raise"]
    assert "✕" in rules[".ar.raise::before"]
    assert not set(OP_COLORS.values()) & {RAISE_COLOR}


def test_threads_are_told_apart_by_colour_and_tag():
    log = log_of(call("svc.f"), call("svc.g", thread=2), call("svc.h", thread=3))
    root = parse(render_log_html(log))
    shown = event_rows(root)
    assert [row.find("span", cls="g").classes[1] for row in shown] == ["t1", "t2", "t3"]
    assert [row.find("span", cls="ix").text() for row in shown] == ["0", "1 t2", "2 t3"]
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
    assert (
        facts == f"renew.cpin (4 events) · fingerprint {log.fingerprint} · rules: uuid, timestamp, address, redact, tmp"
    )
    assert root.find("p", cls="meta").text() == "meta: {'scenario': 'renew'}"
    assert [row.find("span", cls="ix").text() for row in event_rows(root)] == ["0", "1", "2", "3"]
    assert not root.find_all(cls="lazy")


def test_a_long_log_page_writes_its_first_rows_and_packs_the_rest():
    count = FIRST_ROWS + CHUNK_ROWS + 7
    root = parse(render_log_html(log_of(*(call("svc.step", k) for k in range(count)))))
    assert len(event_rows(root)) == FIRST_ROWS
    (rest,) = root.find_all("div", cls="lazy")
    assert len(rest.find_all("script", type="text/x-callpin-rows")) == 2
    unpacked = packed_rows(rest).find_all("div", cls="row")
    assert [row.find("span", cls="ix").text() for row in unpacked] == [str(k) for k in range(FIRST_ROWS, count)]


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
    assert "<script>alert" not in text.lower()
    assert "<script>x" not in text.lower()
    assert "<b>" not in text
    assert "&lt;/svg&gt;&lt;/div&gt;" in text
    assert len(parse(text).find_all("html")) == 1


def test_escaped_text_reads_back_as_the_original():
    old, new = hostile_diff()
    root = parse(render_html(diff(old, new), context=5))
    labels = {row.attrs["data-label"] for row in root.find_all(cls="op")}
    assert labels == {"svc.<b>old&</b>", 'svc."q"&<script>x</script>', "svc.f", "m"}
    shown = [cell.text() for cell in root.find("main").find_all("span", cls="tx")]
    assert f"svc.<b>old&</b>({HOSTILE!r})" in shown
    assert f"svc.f !! ValueError: {HOSTILE}" in shown
    assert root.find("title").text() == "callpin diff: <script>old.cpin → new&<script>.cpin"
    assert "<script>old.cpin" in root.find("p", cls="sides").text()
    changed = root.find("div", cls="op-changed")
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
    root = parse(page)
    assert len(event_rows(root)) + len(packed_rows(root.find("div", cls="lazy")).find_all("div", cls="row")) == 5000


def test_a_5000_event_diff_page_stays_under_5_mb_and_folds_its_equal_runs(big_logs):
    old, new = big_logs
    page = render_html(diff(old, new))
    assert len(page.encode()) < 5 * 1024 * 1024
    root = parse(page)
    folded = root.find_all("details", cls="skip")
    assert len(folded) == 4
    hidden = sum(int(item.find("summary").text().split()[0].replace(",", "")) for item in folded)
    assert hidden == sum(len(chunk.new_frames) for item in folded for chunk in packed_frames(item))
    assert hidden > 4900


@pytest.mark.parametrize("page", ["diff", "log"])
def test_a_page_needs_nothing_from_outside(page, big_logs):
    old, new = big_logs
    text = render_html(diff(old, new)) if page == "diff" else render_log_html(old)
    lowered = text.lower()
    for needle in ("http://", "https://", "<link", "src=", "@import", "url(", "<iframe"):
        assert needle not in lowered
    assert lowered.count("<style>") == 1
    root = parse(text)
    scripts = root.find_all("script")
    packed = ("text/x-callpin-rows", "text/x-callpin-frames")
    others = [script.attrs for script in scripts if script.attrs.get("type") not in packed]
    facts = [{"type": "application/json", "id": "callpin-facts"}] if page == "diff" else []
    assert others == [*facts, {}]


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


@pytest.mark.parametrize("seed", range(12))
def test_placing_from_frame_heads_matches_placing_every_event_decoded(seed):
    import random

    from callpin.render_html.sequence import outline, place

    rng = random.Random(seed)
    threads = [1, 2, 3, 300] if seed % 3 == 0 else [1]
    labels = ["svc.a", "svc.b", "other.c", "x" * 40 + ".long", "mark_me"]
    events = []
    for _ in range(600):
        thread, depth = rng.choice(threads), rng.choice([0, 0, 1, 2, 3, 200])
        label = rng.choice(labels)
        kind = rng.choice(["call", "call", "return", "raise", "mark"])
        if kind == "call":
            events.append(call(label, rng.randrange(1000), thread=thread, depth=depth))
        elif kind == "return":
            events.append(ret(label, rng.randrange(300), thread=thread, depth=depth))
        elif kind == "raise":
            events.append(raised(label, "ValueError", "no", thread=thread, depth=depth))
        else:
            events.append(mark(label, rng.randrange(5)))
    log = log_of(*events)
    lanes, (every,) = place(log)
    shown = set(rng.sample(range(len(events)), 40))
    starts = set(rng.sample(range(len(events)), 40))
    sparse = outline([log], [shown], [starts])
    dense = outline([log], [range(len(events))], [starts])
    assert sparse.lanes == lanes

    # A decoded Event's own index is that of the first of its equal frames decoded.
    def same(step):
        return step._replace(event=step.event._replace(index=0))

    assert {index: same(every[index]) for index in shown} == {k: same(step) for k, step in sparse.steps[0].items()}
    assert sparse.stacks == dense.stacks
    assert sparse.threads == dense.threads == set(threads)
