"""`callpin git-setup` in throw-away repositories: git diff of a baseline shows calls."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from callpin.cli import cli
from callpin.git_setup import GIT_ATTRIBUTE, GIT_IGNORE, textconv_command
from gitrepo import IDENTITY, commit_all, git, new_repository
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
    assert git(repo, "config", "--get", "diff.callpin.textconv").strip() == textconv_command()
    assert (repo / ".gitattributes").read_text() == GIT_ATTRIBUTE + "\n"


def test_git_setup_twice_changes_nothing_more(repo):
    setup()
    result = setup()
    assert result.exit_code == 0
    assert "already" in result.stdout
    assert git(repo, "config", "--get-all", "diff.callpin.textconv").splitlines() == [textconv_command()]
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
    assert sorted(path.name for path in repo.iterdir()) == [".git", ".gitattributes", ".gitignore"]


def test_git_setup_keeps_received_logs_out_of_git(repo):
    (repo / ".gitignore").write_text("__pycache__/")
    assert setup().exit_code == 0
    assert (repo / ".gitignore").read_text() == f"__pycache__/\n{GIT_IGNORE}\n"
    (repo / "baselines").mkdir()
    (repo / "baselines" / "a.cpin.received").write_bytes(b"")
    (repo / "baselines" / "a.cpin").write_bytes(b"")
    assert git(repo, "status", "--porcelain", "--untracked-files=all").split() == [
        "??",
        ".gitattributes",
        "??",
        ".gitignore",
        "??",
        "baselines/a.cpin",
    ]
    result = setup()
    assert f"already has '{GIT_IGNORE}'" in result.stdout
    assert (repo / ".gitignore").read_text() == f"__pycache__/\n{GIT_IGNORE}\n"


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


def test_the_driver_is_this_python_by_its_absolute_path_running_callpin_show():
    assert textconv_command() == f"{shlex.quote(sys.executable)} -m callpin show"
    assert os.path.isabs(sys.executable)


def test_git_setup_replaces_a_bare_callpin_show_driver_and_says_what_it_was(repo):
    git(repo, "config", "--local", "diff.callpin.textconv", "callpin show")
    result = setup()
    assert result.exit_code == 0
    assert f"set git config diff.callpin.textconv = '{textconv_command()}' (was 'callpin show')" in result.stdout
    assert git(repo, "config", "--get", "diff.callpin.textconv").strip() == textconv_command()


def test_git_setup_warns_when_the_driver_it_wrote_cannot_run(repo, tmp_path, monkeypatch):
    gone = tmp_path / "removed-venv" / "bin" / "python"
    monkeypatch.setattr(sys, "executable", str(gone))
    result = setup()
    assert result.exit_code == 0
    assert git(repo, "config", "--get", "diff.callpin.textconv").strip() == f"{gone} -m callpin show"
    warning = result.stderr.splitlines()
    assert len(warning) == 1
    assert warning[0].startswith(f"warning: git cannot run '{gone} -m callpin show' on a log here: ")
    assert "callpin git-setup" in warning[0]


def test_git_setup_says_nothing_on_stderr_when_the_driver_runs(repo):
    assert setup().stderr == ""


def _without_callpin_on_path() -> str:
    """A PATH with git and the system tools, and no callpin (nor Python's environments)."""
    folders = [os.path.dirname(shutil.which("git") or "/usr/bin/git"), "/usr/bin", "/bin"]
    path = os.pathsep.join(dict.fromkeys(folders))
    assert shutil.which("callpin", path=path) is None
    return path


def test_git_log_p_shows_calls_with_callpin_absent_from_path(repo):
    setup()
    write(repo / "baselines" / "renew.cpin", *renewal(amount=0))
    commit_all(repo, "baseline")
    write(repo / "baselines" / "renew.cpin", *renewal(amount=-250))
    commit_all(repo, "refreshed")
    # As git runs from a shell, an IDE or a GUI client where the environment is not active.
    env = {
        "PATH": _without_callpin_on_path(),
        "HOME": os.environ["HOME"],
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CEILING_DIRECTORIES": os.environ["GIT_CEILING_DIRECTORIES"],
        **IDENTITY,
    }
    done = subprocess.run(
        ["git", "log", "-p", "--format=%s"], cwd=repo, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "+billing.charge_card('card_A', amount=-250, currency='usd')" in lines
    assert "-billing.charge_card('card_A', amount=0, currency='usd')" in lines
    assert "Binary files" not in done.stdout


def test_git_diff_of_a_changed_baseline_shows_the_calls(repo):
    setup()
    write(repo / "baselines" / "renew.cpin", *renewal(amount=0))
    commit_all(repo, "baseline")
    write(repo / "baselines" / "renew.cpin", *renewal(amount=-250))
    shown = git(repo, "diff")
    assert "-billing.charge_card('card_A', amount=0, currency='usd')" in shown.splitlines()
    assert "+billing.charge_card('card_A', amount=-250, currency='usd')" in shown.splitlines()
    assert "Binary files" not in shown
