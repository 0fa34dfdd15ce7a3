"""`callpin bite` end to end, on throw-away projects made in tmp_path (git and plain folders)."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from callpin._impl import Encoder
from callpin.event import KIND_CODES
from callpin.logfile import write_log
from gitrepo import commit_all, git, new_repository

PYTHON = sys.executable
LABELS = ("billing.charge_card", "billing.send_receipt")

BILLING = """\
def charge_card(card, amount):
    return {"ok": True}


def send_receipt(email, amount):
    return None


def notify(email):
    return None
"""

RENEWALS = """\
import billing


def renew(case):
    if not case["active"]:
        return None
    billing.charge_card(case["card"], case["amount"])
    billing.send_receipt(case["email"], case["amount"])
    return "renewed"
"""

CASE = '{"active": True, "card": "card_A", "amount": 1500, "email": "a@example.com"}'

# The project's own pinned test: a hand-written spy on the billing module pins the calls.
PINNED_TEST = f"""\
import billing
import renewals


def test_renew_pins_billing(monkeypatch):
    calls = []
    monkeypatch.setattr(billing, "charge_card", lambda *args: calls.append(("charge_card", args)))
    monkeypatch.setattr(billing, "send_receipt", lambda *args: calls.append(("send_receipt", args)))
    assert renewals.renew({CASE}) == "renewed"
    assert calls == [("charge_card", ("card_A", 1500)), ("send_receipt", ("a@example.com", 1500))]
"""

# The same test spying the wrong target: the calls go unchecked.
UNPINNED_TEST = f"""\
import renewals


def test_renew_returns_renewed():
    assert renewals.renew({CASE}) == "renewed"
"""

PYTEST = f"{PYTHON} -m pytest -x -q -p no:cacheprovider tests"
CHECK = ("--test", f"{PYTHON} check.py")
BOTH_LABELS = ("--label", LABELS[0], "--label", LABELS[1])
THREE_LABELS = (*BOTH_LABELS, "--label", "billing.notify")


def checker(expected: list[str], when_wrong: str = "raise SystemExit(1)") -> str:
    """A test command as a plain script: spy on billing, run renew, judge the calls."""
    return f"""\
import os, sys, time
import billing
calls = []
for name in {sorted(set(expected))!r}:
    setattr(billing, name, lambda *args, name=name: calls.append(name))
import renewals
renewals.renew({CASE})
if calls != {expected!r}:
{textwrap.indent(when_wrong, "    ")}
"""


def child_env(**extra: str) -> dict[str, str]:
    # The child pytest runs must not see this suite's options or plugins.
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.update(extra)
    return env


def make_project(root: Path, files: dict[str, str], *, use_git: bool = True) -> Path:
    root.mkdir()
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    if use_git:
        new_repository(root, commit="legacy renewals")
    return root


def write_baseline(root: Path) -> None:
    encoder = Encoder()
    frames = [
        encoder.encode_event(KIND_CODES["call"], "billing.charge_card", ("card_A", 1500), {}, None, None, 1, 0),
        encoder.encode_event(KIND_CODES["return"], "billing.charge_card", (), {}, None, None, 1, 0),
        encoder.encode_event(
            KIND_CODES["call"],
            "billing.send_receipt",
            ("a@example.com", 1500),
            {},
            None,
            None,
            1,
            0,
        ),
        encoder.encode_event(KIND_CODES["mark"], "returned", (), {}, "renewed", None, 1, 0),
    ]
    folder = root / "baselines" / "test_renewals"
    folder.mkdir(parents=True)
    write_log(folder / "test_renew_pins_billing.cpin", frames)


def renewals_project(root: Path, test: str, *, use_git: bool = True) -> Path:
    files = {"billing.py": BILLING, "renewals.py": RENEWALS, "tests/test_renewals.py": test}
    project = make_project(root, files, use_git=False)
    write_baseline(project)
    if use_git:
        new_repository(project, commit="legacy renewals, pinned")
    return project


def bite(project: Path, *args: str, cwd: Path | None = None, **extra_env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "callpin", "bite", *args],
        cwd=cwd or project,
        env=child_env(**extra_env),
        capture_output=True,
        text=True,
        timeout=240,
    )


def repository_state(repo: Path) -> dict[str, str]:
    """Everything bite promises to leave as it was."""
    return {
        "status": git(repo, "status", "--porcelain", "--untracked-files=all"),
        "worktrees": git(repo, "worktree", "list", "--porcelain"),
        "branches": git(repo, "branch", "--list", "--all"),
        "head": git(repo, "rev-parse", "HEAD") + git(repo, "symbolic-ref", "HEAD"),
        "index": hashlib.sha256((repo / ".git" / "index").read_bytes()).hexdigest(),
        "files": tree_digest(repo),
    }


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts or not path.is_file():
            continue
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def dirty(repo: Path) -> None:
    """Uncommitted work of every kind: staged, modified, untracked."""
    (repo / "billing.py").write_text(BILLING + "\n# staged\n")
    git(repo, "add", "billing.py")
    (repo / "billing.py").write_text(BILLING + "\n# staged\n# and modified\n")
    (repo / "notes.txt").write_text("untracked\n")


def scratch_folders(pid: int) -> list[Path]:
    return list(Path(tempfile.gettempdir()).glob(f"callpin-bite-{pid}-*"))


def pid_alive(pid: int) -> bool:
    """Whether the process still runs, allowing a killed one a moment to be gone."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        if state == "Z":
            return False
        time.sleep(0.05)
    return True


def wait_for_lines(path: Path, count: int, process: subprocess.Popen[str]) -> list[str]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= count:
            return lines
        time.sleep(0.05)
    raise AssertionError(f"bite did not start {count} commands; it exited {process.poll()}")


# ---------------------------------------------------------------------------
# Acceptance: the renewals example


def test_pinned_renewals_catch_every_swap_delete_and_duplicate(tmp_path: Path) -> None:
    project = renewals_project(tmp_path / "repo", PINNED_TEST)
    done = bite(project, "--test", PYTEST, "--jobs", "2", "--format", "json", "renewals.py")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert sorted((m["operator"], m["line"]) for m in report["mutants"]) == [
        ("delete", 7),
        ("delete", 8),
        ("duplicate", 7),
        ("duplicate", 8),
        ("swap", 7),
    ]
    assert {m["outcome"] for m in report["mutants"]} == {"caught"}
    assert report["summary"] == {"caught": 5, "timeout": 0, "survived": 0, "error": 0}


def test_a_test_that_spies_the_wrong_target_lets_the_swap_survive(tmp_path: Path) -> None:
    project = renewals_project(tmp_path / "repo", UNPINNED_TEST)
    done = bite(project, "--test", PYTEST, "--jobs", "2", "renewals.py")
    assert done.returncode == 1, done.stdout + done.stderr
    [swap_row] = [line for line in done.stdout.splitlines() if line.startswith("swap-")]
    assert swap_row.split()[1:] == [
        "swap",
        "renewals.py:7",
        "billing.charge_card",
        "<->",
        "billing.send_receipt",
        "survived",
    ]
    swap_id = swap_row.split()[0]
    assert f"survived {swap_id}: swap billing.charge_card <-> billing.send_receipt" in done.stdout
    assert (
        '+    billing.charge_card(case["card"], case["amount"])' in done.stdout
        or '+    billing.send_receipt(case["email"], case["amount"])' in done.stdout
    )
    assert done.stdout.rstrip().endswith("5 survived, 0 error")

    shown = bite(project, "--show", swap_id, "renewals.py")
    assert shown.returncode == 0
    assert shown.stdout in done.stdout


# ---------------------------------------------------------------------------
# Acceptance: the user's repository is left exactly as it was


def test_normal_and_failed_runs_leave_the_repository_as_it_was(tmp_path: Path) -> None:
    project = make_project(
        tmp_path / "repo",
        {
            "billing.py": BILLING,
            "renewals.py": RENEWALS,
            "check.py": checker(["charge_card", "send_receipt"]),
        },
    )
    dirty(project)
    before = repository_state(project)

    done = bite(
        project,
        *CHECK,
        *BOTH_LABELS,
        "renewals.py",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 caught" in done.stdout
    assert repository_state(project) == before

    failed = bite(project, "--test", f"{PYTHON} -c 'raise SystemExit(3)'", "--label", LABELS[0], "renewals.py")
    assert failed.returncode == 2
    assert "the unmutated test command failed (exit 3)" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert repository_state(project) == before


def slow_project(root: Path) -> Path:
    """The renewals, with uncommitted work and a check whose every mutant hangs after saying so."""
    project = make_project(
        root,
        {
            "billing.py": BILLING,
            "renewals.py": RENEWALS,
            "check.py": checker(["charge_card", "send_receipt"]),
            "slow_check.py": checker(
                ["charge_card", "send_receipt"],
                "print(os.getpid(), file=open(os.environ['STARTED'], 'a')); time.sleep(60)",
            ),
        },
    )
    dirty(project)
    return project


def start_slow_bite(project: Path, started: Path, *options: str) -> subprocess.Popen[str]:
    """bite over five mutants, one at a time."""
    command = [PYTHON, "-m", "callpin", "bite", "--jobs", "1", "--test", f"{PYTHON} slow_check.py"]
    return subprocess.Popen(
        [*command, *options, *BOTH_LABELS, "renewals.py"],
        cwd=project,
        env=child_env(STARTED=str(started)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A suite run in the background has SIGINT ignored, and children inherit that;
        # bite started from a terminal does not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


@pytest.mark.parametrize(
    ("signum", "returncode", "message"),
    [
        (signal.SIGINT, 130, "interrupted; scratch copies removed"),
        (signal.SIGTERM, -signal.SIGTERM, ""),
    ],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_run_stopped_halfway_by_a_signal_cleans_up(
    tmp_path: Path, signum: int, returncode: int, message: str
) -> None:
    project = slow_project(tmp_path / "repo")
    before = repository_state(project)
    started = tmp_path / "started"
    # Each mutant hangs until the timeout stops it: by the third, two are done and
    # removed, one is running and two wait.
    process = start_slow_bite(project, started, "--timeout", "1")
    hanging = wait_for_lines(started, 3, process)
    assert git(project, "branch", "--list", "callpin-bite/*") != ""

    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == returncode, stderr
    assert message in stderr
    assert "Traceback" not in stderr
    assert repository_state(project) == before
    assert scratch_folders(process.pid) == []
    assert [pid_alive(int(pid)) for pid in hanging] == [False] * len(hanging)


def test_ctrl_c_during_the_unmutated_run_starts_no_mutant_and_leaves_nothing_behind(tmp_path: Path) -> None:
    hang = "import os, time\nprint(os.getpid(), file=open(os.environ['STARTED'], 'a'), flush=True)\ntime.sleep(60)\n"
    project = make_project(tmp_path / "repo", {"billing.py": BILLING, "renewals.py": RENEWALS, "hang_check.py": hang})
    dirty(project)
    before = repository_state(project)
    started = tmp_path / "started"
    process = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "callpin",
            "bite",
            "--jobs",
            "2",
            "--test",
            f"{PYTHON} hang_check.py",
            *BOTH_LABELS,
            "renewals.py",
        ],
        cwd=project,
        env=child_env(STARTED=str(started)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    [baseline] = wait_for_lines(started, 1, process)
    process.send_signal(signal.SIGINT)
    # A bound against hanging, not a speed assertion.
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stderr.splitlines()[-1] == "callpin bite: interrupted; scratch copies removed"
    assert started.read_text().split() == [baseline]
    assert not pid_alive(int(baseline))
    assert repository_state(project) == before
    assert scratch_folders(process.pid) == []


def test_leftovers_of_a_killed_run_are_removed_by_the_next_run(tmp_path: Path) -> None:
    project = slow_project(tmp_path / "repo")
    before = repository_state(project)
    started = tmp_path / "started"
    process = start_slow_bite(project, started)
    [hanging] = wait_for_lines(started, 1, process)
    process.kill()
    process.communicate()
    os.kill(int(hanging), signal.SIGKILL)
    assert git(project, "branch", "--list", "callpin-bite/*") != ""
    assert scratch_folders(process.pid) != []
    # A live run's scratch branch (this test's own pid is alive) is not a leftover.
    git(project, "branch", f"callpin-bite/{os.getpid()}-abcdef/live")

    done = bite(
        project,
        *CHECK,
        *BOTH_LABELS,
        "--operators",
        "swap",
        "renewals.py",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(project, "branch", "--list", "callpin-bite/*").split() == [f"callpin-bite/{os.getpid()}-abcdef/live"]
    git(project, "branch", "-D", f"callpin-bite/{os.getpid()}-abcdef/live")
    assert repository_state(project) == before
    assert scratch_folders(process.pid) == []


# ---------------------------------------------------------------------------
# Acceptance: a plain folder


def test_a_project_outside_git_runs_in_temporary_copies(tmp_path: Path) -> None:
    project = renewals_project(tmp_path / "plain", PINNED_TEST, use_git=False)
    before = tree_digest(project)
    done = bite(project, "--test", PYTEST, "--jobs", "2", ".")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith(
        "bite: 5 mutants in temporary copies: 5 caught (assert 5), 0 timeout, 0 survived, 0 error"
    )
    assert tree_digest(project) == before
    assert sorted(path.name for path in project.iterdir()) == [
        "baselines",
        "billing.py",
        "renewals.py",
        "tests",
    ]


# ---------------------------------------------------------------------------
# Acceptance: parallel jobs and the timeout


def test_two_jobs_run_mutants_in_parallel(tmp_path: Path) -> None:
    # Each mutant's check waits in a rendezvous folder until a second check is there
    # with it; the first pair to meet writes both pids to `met`, and every later check
    # then goes at once. Run one at a time, no check ever meets another.
    rendezvous = tmp_path / "rendezvous"
    rendezvous.mkdir()
    meet = (
        "here = os.path.join(os.environ['RENDEZVOUS'], str(os.getpid()))\n"
        "open(here, 'w').close()\n"
        "for _ in range(600):\n"
        "    present = sorted(name for name in os.listdir(os.environ['RENDEZVOUS']) if name != 'met')\n"
        "    if len(present) >= 2:\n"
        "        print(*present, file=open(os.path.join(os.environ['RENDEZVOUS'], 'met'), 'w'))\n"
        "    if len(present) >= 2 or os.path.exists(os.path.join(os.environ['RENDEZVOUS'], 'met')):\n"
        "        break\n"
        "    time.sleep(0.05)\n"
        "os.remove(here)\n"
        "raise SystemExit(1)"
    )
    renew_three = RENEWALS.replace('    return "renewed"', '    billing.notify(case["email"])\n    return "renewed"')
    project = make_project(
        tmp_path / "repo",
        {
            "billing.py": BILLING,
            "renewals.py": renew_three,
            "check.py": checker(["charge_card", "send_receipt", "notify"], meet),
        },
    )
    options = ("--operators", "delete,duplicate", "--jobs", "2", "--timeout", "120", "--format", "json")
    done = bite(project, *CHECK, *THREE_LABELS, *options, "renewals.py", RENDEZVOUS=str(rendezvous))
    assert done.returncode == 0, done.stdout + done.stderr
    assert [m["outcome"] for m in json.loads(done.stdout)["mutants"]] == ["caught"] * 6
    met = (rendezvous / "met").read_text().split()
    assert len(set(met)) == 2, met


def test_a_hanging_mutant_is_stopped_by_the_timeout_with_its_whole_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    hang = (
        "if not calls:\n    raise SystemExit(1)\n"
        "import subprocess\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(os.getpid(), child.pid, file=open(os.environ['PIDS'], 'a'), flush=True)\n"
        "time.sleep(60)"
    )
    project = make_project(
        tmp_path / "repo",
        {
            "billing.py": BILLING,
            "renewals.py": "import billing\n\n\ndef renew(case):\n    billing.charge_card(1, 2)\n",
            "check.py": checker(["charge_card"], hang),
        },
    )
    done = bite(
        project,
        "--timeout",
        "3",
        "--format",
        "json",
        *CHECK,
        "--label",
        "billing.charge_card",
        "renewals.py",
        PIDS=str(pids),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    outcomes = {m["operator"]: m["outcome"] for m in json.loads(done.stdout)["mutants"]}
    assert outcomes == {"delete": "caught", "duplicate": "timeout"}
    assert json.loads(done.stdout)["summary"]["timeout"] == 1
    [line] = pids.read_text().splitlines()
    assert [pid_alive(int(pid)) for pid in line.split()] == [False, False]


# ---------------------------------------------------------------------------
# The command imports the mutated copy


def test_uncommitted_and_untracked_source_files_travel_into_the_scratch_copies(
    tmp_path: Path,
) -> None:
    committed = RENEWALS.replace('    billing.send_receipt(case["email"], case["amount"])\n', "")
    project = make_project(
        tmp_path / "repo",
        {
            "billing.py": BILLING,
            "app/renewals.py": committed,
            "app/__init__.py": "",
            "tests/check.py": checker(["charge_card", "send_receipt", "notify"]).replace(
                "import renewals", "from app import renewals"
            ),
        },
    )
    (project / "app" / "renewals.py").write_text(
        "from app.receipts import send\n"
        + RENEWALS.replace(
            '    billing.send_receipt(case["email"], case["amount"])\n',
            '    billing.send_receipt(case["email"], case["amount"])\n    send(case)\n',
        )
    )
    (project / "app" / "receipts.py").write_text(
        "import billing\n\n\ndef send(case):\n    billing.notify(case['email'])\n"
    )
    before = repository_state(project)
    # Run from a sub-folder: the test command still runs from the repository root.
    done = bite(
        project,
        "--test",
        f"{PYTHON} tests/check.py",
        *THREE_LABELS,
        "--operators",
        "delete",
        "--format",
        "json",
        "../app",
        cwd=project / "tests",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    files = sorted((m["file"], m["outcome"]) for m in json.loads(done.stdout)["mutants"])
    assert files == [
        ("app/receipts.py", "caught"),
        ("app/renewals.py", "caught"),
        ("app/renewals.py", "caught"),
    ]
    assert repository_state(project) == before


def test_a_command_that_imports_the_users_files_instead_stops_bite(tmp_path: Path) -> None:
    project = make_project(tmp_path / "repo", {"billing.py": BILLING, "renewals.py": RENEWALS})
    code = f"import sys; sys.path.insert(0, {str(project)!r}); import renewals"
    command = f"{PYTHON} -c {shlex.quote(code)}"
    done = bite(project, "--test", command, "--label", LABELS[0], "renewals.py")
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert "imports no SOURCE file from the scratch copy" in line
    assert f"from {os.path.realpath(project / 'renewals.py')}" in line


def test_a_failure_before_the_mutated_file_is_imported_is_an_error_not_a_catch(
    tmp_path: Path,
) -> None:
    # The command dies before importing anything whenever renewals.py is not the
    # committed one: exactly what a mis-wired path looks like from outside.
    guard = (
        f"import hashlib, sys\nif hashlib.sha256(open('renewals.py', 'rb').read()).hexdigest() != "
        f"{hashlib.sha256(RENEWALS.encode()).hexdigest()!r}:\n    sys.exit(1)\n"
    )
    project = make_project(
        tmp_path / "repo",
        {
            "billing.py": BILLING,
            "renewals.py": RENEWALS,
            "check.py": guard + checker(["charge_card", "send_receipt"]),
        },
    )
    done = bite(
        project,
        *CHECK,
        *BOTH_LABELS,
        "--format",
        "json",
        "renewals.py",
    )
    assert done.returncode == 2, done.stdout + done.stderr
    mutants = json.loads(done.stdout)["mutants"]
    assert {m["outcome"] for m in mutants} == {"error"}
    assert mutants[0]["detail"] == "the test command never imported renewals.py from the scratch copy"


def test_mutants_of_a_file_the_unmutated_run_never_imports_are_errors(tmp_path: Path) -> None:
    project = make_project(
        tmp_path / "repo",
        {
            "billing.py": BILLING,
            "renewals.py": RENEWALS,
            "unused.py": "import billing\nbilling.charge_card(1, 2)\n",
            "check.py": checker(["charge_card", "send_receipt"]),
        },
    )
    done = bite(
        project,
        *CHECK,
        *BOTH_LABELS,
        "--format",
        "json",
        "renewals.py",
        "unused.py",
    )
    assert done.returncode == 2, done.stdout + done.stderr
    outcomes = sorted((m["file"], m["outcome"]) for m in json.loads(done.stdout)["mutants"])
    assert outcomes == [("renewals.py", "caught")] * 5 + [("unused.py", "error")] * 2


def test_progress_stays_off_stderr_when_it_is_not_a_terminal(tmp_path: Path) -> None:
    project = make_project(
        tmp_path / "repo",
        {
            "billing.py": BILLING,
            "renewals.py": RENEWALS,
            "check.py": checker(["charge_card", "send_receipt"]),
        },
    )
    done = bite(
        project,
        *CHECK,
        "--label",
        LABELS[0],
        "--operators",
        "delete",
        "renewals.py",
    )
    assert done.returncode == 0
    assert done.stderr == ""


def test_a_source_symlink_out_of_the_project_is_refused_and_its_target_left_alone(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "renewals.py").write_text(RENEWALS)
    project = make_project(
        tmp_path / "repo",
        {"billing.py": BILLING, "check.py": checker(["charge_card", "send_receipt"])},
    )
    (project / "renewals.py").symlink_to(outside / "renewals.py")
    commit_all(project, "renewals live elsewhere")
    before = repository_state(project)

    done = bite(project, *CHECK, *BOTH_LABELS, ".")

    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"callpin: renewals.py is a symlink to {outside / 'renewals.py'}, outside the project "
        f"{project}; bite mutates only files inside it"
    ]
    assert (outside / "renewals.py").read_text() == RENEWALS
    assert repository_state(project) == before


def test_a_symlink_inside_the_project_is_never_written_through(tmp_path: Path) -> None:
    project = make_project(
        tmp_path / "repo",
        {
            "billing.py": BILLING,
            "impl/renewals.py": RENEWALS,
            "check.py": checker(["charge_card", "send_receipt"]),
        },
    )
    # An absolute link: in a scratch worktree it still points at the user's own file.
    (project / "renewals.py").symlink_to(project / "impl" / "renewals.py")
    commit_all(project, "renewals through a link")
    before = repository_state(project)

    done = bite(project, *CHECK, *BOTH_LABELS, ".")

    assert "Traceback" not in done.stderr
    assert "caught" in done.stdout
    assert (project / "impl" / "renewals.py").read_text() == RENEWALS
    assert repository_state(project) == before
