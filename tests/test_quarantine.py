"""quarantine: the date quarantines are judged by, and the check of a forced one."""

from __future__ import annotations

import datetime as dt

import pytest

from callpin.errors import UsageError
from callpin.quarantine import check_today, today


def test_today_comes_from_CALLPIN_TODAY(monkeypatch):
    monkeypatch.setenv("CALLPIN_TODAY", "2031-07-04")
    assert today() == dt.date(2031, 7, 4)


def test_today_is_the_utc_date_without_CALLPIN_TODAY(monkeypatch):
    monkeypatch.delenv("CALLPIN_TODAY", raising=False)
    assert today() == dt.datetime.now(dt.UTC).date()


def test_a_forced_today_that_is_not_a_date_is_a_usage_error(monkeypatch):
    monkeypatch.setenv("CALLPIN_TODAY", "next tuesday")
    with pytest.raises(UsageError, match="CALLPIN_TODAY='next tuesday' is not a YYYY-MM-DD date"):
        check_today()
    monkeypatch.setenv("CALLPIN_TODAY", "2031-07-04")
    check_today()
