"""git.py: the one git runner, its errors, and what each caller's policy lets git see."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from callpin.errors import CallpinError, GitError
from callpin.git import CALLER, READ_ONLY, SCRATCH, GitOutput, run_git
from gitrepo import commit_all, new_repository


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = new_repository(tmp_path / "repo")
    (root / "a.py").write_text("x = 1\n")
    commit_all(root, "one file")
    return root


def test_a_failing_command_raises_git_error_with_gits_last_line(repo: Path) -> None:
    with pytest.raises(GitError) as raised:
        run_git(["rev-parse", "--verify", "no-such-ref"], policy=READ_ONLY, cwd=repo)
    assert str(raised.value) == raised.value.stderr.strip().splitlines()[-1]
    assert raised.value.returncode == 128
    assert isinstance(raised.value, CallpinError) and isinstance(raised.value, RuntimeError)


def test_without_check_a_failure_is_returned_with_its_exit_status(repo: Path) -> None:
    done = run_git(["rev-parse", "--verify", "--quiet", "no-such-ref"], policy=READ_ONLY, cwd=repo, check=False)
    assert done.returncode == 1
    assert done.text == ""


def test_git_not_installed_is_a_git_error_without_exit_status(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(repo))
    with pytest.raises(GitError, match=r"^git is not installed$") as raised:
        run_git(["status"], policy=CALLER, cwd=repo, check=False)
    assert raised.value.returncode is None


def test_output_that_is_not_utf8_survives_as_text() -> None:
    assert GitOutput(0, b"caf\xe9.py", b"").text.encode("utf-8", "surrogateescape") == b"caf\xe9.py"


def test_read_only_answers_in_english_and_never_prompts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    env = READ_ONLY.environment()
    assert (env["LC_ALL"], env["GIT_TERMINAL_PROMPT"]) == ("C", "0")


def test_the_caller_policy_passes_the_environment_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_DIR", "/somewhere/.git")
    assert CALLER.environment() == dict(os.environ)


def test_scratch_git_ignores_variables_that_aim_git_at_another_repository(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = new_repository(tmp_path / "other")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    assert run_git(["rev-parse", "--show-toplevel"], policy=READ_ONLY, cwd=repo).text.strip() == str(other)
    assert run_git(["rev-parse", "--show-toplevel"], policy=SCRATCH, cwd=repo).text.strip() == str(repo)
    assert SCRATCH.environment()["GIT_OPTIONAL_LOCKS"] == "0"


def test_scratch_git_takes_pathspecs_literally_and_runs_no_hooks(repo: Path) -> None:
    assert run_git(["ls-files", "--", "*.py"], policy=READ_ONLY, cwd=repo).text == "a.py\n"
    assert run_git(["ls-files", "--", "*.py"], policy=SCRATCH, cwd=repo).text == ""
    assert run_git(["config", "core.hooksPath"], policy=SCRATCH, cwd=repo).text == "/dev/null\n"
