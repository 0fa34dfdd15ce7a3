"""`callpin git-setup` in throw-away repositories: git diff of a baseline shows calls."""

from __future__ import annotations

import os
import shutil
import sys

import pytest
from click.testing import CliRunner

from callpin.cli import GIT_ATTRIBUTE, TEXTCONV, cli
from gitrepo import commit_all, git, new_repository
from sample_logs import renewal, write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """An empty git repository as the working directory, isolated from the user's git config."""
    home = tmp_path / "home"
    home.mkdir()
    for name, value in {
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CEILING_DIRECTORIES": str(tmp_path),
    }.items():
        monkeypatch.setenv(name, value)
    work = new_repository(tmp_path / "work")
    monkeypatch.chdir(work)
    return work


def setup() -> object:
    return CliRunner().invoke(cli, ["git-setup"])


def test_git_setup_adds_the_textconv_driver_and_the_attribute(repo):
    result = setup()
    assert result.exit_code == 0, result.output
    assert git(repo, "config", "--get", "diff.callpin.textconv").strip() == TEXTCONV
    assert (repo / ".gitattributes").read_text() == GIT_ATTRIBUTE + "\n"


def test_git_setup_twice_changes_nothing_more(repo):
    setup()
    result = setup()
    assert result.exit_code == 0
    assert "already" in result.stdout
    assert git(repo, "config", "--get-all", "diff.callpin.textconv").splitlines() == [TEXTCONV]
    assert (repo / ".gitattributes").read_text() == GIT_ATTRIBUTE + "\n"


def test_git_setup_keeps_existing_attributes(repo):
    (repo / ".gitattributes").write_text("*.png binary")
    setup()
    assert (repo / ".gitattributes").read_text() == f"*.png binary\n{GIT_ATTRIBUTE}\n"


def test_git_setup_replaces_the_attributes_whole_and_leaves_no_temporary_file(repo):
    # Written like a log (a temporary file moved over the old one), never appended to in
    # place, so a git-setup killed midway cannot leave half a line.
    attributes = repo / ".gitattributes"
    attributes.write_text("*.png binary\n")
    before = attributes.stat().st_ino
    setup()
    assert attributes.stat().st_ino != before
    assert sorted(path.name for path in repo.iterdir()) == [".git", ".gitattributes"]


def test_git_setup_from_a_subfolder_writes_the_attributes_at_the_top(repo, monkeypatch):
    (repo / "baselines").mkdir()
    monkeypatch.chdir(repo / "baselines")
    assert setup().exit_code == 0
    assert (repo / ".gitattributes").exists()
    assert not (repo / "baselines" / ".gitattributes").exists()


def test_git_setup_outside_a_repository_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    result = setup()
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1
    assert "not a git repository" in result.stderr
    assert "Traceback" not in result.stderr


def test_git_diff_of_a_changed_baseline_shows_the_calls(repo, monkeypatch):
    # The textconv runs `callpin show`: the console script of this interpreter's environment.
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    setup()
    write(repo / "baselines" / "renew.cpin", *renewal(amount=0))
    commit_all(repo, "baseline")
    write(repo / "baselines" / "renew.cpin", *renewal(amount=-250))
    shown = git(repo, "diff")
    assert "-billing.charge_card('card_A', amount=0, currency='usd')" in shown.splitlines()
    assert "+billing.charge_card('card_A', amount=-250, currency='usd')" in shown.splitlines()
    assert "Binary files" not in shown
