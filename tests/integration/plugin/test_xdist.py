"""Under pytest-xdist (-n 2): workers record; the controller counts, reports and prunes."""

from __future__ import annotations

import json
import shutil

import pytest

from .project import SHARED_BASELINE, baselines, module_source, pinned_test, run, run_subprocess

pytest_plugins = ["pytester"]

XDIST = ("-n", "2")
QUARANTINED = '@pytest.mark.callpin_quarantine(until="2026-03-01", reason="gateway reorders calls")'


@pytest.fixture
def four(project: pytest.Pytester) -> pytest.Pytester:
    """Four pinned tests in two files, so both workers get some."""
    project.makepyfile(
        test_shop=module_source(pinned_test("test_renew"), pinned_test("test_refund")),
        test_more=module_source(pinned_test("test_other"), pinned_test("test_last")),
    )
    return project


def test_workers_write_baselines_and_the_controller_counts_them(four):
    result = run_subprocess(four, *XDIST, "--callpin-mode=new")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["new mode: 4 written, 0 updated, 0 drifted, 0 missing, 0 unchanged"])
    assert len(baselines(four)) == 4


def test_unused_baselines_under_xdist(four):
    run(four, "--callpin-mode=new").assert_outcomes(passed=4)
    four.makepyfile(
        test_more=module_source(
            '@pytest.mark.skip(reason="later")\n' + pinned_test("test_other"),
            pinned_test("test_last"),
        )
    )
    shutil.copy(
        four.path / "baselines/test_shop/test_renew.cpin",
        four.path / "baselines/test_shop/test_gone.cpin",
    )

    partial = run_subprocess(four, *XDIST, "--callpin-prune", "-k", "not refund")
    partial.assert_outcomes(passed=2, skipped=1)
    partial.stdout.fnmatch_lines(
        [
            "unused baselines not checked, nothing pruned: not a full run (-k selects part of the suite)",
        ]
    )
    assert "baselines/test_shop/test_gone.cpin" in baselines(four)

    full = run_subprocess(four, *XDIST, "--callpin-prune")
    full.assert_outcomes(passed=3, skipped=1)
    full.stdout.fnmatch_lines(
        [
            "check mode: 0 written, 0 updated, 0 drifted, 0 missing, 3 unchanged",
            "pruned 1 unused baseline:",
            "  baselines/test_shop/test_gone.cpin",
        ]
    )
    assert baselines(four) == [
        "baselines/test_more/test_last.cpin",
        "baselines/test_more/test_other.cpin",
        "baselines/test_shop/test_refund.cpin",
        "baselines/test_shop/test_renew.cpin",
    ]


def test_drift_quarantine_and_report_under_xdist(project, monkeypatch):
    project.makepyfile(
        test_shop=module_source(
            pinned_test("test_drifts"),
            pinned_test("test_quarantined", decorators=QUARANTINED),
        )
    )
    monkeypatch.setenv("CALLPIN_TODAY", "2026-02-01")
    run(project, "--callpin-mode=new").assert_outcomes(passed=2)
    monkeypatch.setenv("SHOP_ORDER", "receipt-first")
    result = run_subprocess(project, *XDIST, "--callpin-report=callpin.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1, xfailed=1)
    result.stdout.re_match_lines(
        [
            r"^E\s+callpin\.errors\.Drift: "
            r"interactions differ from baselines/test_shop/test_drifts\.cpin$",
            r"^E\s+moved\s+1\s+0\s+collab\.receipt\('ada@example\.com', 10\)$",
            r"^E\s+moved\s+0\s+1\s+collab\.charge\('card_A', 10\)$",
        ]
    )
    result.stdout.fnmatch_lines(["check mode: 0 written, 0 updated, 2 drifted, 0 missing, 0 unchanged"])
    report = json.loads((project.path / "callpin.json").read_text())
    assert sorted(report["drifted"]) == [
        "baselines/test_shop/test_drifts.cpin",
        "baselines/test_shop/test_quarantined.cpin",
    ]
    assert report["full_run"] is True


def test_deselection_on_the_workers_reaches_the_controller(four):
    run(four, "--callpin-mode=new").assert_outcomes(passed=4)
    shutil.copy(
        four.path / "baselines/test_shop/test_renew.cpin",
        four.path / "baselines/test_shop/test_gone.cpin",
    )
    four.makeconftest("""
def pytest_collection_modifyitems(config, items):
    dropped = [item for item in items if item.name == "test_last"]
    items[:] = [item for item in items if item.name != "test_last"]
    config.hook.pytest_deselected(items=dropped)
""")
    result = run_subprocess(four, *XDIST, "--callpin-prune")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "unused baselines not checked, nothing pruned: not a full run (tests were deselected)",
        ]
    )
    assert "baselines/test_shop/test_gone.cpin" in baselines(four)


def test_a_baseline_two_workers_share_fails_the_run(project):
    # Two tests and two workers: xdist sends one test to each, so neither worker sees
    # the other's claim on test_renew-a-b.cpin; the controller does.
    project.makepyfile(test_shop=module_source(SHARED_BASELINE))
    result = run_subprocess(project, *XDIST, "--callpin-mode=new", "--callpin-report=callpin.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2)
    result.stdout.re_match_lines(
        [
            r"^baselines/test_shop/test_renew-a-b\.cpin is the baseline of both "
            r"test_shop\.py::test_renew\[(a\] \(pin 'b'\) and test_shop\.py::test_renew\[a-b\]"
            r"|a-b\] and test_shop\.py::test_renew\[a\] \(pin 'b'\))"
            r": the run fails; give one of the pins a name$",
        ]
    )
    report = json.loads((project.path / "callpin.json").read_text())
    assert len(report["shared"]) == 1
