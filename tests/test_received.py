"""Received logs: their names beside a baseline, writing, removing and finding them."""

from __future__ import annotations

import fnmatch

import pytest

from callpin import load
from callpin.received import PATTERN, baseline_of, find_received, received_path, remove_received, write_received
from sample_logs import call, log_of

LOG = log_of(call("billing.charge_card", "card_A", 1500))


def test_a_received_log_is_named_after_its_baseline_and_never_globbed_as_one():
    assert received_path("baselines/t/renew.cpin") == "baselines/t/renew.cpin.received"
    assert baseline_of("baselines/t/renew.cpin.received") == "baselines/t/renew.cpin"
    assert not fnmatch.fnmatch("renew.cpin.received", "*.cpin")
    assert fnmatch.fnmatch("renew.cpin.received", PATTERN)


def test_a_name_that_is_not_a_received_log_has_no_baseline():
    with pytest.raises(ValueError, match="not a received log"):
        baseline_of("baselines/t/renew.cpin")


def test_written_received_logs_read_back_and_are_found_and_removed(tmp_path):
    baseline = tmp_path / "t" / "renew.cpin"
    path = write_received(baseline, LOG.frames, LOG.rules, {"k": 1})
    assert load(path).fingerprint == LOG.fingerprint
    assert load(path).meta == {"k": 1}
    assert find_received(tmp_path) == [tmp_path / "t" / "renew.cpin.received"]
    assert remove_received(baseline) is True
    assert remove_received(baseline) is False
    assert find_received(tmp_path) == []


def test_finding_in_a_folder_that_does_not_exist_finds_nothing(tmp_path):
    assert find_received(tmp_path / "missing") == []
