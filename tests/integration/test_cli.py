"""The callpin command line through click's CliRunner: every command, exit code and bad input."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys

import msgpack
import pytest
import xxhash
from click.testing import CliRunner

from callpin import load
from callpin.cli import cli
from callpin.logfile import log_bytes
from callpin.normalize import DEFAULT_RULES, NO_RULES, RuleSet, rule
from sample_logs import call, frames_of, mark, renewal, ret, write

A, B, C = (call(f"svc.{name}") for name in "abc")
COMMANDS = ["diff", "show", "stats", "verify", "normalize", "git-setup"]


def run(*args: str) -> object:
    return CliRunner().invoke(cli, [os.fspath(arg) for arg in args])


def assert_one_line_error(result, *, containing: str = "") -> None:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert containing in lines[0]


@pytest.fixture
def logs(tmp_path):
    """Paths of a few logs: `same` equals `base`, `swapped` swaps two calls of it."""
    return {
        "base": write(tmp_path / "base.cpin", A, B, C),
        "same": write(tmp_path / "same.cpin", A, B, C),
        "swapped": write(tmp_path / "swapped.cpin", A, C, B),
    }


@pytest.fixture
def bad_inputs(tmp_path):
    """Paths that are not readable logs, and the words their error names."""
    whole = log_bytes(frames_of(A, B, C), rules=DEFAULT_RULES)
    (tmp_path / "not-a-log.cpin").write_text("hello\n")
    (tmp_path / "truncated.cpin").write_bytes(whole[:-5])
    corrupt = bytearray(whole)
    corrupt[-20] ^= 0xFF
    (tmp_path / "corrupt.cpin").write_bytes(bytes(corrupt))
    (tmp_path / "folder").mkdir()
    return {
        "missing": (tmp_path / "absent.cpin", "no such file"),
        "directory": (tmp_path / "folder", "is a directory"),
        "non-log": (tmp_path / "not-a-log.cpin", "not a callpin log"),
        "truncated": (tmp_path / "truncated.cpin", "truncated"),
        "corrupt": (tmp_path / "corrupt.cpin", "corrupt"),
    }


BAD = ["missing", "directory", "non-log", "truncated", "corrupt"]


# ---------------------------------------------------------------------------
# The group.


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command):
    result = run(command, "--help")
    assert result.exit_code == 0
    assert result.stdout.startswith(f"Usage: callpin {command}")


def test_no_command_prints_the_help():
    result = run()
    assert result.exit_code == 0
    assert all(command in result.stdout for command in COMMANDS)


def test_an_unknown_command_is_a_one_line_error():
    assert_one_line_error(run("frobnicate"), containing="No such command")


def test_python_dash_m_runs_the_command_line(logs):
    done = subprocess.run(
        [sys.executable, "-m", "callpin", "diff", logs["base"], logs["swapped"]],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "2 moved" in done.stdout


# ---------------------------------------------------------------------------
# diff.


def test_diff_of_identical_logs_exits_0(logs):
    result = run("diff", logs["base"], logs["same"])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == "identical: 3 events"


def test_diff_of_different_logs_exits_1_and_shows_the_ops(logs):
    result = run("diff", logs["base"], logs["swapped"])
    assert result.exit_code == 1
    assert result.stdout.count("\nmoved ") == 2
    assert result.stderr == ""


def test_diff_as_json(logs):
    result = run("diff", "--format", "json", logs["base"], logs["swapped"])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["summary"]["moved"] == 2
    assert [op["op"] for op in document["ops"]] == ["moved", "moved"]


def test_diff_stat_shows_counts_and_summary_only(logs):
    result = run("diff", "--stat", logs["base"], logs["swapped"])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0].split() == ["counts:", "calls"]
    assert "moved  " not in result.stdout


def test_diff_stat_as_json_leaves_out_the_ops(logs):
    result = run("diff", "--stat", "--format", "json", logs["base"], logs["swapped"])
    assert "ops" not in json.loads(result.stdout)


def test_diff_context_sets_the_equal_events_shown(tmp_path):
    events = [call("svc.step", k) for k in range(10)]
    old = write(tmp_path / "old.cpin", *events)
    new = write(tmp_path / "new.cpin", *events[:5], *events[6:])
    assert run("diff", "--context", "1", old, new).stdout.count("svc.step(") == 3
    assert run("diff", "--context", "0", old, new).stdout.count("svc.step(") == 1


def test_diff_ignore_leaves_a_field_out(tmp_path):
    old = write(tmp_path / "old.cpin", call("svc.a", thread=1))
    new = write(tmp_path / "new.cpin", call("svc.a", thread=2))
    assert run("diff", old, new).exit_code == 1
    assert run("diff", "--ignore", "thread", old, new).exit_code == 0


@pytest.mark.parametrize(("order", "code"), [("strict", 1), ("thread", 0), ("none", 0)])
def test_diff_order_chooses_what_counts_as_a_difference(tmp_path, order, code):
    old = write(tmp_path / "old.cpin", call("w.a", thread=1), call("w.x", thread=2))
    new = write(tmp_path / "new.cpin", call("w.x", thread=2), call("w.a", thread=1))
    assert run("diff", "--order", order, old, new).exit_code == code


def test_diff_colour_only_when_asked(logs):
    assert "\x1b[" not in run("diff", logs["base"], logs["swapped"]).stdout
    assert "\x1b[" not in run("diff", "--no-color", logs["base"], logs["swapped"]).stdout
    assert "\x1b[33m" in run("diff", "--color", logs["base"], logs["swapped"]).stdout


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("side", ["old", "new"])
def test_diff_of_an_unreadable_log_is_a_one_line_error(logs, bad_inputs, bad, side):
    path, words = bad_inputs[bad]
    args = [path, logs["base"]] if side == "old" else [logs["base"], path]
    assert_one_line_error(run("diff", *args), containing=words)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--bogus"], "No such option"),
        (["--context", "-1"], "--context"),
        (["--context", "many"], "--context"),
        (["--format", "xml"], "--format"),
        (["--order", "random"], "--order"),
        (["--ignore", "label"], "cannot ignore 'label'"),
        (["--ignore", "kwargs.headers["], "not a key path"),
        (["--rule", "nope"], "unknown rule 'nope'"),
        (["--rule", "v=("], "invalid regular expression"),
    ],
)
def test_diff_with_a_bad_option_is_a_one_line_error(logs, options, words):
    assert_one_line_error(run("diff", *options, logs["base"], logs["same"]), containing=words)


def test_diff_with_a_missing_argument_is_a_one_line_error(logs):
    assert_one_line_error(run("diff", logs["base"]), containing="Missing argument")


def test_diff_of_a_log_recorded_with_fewer_rules_applies_the_others_first(tmp_path, logs):
    other = write(tmp_path / "other.cpin", A, B, C, rules=RuleSet.named(["uuid"]))
    assert run("diff", logs["base"], other).exit_code == 0


def test_diff_of_logs_with_one_rule_under_two_patterns_is_a_one_line_error_naming_both(tmp_path):
    old = write(tmp_path / "old.cpin", A, rules=DEFAULT_RULES.with_rules([rule("v[0-9]+", "build")]))
    new = write(tmp_path / "new.cpin", A, rules=DEFAULT_RULES.with_rules([rule("b[0-9]+", "build")]))
    assert_one_line_error(run("diff", old, new), containing="'build' is 'v[0-9]+' in one and 'b[0-9]+' in the other")


def test_diff_rule_normalizes_both_sides_before_comparing(tmp_path):
    old = write(tmp_path / "old.cpin", call("svc.a", "requests/2.31.0"))
    new = write(tmp_path / "new.cpin", call("svc.a", "requests/2.32.3"))
    assert run("diff", old, new).exit_code == 1
    assert run("diff", "--rule", r"version=\d+\.\d+\.\d+", old, new).exit_code == 0


def test_diff_ignore_takes_a_key_path(tmp_path):
    old = write(tmp_path / "old.cpin", call("svc.get", headers={"Date": "Mon", "Accept": "json"}))
    new = write(tmp_path / "new.cpin", call("svc.get", headers={"Date": "Tue", "Accept": "json"}))
    changed = write(tmp_path / "changed.cpin", call("svc.get", headers={"Date": "Tue", "Accept": "xml"}))
    assert run("diff", old, new).exit_code == 1
    assert run("diff", "--ignore", "kwargs.headers.Date", old, new).exit_code == 0
    result = run("diff", "--ignore", "kwargs.headers.Date", "--format", "json", old, changed)
    assert result.exit_code == 1
    fields = json.loads(result.stdout)["ops"][0]["fields"]
    assert fields == [{"path": "kwargs.headers.Accept", "old": "json", "new": "xml"}]


def test_diff_of_two_folders_pairs_logs_by_relative_path(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    for root in (old, new):
        (root / "billing").mkdir(parents=True)
    write(old / "billing" / "renew.cpin", *renewal())
    write(new / "billing" / "renew.cpin", *renewal(swapped=True))
    write(old / "same.cpin", A, B)
    write(new / "same.cpin", A, B)
    write(old / "gone.cpin", A)
    write(new / "added.cpin", B)
    result = run("diff", old, new)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[:5] == [
        "added.cpin: only in new",
        "billing/renew.cpin: 2 differences: 2 moved, 0 missing, 0 extra, 0 changed",
        "gone.cpin: only in old",
        "same.cpin: identical: 2 events",
        "4 logs: 1 identical, 1 different, 1 only in old, 1 only in new",
    ]
    assert "== billing/renew.cpin" in lines
    document = json.loads(run("diff", "--format", "json", old, new).stdout)
    assert [(pair["path"], pair["status"]) for pair in document["pairs"]] == [
        ("added.cpin", "only in new"),
        ("billing/renew.cpin", "different"),
        ("gone.cpin", "only in old"),
        ("same.cpin", "identical"),
    ]
    assert document["pairs"][1]["diff"]["summary"]["moved"] == 2
    page = run("diff", "--format", "html", old, new).stdout
    assert "data-path='billing/renew.cpin'" in page and "srcdoc=" in page


def test_diff_of_two_identical_folders_exits_0_and_a_folder_against_a_log_is_an_error(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    write(old / "a.cpin", A)
    log = write(new / "a.cpin", A)
    assert run("diff", old, new).exit_code == 0
    assert_one_line_error(run("diff", old, log), containing="is a directory")


def test_diff_of_folders_with_an_unreadable_pair_exits_2_naming_it(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    write(old / "a.cpin", A)
    (new / "a.cpin").write_text("hello\n")
    result = run("diff", old, new)
    assert result.exit_code == 2
    assert "a.cpin: cannot compare" in result.stdout
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


def test_diff_renewals_refactor_with_the_same_calls_exits_0(tmp_path):
    old = write(tmp_path / "old.cpin", *renewal())
    new = write(tmp_path / "new.cpin", *renewal())
    assert run("diff", old, new).exit_code == 0


def test_diff_renewals_swapped_billing_calls_exits_1_with_two_moved(tmp_path):
    old = write(tmp_path / "old.cpin", *renewal())
    new = write(tmp_path / "new.cpin", *renewal(swapped=True))
    result = run("diff", old, new)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == "2 differences: 2 moved, 0 missing, 0 extra, 0 changed"


def test_diff_renewals_dropped_clamp_names_the_amount(tmp_path):
    old = write(tmp_path / "old.cpin", *renewal(amount=0))
    new = write(tmp_path / "new.cpin", *renewal(amount=-250))
    result = run("diff", old, new)
    assert result.exit_code == 1
    assert "kwargs.amount: 0 → -250" in result.stdout


# ---------------------------------------------------------------------------
# HTML reports and -o/--output.


@pytest.mark.parametrize(("other", "code"), [("same", 0), ("swapped", 1)])
def test_diff_as_html_keeps_the_exit_code(logs, other, code):
    result = run("diff", "--format", "html", logs["base"], logs[other])
    assert result.exit_code == code
    assert result.stdout.startswith("<!DOCTYPE html>")
    assert result.stdout.count('data-op="moved"') == (0 if code == 0 else 4)


def test_diff_as_html_to_a_file_writes_the_page_and_prints_nothing(logs, tmp_path):
    target = tmp_path / "report.html"
    result = run("diff", "--format", "html", "-o", target, logs["base"], logs["swapped"])
    assert result.exit_code == 1
    assert result.stdout == ""
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</html>\n")
    assert 'class="row op op-moved"' in page
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".")]


def test_diff_context_applies_to_the_html_report(tmp_path):
    steps = [call("svc.step", k) for k in range(20)]
    old = write(tmp_path / "old.cpin", *steps)
    new = write(tmp_path / "new.cpin", *steps[:10], call("svc.other"), *steps[11:])
    wide = run("diff", "--format", "html", "--context", "5", old, new).stdout
    narrow = run("diff", "--format", "html", "--context", "1", old, new).stdout
    assert "<summary>5 equal events (new #0 to #4)</summary>" in wide
    assert "<summary>9 equal events (new #0 to #8)</summary>" in narrow


def test_diff_html_has_no_stat_form(logs):
    assert_one_line_error(
        run("diff", "--format", "html", "--stat", logs["base"], logs["swapped"]),
        containing="--stat",
    )


def test_diff_text_and_json_can_be_written_to_a_file(logs, tmp_path):
    run("diff", "-o", tmp_path / "report.txt", logs["base"], logs["swapped"])
    json_file = tmp_path / "report.json"
    run("diff", "--format", "json", "--output", json_file, logs["base"], logs["swapped"])
    text = (tmp_path / "report.txt").read_text(encoding="utf-8")
    assert text == run("diff", "--no-color", logs["base"], logs["swapped"]).stdout
    assert "\x1b[" not in text
    document = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert document["summary"]["moved"] == 2


def test_show_as_html_draws_every_event(logs, tmp_path):
    target = tmp_path / "log.html"
    result = run("show", "--format", "html", "-o", target, logs["swapped"])
    assert result.exit_code == 0
    assert result.stdout == ""
    page = target.read_text(encoding="utf-8")
    assert page.count('<div class="row">') == 3
    assert run("show", "--format", "html", logs["swapped"]).stdout == page


def test_output_replaces_an_existing_file_whole(logs, tmp_path):
    target = tmp_path / "report.html"
    target.write_text("x" * 100_000)
    run("show", "--format", "html", "-o", target, logs["base"])
    expected = run("show", "--format", "html", logs["base"]).stdout
    assert target.read_text(encoding="utf-8") == expected


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(logs, tmp_path, monkeypatch):
    target = tmp_path / "report.html"
    target.write_text("previous report")

    def refuse(source, destination):
        raise OSError(28, "No space left on device", source, None, destination)

    monkeypatch.setattr(os, "replace", refuse)
    result = run("diff", "--format", "html", "-o", target, logs["base"], logs["swapped"])
    assert_one_line_error(result, containing="report.html: No space left on device")
    assert target.read_text() == "previous report"
    assert set(os.listdir(tmp_path)) == {"report.html", "base.cpin", "same.cpin", "swapped.cpin"}


def test_output_into_a_missing_folder_is_a_one_line_error_naming_the_file(logs, tmp_path):
    target = tmp_path / "absent" / "report.html"
    result = run("show", "--format", "html", "-o", target, logs["base"])
    assert_one_line_error(result, containing=f"{target}: No such file or directory")


def test_output_to_a_folder_is_a_one_line_error(logs, tmp_path):
    assert_one_line_error(run("show", "-o", tmp_path, logs["base"]), containing="--output")


# ---------------------------------------------------------------------------
# show, stats, verify.


def test_show_prints_every_event(logs):
    result = run("show", logs["swapped"])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1:] == ["svc.a()", "svc.c()", "svc.b()"]


def test_show_as_json(logs):
    result = run("show", "--format", "json", logs["base"])
    assert result.exit_code == 0
    assert [e["label"] for e in json.loads(result.stdout)["events"]] == ["svc.a", "svc.b", "svc.c"]


@pytest.mark.parametrize("output", ["text", "json", "html"])
def test_show_and_diff_escape_control_characters_and_lone_surrogates(tmp_path, logs, output):
    hostile = write(tmp_path / "hostile.cpin", mark("\x1b[2J\ud800", 1), call("svc.\u202ea", "\ud800"))
    shown = run("show", "--format", output, hostile)
    compared = run("diff", "--format", output, logs["base"], hostile)
    assert (shown.exit_code, compared.exit_code) == (0, 1), shown.output + compared.output
    for result in (shown, compared):
        assert result.stderr == ""
        assert "\x1b" not in result.stdout
        assert "\u202e" not in result.stdout
    if output == "text":
        assert shown.stdout.splitlines()[1:] == [
            "mark \\x1b[2J\\ud800 = 1",
            "svc.\\u202ea('\\ud800')",
        ]


def test_an_error_quoting_a_control_character_of_a_log_is_one_printable_line(tmp_path):
    header = {"producer": "callpin", "rules": [["card", "[A-\x01]"]], "meta": {}}
    trailer = struct.pack(">BBQQ", 0xD8, 0x7F, 0, xxhash.xxh3_64_intdigest(b""))
    path = tmp_path / "bad-rule.cpin"
    path.write_bytes(b"CPIN\x01\x00" + msgpack.packb(header) + trailer)
    for command in ("show", "verify"):
        result = run(command, path)
        assert_one_line_error(result, containing="malformed header")
        assert result.stderr.rstrip("\n").isprintable()
        assert "A-\\x01" in result.stderr


@pytest.mark.parametrize("bad", BAD)
def test_show_of_an_unreadable_log_is_a_one_line_error(bad_inputs, bad):
    path, words = bad_inputs[bad]
    assert_one_line_error(run("show", path), containing=words)


def test_show_with_a_bad_format_is_a_one_line_error(logs):
    assert_one_line_error(run("show", "--format", "yaml", logs["base"]), containing="--format")


def test_stats_counts_labels_kinds_and_threads_and_prints_the_fingerprint(tmp_path):
    path = write(tmp_path / "log.cpin", A, A, ret("svc.a", 1), call("svc.b", thread=2), mark("done", True))
    result = run("stats", path)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert f"fingerprint: {load(path).fingerprint}" in lines
    assert "events: 5" in lines
    kinds = lines[lines.index("kinds:") + 1 : lines.index("threads:")]
    threads = lines[lines.index("threads:") + 1 : lines.index("labels:")]
    labels = lines[lines.index("labels:") + 1 :]
    assert kinds == ["  call    3", "  mark    1", "  return  1"]
    assert threads == ["  1  4", "  2  1"]
    assert labels == ["  done   1", "  svc.a  3", "  svc.b  1"]


@pytest.mark.parametrize("bad", BAD)
def test_stats_of_an_unreadable_log_is_a_one_line_error(bad_inputs, bad):
    path, words = bad_inputs[bad]
    assert_one_line_error(run("stats", path), containing=words)


def test_verify_of_good_logs_exits_0(logs):
    result = run("verify", logs["base"], logs["swapped"])
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        f"ok: {logs['base']}: 3 events, fingerprint {load(logs['base']).fingerprint}",
        f"ok: {logs['swapped']}: 3 events, fingerprint {load(logs['swapped']).fingerprint}",
    ]


@pytest.mark.parametrize("bad", BAD)
def test_verify_reports_a_bad_log_in_one_line_and_still_checks_the_others(logs, bad_inputs, bad):
    path, words = bad_inputs[bad]
    result = run("verify", logs["base"], path)
    assert result.exit_code == 2
    assert result.stdout.startswith(f"ok: {logs['base']}")
    assert len(result.stderr.splitlines()) == 1
    assert words in result.stderr


def test_verify_decodes_every_event(tmp_path):
    # A well-formed file (trailer and fingerprint agree) whose event says thread 0.
    unreadable = b"\x98\x00\xa5svc.z\x90\x80\xc0\xc0\x00\x00"
    path = tmp_path / "log.cpin"
    path.write_bytes(log_bytes([*frames_of(A), unreadable], rules=DEFAULT_RULES))
    assert_one_line_error(run("verify", path), containing="event 1 is malformed")


def test_verify_needs_a_log():
    assert_one_line_error(run("verify"), containing="Missing argument")


# ---------------------------------------------------------------------------
# normalize.

# Raw values a recorder would meet: a uuid, a timestamp in a string, an address in a repr.
RAW = [
    call("svc.get", "order 123e4567-e89b-12d3-a456-426614174000 at 2024-05-01T10:00:00Z"),
    call("svc.put", "123e4567-e89b-12d3-a456-426614174000", when="2024-05-02 11:00:00"),
    ret("svc.put", "<Conn at 0x7f3a2b4c5d6e>"),
]


def test_normalize_gives_the_bytes_of_normalizing_at_record_time(tmp_path):
    raw = write(tmp_path / "raw.cpin", *RAW, rules=NO_RULES)
    result = run("normalize", raw, tmp_path / "out.cpin")
    assert result.exit_code == 0
    recorded = log_bytes(frames_of(*RAW, rules=DEFAULT_RULES), rules=DEFAULT_RULES)
    assert (tmp_path / "out.cpin").read_bytes() == recorded


def test_normalize_with_chosen_rules_adds_them_to_the_log_rules(tmp_path):
    raw = write(tmp_path / "raw.cpin", *RAW, rules=RuleSet.named(["uuid"]))
    result = run("normalize", "--rule", "timestamp", raw, tmp_path / "out.cpin")
    assert result.exit_code == 0
    both = RuleSet.named(["uuid", "timestamp"])
    assert (tmp_path / "out.cpin").read_bytes() == log_bytes(frames_of(*RAW, rules=both), rules=both)


def test_normalize_with_a_user_rule(tmp_path):
    raw = write(tmp_path / "raw.cpin", call("svc.get", "order-77"), rules=NO_RULES)
    assert run("normalize", "--rule", r"order=order-\d+", raw, tmp_path / "out.cpin").exit_code == 0
    assert load(tmp_path / "out.cpin")[0].args == ("<order:1>",)


def test_normalize_leaves_its_input_untouched(tmp_path):
    raw = write(tmp_path / "raw.cpin", *RAW, rules=NO_RULES)
    before = (tmp_path / "raw.cpin").read_bytes()
    run("normalize", raw, tmp_path / "out.cpin")
    assert (tmp_path / "raw.cpin").read_bytes() == before


def test_normalize_in_place_when_given_the_same_path_twice(tmp_path):
    raw = write(tmp_path / "raw.cpin", *RAW, rules=NO_RULES)
    assert run("normalize", raw, raw).exit_code == 0
    assert load(raw).rules == DEFAULT_RULES
    assert [name for name in os.listdir(tmp_path)] == ["raw.cpin"]


def test_normalize_refuses_to_overwrite_its_input_under_another_name(tmp_path):
    raw = write(tmp_path / "raw.cpin", *RAW, rules=NO_RULES)
    before = (tmp_path / "raw.cpin").read_bytes()
    os.link(raw, tmp_path / "alias.cpin")
    assert_one_line_error(run("normalize", raw, tmp_path / "alias.cpin"), containing="under another name")
    assert (tmp_path / "raw.cpin").read_bytes() == before


@pytest.mark.parametrize("bad", BAD)
def test_normalize_of_an_unreadable_log_writes_nothing(tmp_path, bad_inputs, bad):
    path, words = bad_inputs[bad]
    assert_one_line_error(run("normalize", path, tmp_path / "out.cpin"), containing=words)
    assert not (tmp_path / "out.cpin").exists()


@pytest.mark.parametrize(
    ("rule", "words"),
    [("color", "unknown rule 'color'"), ("Bad=x", "must match"), ("x=(", "invalid")],
)
def test_normalize_with_a_bad_rule_is_a_one_line_error(tmp_path, rule, words):
    raw = write(tmp_path / "raw.cpin", *RAW, rules=NO_RULES)
    assert_one_line_error(run("normalize", "--rule", rule, raw, tmp_path / "out.cpin"), containing=words)


def test_normalize_into_a_folder_is_a_one_line_error(tmp_path):
    raw = write(tmp_path / "raw.cpin", *RAW, rules=NO_RULES)
    folder = tmp_path / "folder"
    folder.mkdir()
    assert_one_line_error(run("normalize", raw, folder), containing=f"callpin: {folder}: ")
    assert sorted(os.listdir(tmp_path)) == ["folder", "raw.cpin"]


@pytest.mark.skipif(not shutil.which("bash"), reason="process substitution needs bash")
def test_diff_reads_a_log_from_a_pipe(logs):
    # `<(...)` hands callpin a pipe, which can be read once and never from its end.
    command = '"$PYTHON" -m callpin diff <(cat "$OLD") "$NEW"'
    env = {**os.environ, "PYTHON": sys.executable, "OLD": str(logs["base"]), "NEW": str(logs["swapped"])}
    done = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    assert "2 differences: 2 moved" in done.stdout
    assert done.stdout.startswith("old: /dev/fd/")


def test_show_stats_and_json_headers_give_each_rules_pattern(tmp_path):
    rules = DEFAULT_RULES.with_rules([rule(r"T-[0-9]+", "ticket")])
    path = write(tmp_path / "log.cpin", call("svc.a", "T-1"), rules=rules)
    shown = run("show", path)
    assert shown.stdout.splitlines()[0].endswith("rules: uuid, timestamp, address, redact, tmp, ticket=T-[0-9]+")
    stats = run("stats", path).stdout.splitlines()
    patterns = stats[stats.index("rule patterns:") + 1 : stats.index("kinds:")]
    assert "  ticket     text: T-[0-9]+" in patterns
    assert any(line.startswith("  uuid       text: (?<![0-9A-Za-z])[0-9A-Fa-f]{8}-") for line in patterns)
    assert any(line.strip().startswith("keys: (?<![a-z0-9])(?:authorization|auth|") for line in patterns)
    described = json.loads(run("show", "--format", "json", path).stdout)["rule_patterns"]
    assert described[-1] == {"name": "ticket", "kind": "text", "builtin": False, "pattern": "T-[0-9]+"}
    assert [one["name"] for one in described] == ["uuid", "timestamp", "address", "redact", "tmp", "ticket"]
