"""gate and bless on throw-away git repositories."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from callpin._impl import Encoder
from callpin.logfile import write_log
from clirun import run_in
from gitrepo import IDENTITY, commit_all, git, new_repository


def baseline(path: Path, calls: list[tuple[str, int]]) -> None:
    encoder = Encoder()
    write_log(
        path, [encoder.encode_event(0, label, ["card_A", amount], {}, None, None, 1, 0) for label, amount in calls]
    )


def run(repo: Path, *args: str) -> tuple[int, str, str]:
    return run_in(repo, *args)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "baselines" / "test_renewals").mkdir(parents=True)
    new_repository(root)
    baseline(
        root / "baselines" / "test_renewals" / "renew.cpin",
        [("billing.charge_card", 1500), ("billing.send_receipt", 1500)],
    )
    baseline(root / "baselines" / "other.cpin", [("mail.send", 1)])
    (root / "app.py").write_text("x = 1\n")
    code, _, err = run(root, "bless", "--all-changed", "--reason", "initial pins")
    assert code == 0, err
    commit_all(root, "pins")
    return root


def refresh_with_swap(repo: Path) -> None:
    baseline(
        repo / "baselines" / "test_renewals" / "renew.cpin",
        [("billing.send_receipt", 1500), ("billing.charge_card", 1500)],
    )


def test_a_changed_baseline_committed_without_bless_is_blocked_with_its_call_diff(repo):
    refresh_with_swap(repo)
    git(repo, "commit", "-qam", "refresh")
    code, out, _ = run(repo, "gate")
    assert code == 1
    assert "refreshed but not blessed" in out
    assert "moved" in out and "billing.charge_card" in out
    assert out.strip().splitlines()[-2].startswith("gate: BLOCKED")
    assert out.strip().splitlines()[-1] == (
        "next: read the changes above; accept those that are right with: "
        "callpin bless baselines/test_renewals/renew.cpin --reason '...'"
    )


def test_the_same_change_blessed_passes(repo):
    refresh_with_swap(repo)
    code, out, _ = run(
        repo, "bless", "baselines/test_renewals/renew.cpin", "--reason", "receipt first, agreed with billing"
    )
    assert code == 0
    assert "billing.charge_card 1 → 1" in out
    git(repo, "commit", "-qam", "refresh and bless")
    code, out, _ = run(repo, "gate")
    assert code == 0, out
    assert "blessed: receipt first, agreed with billing" in out


def test_a_hand_edited_byte_is_blocked(repo):
    path = repo / "baselines" / "other.cpin"
    data = bytearray(path.read_bytes())
    data[data.index(b"card_A")] ^= 0x02
    path.write_bytes(bytes(data))
    code, out, _ = run(repo, "gate")
    assert code == 1
    assert "other.cpin" in out and "damaged" in out


def test_a_deleted_baseline_still_listed_and_a_new_unlisted_one_are_each_named(repo):
    (repo / "baselines" / "other.cpin").unlink()
    baseline(repo / "baselines" / "new.cpin", [("mail.send", 2)])
    code, out, _ = run(repo, "gate")
    assert code == 1
    assert "baselines/other.cpin: listed in the manifest, but the file is gone" in out
    assert "baselines/new.cpin: added" in out and "without a blessing" in out


def test_only_unrelated_changes_print_one_summary_line(repo):
    (repo / "app.py").write_text("x = 2\n")
    git(repo, "commit", "-qam", "unrelated")
    code, out, _ = run(repo, "gate")
    assert code == 0
    assert out.strip().splitlines() == [out.strip()]
    assert out.startswith("gate: ok: 0 baseline(s) changed")


def test_json_report(repo):
    refresh_with_swap(repo)
    code, out, _ = run(repo, "gate", "--format", "json", "--base", "HEAD")
    report = json.loads(out)
    assert code == 1 and report["blocked"] is True
    [changed] = [b for b in report["baselines"] if b["status"] == "changed"]
    assert changed["path"] == "test_renewals/renew.cpin" and changed["blocking"]


def test_committed_mode_ignores_the_working_tree(repo):
    refresh_with_swap(repo)
    code, _, _ = run(repo, "gate", "--committed", "--base", "HEAD")
    assert code == 0


def test_bad_inputs_are_one_line_and_exit_2(repo, tmp_path):
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    for where, args in [(outside, ["gate"]), (repo, ["gate", "--base", "no-such-ref"])]:
        code, out, err = run(where, *args)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (args, err)
    manifest = repo / "baselines" / "MANIFEST"
    manifest.write_text(manifest.read_text() + "broken line\n")
    code, _, err = run(repo, "gate")
    assert code == 2 and "MANIFEST:5:" in err and len(err.strip().splitlines()) == 1


def test_bless_all_changed_with_nothing_changed_says_so_and_changes_nothing(repo):
    manifest = (repo / "baselines" / "MANIFEST").read_bytes()
    code, out, err = run(repo, "bless", "--all-changed", "--reason", "again")
    assert (code, err) == (0, "")
    assert out == "bless: every baseline matches its manifest line; nothing to bless\n"
    assert (repo / "baselines" / "MANIFEST").read_bytes() == manifest
    code, out, err = run(repo, "bless", "--reason", "no paths")
    assert code == 2
    assert err == "callpin: nothing to bless: give baseline paths or --all-changed\n"


def test_bless_needs_a_reason(repo):
    code, _, err = run(repo, "bless", "baselines/other.cpin", "--reason", "  ")
    assert code == 2 and "reason" in err


def test_install_hook_blocks_an_unblessed_staged_change(repo):
    code, out, _ = run(repo, "gate", "--install-hook")
    assert code == 0
    hook = repo / ".git" / "hooks" / "pre-commit"
    assert hook.exists() and os.access(hook, os.X_OK)
    code, _, err = run(repo, "gate", "--install-hook")
    assert code == 2 and "--force" in err
    code, _, _ = run(repo, "gate", "--install-hook", "--force")
    assert code == 0
    refresh_with_swap(repo)
    git(repo, "add", "-A")
    code, out, _ = run(repo, "gate", "--staged")
    assert code == 1 and "refreshed but not blessed" in out


def _commit_through_the_hook(repo: Path) -> subprocess.CompletedProcess[str]:
    """`git commit` of the staged changes as a shell without callpin on PATH runs it."""
    folders = [os.path.dirname(shutil.which("git") or "/usr/bin/git"), "/usr/bin", "/bin"]
    path = os.pathsep.join(dict.fromkeys(folders))
    assert shutil.which("callpin", path=path) is None
    env = {"PATH": path, "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1", **IDENTITY}
    return subprocess.run(
        ["git", "commit", "-q", "-m", "refresh"], cwd=repo, env=env, capture_output=True, text=True, check=False
    )


def test_the_hook_gates_with_callpin_absent_from_path(repo):
    assert run(repo, "gate", "--install-hook")[0] == 0
    refresh_with_swap(repo)
    git(repo, "add", "-A")
    done = _commit_through_the_hook(repo)
    assert done.returncode == 1
    # git sends a hook's output to stderr.
    assert "refreshed but not blessed" in done.stderr
    assert "gate: BLOCKED" in done.stderr


def test_the_hook_fails_loudly_with_the_fix_when_callpin_is_missing(repo, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "removed-venv" / "bin" / "python"))
    assert run(repo, "gate", "--install-hook")[0] == 0
    (repo / "app.py").write_text("x = 2\n")
    git(repo, "add", "-A")
    done = _commit_through_the_hook(repo)
    assert done.returncode == 1
    assert "callpin is missing" in done.stderr
    assert "fix: install callpin, then run 'callpin gate --install-hook --force'" in done.stderr
    assert git(repo, "log", "-1", "--format=%s").strip() == "pins"


def test_a_shallow_clone_without_a_base_commit_says_so_and_still_checks_every_line(repo, tmp_path):
    refresh_with_swap(repo)
    git(repo, "commit", "-qam", "refreshed, not blessed")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", repo.as_uri(), str(clone))
    code, out, _ = run(clone, "gate")
    assert code == 1
    lines = out.splitlines()
    assert lines[-1].startswith("next: read the changes above; accept those that are right with: callpin bless ")
    assert lines[-3] == (
        "gate: compared with the empty tree: this clone is shallow and has no base commit; "
        "fetch the history (e.g. fetch-depth: 0) or pass --base REF to see diffs of calls"
    )
    assert "ok       baselines/other.cpin: added since 4b825dc642cb, blessed: initial pins" in lines
    blocked = "BLOCKED  baselines/test_renewals/renew.cpin: added since 4b825dc642cb"
    assert any(line.startswith(blocked) for line in lines)
    code, out, _ = run(repo, "gate", "--format", "json")
    assert code == 1 and json.loads(out)["note"] is None


def test_one_event_is_one_event(repo):
    baseline(repo / "baselines" / "other.cpin", [("mail.send", 2)])
    code, out, _ = run(repo, "gate", "--base", "HEAD")
    assert code == 1
    assert "the manifest says " in out and ", 1 event; the file is " in out
    assert "1 events" not in out


def test_the_gate_report_goes_to_a_file_with_output(repo, tmp_path):
    refresh_with_swap(repo)
    code, out, _ = run(repo, "gate", "--format", "json", "-o", str(tmp_path / "gate.json"))
    assert code == 1
    assert out == ""
    document = json.loads((tmp_path / "gate.json").read_text(encoding="utf-8"))
    assert document["blocked"] is True
    assert run(repo, "gate", "-o", "-")[1] == run(repo, "gate")[1]
