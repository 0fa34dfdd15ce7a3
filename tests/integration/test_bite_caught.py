"""How `callpin bite` says a mutant was caught (drift, assert, error, exit), on throw-away projects."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from gitrepo import new_repository

from .test_bite import BILLING, CHECK, PINNED_TEST, PYTEST, PYTHON, bite, checker, child_env, renewals_project

# The charge's receipt feeds the next call: swapping the two makes the code crash.
RENEWALS = """\
import billing


def renew(case):
    receipt = billing.charge_card(case["card"], case["amount"])
    billing.send_receipt(case["email"], receipt["id"])
    return "renewed"
"""

CASE = '{"active": True, "card": "card_A", "amount": 1500, "email": "a@example.com"}'

# The calls pinned with callpin.pin: a changed call is a drift.
PIN_TEST = f"""\
import callpin
import renewals


def test_renew_pins_billing():
    stub = {{"billing.charge_card": callpin.returns({{"id": 7}})}}
    with callpin.pin("baselines/renew.cpin", spy=["billing.charge_card", "billing.send_receipt"], stub=stub):
        assert renewals.renew({CASE}) == "renewed"
"""


def pinned_project(root: Path) -> Path:
    """The renewals with a pin test, its baseline written by a first run and committed."""
    root.mkdir()
    (root / "billing.py").write_text(BILLING)
    (root / "renewals.py").write_text(RENEWALS)
    (root / "tests").mkdir()
    (root / "tests" / "test_renewals.py").write_text(PIN_TEST)
    written = subprocess.run(
        PYTEST.split(),
        cwd=root,
        env=child_env(CALLPIN_MODE="new", PYTHONPATH=str(root)),
        capture_output=True,
        text=True,
    )
    assert written.returncode == 0, written.stdout + written.stderr
    assert (root / "baselines" / "renew.cpin").is_file()
    return new_repository(root, commit="renewals, pinned")


def by_operator(report: dict[str, object]) -> dict[tuple[str, int], tuple[str, str | None, bool]]:
    mutants = report["mutants"]
    assert isinstance(mutants, list)
    return {(m["operator"], m["line"]): (m["outcome"], m["caught_by"], m["weak"]) for m in mutants}


def test_a_pin_catches_by_drift_and_a_crash_is_an_error_listed_as_weak(tmp_path: Path) -> None:
    project = pinned_project(tmp_path / "repo")
    done = bite(project, "--test", PYTEST, "--jobs", "2", "--format", "json", "renewals.py")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert by_operator(report) == {
        ("swap", 5): ("caught", "error", True),
        ("delete", 6): ("caught", "drift", False),
        ("duplicate", 5): ("caught", "drift", False),
        ("duplicate", 6): ("caught", "drift", False),
    }
    assert report["caught_by"] == {"drift": 3, "assert": 0, "error": 1, "exit": 0}
    [swap] = [m for m in report["mutants"] if m["operator"] == "swap"]
    assert report["weak"] == [swap["id"]]
    assert swap["detail"] == "UnboundLocalError in tests/test_renewals.py::test_renew_pins_billing (exit 1)"
    [drift] = [m for m in report["mutants"] if m["operator"] == "delete"]
    assert drift["detail"].startswith("callpin.errors.Drift in tests/test_renewals.py::test_renew_pins_billing")

    text = bite(project, "--test", PYTEST, "--jobs", "2", "renewals.py")
    assert text.returncode == 0, text.stdout + text.stderr
    lines = text.stdout.splitlines()
    assert lines[-1] == (
        "bite: 4 mutants in git worktrees: 4 caught (drift 3, error 1), 0 timeout, 0 survived, 0 error; 1 weak"
    )
    [weak] = [line for line in lines if line.startswith("weak ")]
    assert weak == (
        f"weak {swap['id']}: caught only by UnboundLocalError in tests/test_renewals.py::test_renew_pins_billing "
        "(exit 1): the mutated code crashed, as it would under any test; only a drift or an assertion shows "
        "the harness watches billing.charge_card and billing.send_receipt"
    )
    [swap_row] = [line for line in lines if line.startswith(swap["id"])]
    assert swap_row.endswith("caught (error)")


def test_a_test_assertion_catches_by_assert(tmp_path: Path) -> None:
    project = renewals_project(tmp_path / "repo", PINNED_TEST)
    done = bite(project, "--test", PYTEST, "--format", "json", "renewals.py")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert {m["caught_by"] for m in report["mutants"]} == {"assert"}
    assert report["weak"] == []


def test_a_script_says_how_it_failed_by_its_uncaught_exception_or_only_by_its_exit(tmp_path: Path) -> None:
    files = {
        "billing.py": BILLING,
        "renewals.py": RENEWALS.replace('receipt["id"]', "receipt"),
        "check.py": checker(["charge_card", "send_receipt"]),
        "assert_check.py": checker(["charge_card", "send_receipt"], "assert False, calls"),
    }
    root = tmp_path / "repo"
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    project = new_repository(root, commit="renewals")
    labels = ("--label", "billing.send_receipt", "--operators", "delete")

    exits = json.loads(bite(project, *CHECK, *labels, "--format", "json", "renewals.py").stdout)
    assert [m["caught_by"] for m in exits["mutants"]] == ["exit"]
    assert exits["mutants"][0]["detail"].startswith("exit 1; no test failure reported")

    command = ("--test", f"{PYTHON} assert_check.py")
    asserts = json.loads(bite(project, *command, *labels, "--format", "json", "renewals.py").stdout)
    assert [(m["caught_by"], m["detail"]) for m in asserts["mutants"]] == [
        ("assert", "AssertionError in assert_check.py (exit 1)")
    ]


def test_merged_shards_keep_how_each_mutant_was_caught(tmp_path: Path) -> None:
    project = pinned_project(tmp_path / "repo")
    whole = json.loads(bite(project, "--test", PYTEST, "--format", "json", "renewals.py").stdout)
    paths = []
    for index in (1, 2):
        shard = bite(project, "--test", PYTEST, "--shard", f"{index}/2", "--format", "json", "renewals.py")
        paths.append(tmp_path / f"shard-{index}.json")
        paths[-1].write_text(shard.stdout)
    merged = bite(project, "--merge", "--format", "json", *map(str, paths))
    assert merged.returncode == 0, merged.stdout + merged.stderr
    data = json.loads(merged.stdout)
    assert (data["caught_by"], data["weak"]) == (whole["caught_by"], whole["weak"])
    assert [(m["id"], m["caught_by"], m["weak"]) for m in data["mutants"]] == [
        (m["id"], m["caught_by"], m["weak"]) for m in whole["mutants"]
    ]
