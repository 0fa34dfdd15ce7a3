"""Rendering a log as text and JSON."""

from __future__ import annotations

import json

from callpin.normalize import RuleSet
from callpin.render_log import render_log, render_log_json
from sample_logs import call, log_of, mark, raised, ret

A, B = (call(f"svc.{name}") for name in "ab")


# ---------------------------------------------------------------------------
# Logs.


def test_a_log_as_json_writes_lone_surrogates_as_escapes_and_huge_ints_as_reprs():
    huge = 1 << 20_000
    text = render_log_json(log_of(mark("x\ud800", ["y\udfff", huge])))
    text.encode("utf-8")
    event = json.loads(text)["events"][0]
    assert event["label"] == "x\ud800"
    assert event["value"] == ["y\udfff", {"$repr": f"{huge:#x}"}]


def test_a_log_renders_a_header_and_one_line_per_event_without_indices():
    text = render_log(log_of(call("billing.charge_card", "card_A", 1500), ret("billing.charge_card", 1)))
    assert text == (
        "# callpin log: 2 events, rules: uuid, timestamp, address, redact, tmp\n"
        "billing.charge_card('card_A', 1500)\n"
        "billing.charge_card → 1\n"
    )


def test_a_log_renders_the_same_text_every_time():
    assert render_log(log_of(A, B, mark("m", {"x": 1}))) == render_log(log_of(A, B, mark("m", {"x": 1})))


def test_a_log_without_rules_and_with_meta_says_so():
    from callpin.logfile import Log
    from sample_logs import frames_of

    rules = RuleSet(())
    log = Log.from_frames(frames_of(A, rules=rules), rules=rules, meta={"scenario": "renew"})
    assert render_log(log).splitlines()[:2] == [
        "# callpin log: 1 event, rules: none",
        "# meta: {'scenario': 'renew'}",
    ]


def test_a_log_renders_as_json_with_every_field():
    log = log_of(call("svc.f", (1, 2), [3], key=None), raised("svc.f", "ValueError", "bad", thread=2))
    document = json.loads(render_log_json(log))
    assert document["count"] == 2
    assert document["fingerprint"] == log.fingerprint
    assert document["rules"] == ["uuid", "timestamp", "address", "redact", "tmp"]
    assert document["events"][0] == {
        "index": 0,
        "kind": "call",
        "label": "svc.f",
        "args": [{"$repr": "(1, 2)"}, [3]],
        "kwargs": {"key": None},
        "value": None,
        "error": None,
        "thread": 1,
        "depth": 0,
    }
    assert document["events"][1]["error"] == {"type": "ValueError", "message": "bad"}
    assert document["events"][1]["thread"] == 2


def test_a_log_of_one_event_counts_it_in_the_singular():
    assert render_log(log_of(A)).splitlines()[0].startswith("# callpin log: 1 event, rules: ")


def test_json_indents_the_document_but_writes_each_value_on_one_line():
    # A value nested to the writer's limit used to be indented at every level: over 100
    # spaces a line, a 148 kB log written as 10 MB of JSON.
    deep: list = [1]
    for _ in range(60):
        deep = [deep, "x"]
    log = log_of(*(call("svc.f", deep) for _ in range(50)))
    text = render_log_json(log)
    document = json.loads(text)
    assert document["events"][0]["args"] == [deep]
    assert max(len(line) - len(line.lstrip(" ")) for line in text.splitlines()) == 6
    assert len(text) * 5 < len(json.dumps(document, indent=2))
    assert text.startswith('{\n  "count": 50,\n  "fingerprint": ')
