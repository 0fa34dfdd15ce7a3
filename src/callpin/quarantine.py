"""Quarantine: a drifting pin skipped until a date, with a reason, and failed again after it.

`@pytest.mark.callpin_quarantine(until="YYYY-MM-DD", reason="...")` turns a `Drift` of its
test into a skip until that date; after it the test fails, whether it drifts still or
matches again (then the marker should go). "Today" is read in one place, `today()`. The
pytest plugin calls `collection_problems` while collecting and `judge` on each test's
report; this module holds the rule, the plugin only the hooks.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

import pytest

from .errors import Drift, UsageError

TODAY_VARIABLE = "CALLPIN_TODAY"
QUARANTINE = "callpin_quarantine"


def today() -> dt.date:
    """The date quarantines are judged by: CALLPIN_TODAY (YYYY-MM-DD) if set, else today in UTC."""
    forced = os.environ.get(TODAY_VARIABLE)
    if forced:
        return dt.date.fromisoformat(forced)
    return dt.datetime.now(dt.UTC).date()


def check_today() -> None:
    """Raise a UsageError when CALLPIN_TODAY is set but not a date (checked once, at start-up)."""
    forced = os.environ.get(TODAY_VARIABLE)
    if forced:
        try:
            dt.date.fromisoformat(forced)
        except ValueError:
            raise UsageError(f"{TODAY_VARIABLE}={forced!r} is not a YYYY-MM-DD date") from None


def terms(item: pytest.Item) -> tuple[dt.date, str] | str | None:
    """The item's quarantine as (until, reason); a message when the marker is malformed."""
    marker = item.get_closest_marker(QUARANTINE)
    if marker is None:
        return None
    until = marker.kwargs.get("until")
    reason = marker.kwargs.get("reason")
    usage = f"@pytest.mark.{QUARANTINE} needs until='YYYY-MM-DD' and reason='...'"
    if marker.args or not isinstance(until, str) or not isinstance(reason, str) or not reason:
        return f"{item.nodeid}: {usage}"
    try:
        return dt.date.fromisoformat(until), reason
    except ValueError:
        return f"{item.nodeid}: until={until!r} is not a date; {usage}"


def collection_problems(report: pytest.CollectReport) -> None:
    """Fail a module's collection when one of its items has a malformed quarantine.

    This is how pytest treats an unknown marker under --strict-markers. Raising a
    UsageError instead would crash an xdist controller, because there the workers collect.
    """
    if not report.passed:
        return
    problems = [
        found for item in report.result if isinstance(item, pytest.Item) and isinstance(found := terms(item), str)
    ]
    if problems:
        report.outcome = "failed"
        report.longrepr = "\n".join(problems)


def judge(item: pytest.Item, call: pytest.CallInfo[Any], report: pytest.TestReport) -> None:
    """Turn the report of a quarantined test's call into a skip, or a failure once expired."""
    if call.when != "call":
        return
    found = terms(item)
    if found is None:
        return
    if isinstance(found, str):
        # A marker added while the test ran escaped the check at collection.
        report.outcome = "failed"
        report.longrepr = found
        return
    until, reason = found
    drift = call.excinfo is not None and call.excinfo.errisinstance(Drift)
    if today() > until:
        if call.excinfo is not None and not drift:
            return  # it failed for another reason: that failure is the news
        expired = f"quarantine expired on {until.isoformat()}: {reason}"
        report.outcome = "failed"
        if call.excinfo is not None:
            report.longrepr = f"{expired}\n{call.excinfo.value}"
        else:
            report.longrepr = f"{expired}\nthe pins match their baselines again: remove the marker"
    elif drift:
        report.outcome = "skipped"
        report.wasxfail = f"callpin quarantine until {until.isoformat()}: {reason}"
