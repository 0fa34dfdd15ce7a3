"""Every runnable `$ callpin ...` line of the README and docs/ is run, in document order.

tests/test_docs.py checks that documented lines name real commands and options; this
runs them, so what the docs tell a user to type also works. The lines run in a scratch
git repository laid out as the docs describe it (`baselines/renew.cpin`, `actual.cpin`,
`raw.cpin`, `a.cpin`, `b.cpin`; `missing.cpin` absent; `examples/renewals/`) with an
`origin/main` ref.
Synopsis lines (`[...]`, `PATH...`, `COMMAND...`) describe rather than run; lines with
paths shortened by `...`, the README's tour and the `bite` / `probe` lines run inside
`callpin demo` (tests/integration/test_demo.py checks the README's tour against it), and those of
docs/bite.md and docs/probe.md run on their own example projects in test_bite.py and
test_probe.py. Where a console block shows an error after a line, the line must fail
with exit 2 and exactly that error line.
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import callpin
from callpin.cli import cli
from gitrepo import git, new_repository

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SYNOPSIS_MARKERS = ("[", "PATH...", "COMMAND...", "...")
RUN_ELSEWHERE = ("bite", "probe")


def _console_lines(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line number, command line, the output lines shown after it) of every `$ callpin`."""
    found: list[tuple[int, str, list[str]]] = []
    in_console = False
    current: tuple[int, str, list[str]] | None = None
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.startswith("```"):
            in_console = line.strip() == "```console"
            current = None
            continue
        if not in_console:
            continue
        if line.startswith("$ "):
            current = None
            if line.startswith("$ callpin"):
                current = (number, line[2:], [])
                found.append(current)
        elif current is not None and line and not line.startswith("#"):
            current[2].append(line)
    return found


def _runnable(command: str) -> bool:
    words = shlex.split(command.split(" #", 1)[0])
    return not any(marker in command for marker in SYNOPSIS_MARKERS) and words[1] not in RUN_ELSEWHERE


def _tour(path: Path) -> range:
    """The README's tour quotes `make demo` (test_demo.py runs it): its line numbers."""
    lines = path.read_text().splitlines()
    if "## A five-minute tour" not in lines:
        return range(0)
    start = lines.index("## A five-minute tour")
    end = next((n for n in range(start + 1, len(lines)) if lines[n].startswith("## ")), len(lines))
    return range(start + 1, end + 1)


def _documented() -> list[tuple[str, list[tuple[int, str, list[str]]]]]:
    documents = []
    for path in DOCS:
        tour = _tour(path)
        lines = [entry for entry in _console_lines(path) if _runnable(entry[1]) and entry[0] not in tour]
        if lines:
            documents.append((path.relative_to(ROOT).as_posix(), lines))
    return documents


def _scratch_project(tmp_path: Path, make_module) -> Path:
    """The layout the docs talk about: a git repository with blessed baselines."""
    project = tmp_path / "project"
    (project / "baselines").mkdir(parents=True)
    billing = make_module(
        "docs_billing",
        """
        def charge_card(card, amount):
            return {"ok": True}

        def send_receipt(card, amount):
            return None
    """,
    )
    labels = {"billing.charge_card": "docs_billing.charge_card", "billing.send_receipt": "docs_billing.send_receipt"}

    def log(path: Path, *, receipt_first: bool, normalize: callpin.RuleSet = callpin.DEFAULT_RULES) -> None:
        with callpin.record(path, spy=labels, normalize=normalize):
            if receipt_first:
                billing.send_receipt("card_A", 1500)
            billing.charge_card("card_A", 1500)
            if not receipt_first:
                billing.send_receipt("card_A", 1500)

    log(project / "baselines" / "renew.cpin", receipt_first=False)
    log(project / "actual.cpin", receipt_first=True)
    log(project / "raw.cpin", receipt_first=False, normalize=callpin.RuleSet(()))
    shutil.copy(project / "baselines" / "renew.cpin", project / "a.cpin")
    shutil.copy(project / "actual.cpin", project / "b.cpin")
    # The example the seams docs read.
    shutil.copytree(
        ROOT / "examples" / "renewals", project / "examples" / "renewals", ignore=shutil.ignore_patterns("__pycache__")
    )
    (project / "examples" / "__init__.py").write_text("")
    new_repository(project, commit="baselines")
    git(project, "update-ref", "refs/remotes/origin/main", "HEAD")
    return project


def test_the_docs_have_runnable_command_lines():
    assert sum(len(lines) for _, lines in _documented()) >= 15


@pytest.mark.parametrize(("where", "lines"), _documented(), ids=[where for where, _ in _documented()])
def test_documented_command_lines_run(where, lines, tmp_path, make_module, monkeypatch):
    project = _scratch_project(tmp_path, make_module)
    monkeypatch.chdir(project)
    monkeypatch.delenv("CI", raising=False)
    runner = CliRunner()
    for number, command, shown in lines:
        words = shlex.split(command.split(" #", 1)[0])[1:]
        words = [match for word in words for match in (sorted(glob.glob(word)) or [word])]
        result = runner.invoke(cli, words, catch_exceptions=False)
        context = f"{where}:{number}: `{command}` exited {result.exit_code}\n{result.output}"
        assert "Traceback" not in result.output, context
        shown_error = [line for line in shown if line.startswith(("callpin:", "callpin "))]
        if shown_error:
            assert result.exit_code == 2, context
            assert result.stderr.strip() == shown_error[0], context
        else:
            assert result.exit_code in (0, 1), context
    assert os.path.isdir(project / "baselines")
