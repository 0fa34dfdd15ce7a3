"""`callpin demo` tells the whole story on the bundled example, with real output."""

from __future__ import annotations

import re
from importlib.util import find_spec
from pathlib import Path

import pytest

from callpin import demo
from callpin.demo import run_demo
from callpin.errors import UsageError

README = Path(__file__).resolve().parents[2] / "README.md"


def _tour_commands() -> list[str]:
    """The `$ ` command lines of the README's tour, which quotes `make demo`'s output."""
    text = README.read_text()
    tour = text.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    return [line[2:] for line in tour.splitlines() if line.startswith("$ ")]


def test_the_demo_runs_the_six_steps_and_shows_what_a_newcomer_needs(tmp_path):
    lines: list[str] = []
    run_demo(str(tmp_path / "demo"), echo=lines.append)
    output = "\n".join(lines)
    headings = [line for line in lines if line.startswith("== ")]
    assert [h.split(".")[0] for h in headings] == ["== 1", "== 2", "== 3", "== 4", "== 5", "== 6"]
    # Baselines are accepted through review: the first run leaves received logs, review
    # accepts them (and blesses them); the unsafe refactor's received logs are rejected.
    assert "$ pytest -q --tb=no" in output
    assert "3 missing" in output
    assert "review: 3 received logs pending under baselines" in output
    assert '$ callpin review --accept-all --reason "characterized before the refactor"' in output
    assert "review: 2 received logs pending under baselines" in output
    assert "$ callpin review --reject-all" in output
    assert not list((tmp_path / "demo").rglob("*.cpin.received"))
    assert "identical: 3 events" in output
    assert output.count("2 differences: 2 moved, 0 missing, 0 extra, 0 changed") >= 2
    assert "bite: 4 mutants in git worktrees: 4 caught (drift 4), 0 timeout, 0 survived, 0 error" in output
    assert "VOLATILE: none" in output
    # The README's tour shows these very commands (paths shortened with `...`): it cannot
    # drift from what the demo runs.
    shown = [line[2:] for line in lines if line.startswith("$ ")]
    tour = _tour_commands()
    assert len(tour) >= 5
    for documented in tour:
        pattern = re.escape(documented).replace(re.escape("..."), "[^ ]*")
        assert any(re.fullmatch(pattern, command) for command in shown), documented
    report = tmp_path / "demo" / "drift.html"
    assert report.is_file() and "op-moved" in report.read_text()


def test_an_installed_callpin_runs_the_example_it_carries(tmp_path, monkeypatch):
    installed = tmp_path / "site-packages" / "callpin"
    (installed / "_example" / "renewals").mkdir(parents=True)
    (installed / "_example" / "renewals" / "renewals.py").write_text("")
    monkeypatch.setattr(demo, "__file__", str(installed / "demo.py"))
    assert demo.example_source() == installed / "_example" / "renewals"


def test_a_callpin_without_its_example_says_so_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(demo, "__file__", str(tmp_path / "site-packages" / "callpin" / "demo.py"))
    with pytest.raises(UsageError, match="cannot find its bundled example"):
        demo.example_source()


def test_the_demo_without_pytest_says_how_to_get_it_and_makes_no_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(demo, "find_spec", lambda name: None if name == "pytest" else find_spec(name))
    with pytest.raises(UsageError, match=r"with pytest, which is not installed: pip install pytest$"):
        run_demo(str(tmp_path / "demo"))
    assert not (tmp_path / "demo").exists()
