"""The command line's conventions: `-` for standard input and output, colour, help, completion, --version."""

from __future__ import annotations

import os
import platform
import pty
import subprocess
import sys

import pytest
from click.testing import CliRunner

import callpin
from callpin.cli import cli
from callpin.normalize import NO_RULES
from sample_logs import call, write

A, B, C = (call(f"svc.{name}") for name in "abc")
ESCAPE = "\x1b["


def content(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def invoke(*args: object, stdin: bytes | None = None, env: dict[str, str] | None = None) -> object:
    return CliRunner().invoke(cli, [os.fspath(arg) for arg in args], input=stdin, env=env, prog_name="callpin")


def on_a_terminal(*args: object, **env: str) -> tuple[int, str]:
    """Exit code and stdout of `python -m callpin ARGS` with stdout on a pseudo-terminal."""
    base = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "TERM")}
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "callpin", *map(os.fspath, args)],
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=subprocess.PIPE,
            env={**base, **env},
            timeout=120,
            check=False,
        )
    finally:
        os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:  # EIO: the terminal's other side is closed and drained
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return done.returncode, b"".join(chunks).decode("utf-8") + done.stderr.decode("utf-8")


@pytest.fixture
def logs(tmp_path):
    return {
        "base": write(tmp_path / "base.cpin", A, B, C),
        "swapped": write(tmp_path / "swapped.cpin", A, C, B),
    }


# ---------------------------------------------------------------------------
# `-`: standard input where a log is read, standard output where one is written.


def test_show_dash_reads_the_log_from_standard_input(logs):
    result = invoke("show", "-", stdin=content(logs["base"]))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == invoke("show", logs["base"]).stdout


def test_diff_reads_either_log_from_standard_input(logs):
    for args in (("-", logs["swapped"]), (logs["base"], "-")):
        stdin = content(logs["base"] if args[0] == "-" else logs["swapped"])
        result = invoke("diff", *args, stdin=stdin)
        assert result.exit_code == 1, result.stderr
        assert "2 differences: 2 moved" in result.stdout


def test_standard_input_is_refused_for_two_logs_in_one_line(logs):
    for args in (("diff", "-", "-"), ("verify", "-", "-")):
        result = invoke(*args, stdin=content(logs["base"]))
        assert result.exit_code == 2
        assert len(result.stderr.splitlines()) == 1
        assert "standard input" in result.stderr


def test_stats_and_verify_read_standard_input_and_name_it(logs):
    stdin = content(logs["base"])
    stats = invoke("stats", "-", stdin=stdin)
    assert stats.exit_code == 0
    assert stats.stdout.splitlines()[:2] == ["log: -", "events: 3"]
    verify = invoke("verify", logs["swapped"], "-", stdin=stdin)
    assert verify.exit_code == 0
    assert verify.stdout.splitlines()[1].startswith("ok: -: 3 events, fingerprint ")


def test_a_bad_log_on_standard_input_is_a_one_line_error_naming_stdin():
    result = invoke("show", "-", stdin=b"hello\n")
    assert result.exit_code == 2
    assert result.stderr == "callpin: <stdin>: not a callpin log (no callpin magic bytes)\n"


def test_normalize_between_standard_input_and_output_writes_the_same_bytes_as_files(tmp_path):
    raw = write(tmp_path / "raw.cpin", call("svc.f", "id 12345678-1234-5678-1234-567812345678"), rules=NO_RULES)
    assert invoke("normalize", raw, tmp_path / "files.cpin").exit_code == 0
    expected = (tmp_path / "files.cpin").read_bytes()
    from_stdin = invoke("normalize", "-", tmp_path / "from-stdin.cpin", stdin=content(raw))
    assert from_stdin.exit_code == 0, from_stdin.stderr
    assert (tmp_path / "from-stdin.cpin").read_bytes() == expected
    to_stdout = invoke("normalize", raw, "-")
    assert to_stdout.exit_code == 0, to_stdout.stderr
    assert to_stdout.stdout_bytes == expected
    # What was written is said on stderr, so the log on stdout stays a log.
    assert to_stdout.stderr.startswith("wrote -: 1 event, rules: uuid, timestamp, address")
    assert not (tmp_path / "-").exists()


def test_normalize_refuses_to_write_a_binary_log_to_a_terminal(tmp_path):
    raw = write(tmp_path / "raw.cpin", A, rules=NO_RULES)
    code, output = on_a_terminal("normalize", raw, "-")
    assert code == 2
    assert output.strip() == (
        "callpin: a log is binary: not writing it to a terminal (redirect stdout, or give OUT a file name)"
    )


@pytest.mark.parametrize("command", ["diff", "show"])
def test_output_dash_is_standard_output(logs, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    paths = (logs["base"], logs["swapped"]) if command == "diff" else (logs["base"],)
    to_dash = invoke(command, *paths, "-o", "-")
    assert to_dash.stdout == invoke(command, *paths).stdout
    assert to_dash.stdout
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("command", ["gate", "probe", "bite"])
def test_every_report_can_be_written_to_a_file(command):
    assert "-o, --output FILE" in invoke(command, "--help").stdout


# ---------------------------------------------------------------------------
# Colour: a terminal only, NO_COLOR (set and not empty) and TERM=dumb turn it off.


def test_diff_on_a_terminal_is_coloured(logs):
    code, output = on_a_terminal("diff", logs["base"], logs["swapped"], TERM="xterm")
    assert code == 1
    assert ESCAPE in output


def test_no_color_set_turns_colour_off_on_a_terminal(logs):
    code, output = on_a_terminal("diff", logs["base"], logs["swapped"], TERM="xterm", NO_COLOR="1")
    assert code == 1
    assert "moved" in output
    assert ESCAPE not in output


def test_no_color_set_but_empty_changes_nothing(logs):
    _, output = on_a_terminal("diff", logs["base"], logs["swapped"], TERM="xterm", NO_COLOR="")
    assert ESCAPE in output


def test_a_dumb_terminal_gets_no_colour(logs):
    code, output = on_a_terminal("diff", logs["base"], logs["swapped"], TERM="dumb")
    assert code == 1
    assert "moved" in output
    assert ESCAPE not in output


def test_a_pipe_gets_no_colour_unless_asked(logs):
    assert ESCAPE not in invoke("diff", logs["base"], logs["swapped"]).stdout
    assert ESCAPE in invoke("diff", "--color", logs["base"], logs["swapped"]).stdout


def test_color_asked_for_wins_over_no_color(logs):
    result = invoke("diff", "--color", logs["base"], logs["swapped"], env={"NO_COLOR": "1"})
    assert ESCAPE in result.stdout


def test_color_asked_for_is_written_into_the_output_file(logs, tmp_path):
    invoke("diff", "--color", "-o", tmp_path / "coloured.txt", logs["base"], logs["swapped"])
    invoke("diff", "-o", tmp_path / "plain.txt", logs["base"], logs["swapped"])
    assert ESCAPE in (tmp_path / "coloured.txt").read_text(encoding="utf-8")
    assert ESCAPE not in (tmp_path / "plain.txt").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------
# --help, --version, shell completion.


def test_the_help_gives_each_command_its_whole_one_line_summary():
    result = invoke("--help", env={"COLUMNS": "80"})
    lines = result.stdout.splitlines()
    for name, command in cli.commands.items():
        summary = command.short_help
        assert summary and summary.endswith(".") and not summary.endswith("..."), name
        assert f"  {name.ljust(9)}  {summary}" in lines, name


def test_version_says_the_version_the_implementation_and_the_python():
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout == (
        f"callpin {callpin.__version__} (implementation: {callpin.IMPLEMENTATION}; "
        f"Python {platform.python_version()})\n"
    )


def test_version_says_python_when_the_python_implementation_is_forced():
    done = subprocess.run(
        [sys.executable, "-m", "callpin", "--version"],
        env={**os.environ, "CALLPIN_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert "(implementation: python; " in done.stdout


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o nosort -F _callpin_completion callpin"),
        ("zsh", "compdef _callpin_completion callpin"),
        ("fish", "complete --no-files --command callpin"),
    ],
)
def test_the_shell_completion_script_is_produced(shell, marker):
    result = invoke(env={"_CALLPIN_COMPLETE": f"{shell}_source"})
    assert result.exit_code == 0
    assert marker in result.stdout
    assert "_CALLPIN_COMPLETE" in result.stdout


def test_completion_completes_command_names():
    result = invoke(env={"_CALLPIN_COMPLETE": "bash_complete", "COMP_WORDS": "callpin di", "COMP_CWORD": "1"})
    assert result.stdout.splitlines() == ["plain,diff"]
