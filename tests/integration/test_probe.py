"""probe on real child processes: each kind of ambient dependence is named, a clean capture is not."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from callpin.cli import cli

REPO = Path(__file__).resolve().parents[2]

COLLABORATOR = "def send(*args, **kwargs):\n    return None\n"

CAPTURES = {
    "tz": """
        import time
        with callpin.record(spy=["collab.send"]):
            collab.send("prepare")
            collab.send(time.strftime("%H:%M", time.localtime(1700000000)))
    """,
    "hashseed": """
        with callpin.record(spy=["collab.send"]):
            collab.send("".join({"alpha", "beta", "gamma", "delta", "epsilon"}))
    """,
    "unstable": """
        import random
        with callpin.record(spy=["collab.send"]):
            collab.send(random.random())
    """,
    "locale": """
        import locale
        locale.setlocale(locale.LC_ALL, "")
        with callpin.record(spy=["collab.send"]):
            collab.send(locale.currency(12.5))
    """,
    "cwd": """
        with callpin.record(spy=["collab.send"]):
            collab.send(open("data.txt").read())
    """,
    "env": """
        import os, urllib.request
        own_home = os.path.expanduser("~") == os.environ.get("REAL_HOME")
        with callpin.record(spy=["collab.send"]):
            collab.send(sorted(urllib.request.getproxies().items()), own_home)
    """,
    "order": """
        import os
        with callpin.record(spy=["collab.send"]):
            collab.send(os.listdir("data"))
    """,
    "sorted_order": """
        import glob, os
        with callpin.record(spy=["collab.send"]):
            collab.send(sorted(os.listdir("data")), sorted(glob.glob("data/*")))
    """,
    "clock": """
        import datetime
        with callpin.record(spy=["collab.send"]):
            collab.send(datetime.date.today().isoformat())
    """,
    "normalized_clock": """
        import datetime
        with callpin.record(spy=["collab.send"]):
            collab.send(datetime.datetime.now())
    """,
    "records_places": """
        import os, ssl
        with callpin.record(spy=["collab.send"]):
            collab.send(os.getcwd(), os.path.expanduser("~"), os.environ.get("REQUESTS_CA_BUNDLE"))
            collab.send(__import__("time").strftime("%H:%M", __import__("time").localtime(1700000000)))
    """,
    "user_env": """
        import os
        with callpin.record(spy=["collab.send"]):
            collab.send(os.environ.get("PAYMENT_URL", "https://pay.example"))
    """,
    "deterministic": """
        from examples.renewals import renewals
        case = {"id": 7, "card": "card_A", "email": "ada@example.com", "amount": -5}
        with callpin.record(spy=["examples.renewals.billing.charge_card",
                                 "examples.renewals.billing.send_receipt"]) as rec:
            rec.mark("returned", renewals.renew(case))
    """,
}


def project(tmp_path: Path, capture: str) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "collab.py").write_text(COLLABORATOR)
    (root / "data.txt").write_text("payload")
    (root / "data").mkdir()
    for name in ("a.json", "b.json", "c.json"):
        (root / "data" / name).write_text("{}")
    body = textwrap.dedent(CAPTURES[capture])
    (root / "capture.py").write_text("import callpin\nimport collab\n" + body)
    return root


def probe(root: Path, *args: str, command: tuple[str, ...] = (sys.executable, "capture.py")) -> tuple[int, str, str]:
    runner = CliRunner()
    previous = os.getcwd()
    os.chdir(root)
    old_path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(REPO)
    try:
        result = runner.invoke(cli, ["probe", *args, "--", *command])
    finally:
        os.chdir(previous)
        if old_path is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old_path
    return result.exit_code, result.stdout, result.stderr


def test_timezone_dependence_is_ambient_under_tz_with_the_first_differing_event(tmp_path):
    code, out, err = probe(project(tmp_path, "tz"), "--cells", "tz,hashseed")
    assert code == 1
    assert err.strip().splitlines()[-1] == "VOLATILE: tz"
    assert "collab.send.cpin under tz=Asia/Tokyo: #1 collab.send: args[0]: '22:13' → '07:13'" in out


def test_set_iteration_order_is_ambient_under_hashseed(tmp_path):
    code, out, err = probe(project(tmp_path, "hashseed"), "--cells", "tz,hashseed", "--jobs", "2")
    assert code == 1
    assert err.strip().endswith("VOLATILE: hashseed")
    assert "under hashseed=1: #0 collab.send: args[0]:" in out


def test_unseeded_random_is_unstable(tmp_path):
    code, out, err = probe(project(tmp_path, "unstable"), "--cells", "hashseed")
    assert code == 1
    assert err.strip().endswith("VOLATILE: unstable")
    assert "unstable (runs in one cell differ; a log unstable anywhere is judged ambient nowhere):" in out
    assert "collab.send.cpin under baseline: #0 collab.send: args[0]:" in out


def test_locale_currency_is_reported_under_locale_or_as_a_baseline_error_never_a_crash(tmp_path):
    code, out, err = probe(project(tmp_path, "locale"), "--cells", "locale")
    verdict = err.strip().splitlines()
    if code == 1:
        assert verdict[-1] == "VOLATILE: locale"
    else:
        # Without a real locale the baseline itself cannot format currency: that is
        # reported, exit 2, and listed as no setting's doing.
        assert code == 2
        assert "VOLATILE: none" in verdict
        assert "error (the command failed or wrote no log):" in out
        assert "Currency formatting is not possible" in out


def test_a_relative_file_read_is_an_error_under_cwd_with_its_stderr_line(tmp_path):
    code, out, err = probe(project(tmp_path, "cwd"), "--cells", "cwd")
    assert code == 1
    assert err.strip().endswith("VOLATILE: cwd")
    assert (
        "collab.send.cpin under cwd=fresh: exit 1: FileNotFoundError: [Errno 2] No such file or directory: 'data.txt'"
        in out
    )


def test_a_deterministic_capture_is_volatile_nowhere(tmp_path):
    code, out, err = probe(project(tmp_path, "deterministic"), "--jobs", "2")
    assert code == 0, out + err
    assert err.strip().endswith("VOLATILE: none")
    assert "examples.renewals.billing.charge_card.cpin" in out


def test_json_report(tmp_path):
    code, out, _ = probe(project(tmp_path, "hashseed"), "--cells", "hashseed", "--format", "json")
    report = json.loads(out)
    assert code == 1
    assert report["volatile"] == ["hashseed"]
    assert report["table"]["collab.send.cpin"]["hashseed=1"] == "AMBIENT"


def test_a_command_that_cannot_start_is_exit_2(tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["probe", "--", str(tmp_path / "no-such-command")])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"callpin: command not found: {tmp_path / 'no-such-command'}"


def test_a_command_that_writes_no_logs_is_exit_2(tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["probe", "--cells", "tz", "--", sys.executable, "-c", "pass"])
    assert result.exit_code == 2
    assert "wrote no callpin logs" in result.stderr


@pytest.mark.parametrize("args", [["--cells", "moon"], ["--runs", "1"]])
def test_bad_options_are_exit_2(args):
    result = CliRunner().invoke(cli, ["probe", *args, "--", sys.executable, "-c", "pass"])
    assert result.exit_code == 2


def test_a_log_the_command_links_to_a_file_elsewhere_is_never_read(tmp_path):
    outside = tmp_path / "outside.cpin"
    outside.write_bytes(b"not a log; probe must not open it")
    root = project(tmp_path, "deterministic")
    capture = root / "capture.py"
    link = "os.path.join(os.environ['CALLPIN_OUTPUT_DIR'], 'x.cpin')"
    capture.write_text(f"import os\n{capture.read_text()}os.symlink({str(outside)!r}, {link})\n")
    code, out, err = probe(root, "--cells", "hashseed")
    assert code == 0, out + err
    assert "x.cpin" not in out
    assert outside.read_bytes() == b"not a log; probe must not open it"


def test_proxy_and_home_variables_read_by_the_capture_are_ambient_under_env(tmp_path, monkeypatch):
    monkeypatch.setenv("REAL_HOME", os.path.expanduser("~"))
    monkeypatch.setenv("HTTPS_PROXY", "http://parent-proxy:8080")
    code, out, err = probe(project(tmp_path, "env"), "--cells", "env")
    assert code == 1
    assert err.strip().splitlines()[-1] == "VOLATILE: env"
    # The parent's proxy never reaches the baseline: a controlled variable is removed first.
    assert "parent-proxy" not in out
    finding = next(line for line in out.splitlines() if "under env=set" in line)
    assert finding.startswith("  collab.send.cpin under env=set: #0 collab.send: args[0][0]: (absent) → (")
    assert "'http://127.0.0.1:9')" in finding
    # HOME is a fresh folder there.
    assert finding.endswith("args[1]: True → False")


def test_a_variable_given_with_env_reaches_only_the_env_cell(tmp_path):
    root = project(tmp_path, "user_env")
    code, out, err = probe(root, "--cells", "env,tz", "--env", "PAYMENT_URL=http://127.0.0.1:1")
    assert code == 1
    assert err.strip().splitlines()[-1] == "VOLATILE: env"
    assert "under env=set: #0 collab.send: args[0]: 'https://pay.example' → 'http://127.0.0.1:1'" in out


def test_a_capture_recording_its_working_folder_and_home_is_ambient_there_and_stable(tmp_path):
    # Each run's fresh folder and HOME are in a temp folder of their own: both runs of
    # a cell read `<tmp:1>/cwd`, so the cell is ambient, not unstable, and the tz
    # finding of the same log stands.
    code, out, err = probe(project(tmp_path, "records_places"), "--cells", "cwd,env,tz")
    assert code == 1, out + err
    assert err.strip().splitlines()[-1] == "VOLATILE: tz, cwd, env"
    assert "collab.send.cpin under cwd=fresh: #0 collab.send: args[0]:" in out
    assert "→ '<tmp:1>/cwd'" in out and "→ '<tmp:2>/home'" in out and "→ '<tmp:2>/ca-bundle.pem'" in out
    assert "UNS  " not in out and "unstable (" not in out


def test_a_cell_that_drew_another_outcome_by_chance_is_confirmed_against_the_baseline(tmp_path):
    # Runs go one at a time, in order: the capture sends 0 in runs 1-2 (the baseline),
    # 1 in runs 3-4 (tz1), 0 in 5-6 (tz2): tz1 reads ambient. The baseline, run four
    # more times, sends 1 too: the log is unstable, and no setting is named.
    root = project(tmp_path, "deterministic")
    counter = root / "runs.txt"
    (root / "capture.py").write_text(
        "import callpin, collab, pathlib\n"
        f"counter = pathlib.Path({str(counter)!r})\n"
        "n = int(counter.read_text()) if counter.exists() else 0\n"
        "counter.write_text(str(n + 1))\n"
        "with callpin.record(spy=['collab.send']):\n"
        "    collab.send(n // 2 % 2)\n"
    )
    code, out, err = probe(root, "--cells", "tz", "--jobs", "1")
    assert code == 1, out + err
    assert err.strip().splitlines()[-1] == "VOLATILE: unstable"
    assert int(counter.read_text()) == 10  # 3 cells x 2 runs, then 4 more of the baseline
    assert "collab.send.cpin under baseline: #0 collab.send: args[0]: 0 → 1" in out
    assert "AMB  " not in out and "ambient (" not in out


def test_a_listing_in_directory_order_is_ambient_under_order(tmp_path):
    code, out, err = probe(project(tmp_path, "order"), "--cells", "order")
    assert code == 1
    assert err.strip().splitlines()[-1] == "VOLATILE: order"
    assert "collab.send.cpin under order=reversed: #0 collab.send: args[0]" in out


def test_a_sorted_listing_is_not_volatile_under_order(tmp_path):
    code, out, err = probe(project(tmp_path, "sorted_order"), "--cells", "order")
    assert code == 0, out + err
    assert err.strip().splitlines()[-1] == "VOLATILE: none"


def test_a_date_computed_from_now_is_ambient_under_clock(tmp_path):
    code, out, err = probe(project(tmp_path, "clock"), "--cells", "clock")
    assert code == 1
    assert err.strip().splitlines()[-1] == "VOLATILE: clock"
    assert "collab.send.cpin under clock=+400d5h17m: #0 collab.send: args[0]:" in out


def test_a_timestamp_callpin_normalizes_is_not_volatile_under_clock(tmp_path):
    code, out, err = probe(project(tmp_path, "normalized_clock"), "--cells", "clock")
    assert code == 0, out + err


RUN_SH = f"""#!/bin/sh
exec {sys.executable} -m pytest -q -p no:cacheprovider "$@"
"""

PINNED_TESTS = """
import collab

def test_sends(callpin):
    with callpin.pin(spy=["collab.send"]):
        collab.send("hello", 3)

def test_reads_data(callpin):
    with callpin.pin(spy=["collab.send"]):
        collab.send(open("data.txt").read())
"""


def pytest_project(tmp_path: Path) -> Path:
    """A project of pinned tests with no pytest configuration file, run by ./run.sh."""
    root = project(tmp_path, "deterministic")
    (root / "tests").mkdir()
    (root / "tests" / "test_pins.py").write_text(PINNED_TESTS)
    script = root / "run.sh"
    script.write_text(RUN_SH)
    script.chmod(0o755)
    return root


def test_a_relative_command_in_a_project_without_pytest_configuration_compares_like_with_like(tmp_path):
    code, out, err = probe(pytest_project(tmp_path), "--cells", "cwd,hashseed", command=("./run.sh", "tests"))
    assert code == 1, out + err
    assert err.strip().splitlines()[-1] == "VOLATILE: cwd"
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.startswith("baselines/")}
    # The fresh folder names each pin's log as the project does: one row per pin, only
    # the relative read fails there.
    assert rows == {
        "baselines/tests/test_pins/test_reads_data.cpin": ["ok", "ERR", "ok", "ok"],
        "baselines/tests/test_pins/test_sends.cpin": ["ok", "ERR", "ok", "ok"],
    }
    # pytest's summary line names the test that failed there, never a timing.
    finding = next(line for line in out.splitlines() if "test_sends.cpin under cwd=fresh" in line)
    assert finding.startswith("  baselines/tests/test_pins/test_sends.cpin under cwd=fresh: exit 1: FAILED ")
    assert "test_pins.py::test_reads_data" in finding


def test_pytest_with_no_test_path_collects_the_projects_tests_in_the_fresh_folder(tmp_path):
    # With no path and no `testpaths`, pytest collects from its working folder: in the
    # fresh one it found nothing (`no tests ran`), and every pin read as an error there.
    command = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider")
    code, out, err = probe(pytest_project(tmp_path), "--cells", "cwd", command=command)
    assert code == 1, out + err
    assert err.strip().splitlines()[-1] == "VOLATILE: cwd"
    # The fresh folder's run fails on the relative read alone, as with a path given.
    finding = next(line for line in out.splitlines() if "test_sends.cpin under cwd=fresh" in line)
    assert finding.startswith("  baselines/tests/test_pins/test_sends.cpin under cwd=fresh: exit 1: FAILED ")
    assert "test_pins.py::test_reads_data" in finding and "no tests ran" not in out


def test_the_volatile_line_is_the_same_on_five_runs(tmp_path):
    root = pytest_project(tmp_path)
    verdicts, reports = set(), []
    for _ in range(5):
        _, out, err = probe(root, "--cells", "cwd,hashseed", "--jobs", "2", command=("./run.sh", "tests"))
        verdicts.add(err.strip().splitlines()[-1])
        reports.append(out + err)
    assert verdicts == {"VOLATILE: cwd"}, "\n".join(reports)


def test_a_command_failing_in_every_cell_is_reported_in_the_table_and_exit_2(tmp_path):
    root = project(tmp_path, "deterministic")
    capture = root / "capture.py"
    capture.write_text(capture.read_text() + "raise SystemExit(3)\n")
    code, out, err = probe(root, "--cells", "tz")
    assert code == 2
    assert "examples.renewals.billing.charge_card.cpin  ERR   ERR  ERR" in out
    assert err.strip().splitlines()[-2:] == [
        "VOLATILE: none",
        "callpin probe: the capture fails in the baseline cell; fix that first (see the errors above)",
    ]


SLEEPER = """
import os, subprocess, sys, time
folder = sys.argv[1]
# A grandchild in the same process group, as a test runner's worker would be.
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open(os.path.join(folder, f"started-{os.getpid()}"), "w") as note:
    note.write(f"{os.getpid()} {helper.pid}")
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_queued_runs_ends_the_children_and_removes_the_scratch_folders(tmp_path, signum, code):
    notes = tmp_path / "notes"
    notes.mkdir()
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    (tmp_path / "sleeper.py").write_text(SLEEPER)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "TMPDIR": str(scratch)}
    probe_process = subprocess.Popen(
        [sys.executable, "-m", "callpin", "probe", "--jobs", "1", "--", sys.executable, "sleeper.py", str(notes)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # A test runner's worker may ignore SIGINT, and children inherit that; a
        # terminal's probe does not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        # The first run has started (and its grandchild) once its note is complete.
        for _ in range(600):
            started = [p for p in notes.iterdir() if p.read_text().count(" ") == 1]
            if started:
                break
            time.sleep(0.05)
        assert started, "the first run never started"
        pids = [int(pid) for pid in started[0].read_text().split()]
        probe_process.send_signal(signum)
        # A bound against hanging forever, not a speed assertion (that is measured elsewhere).
        _, err = probe_process.communicate(timeout=60)
    finally:
        if probe_process.poll() is None:
            probe_process.kill()
            probe_process.wait()
    assert probe_process.returncode == code
    assert err.decode().strip().splitlines()[-1].startswith("callpin probe: interrupted")
    assert len(list(notes.iterdir())) == 1, "a queued run started after the signal"
    assert not [pid for pid in pids if _alive(pid)]
    assert list(scratch.iterdir()) == []
