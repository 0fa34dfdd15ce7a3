"""A drift fails its test as an assertion, with the diff in the failure output."""

from __future__ import annotations

import pytest

from .project import module_source, run

pytest_plugins = ["pytester"]

BASELINE = "baselines/test_shop/test_renew.cpin"


def test_swapped_calls_fail_the_test_with_both_calls_moved(pinned, monkeypatch):
    monkeypatch.setenv("SHOP_ORDER", "receipt-first")
    result = run(pinned)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1, errors=0)
    result.stdout.re_match_lines(
        [
            r"^>\s+with callpin\.pin\(spy=\[.collab\.charge., .collab\.receipt.\]\):$",
            rf"^E\s+callpin\.errors\.Drift: interactions differ from {BASELINE}$",
            rf"^E\s+old: {BASELINE} \(2 events\)$",
            r"^E\s+moved\s+1\s+0\s+collab\.receipt\('ada@example\.com', 10\)$",
            r"^E\s+moved\s+0\s+1\s+collab\.charge\('card_A', 10\)$",
            r"^E\s+2 differences: 2 moved, 0 missing, 0 extra, 0 changed$",
            r"^test_shop\.py:\d+: Drift$",
            r"^FAILED test_shop\.py::test_renew - callpin\.errors\.Drift: interactions.*",
        ]
    )


def test_the_failure_points_at_the_test_not_into_callpin(pinned, monkeypatch):
    monkeypatch.setenv("SHOP_ORDER", "receipt-first")
    output = run(pinned).stdout.str()
    assert "recorder.py" not in output
    assert "def _compare" not in output


def test_a_changed_argument_names_the_field(pinned, monkeypatch):
    monkeypatch.setenv("SHOP_AMOUNT", "12")
    result = run(pinned)
    result.assert_outcomes(failed=1)
    result.stdout.re_match_lines(
        [
            r"^E\s+changed\s+0\s+0\s+collab\.charge\('card_A', 12\)$",
            r"^E\s+args\[1\]: 10 → 12  \(in 2 calls: #0, #1\)$",
            r"^E\s+changed\s+1\s+1\s+collab\.receipt\('ada@example\.com', 12\)$",
            r"^E\s+\(and 1 change shown at #0\)$",
        ]
    )


def test_the_summary_counts_and_names_the_drifted_baseline(pinned, monkeypatch):
    monkeypatch.setenv("SHOP_ORDER", "receipt-first")
    result = run(pinned)
    result.stdout.re_match_lines(
        [
            r"^=+ callpin =+$",
            r"^check mode: 0 written, 0 updated, 1 drifted, 0 missing, 0 unchanged$",
            rf"^drifted {BASELINE}: 2 differences: 2 moved, 0 missing, 0 extra, 0 changed$",
        ]
    )


def test_a_block_that_raises_fails_with_its_own_exception_not_a_drift(pinned, monkeypatch):
    pinned.makepyfile(
        test_shop=module_source("""
def test_renew(callpin):
    with callpin.pin(spy=["collab.charge", "collab.receipt"]):
        shop.renew()
        raise KeyError("lost")
""")
    )
    monkeypatch.setenv("SHOP_ORDER", "receipt-first")
    result = run(pinned)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED test_shop.py::test_renew - KeyError: 'lost'"])
    assert "Drift" not in result.stdout.str()
