"""benchmarks/targets.py: every target a benchmark checks reaches make bench's closing table."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

TARGETS = Path(__file__).resolve().parent.parent / "benchmarks" / "targets.py"


@pytest.fixture
def targets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_targets", TARGETS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_targets", module)
    spec.loader.exec_module(module)
    monkeypatch.setenv(module.ENV, str(tmp_path / "targets.jsonl"))
    return module


def test_a_missed_target_is_named_and_a_met_one_counted(targets: ModuleType, tmp_path: Path) -> None:
    assert targets.check("diff of 1,000,000 events", 5.25, 2.0, at_most=True, unit=" s") is False
    assert targets.check("mock / callpin", 11.2, 10.0, at_most=False, unit="x") is True
    lines = targets.table(tmp_path / "targets.jsonl")
    assert lines[2] == "| diff of 1,000,000 events | 5.25 s | ≤ 2 s | NOT met |"
    assert lines[3] == "| mock / callpin | 11.2x | ≥ 10x | met |"
    assert lines[-1] == "1 of 2 targets met; not met: diff of 1,000,000 events"


def test_a_bound_reached_exactly_is_met(targets: ModuleType, tmp_path: Path) -> None:
    assert targets.check("block", 1000.0, 1000.0, at_most=True, unit=" µs")
    assert targets.check("ratio", 8.0, 8.0, at_most=False, unit="x")
    assert targets.table(tmp_path / "targets.jsonl")[-1] == "2 of 2 targets met"


def test_without_the_collecting_file_a_check_only_answers(
    targets: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(targets.ENV)
    assert targets.check("ratio", 1.0, 2.0, at_most=False) is False
    assert not (tmp_path / "targets.jsonl").exists()
