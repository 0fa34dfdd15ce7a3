"""@pytest.mark.callpin_quarantine: a drift is an xfail until the date (inclusive), then fails.

"Today" comes from CALLPIN_TODAY, the plugin's one date seam; no test reads a clock.
"""

from __future__ import annotations

import pytest

from .project import module_source, pinned_test, run

pytest_plugins = ["pytester"]

QUARANTINED = '@pytest.mark.callpin_quarantine(until="2026-03-01", reason="gateway reorders calls")'


@pytest.fixture
def quarantined(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    project.makepyfile(test_shop=module_source(pinned_test(decorators=QUARANTINED)))
    with monkeypatch.context() as during_setup:
        during_setup.setenv("CALLPIN_TODAY", "2026-01-01")
        run(project, "--callpin-mode=new").assert_outcomes(passed=1)
    return project


@pytest.mark.parametrize("today", ["2026-02-28", "2026-03-01"])
def test_a_drift_is_xfail_until_the_date_inclusive(quarantined, monkeypatch, today):
    monkeypatch.setenv("CALLPIN_TODAY", today)
    monkeypatch.setenv("SHOP_ORDER", "receipt-first")
    result = run(quarantined, "-rx")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "XFAIL test_shop.py::test_renew - callpin quarantine until 2026-03-01: gateway reorders calls",
        ]
    )


def test_a_drift_fails_after_the_date_with_the_reason_and_the_diff(quarantined, monkeypatch):
    monkeypatch.setenv("CALLPIN_TODAY", "2026-03-02")
    monkeypatch.setenv("SHOP_ORDER", "receipt-first")
    result = run(quarantined)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1)
    result.stdout.re_match_lines(
        [
            r"^quarantine expired on 2026-03-01: gateway reorders calls$",
            r"^interactions differ from baselines/test_shop/test_renew\.cpin$",
            r"^moved\s+1\s+0\s+collab\.receipt\('ada@example\.com', 10\)$",
            r"^moved\s+0\s+1\s+collab\.charge\('card_A', 10\)$",
        ]
    )


def test_a_matching_pin_passes_while_quarantined(quarantined, monkeypatch):
    monkeypatch.setenv("CALLPIN_TODAY", "2026-02-01")
    run(quarantined).assert_outcomes(passed=1)


def test_a_matching_pin_fails_after_the_date_so_the_marker_goes(quarantined, monkeypatch):
    monkeypatch.setenv("CALLPIN_TODAY", "2026-03-02")
    result = run(quarantined)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "quarantine expired on 2026-03-01: gateway reorders calls",
            "the pins match their baselines again: remove the marker",
        ]
    )


@pytest.mark.parametrize("today", ["2026-02-01", "2026-04-01"])
def test_a_failure_that_is_not_a_drift_is_never_quarantined(project, monkeypatch, today):
    project.makepyfile(
        test_shop=module_source(
            QUARANTINED
            + """
def test_renew(callpin):
    assert 1 + 1 == 3, "arithmetic"
"""
        )
    )
    monkeypatch.setenv("CALLPIN_TODAY", today)
    result = run(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["E *AssertionError: arithmetic"])
    result.stdout.no_fnmatch_line("*quarantine expired*")


USAGE = "@pytest.mark.callpin_quarantine needs until='YYYY-MM-DD' and reason='...'"


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ('reason="flaky"', USAGE),
        ('until="2026-03-01"', USAGE),
        ('until="2026-03-01", reason=""', USAGE),
        ('"2026-03-01", "flaky"', USAGE),
        ('until="next week", reason="flaky"', f"until='next week' is not a date; {USAGE}"),
    ],
    ids=["no-until", "no-reason", "empty-reason", "positional", "not-a-date"],
)
def test_a_malformed_quarantine_stops_the_run_at_collection(project, arguments, problem):
    project.makepyfile(test_shop=module_source(f"@pytest.mark.callpin_quarantine({arguments})\n" + pinned_test()))
    result = run(project)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting test_shop.py*",
            f"test_shop.py::test_renew: {problem}".replace("[", "[[]"),
            "*Interrupted: 1 error during collection*",
        ]
    )


def test_a_malformed_CALLPIN_TODAY_is_a_usage_error(quarantined, monkeypatch):
    monkeypatch.setenv("CALLPIN_TODAY", "tomorrow")
    result = run(quarantined)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: callpin: CALLPIN_TODAY='tomorrow' is not a YYYY-MM-DD date"])


def test_the_marker_is_registered_for_strict_markers(project, monkeypatch):
    monkeypatch.setenv("CALLPIN_TODAY", "2026-01-01")
    project.makepyfile(test_shop=module_source(QUARANTINED + "\ndef test_renew():\n    pass\n"))
    run(project, "--strict-markers").assert_outcomes(passed=1)
