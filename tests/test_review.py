"""Reviewing received logs: what waits, accepting (replace and bless), rejecting, the walk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from callpin import load, manifest
from callpin.errors import ModeRefused, UsageError
from callpin.gate import bless
from callpin.received import write_received
from callpin.review import Walk, accept, pending, reject, select
from sample_logs import call, log_of, write

OLD = [call("billing.charge_card", "card_A", 1500)]
NEW = [call("billing.charge_card", "card_A", 0)]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A baselines folder: a.cpin and b.cpin blessed, both drifted (received), c.cpin new."""
    root = tmp_path / "baselines"
    for name in ("a", "b"):
        write(root / "t" / f"{name}.cpin", *OLD)
    bless(["t/a.cpin", "t/b.cpin"], reason="characterized", folder=str(root))
    for name in ("a", "b", "c"):
        drifted = log_of(*NEW)
        write_received(root / "t" / f"{name}.cpin", drifted.frames, drifted.rules, {})
    return root


def test_pending_lists_every_received_log_with_its_baseline(folder):
    found = pending(folder)
    assert [(item.name, item.new) for item in found] == [("t/a.cpin", False), ("t/b.cpin", False), ("t/c.cpin", True)]
    assert found[0].summary() == "1 difference: 0 moved, 0 missing, 0 extra, 1 changed"
    assert found[2].summary() == "new baseline: 1 event"


def test_select_takes_a_received_log_or_its_baseline_and_refuses_anything_else(folder):
    by_baseline = select(folder, [str(folder / "t" / "a.cpin")])
    by_received = select(folder, [str(folder / "t" / "a.cpin.received"), "t/b.cpin"])
    assert [item.name for item in by_baseline] == ["t/a.cpin"]
    assert [item.name for item in by_received] == ["t/a.cpin", "t/b.cpin"]
    with pytest.raises(UsageError, match="no received log waits for review"):
        select(folder, ["t/zzz.cpin"])


def test_accepting_replaces_the_baseline_and_blesses_it_with_the_reason(folder):
    received_bytes = (folder / "t" / "a.cpin.received").read_bytes()
    blessings = accept(select(folder, ["t/a.cpin"]), reason="a credit charges nothing", folder=folder)
    assert [blessing.path for blessing in blessings] == ["t/a.cpin"]
    assert (folder / "t" / "a.cpin").read_bytes() == received_bytes
    assert not (folder / "t" / "a.cpin.received").exists()
    entry = manifest.read(folder)["t/a.cpin"]
    assert (entry.fingerprint, entry.reason) == (load(folder / "t" / "a.cpin").fingerprint, "a credit charges nothing")


def test_accepting_a_new_baseline_writes_it_and_adds_its_manifest_line(folder):
    accept(select(folder, ["t/c.cpin"]), reason="new scenario", folder=folder)
    assert manifest.read(folder)["t/c.cpin"].reason == "new scenario"


def test_accepting_is_refused_under_ci_and_changes_nothing(folder, monkeypatch):
    monkeypatch.setenv("CI", "true")
    before = sorted(os.listdir(folder / "t"))
    with pytest.raises(ModeRefused, match="refused under CI"):
        accept(pending(folder), reason="x", folder=folder)
    assert sorted(os.listdir(folder / "t")) == before


def test_a_bad_reason_is_refused_before_any_baseline_is_replaced(folder):
    before = (folder / "t" / "a.cpin").read_bytes()
    with pytest.raises(UsageError):
        accept(select(folder, ["t/a.cpin"]), reason="two\nlines", folder=folder)
    assert (folder / "t" / "a.cpin").read_bytes() == before


def test_rejecting_deletes_the_received_log_and_keeps_the_baseline(folder):
    before = (folder / "t" / "a.cpin").read_bytes()
    reject(select(folder, ["t/a.cpin"]))
    assert not (folder / "t" / "a.cpin.received").exists()
    assert (folder / "t" / "a.cpin").read_bytes() == before


class Terminal:
    """Keys to press and answers to give, and everything the walk printed."""

    def __init__(self, keys: str, answers: list[str]) -> None:
        self.keys = list(keys)
        self.answers = answers
        self.printed: list[str] = []
        self.launched: list[str] = []

    def walk(self, folder: Path, **options: object) -> Walk:
        return Walk(
            folder,
            echo=self.printed.append,
            page=self.printed.append,
            key=lambda: self.keys.pop(0),
            ask=lambda text, default: self.answers.pop(0) or default or "",
            launch=self.launched.append,
            **options,  # type: ignore[arg-type]
        )


def test_the_walk_accepts_rejects_and_skips_one_key_each(folder):
    terminal = Terminal("ars", ["the amount is now 0"])
    left = terminal.walk(folder).run()
    assert left == 1
    assert not (folder / "t" / "a.cpin.received").exists()
    assert manifest.read(folder)["t/a.cpin"].reason == "the amount is now 0"
    assert not (folder / "t" / "b.cpin.received").exists()
    assert load(folder / "t" / "b.cpin")[0].args[1] == 1500
    assert (folder / "t" / "c.cpin.received").exists()
    assert terminal.printed[-1] == "review: 1 accepted, 1 rejected, 1 left pending"
    assert any("args[1]: 1500 → 0" in text for text in terminal.printed)


def test_the_reason_is_asked_once_and_offered_again_for_the_next_accept(folder):
    terminal = Terminal("aaa", ["checked with billing", "", ""])
    assert terminal.walk(folder).run() == 0
    assert {entry.reason for entry in manifest.read(folder).values()} == {"checked with billing"}


def test_html_writes_the_report_and_opens_it_then_asks_again(folder):
    terminal = Terminal("hsq", [])
    terminal.walk(folder).run()
    (page,) = terminal.launched
    assert Path(page).read_text().startswith("<!DOCTYPE html>")
    assert terminal.printed[-1] == "review: 0 accepted, 0 rejected, 3 left pending"
    os.unlink(page)


def test_an_empty_folder_has_nothing_to_review(tmp_path):
    terminal = Terminal("", [])
    assert terminal.walk(tmp_path).run() == 0
    assert terminal.printed == [f"nothing to review under {tmp_path}"]
