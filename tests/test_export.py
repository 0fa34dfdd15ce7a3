"""CALLPIN_OUTPUT_DIR: the exported copy of a recording's log."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from callpin import load
from callpin.export import OUTPUT_DIR_VARIABLE, export_log
from callpin.logfile import log_bytes
from callpin.normalize import DEFAULT_RULES
from sample_logs import call, log_of

FRAMES = log_of(call("billing.charge_card", "card_A", 1500)).frames


def test_nothing_is_exported_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(OUTPUT_DIR_VARIABLE, raising=False)
    monkeypatch.chdir(tmp_path)
    assert export_log("renew.cpin", None, FRAMES, DEFAULT_RULES, {}) is None
    assert os.listdir(tmp_path) == []


def test_the_copy_is_named_after_the_log_path_and_holds_the_logs_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv(OUTPUT_DIR_VARIABLE, str(tmp_path / "out"))
    written = export_log("baselines/test_renewals/test_renew.cpin", None, FRAMES, DEFAULT_RULES, {"k": 1})
    assert written == str(tmp_path / "out" / "baselines" / "test_renewals" / "test_renew.cpin")
    with open(written, "rb") as file:
        assert file.read() == log_bytes(FRAMES, rules=DEFAULT_RULES, meta={"k": 1})


def test_a_taken_name_gets_the_next_number_and_nothing_is_overwritten(tmp_path, monkeypatch):
    monkeypatch.setenv(OUTPUT_DIR_VARIABLE, str(tmp_path))
    first = export_log(None, "billing.echo", FRAMES, DEFAULT_RULES, {})
    second = export_log(None, "billing.echo", [], DEFAULT_RULES, {})
    third = export_log(None, "billing.echo", FRAMES, DEFAULT_RULES, {})
    assert [os.path.basename(str(path)) for path in (first, second, third)] == [
        "billing.echo.cpin",
        "billing.echo-2.cpin",
        "billing.echo-3.cpin",
    ]
    assert len(load(str(first))) == 1
    assert len(load(str(second))) == 0


@pytest.mark.parametrize("source", ["renew.cpin", "/tmp/x/renew.cpin"])
def test_an_exporter_killed_before_it_linked_its_copy_leaves_nothing_for_long(source, tmp_path, monkeypatch):
    # The export writes a private copy under the log writers' temporary-file pattern,
    # so the next export of that name removes what a killed exporter left.
    folder = tmp_path / "out" / ("x" if source.startswith("/") else "")
    folder.mkdir(parents=True)
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    stale = folder / f".renew.cpin.{child.pid}-0badf00d.callpin-tmp"
    stale.write_bytes(b"half a log")
    monkeypatch.setenv(OUTPUT_DIR_VARIABLE, str(tmp_path / "out"))
    written = export_log(source, None, FRAMES, DEFAULT_RULES, {})
    assert sorted(os.listdir(folder)) == ["renew.cpin"]
    assert written == str(folder / "renew.cpin")
