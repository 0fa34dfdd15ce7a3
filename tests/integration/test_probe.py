"""probe on real child processes: each kind of ambient dependence is named, a clean capture is not."""

from __future__ import annotations

import json
import os
import sys
import textwrap
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
    body = textwrap.dedent(CAPTURES[capture])
    (root / "capture.py").write_text("import callpin\nimport collab\n" + body)
    return root


def probe(root: Path, *args: str) -> tuple[int, str, str]:
    runner = CliRunner()
    previous = os.getcwd()
    os.chdir(root)
    old_path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(REPO)
    try:
        result = runner.invoke(cli, ["probe", *args, "--", sys.executable, "capture.py"])
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
    assert "unstable (runs in one cell differ):" in out
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
