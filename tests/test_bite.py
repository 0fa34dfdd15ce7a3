"""callpin.bite: labels, call sites, mutants made from source text, the report, the start-up hook."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from callpin import bite
from callpin._impl import Encoder
from callpin.bite._failures import kind
from callpin.bite.scratch import _FAILURES, _FAILURES_MODULE, _HOOK, Scratch, _import_root, _module_name
from callpin.bite.signals import SignalGuard
from callpin.cli import cli as main
from callpin.errors import BiteError, Drift, UsageError
from callpin.event import KIND_CODES
from callpin.logfile import write_log
from callpin.site_hook import install_hook

LABELS = ["billing.charge_card", "billing.send_receipt"]

RENEW = """\
import billing


def renew(case):
    if not case["active"]:
        return None
    billing.charge_card(case["card"], case["amount"])  # charge first
    billing.send_receipt(case["email"], case["amount"])
    return "renewed"
"""


def event(kind: str, label: str) -> bytes:
    return Encoder().encode_event(KIND_CODES[kind], label, (), {}, None, None, 1, 0)


def by_operator(mutants: list[bite.Mutant], operator: str) -> list[bite.Mutant]:
    return [mutant for mutant in mutants if mutant.operator == operator]


def changed_lines(original: str, mutated: str) -> tuple[list[str], list[str]]:
    """The lines of each text outside their common prefix and suffix."""
    a, b = original.splitlines(keepends=True), mutated.splitlines(keepends=True)
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[len(a) - 1 - end] == b[len(b) - 1 - end]:
        end += 1
    return a[start : len(a) - end], b[start : len(b) - end]


# ---------------------------------------------------------------------------
# Labels


def test_read_labels_collects_call_labels_of_every_log_below_the_folder(tmp_path: Path) -> None:
    (tmp_path / "nested").mkdir()
    write_log(
        tmp_path / "a.cpin",
        [event("call", "billing.charge_card"), event("return", "billing.refund")],
    )
    write_log(
        tmp_path / "nested" / "b.cpin",
        [event("call", "billing.send_receipt"), event("mark", "returned")],
    )
    assert bite.read_labels(tmp_path) == ["billing.charge_card", "billing.send_receipt"]


def test_read_labels_without_the_folder_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--label"):
        bite.read_labels(tmp_path / "missing")


def test_read_labels_without_call_events_is_a_usage_error(tmp_path: Path) -> None:
    write_log(tmp_path / "a.cpin", [event("mark", "returned")])
    with pytest.raises(UsageError, match="no call events"):
        bite.read_labels(tmp_path)


# ---------------------------------------------------------------------------
# Operators


def test_swap_exchanges_two_adjacent_collaborator_statements_and_keeps_the_rest() -> None:
    [swap] = by_operator(bite.make_mutants(RENEW, "renewals.py", LABELS), "swap")
    assert swap.text == RENEW.replace(
        '    billing.charge_card(case["card"], case["amount"])  # charge first\n'
        '    billing.send_receipt(case["email"], case["amount"])\n',
        '    billing.send_receipt(case["email"], case["amount"])\n'
        '    billing.charge_card(case["card"], case["amount"])  # charge first\n',
    )
    assert (swap.line, swap.end_line) == (7, 8)
    assert swap.calls == ("billing.charge_card", "billing.send_receipt")


def test_swap_keeps_lines_between_the_statements_in_place() -> None:
    source = "def f():\n    a.charge_card(1)\n\n    # then\n    a.send_receipt(\n        2,\n    )\n    x = 1\n"
    [swap] = by_operator(bite.make_mutants(source, "m.py", LABELS, loose=True), "swap")
    assert (
        swap.text == "def f():\n    a.send_receipt(\n        2,\n    )\n\n    # then\n    a.charge_card(1)\n    x = 1\n"
    )


def test_swap_needs_both_statements_to_call_a_collaborator() -> None:
    source = "def f():\n    billing.charge_card(1)\n    log('x')\n    billing.send_receipt(2)\n"
    assert by_operator(bite.make_mutants(source, "m.py", LABELS, loose=True), "swap") == []


def test_swap_takes_compound_statements_that_contain_a_call() -> None:
    source = "def f(x):\n    if x:\n        billing.charge_card(1)\n    billing.send_receipt(2)\n"
    [swap] = by_operator(bite.make_mutants(source, "m.py", LABELS, loose=True), "swap")
    assert swap.text == "def f(x):\n    billing.send_receipt(2)\n    if x:\n        billing.charge_card(1)\n"


def test_swap_of_identical_statements_is_dropped_as_equivalent() -> None:
    source = "def f():\n    billing.charge_card(1)\n    billing.charge_card(1)\n"
    assert by_operator(bite.make_mutants(source, "m.py", LABELS, loose=True), "swap") == []


def test_delete_removes_only_the_call_statement() -> None:
    mutants = by_operator(bite.make_mutants(RENEW, "renewals.py", LABELS), "delete")
    assert [m.calls for m in mutants] == [("billing.charge_card",), ("billing.send_receipt",)]
    assert changed_lines(RENEW, mutants[1].text) == (
        ['    billing.send_receipt(case["email"], case["amount"])\n'],
        [],
    )


def test_delete_leaves_pass_where_the_block_would_be_empty() -> None:
    source = "def f(x):\n  if x:\n     billing.charge_card(1)  # only\r\n  return x\n"
    [delete] = by_operator(bite.make_mutants(source, "m.py", LABELS, loose=True), "delete")
    assert delete.text == "def f(x):\n  if x:\n     pass\r\n  return x\n"


def test_delete_at_module_level_needs_no_pass() -> None:
    [delete] = by_operator(bite.make_mutants("billing.charge_card(1)\n", "m.py", LABELS, loose=True), "delete")
    assert delete.text == ""


def test_delete_skips_a_statement_that_only_contains_a_call() -> None:
    source = "def f():\n    x = billing.charge_card(1)\n    return billing.send_receipt(x)\n"
    assert by_operator(bite.make_mutants(source, "m.py", LABELS, loose=True), "delete") == []


def test_duplicate_repeats_call_statements_and_assignments_from_calls() -> None:
    source = "def f():\n    x = billing.charge_card(\n        1)\n    billing.send_receipt(x)\n    return x\n"
    first, second = by_operator(bite.make_mutants(source, "m.py", LABELS, loose=True), "duplicate")
    assert first.text == (
        "def f():\n    x = billing.charge_card(\n        1)\n"
        "    x = billing.charge_card(\n        1)\n"
        "    billing.send_receipt(x)\n    return x\n"
    )
    assert changed_lines(source, second.text) == ([], ["    billing.send_receipt(x)\n"])


def test_operators_choose_which_mutants_are_made() -> None:
    mutants = bite.make_mutants(RENEW, "renewals.py", LABELS, ["delete"])
    assert {mutant.operator for mutant in mutants} == {"delete"}


def test_an_unknown_operator_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="'shuffle'"):
        bite.make_mutants(RENEW, "renewals.py", LABELS, ["swap", "shuffle"])


# ---------------------------------------------------------------------------
# Which calls count


@pytest.mark.parametrize(
    "source",
    [
        "import billing\nbilling.charge_card(1)\n",
        "import billing as b\nb.charge_card(1)\n",
        "import examples.renewals.billing\nexamples.renewals.billing.charge_card(1)\n",
        "from examples.renewals import billing as pay\npay.charge_card(1)\n",
        "from billing import charge_card\ncharge_card(1)\n",
        "from billing import charge_card as charge\ncharge(1)\n",
        "from .billing import charge_card\ncharge_card(1)\n",
        "from billing import *\ncharge_card(1)\n",
        "import billing\npay = billing\npay.charge_card(1)\n",
        "import billing\ndef f(gateway=billing):\n    gateway.charge_card(1)\n",
        "from billing import Gateway\ndef f():\n    g = Gateway()\n    g.charge_card(1)\n",
    ],
    ids=[
        "import",
        "import as",
        "full name",
        "from package import as",
        "from import",
        "from import as",
        "relative import",
        "star import",
        "module alias",
        "parameter default",
        "local instance",
    ],
)
def test_a_call_to_the_collaborator_is_a_call_site(source: str) -> None:
    labels = ["billing.charge_card", "billing.Gateway.charge_card"]
    [delete] = bite.make_mutants(source, "pkg/m.py", labels, ["delete"])
    assert delete.calls[0] in labels
    assert not delete.loose


@pytest.mark.parametrize(
    "source", ["def f(gateway):\n    gateway.charge_card(1)\n", "def f(self):\n    self.gateway.charge_card(1)\n"]
)
def test_a_call_whose_binding_the_code_does_not_show_is_matched_by_name_only_when_loose(source: str) -> None:
    assert bite.make_mutants(source, "m.py", ["billing.charge_card"], ["delete"]) == []
    [delete] = bite.make_mutants(source, "m.py", ["billing.charge_card"], ["delete"], loose=True)
    assert delete.calls == ("billing.charge_card",)
    assert delete.loose


def test_an_unrelated_call_of_the_same_name_beside_the_collaborator_is_not_mutated() -> None:
    source = "import billing\ndef f(low_conn):\n    low_conn.send(b'x')\n    billing.send(1)\n    x = 1\n"
    mutants = bite.make_mutants(source, "m.py", ["billing.send"], ["delete"])
    assert [(m.line, m.calls) for m in mutants] == [(4, ("billing.send",))]
    loose = bite.make_mutants(source, "m.py", ["billing.send"], ["delete"], loose=True)
    assert [(m.line, m.loose) for m in loose] == [(3, True), (4, False)]


def test_calls_between_functions_of_a_pinned_module_are_call_sites() -> None:
    source = (
        "def reserve(x):\n    return x\n\ndef charge(x):\n    return x\n\n"
        "def checkout(x):\n    reserve(x)\n    charge(x)\n"
    )
    mutants = bite.make_mutants(source, "shop/orders.py", ["orders.reserve", "orders.charge"])
    assert {(m.operator, m.line) for m in mutants} >= {("swap", 8), ("delete", 8), ("delete", 9)}


def test_self_and_cls_calls_inside_a_spied_class_are_call_sites() -> None:
    source = (
        "class Cart:\n    def add(self, x):\n        return x\n\n    @classmethod\n    def make(cls):\n"
        "        return cls()\n\n    def fill(self):\n        self.add(1)\n        self.add(2)\n"
    )
    mutants = bite.make_mutants(source, "shop/cart.py", ["cart.Cart.add"], ["delete"])
    assert [(m.line, m.calls) for m in mutants] == [(10, ("cart.Cart.add",)), (11, ("cart.Cart.add",))]


@pytest.mark.parametrize(
    "source",
    [
        "charge_card(1)\n",
        "from gateway import charge_card\ncharge_card(1)\n",
        "import os\nos.path.charge_card(1)\n",
        "import billing\nbilling.refund(1)\n",
        "gateway.charge_card(1)\n",
        "def later():\n    billing.charge_card(1)\nlater\n",
    ],
    ids=["unbound name", "other module", "other imported module", "other function", "unbound module", "nested def"],
)
def test_other_calls_are_not_call_sites(source: str) -> None:
    mutants = bite.make_mutants(source, "m.py", ["billing.charge_card"])
    assert [m for m in mutants if m.line == len(source.splitlines())] == []


def test_a_label_by_its_full_dotted_name_matches_an_import_by_a_shorter_one() -> None:
    source = "import billing\nbilling.charge_card(1)\n"
    [delete] = bite.make_mutants(source, "m.py", ["examples.renewals.billing.charge_card"], ["delete"])
    assert delete.line == 2


def test_a_method_label_matches_calls_on_the_imported_class() -> None:
    source = "from billing import Gateway\nGateway.charge(1)\n"
    [delete] = bite.make_mutants(source, "m.py", ["billing.Gateway.charge"], ["delete"])
    assert delete.calls == ("billing.Gateway.charge",)


def test_awaited_calls_are_call_sites() -> None:
    source = (
        "import billing\n"
        "async def renew(gateway=billing):\n"
        "    await gateway.charge_card(1)\n    receipt = await billing.send_receipt(2)\n"
    )
    mutants = bite.make_mutants(source, "m.py", LABELS)
    assert [(m.operator, m.line) for m in mutants] == [
        ("swap", 3),
        ("delete", 3),
        ("duplicate", 3),
        ("duplicate", 4),
    ]
    [swap] = by_operator(mutants, "swap")
    assert swap.text == (
        "import billing\n"
        "async def renew(gateway=billing):\n"
        "    receipt = await billing.send_receipt(2)\n    await gateway.charge_card(1)\n"
    )


def test_statements_sharing_a_line_are_left_alone() -> None:
    source = "def f(x):\n    billing.charge_card(1); billing.send_receipt(2)\n    if x: billing.charge_card(3)\n"
    assert bite.make_mutants(source, "m.py", LABELS, loose=True) == []


# ---------------------------------------------------------------------------
# Text: everything but the mutated lines is kept


def test_crlf_line_breaks_and_a_missing_final_break_are_kept() -> None:
    source = "def f():\r\n    billing.charge_card(1)\r\n    billing.send_receipt(2)"
    mutants = bite.make_mutants(source, "m.py", LABELS, loose=True)
    (swap,) = by_operator(mutants, "swap")
    assert swap.text == "def f():\r\n    billing.send_receipt(2)\r\n    billing.charge_card(1)"
    duplicate = by_operator(mutants, "duplicate")[1]
    assert duplicate.text == source + "\r\n    billing.send_receipt(2)"


def test_form_feeds_and_non_ascii_text_are_kept() -> None:
    source = "\x0c\ndef f():\n    billing.charge_card('é')  # ünïcode\n    billing.send_receipt('ß')\n"
    [swap] = by_operator(bite.make_mutants(source, "m.py", LABELS, loose=True), "swap")
    assert swap.text == "\x0c\ndef f():\n    billing.send_receipt('ß')\n    billing.charge_card('é')  # ünïcode\n"


def test_every_mutant_keeps_the_other_lines_byte_for_byte() -> None:
    for mutant in bite.make_mutants(RENEW, "renewals.py", LABELS):
        removed, added = changed_lines(RENEW, mutant.text)
        span = RENEW.splitlines(keepends=True)[mutant.line - 1 : mutant.end_line]
        assert sorted(set(removed) | set(added)) <= sorted(set(span) | {"    pass\n"}), mutant.id


def test_a_source_file_in_its_declared_encoding_is_written_back_in_it() -> None:
    data = (
        "# -*- coding: latin-1 -*-\ndef f():\n    billing.charge_card('café')\n    billing.send_receipt(1)\n"
    ).encode("latin-1")
    text, encoding = bite.decode_source(data)
    [swap] = by_operator(bite.make_mutants(text, "m.py", LABELS, encoding=encoding, loose=True), "swap")
    assert swap.data() == (
        "# -*- coding: latin-1 -*-\ndef f():\n    billing.send_receipt(1)\n    billing.charge_card('café')\n"
    ).encode("latin-1")


# ---------------------------------------------------------------------------
# Ids and diffs


def test_ids_are_stable_and_differ_by_file() -> None:
    first = [m.id for m in bite.make_mutants(RENEW, "renewals.py", LABELS)]
    assert first == [m.id for m in bite.make_mutants(RENEW, "renewals.py", LABELS)]
    assert len(set(first)) == len(first)
    assert all(m.id.startswith(f"{m.operator}-") for m in bite.make_mutants(RENEW, "renewals.py", LABELS))
    assert set(first).isdisjoint(m.id for m in bite.make_mutants(RENEW, "other.py", LABELS))


def test_an_id_survives_edits_elsewhere_in_the_file_that_keep_its_lines() -> None:
    edited = RENEW.replace('return "renewed"', 'return "done"')
    assert [m.id for m in bite.make_mutants(RENEW, "r.py", LABELS)] == [
        m.id for m in bite.make_mutants(edited, "r.py", LABELS)
    ]


def test_diff_is_a_unified_diff_of_the_source_file() -> None:
    [swap] = by_operator(bite.make_mutants(RENEW, "renewals.py", LABELS), "swap")
    diff = swap.diff()
    assert diff.startswith("--- a/renewals.py\n+++ b/renewals.py\n@@ ")
    changes = [line for line in diff.splitlines()[2:] if line.startswith(("-", "+"))]
    assert sorted(changes) == [
        '+    billing.send_receipt(case["email"], case["amount"])',
        '-    billing.send_receipt(case["email"], case["amount"])',
    ]


# ---------------------------------------------------------------------------
# Files


def test_find_mutants_skips_other_files_and_names_an_unparsable_one(tmp_path: Path) -> None:
    project = bite.Project(tmp_path, None)
    snapshot: dict[str, bytes | None] = {
        "pkg/r.py": RENEW.encode(),
        "pkg/notes.txt": b"billing.charge_card()\n",
        "gone.py": None,
    }
    assert {m.path for m in bite.find_mutants(project, snapshot, LABELS)} == {"pkg/r.py"}
    with pytest.raises(UsageError, match=r"cannot parse bad\.py"):
        bite.find_mutants(project, {"bad.py": b"def (:\n"}, LABELS)


def test_snapshot_outside_git_takes_the_python_files_below_a_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "src" / "__pycache__").mkdir(parents=True)
    (tmp_path / "src" / "venv").mkdir()
    (tmp_path / "src" / "venv" / "pyvenv.cfg").write_text("")
    (tmp_path / "src" / "venv" / "x.py").write_text("")
    (tmp_path / "src" / "__pycache__" / "y.py").write_text("")
    (tmp_path / "src" / "r.py").write_text(RENEW)
    (tmp_path / "src" / "data.txt").write_text("")
    monkeypatch.chdir(tmp_path)
    assert bite.snapshot_sources(bite.Project(tmp_path, None), ["src"]) == {"src/r.py": RENEW.encode()}


def test_a_source_outside_the_project_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "inside").mkdir()
    with pytest.raises(UsageError, match="outside the project"):
        bite.snapshot_sources(bite.Project(tmp_path / "inside", None), [tmp_path])


def test_a_missing_source_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        bite.snapshot_sources(bite.Project(tmp_path, None), [tmp_path / "nope.py"])


# ---------------------------------------------------------------------------
# Report


def result(outcome: str, operator: str = "swap") -> bite.Result:
    mutant = next(m for m in bite.make_mutants(RENEW, "renewals.py", LABELS) if m.operator == operator)
    return bite.Result(mutant, outcome, "why" if outcome == "error" else "")


@pytest.mark.parametrize(
    ("outcomes", "code"),
    [
        (["caught", "timeout"], 0),
        (["caught", "survived", "error"], 1),
        (["caught", "error"], 2),
    ],
)
def test_exit_code_says_survived_over_could_not_run_over_all_caught(outcomes: list[str], code: int) -> None:
    assert bite.Report(tuple(map(result, outcomes)), "git worktrees").exit_code == code


def test_text_report_has_the_table_the_survivors_diff_and_a_summary() -> None:
    report = bite.Report(
        (result("caught", "delete"), result("survived"), result("error", "duplicate")),
        "git worktrees",
    )
    lines = list(report.lines())
    assert lines[0].split() == ["ID", "OPERATOR", "WHERE", "CALLS", "OUTCOME"]
    survivor = report.results[1].mutant
    assert lines[2].split() == [
        survivor.id,
        "swap",
        "renewals.py:7",
        "billing.charge_card",
        "<->",
        "billing.send_receipt",
        "survived",
    ]
    assert f"survived {survivor.id}: swap billing.charge_card <-> billing.send_receipt" in lines
    assert "--- a/renewals.py" in lines
    assert f"error {report.results[2].mutant.id}: why" in lines
    assert lines[-1] == "bite: 3 mutants in git worktrees: 1 caught, 0 timeout, 1 survived, 1 error"


def test_json_report_carries_every_field() -> None:
    report = bite.Report((result("survived"),), "temporary copies")
    data = json.loads(json.dumps(report.as_json()))
    assert data["summary"] == {"caught": 0, "timeout": 0, "survived": 1, "error": 0}
    assert data["exit_code"] == 1
    [mutant] = data["mutants"]
    assert mutant["calls"] == ["billing.charge_card", "billing.send_receipt"]
    assert (mutant["file"], mutant["line"], mutant["end_line"], mutant["outcome"]) == (
        "renewals.py",
        7,
        8,
        "survived",
    )
    assert mutant["diff"] == report.results[0].mutant.diff()


def caught(by: str, operator: str = "swap") -> bite.Result:
    mutant = next(m for m in bite.make_mutants(RENEW, "renewals.py", LABELS) if m.operator == operator)
    return bite.Result(mutant, "caught", "UnboundLocalError in t.py::test_renew (exit 1)", by)


def test_the_report_says_what_caught_each_mutant_and_lists_the_weak_ones() -> None:
    report = bite.Report((caught("drift", "delete"), caught("error"), caught("assert", "duplicate")), "git worktrees")
    lines = list(report.lines())
    weak = report.results[1].mutant
    assert lines[2].endswith("caught (error)")
    assert (
        f"weak {weak.id}: caught only by UnboundLocalError in t.py::test_renew (exit 1): the mutated code "
        "crashed, as it would under any test; only a drift or an assertion shows the harness watches "
        "billing.charge_card and billing.send_receipt"
    ) in lines
    assert lines[-1] == (
        "bite: 3 mutants in git worktrees: 3 caught (drift 1, assert 1, error 1), 0 timeout, 0 survived, 0 error; "
        "1 weak"
    )
    data = json.loads(json.dumps(report.as_json()))
    assert data["caught_by"] == {"drift": 1, "assert": 1, "error": 1, "exit": 0}
    assert data["weak"] == [weak.id]
    assert [(m["caught_by"], m["weak"]) for m in data["mutants"]] == [
        ("drift", False),
        ("error", True),
        ("assert", False),
    ]
    assert report.exit_code == 0


def test_a_merge_counts_what_caught_the_mutants_of_every_shard() -> None:
    whole = bite.Report((caught("drift", "delete"), caught("error"), caught("exit", "duplicate")), "git worktrees")
    data = whole.as_json()
    shards = [{**data, "mutants": data["mutants"][:1]}, {**data, "mutants": data["mutants"][1:]}]
    merged = bite.merge(shards, ["one.json", "two.json"])
    assert merged.as_json()["caught_by"] == {"drift": 1, "assert": 0, "error": 1, "exit": 1}
    assert merged.as_json()["weak"] == [whole.results[1].mutant.id]
    assert list(merged.lines())[-1] == list(whole.lines())[-1]
    wrong = {**data, "mutants": [{**data["mutants"][0], "caught_by": "luck"}]}
    with pytest.raises(UsageError, match=r"one\.json: unknown way of being caught 'luck'"):
        bite.merge([wrong], ["one.json"])


def test_a_failure_is_a_drift_an_assertion_or_an_error_by_its_exception() -> None:
    assert kind(Drift("baselines/renew.cpin", None, "billing.charge_card moved")) == "drift"
    assert kind(AssertionError("1 != 2")) == "assert"
    with pytest.raises(BaseException) as failed:
        pytest.fail("the test's own verdict")
    assert kind(failed.value) == "assert"
    assert kind(UnboundLocalError("receipt")) == "error"
    assert kind(FileNotFoundError(2, "gone")) == "error"


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_status_line_is_on_a_terminal_before_the_unmutated_run_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The test command waits for `go` before it imports the code: the line must be up
    # (with what bite is doing) while it waits, and count every mutant at the end.
    go = tmp_path / "go"
    project = tmp_path / "project"
    project.mkdir()
    (project / "billing.py").write_text("")
    (project / "check.py").write_text(
        "import os, time\nwhile not os.path.exists(os.environ['GO']):\n    time.sleep(0.02)\nimport renewals\n"
    )
    monkeypatch.setenv("GO", str(go))
    snapshot: dict[str, bytes | None] = {"renewals.py": RENEW.encode()}
    mutants = bite.make_mutants(RENEW, "renewals.py", LABELS, ["delete"])
    terminal = FakeTerminal()
    reports: list[bite.Report] = []
    command = f"{sys.executable} check.py"

    def run() -> None:
        reports.append(bite.run(bite.Project(project, None), snapshot, mutants, test=command, progress=terminal))

    runner = threading.Thread(target=run)
    runner.start()
    try:
        for _ in range(1000):
            if "running the unmutated tests" in terminal.getvalue():
                break
            time.sleep(0.02)
        waiting = terminal.getvalue()
    finally:
        go.touch()
        runner.join(120)
    assert "\rbite: 0/2 mutants  running the unmutated tests  elapsed 0:0" in waiting
    assert "ETA --:--" in waiting
    assert reports and reports[0].count("survived") == 2
    last = terminal.getvalue().rstrip("\n").rsplit("\r", 1)[-1]
    assert last.startswith("bite: 2/2 mutants  survived 2  elapsed ")
    assert terminal.getvalue().endswith("\n")


def test_no_status_line_off_a_terminal(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "billing.py").write_text("")
    snapshot: dict[str, bytes | None] = {"renewals.py": RENEW.encode()}
    mutants = bite.make_mutants(RENEW, "renewals.py", LABELS, ["delete"])
    pipe = io.StringIO()
    report = bite.run(
        bite.Project(project, None), snapshot, mutants, test=f"{sys.executable} -c 'import renewals'", progress=pipe
    )
    assert report.count("survived") == 2
    assert pipe.getvalue() == ""


def test_default_timeout_follows_the_unmutated_run_with_a_floor() -> None:
    assert bite.default_timeout(0.5) == 10.0
    assert bite.default_timeout(4.0) == 20.0


# ---------------------------------------------------------------------------
# The start-up hook


def run_hooked(tmp_path: Path, code: str, watch: list[str], extra_path: list[Path] = ()) -> list[list[str]]:
    hook = tmp_path / "hook"
    hook.mkdir()
    install_hook(_HOOK, hook)
    marker = tmp_path / "marker"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(map(str, [hook, tmp_path / "proj", *extra_path])),
        "CALLPIN_BITE_MARKER": str(marker),
        "CALLPIN_BITE_WATCH": json.dumps(watch),
    }
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=tmp_path)
    return [line.split("\t") for line in marker.read_text().splitlines()] if marker.exists() else []


def test_the_hook_notes_an_uncaught_exception_and_names_the_pytest_plugin_once(tmp_path: Path) -> None:
    hook = tmp_path / "hook"
    hook.mkdir()
    install_hook(_HOOK, hook)
    shutil.copyfile(_FAILURES, hook / _FAILURES_MODULE)
    failures = tmp_path / "failures"
    env = {**os.environ, "PYTHONPATH": str(hook), "CALLPIN_BITE_FAILURES": str(failures), "PYTEST_PLUGINS": "xdist"}
    script = tmp_path / "check.py"
    script.write_text(
        "import os, subprocess, sys\n"
        "print(os.environ['PYTEST_PLUGINS'])\n"
        "subprocess.run([sys.executable, '-c', 'import os; print(os.environ[\"PYTEST_PLUGINS\"])'])\n"
        "raise KeyError('receipt')\n"
    )
    done = subprocess.run([sys.executable, str(script)], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stdout.splitlines() == ["xdist,callpin_bite_failures"] * 2
    assert "KeyError: 'receipt'" in done.stderr
    assert [json.loads(line) for line in failures.read_text().splitlines()] == [
        {"kind": "error", "type": "builtins.KeyError", "where": str(script)}
    ]


def test_the_hook_notes_the_real_file_and_module_of_a_watched_name(tmp_path: Path) -> None:
    (tmp_path / "proj" / "pkg").mkdir(parents=True)
    (tmp_path / "proj" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "proj" / "pkg" / "renewals.py").write_text("X = 1\n")
    (tmp_path / "proj" / "other.py").write_text("")
    seen = run_hooked(tmp_path, "import pkg.renewals, other", ["renewals.py"])
    assert seen == [[os.path.realpath(tmp_path / "proj" / "pkg" / "renewals.py"), "pkg.renewals"]]


def test_the_hook_runs_the_sitecustomize_it_shadows(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text("import builtins\nbuiltins.CHAINED = True\n")
    run_hooked(tmp_path, "import builtins; assert builtins.CHAINED", [], [tmp_path / "site"])


def test_the_module_name_comes_from_the_package_folders(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    assert _module_name(tmp_path, "src/pkg/billing.py") == "pkg.billing"
    assert _module_name(tmp_path, "src/pkg/__init__.py") == "pkg"
    assert _import_root(tmp_path, "src/pkg/billing.py") == tmp_path / "src"
    assert _module_name(tmp_path, "renewals.py") == "renewals"


# ---------------------------------------------------------------------------
# The command line (runs that start mutants live in tests/integration/test_bite.py)


def test_show_prints_one_mutants_diff(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "renewals.py").write_text(RENEW)
    monkeypatch.chdir(tmp_path)
    [swap] = by_operator(bite.make_mutants(RENEW, "renewals.py", LABELS), "swap")
    args = ["bite", "renewals.py", "--label", LABELS[0], "--label", LABELS[1], "--show", swap.id]
    outcome = CliRunner().invoke(main, args)
    assert outcome.exit_code == 0
    assert outcome.output == swap.diff()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--show", "swap-00000000", "--label", "billing.charge_card"],
            "no mutant 'swap-00000000'",
        ),
        (
            ["--operators", "swap,shuffle", "--label", "billing.charge_card", "--show", "x"],
            "unknown operator",
        ),
        ([], "no baselines folder baselines"),
        (
            ["--label", "billing.nothing"],
            "--label billing.nothing matches no call site in SOURCE; no pinned label is close",
        ),
        (["--operators", "swap,shuffle"], "unknown operator 'shuffle'"),
        (["--operators", ","], "no operator; choose from swap, delete, duplicate"),
    ],
)
def test_cli_errors_are_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    (tmp_path / "renewals.py").write_text(RENEW)
    monkeypatch.chdir(tmp_path)
    outcome = CliRunner().invoke(main, ["bite", "renewals.py", *args])
    assert outcome.exit_code == 2
    assert outcome.output.count("\n") == 1
    assert outcome.output.startswith("callpin: ") and message in outcome.output


def test_a_bite_error_prints_the_commands_output_before_the_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def failing(*args: object, **kwargs: object) -> bite.Report:
        raise BiteError("the unmutated test command failed", output="E   assert 1 == 2")

    monkeypatch.setattr(bite, "bite", failing)
    outcome = CliRunner().invoke(main, ["bite", "."])
    assert outcome.exit_code == 2
    assert outcome.output == "E   assert 1 == 2\ncallpin: the unmutated test command failed\n"


# ---------------------------------------------------------------------------
# Signals and scratch copies


def test_signals_during_cleanup_wait_for_it_and_sigint_is_raised_after() -> None:
    # A shell that runs the suite in the background hands it SIGINT ignored; the
    # handler bite finds is Python's own wherever a person presses Ctrl-C.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    cleaned = []
    try:
        with pytest.raises(KeyboardInterrupt):
            with SignalGuard() as guard:
                guard.hold()
                signal.raise_signal(signal.SIGINT)
                cleaned.append(True)
        assert cleaned == [True]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


def test_sigterm_cleans_up_then_reaches_the_callers_handler() -> None:
    delivered: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: delivered.append(signum))
    try:
        with pytest.raises(SystemExit) as stopped:
            with SignalGuard():
                try:
                    signal.raise_signal(signal.SIGTERM)
                finally:
                    delivered.append(0)
        assert stopped.value.code == 128 + signal.SIGTERM
        assert delivered == [0, signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_scratch_copy_that_cannot_be_made_is_a_bite_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "project").mkdir()
    scratch = Scratch(bite.Project(tmp_path / "project", None), {}, "true").open()

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(shutil, "copytree", refuse)
    try:
        with pytest.raises(BiteError, match=r"cannot make the scratch copy m-1: .*No space left"):
            scratch.attempt("m-1", {}, [], None)
    finally:
        scratch.close()
    assert not scratch.folder.exists()
