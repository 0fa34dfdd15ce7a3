"""The figures fixture and the table that `make reliability` prints from it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import Figures

TABLE = Path(__file__).with_name("table.py")


def _table(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TABLE), str(path)], capture_output=True, text=True, check=False)


def test_rows_reach_the_file_and_the_table(tmp_path: Path) -> None:
    path = tmp_path / "figures.jsonl"
    figures = Figures(str(path))
    figures.add("fuzzed logs", "inputs tried", 100_000)
    figures.add("fuzzed logs", "crashes", 0, zero=True)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rows[1] == {"check": "fuzzed logs", "figure": "crashes", "value": 0, "zero": True}
    done = _table(path)
    assert done.returncode == 0, done.stderr
    assert "100,000" in done.stdout
    assert "every must-be-zero figure is 0" in done.stdout


def test_a_nonzero_promise_is_flagged_and_fails(tmp_path: Path) -> None:
    path = tmp_path / "figures.jsonl"
    Figures(str(path)).add("kills", "baselines lost", 1, zero=True)
    done = _table(path)
    assert done.returncode == 1
    assert "<-- must be 0" in done.stdout


def test_no_figures_is_not_a_pass(tmp_path: Path) -> None:
    assert _table(tmp_path / "absent.jsonl").returncode == 1
    (tmp_path / "empty.jsonl").write_text("")
    assert _table(tmp_path / "empty.jsonl").returncode == 1
