"""`callpin review` on a throw-away project: the listing, the non-interactive forms, the
walk on a pseudo-terminal, and what `callpin gate` says afterwards."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from callpin import load, manifest
from callpin.received import write_received
from clirun import run_in
from gitrepo import commit_all, new_repository
from sample_logs import call, log_of, write

NAMES = ("a", "b", "c")


def run(project: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    return run_in(project, *args, env=env)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository with three blessed, committed baselines, each with a received log waiting."""
    root = tmp_path / "project"
    new_repository(root)
    for name in NAMES:
        write(root / "baselines" / "t" / f"{name}.cpin", call("billing.charge_card", "card_A", 1500))
    assert run(root, "bless", "--all-changed", "--reason", "characterized")[0] == 0
    commit_all(root, "pins")
    for name in NAMES:
        drifted = log_of(call("billing.charge_card", "card_A", 0))
        write_received(root / "baselines" / "t" / f"{name}.cpin", drifted.frames, drifted.rules, {})
    return root


def received(project: Path) -> list[str]:
    return sorted(path.name for path in (project / "baselines" / "t").glob("*.received"))


def test_list_names_each_received_log_and_exits_1_while_any_waits(project):
    code, out, _ = run(project, "review", "--list")
    assert code == 1
    assert out.splitlines() == [
        *(f"baselines/t/{name}.cpin.received: 1 difference: 0 moved, 0 missing, 0 extra, 1 changed" for name in NAMES),
        "review: 3 received logs pending under baselines",
    ]
    code, out, _ = run(project, "review", "--list", "--format", "json")
    document = json.loads(out)
    assert [item["baseline"] for item in document["pending"]] == [f"baselines/t/{name}.cpin" for name in NAMES]
    assert set(document["pending"][0]) == {"baseline", "received", "new", "summary"}


def test_accept_and_reject_by_path_then_nothing_is_left(project):
    code, out, _ = run(project, "review", "--accept", "baselines/t/a.cpin", "--reason", "a credit is free")
    assert code == 1
    assert out.splitlines()[-1] == "review: 2 received logs left pending under baselines"
    code, out, err = run(project, "review", "--reject", "baselines/t/b.cpin.received")
    assert code == 1, err
    assert received(project) == ["c.cpin.received"]
    code, out, _ = run(project, "review", "--accept-all", "--reason", "amount now 0")
    assert (code, received(project)) == (0, [])
    assert out.splitlines()[-1] == "review: 0 received logs left pending under baselines"
    entries = manifest.read(project / "baselines")
    assert (entries["t/a.cpin"].reason, entries["t/b.cpin"].reason) == ("a credit is free", "characterized")
    assert entries["t/c.cpin"].reason == "amount now 0"


def test_a_received_log_cannot_be_accepted_and_rejected_at_once(project):
    code, _, err = run(project, "review", "--accept", "baselines/t/a.cpin", "--reason", "x", "--reject-all")
    assert code == 2 and "both accepted and rejected" in err
    assert len(received(project)) == 3


def test_accept_all_under_ci_is_refused_with_exit_2_and_changes_nothing(project):
    code, _, err = run(project, "review", "--accept-all", "--reason", "x", env={"CI": "true"})
    assert code == 2
    assert len(err.splitlines()) == 1 and "refused under CI" in err
    assert received(project) == ["a.cpin.received", "b.cpin.received", "c.cpin.received"]


def test_accepting_without_a_reason_is_refused(project):
    code, _, err = run(project, "review", "--accept-all")
    assert code == 2 and "--reason" in err


def test_review_without_a_terminal_says_which_forms_work_here(project):
    code, _, err = run(project, "review")
    assert code == 2
    assert "review asks on a terminal; here use --list, --accept PATH --reason TEXT" in err


def test_the_gate_passes_after_an_accept_and_blocks_after_a_plain_overwrite(project):
    run(project, "review", "--accept", "baselines/t/a.cpin", "--reason", "a credit is free")
    code, out, _ = run(project, "gate", "--base", "HEAD")
    assert code == 0, out
    assert "ok       baselines/t/a.cpin: changed since" in out
    (project / "baselines" / "t" / "b.cpin.received").replace(project / "baselines" / "t" / "b.cpin")
    code, out, _ = run(project, "gate", "--base", "HEAD")
    assert code == 1
    assert "BLOCKED  baselines/t/b.cpin: changed since" in out
    assert "ok       baselines/t/a.cpin: changed since" in out
    assert out.splitlines()[-1].endswith("callpin bless baselines/t/b.cpin --reason '...'")


# ---------------------------------------------------------------------------
# The walk, through a pseudo-terminal.


def _read_until(fd: int, wanted: str, seen: list[str], limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while wanted not in "".join(seen):
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"never printed {wanted!r}; printed:\n{''.join(seen)}"
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                chunk = b""
            assert chunk, f"ended before printing {wanted!r}; printed:\n{''.join(seen)}"
            seen.append(chunk.decode("utf-8", "replace"))


def test_a_walk_on_a_terminal_accepts_one_rejects_one_and_skips_one(project):
    primary, secondary = pty.openpty()
    env = {**os.environ, "PAGER": "cat", "NO_COLOR": "1", "COLUMNS": "200", "LINES": "60"}
    env.pop("CI", None)
    child = subprocess.Popen(
        [sys.executable, "-m", "callpin", "review"],
        cwd=project,
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        env=env,
        start_new_session=True,
    )
    os.close(secondary)
    seen: list[str] = []
    prompt = "quit [q]? "
    try:
        _read_until(primary, prompt, seen)
        assert "[1/3] t/a.cpin: 1 difference" in "".join(seen)
        assert "args[1]: 1500 → 0" in "".join(seen)
        os.write(primary, b"a")
        _read_until(primary, "reason for accepting", seen)
        os.write(primary, b"a credit charges nothing\r")
        _read_until(primary, "[2/3] t/b.cpin", seen)
        _read_until(primary, prompt + "", seen)
        os.write(primary, b"r")
        _read_until(primary, "[3/3] t/c.cpin", seen)
        _read_until(primary, "rejected: deleted", seen)
        os.write(primary, b"s")
        _read_until(primary, "review: 1 accepted, 1 rejected, 1 left pending", seen)
        assert child.wait(timeout=30) == 1
    finally:
        if child.poll() is None:
            child.kill()
        os.close(primary)
    assert received(project) == ["c.cpin.received"]
    assert manifest.read(project / "baselines")["t/a.cpin"].reason == "a credit charges nothing"
    assert load(project / "baselines" / "t" / "a.cpin")[0].args[1] == 0
    assert load(project / "baselines" / "t" / "b.cpin")[0].args[1] == 1500
