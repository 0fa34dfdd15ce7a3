"""Received logs, the budget of a drift's report, and plain callpin.pin() calls inside a run."""

from __future__ import annotations

import textwrap

from callpin import load

from .project import baselines, module_source, pinned_test, run

pytest_plugins = ["pytester"]

BASELINE = "baselines/test_shop/test_renew.cpin"
RECEIVED = BASELINE + ".received"

# A plain callpin.pin() (not the fixture) of a baseline under the baselines folder.
PLAIN_PIN = """
import callpin
import shop

def test_plain():
    with callpin.pin("baselines/plain/renew.cpin", spy=["collab.charge", "collab.receipt"]):
        shop.renew()
"""

# 5,000 calls, each with the amount the environment sets: changing it changes every call.
MANY_CALLS = textwrap.dedent(
    """
    import os
    import collab

    def test_many(callpin):
        amount = int(os.environ.get("SHOP_AMOUNT", "10"))
        with callpin.pin(spy=["collab.charge"]):
            for index in range(5000):
                collab.charge(f"card_{index}", amount)
    """
)


def test_a_drift_leaves_its_received_log_and_a_passing_rerun_removes_it(pinned, monkeypatch):
    monkeypatch.setenv("SHOP_ORDER", "receipt-first")
    result = run(pinned)
    result.assert_outcomes(failed=1)
    assert baselines(pinned) == [BASELINE, RECEIVED]
    assert [event.label for event in load(pinned.path / RECEIVED)] == ["collab.receipt", "collab.charge"]
    result.stdout.re_match_lines(
        [
            rf"^E\s+new: {RECEIVED} \(2 events\)$",
            rf"^E\s+all of it: callpin diff {BASELINE} {RECEIVED} \(add --format html -o drift.html for a page\)$",
            r"^E\s+next: callpin review to accept or reject the received log, or rerun in update mode and bless$",
        ]
    )
    monkeypatch.delenv("SHOP_ORDER")
    run(pinned).assert_outcomes(passed=1)
    assert baselines(pinned) == [BASELINE]


def test_a_received_log_is_byte_identical_to_the_log_CALLPIN_OUTPUT_DIR_exports(pinned, monkeypatch):
    exported = pinned.path / "exported"
    monkeypatch.setenv("SHOP_ORDER", "receipt-first")
    monkeypatch.setenv("CALLPIN_OUTPUT_DIR", str(exported))
    run(pinned).assert_outcomes(failed=1)
    (copy,) = sorted(exported.rglob("*.cpin"))
    assert copy.read_bytes() == (pinned.path / RECEIVED).read_bytes()
    assert list(pinned.path.rglob("*.received")) == [pinned.path / RECEIVED]


def test_the_summary_ends_with_the_command_that_reviews_the_received_logs(pinned, monkeypatch):
    monkeypatch.setenv("SHOP_ORDER", "receipt-first")
    lines = run(pinned).stdout.lines
    section = lines[next(k for k, line in enumerate(lines) if "= callpin =" in line) :]
    assert "their received logs wait beside them: callpin review accepts or rejects each" in section


def test_the_review_command_names_a_baselines_folder_given_on_the_command_line(project):
    project.makepyfile(test_shop=module_source(pinned_test()))
    result = run(project, "--callpin-dir=pins")
    result.stdout.fnmatch_lines(["*with: callpin review --baselines pins", "*callpin review --baselines pins accepts*"])


def test_a_received_log_is_written_under_ci(pinned, monkeypatch):
    monkeypatch.setenv("SHOP_ORDER", "receipt-first")
    monkeypatch.setenv("CI", "true")
    result = run(pinned)
    result.assert_outcomes(failed=1)
    assert baselines(pinned) == [BASELINE, RECEIVED]
    result.stdout.fnmatch_lines(["E *next: callpin review (locally: CI only keeps the received log)*"])


def test_a_drift_of_5000_calls_prints_at_most_60_lines_and_names_the_received_log(project, monkeypatch):
    project.makepyfile(test_many=MANY_CALLS)
    run(project, "--callpin-mode=new").assert_outcomes(passed=1)
    monkeypatch.setenv("SHOP_AMOUNT", "12")
    result = run(project)
    result.assert_outcomes(failed=1)
    lines = result.stdout.lines
    start = next(k for k, line in enumerate(lines) if "_ test_many _" in line)
    end = next(k for k, line in enumerate(lines) if k > start and "= callpin =" in line)
    report = lines[start:end]
    assert len(report) <= 60, "\n".join(report)
    assert any("… 4980 more differences not shown" in line for line in report)
    assert any("baselines/test_many/test_many.cpin.received" in line for line in report)


def test_diff_lines_and_very_verbose_widen_the_budget(project, monkeypatch):
    project.makepyfile(test_many=MANY_CALLS)
    run(project, "--callpin-mode=new").assert_outcomes(passed=1)
    monkeypatch.setenv("SHOP_AMOUNT", "12")
    shown = {}
    for option in ("--callpin-diff-lines=100", "-vv"):
        lines = run(project, option).stdout.lines
        shown[option] = sum(line.startswith("E ") and line.split()[1:2] == ["changed"] for line in lines)
    assert shown == {"--callpin-diff-lines=100": 50, "-vv": 5000}


def test_a_plain_pin_follows_the_runs_mode_and_is_counted(project):
    project.makepyfile(test_plain=PLAIN_PIN)
    result = run(project, "--callpin-mode=new")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["new mode: 1 written, 0 updated, 0 drifted, 0 missing, 0 unchanged"])
    assert baselines(project) == ["baselines/plain/renew.cpin"]
    run(project).stdout.fnmatch_lines(["check mode: 0 written, 0 updated, 0 drifted, 0 missing, 1 unchanged"])


def test_a_plain_pins_baseline_is_never_unused_nor_pruned(project):
    project.makepyfile(test_plain=PLAIN_PIN)
    run(project, "--callpin-mode=new").assert_outcomes(passed=1)
    result = run(project, "--callpin-prune")
    result.assert_outcomes(passed=1)
    assert "unused baseline" not in result.stdout.str()
    assert "pruned " not in result.stdout.str()
    assert baselines(project) == ["baselines/plain/renew.cpin"]
    run(project).assert_outcomes(passed=1)


def test_a_plain_pin_is_refused_a_writing_mode_under_ci_like_the_fixture(project, monkeypatch):
    project.makepyfile(
        test_plain=PLAIN_PIN.replace('spy=["collab.charge", "collab.receipt"]', 'spy=["collab.charge"], mode="new"')
    )
    monkeypatch.setenv("CI", "true")
    result = run(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ModeRefused: mode 'new' writes baselines and is refused under CI*"])
    assert baselines(project) == []


def test_a_plain_pins_missing_baseline_names_the_command_for_its_test(project):
    project.makepyfile(test_plain=PLAIN_PIN)
    result = run(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E *no baseline at baselines/plain/renew.cpin; "
            "create it with: pytest test_plain.py::test_plain --callpin-mode=new",
        ]
    )
