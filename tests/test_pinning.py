"""pin(): a recording compared with its baseline, the modes and the CI policy."""

from __future__ import annotations

import os
import sys

import pytest

import callpin
from callpin.errors import ModeRefused, UsageError
from callpin.names import output_name
from callpin.pinning import MODE_VARIABLE, ci_active, observe, resolve_mode, unobserve


@pytest.fixture
def billing(make_module):
    return make_module("cp_billing", "def echo(value):\n    return value\n")


def test_pin_is_public_and_writes_then_compares_as_the_readme_shows(billing, tmp_path):
    path = tmp_path / "baselines" / "renew.cpin"
    assert "pin" in callpin.__all__
    with callpin.pin(path, spy="cp_billing.echo", mode="new"):
        billing.echo(1)
    with callpin.pin(path, spy="cp_billing.echo", mode="check"):
        billing.echo(1)
    with pytest.raises(callpin.Drift):
        with callpin.pin(path, spy="cp_billing.echo", mode="check"):
            billing.echo(2)
    assert [e.args for e in callpin.load(path)] == [(1,)]


def test_pin_is_part_of_the_public_api_as_the_docs_use_it(tmp_path):
    baseline = tmp_path / "renew.cpin"
    manager = callpin.pin(baseline, spy=callpin.target(os.path, "basename"), mode="check")
    assert isinstance(manager, callpin.Pin)
    with pytest.raises(callpin.BaselineMissing, match="no baseline"):
        with manager as rec:
            os.path.basename("/a/b")
    assert [event.label for event in rec.events] == [f"{os.path.__name__}.basename"]


@pytest.mark.parametrize("value", ["1", "true", "yes", "anything"])
def test_ci_is_active_when_CI_is_set_to_a_true_value(value, monkeypatch):
    monkeypatch.setenv("CI", value)
    assert ci_active()


@pytest.mark.parametrize("value", ["", "0", "false", "No", " off "])
def test_ci_is_not_active_when_CI_is_unset_empty_or_false(value, monkeypatch):
    monkeypatch.setenv("CI", value)
    assert not ci_active()
    monkeypatch.delenv("CI")
    assert not ci_active()


def test_the_mode_is_the_argument_else_the_variable_else_check(monkeypatch):
    assert resolve_mode(None) == "check"
    monkeypatch.setenv(MODE_VARIABLE, "new")
    assert resolve_mode(None) == "new"
    assert resolve_mode("update") == "update"


def test_an_unknown_mode_names_where_it_came_from(monkeypatch):
    with pytest.raises(UsageError, match=r"^mode='overwrite' is not a mode \(choose from check, new, update\)$"):
        resolve_mode("overwrite")
    monkeypatch.setenv(MODE_VARIABLE, "overwrite")
    with pytest.raises(UsageError, match=r"^CALLPIN_MODE='overwrite' is not a mode"):
        resolve_mode(None)


@pytest.mark.parametrize("mode", ["new", "update"])
def test_a_writing_mode_is_refused_under_ci_and_check_is_not(mode, monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(ModeRefused, match=rf"^mode '{mode}' writes baselines and is refused under CI \(CI=true\)"):
        resolve_mode(mode)
    assert resolve_mode("check") == "check"


def test_a_pin_under_ci_refuses_a_writing_mode_before_recording(billing, tmp_path, monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(ModeRefused):
        callpin.pin(tmp_path / "renew.cpin", spy="cp_billing.echo", mode="new")
    assert not os.path.exists(tmp_path / "renew.cpin")


# ---------------------------------------------------------------------------
# Received logs and the drift's message.


def _pin_echo(path, values, **options):
    module = sys.modules["cp_billing"]
    with callpin.pin(path, spy="cp_billing.echo", **options) as rec:
        for value in values:
            module.echo(value)
    return rec


def test_a_drifted_pin_leaves_one_received_log_with_the_bytes_an_export_gets(billing, tmp_path, monkeypatch):
    path = tmp_path / "baselines" / "renew.cpin"
    _pin_echo(path, [1], mode="new")
    monkeypatch.setenv("CALLPIN_OUTPUT_DIR", str(tmp_path / "out"))
    with pytest.raises(callpin.Drift) as raised:
        _pin_echo(path, [2])
    received = tmp_path / "baselines" / "renew.cpin.received"
    assert sorted(os.listdir(path.parent)) == ["renew.cpin", "renew.cpin.received"]
    exported = tmp_path / "out" / output_name(str(path), None)
    assert received.read_bytes() == exported.read_bytes()
    assert [e.args for e in callpin.load(received)] == [(2,)]
    assert str(received) in str(raised.value)


def test_a_pin_that_passes_again_removes_its_stale_received_log(billing, tmp_path):
    path = tmp_path / "renew.cpin"
    _pin_echo(path, [1], mode="new")
    with pytest.raises(callpin.Drift):
        _pin_echo(path, [2])
    assert (tmp_path / "renew.cpin.received").exists()
    _pin_echo(path, [1])
    assert os.listdir(tmp_path) == ["renew.cpin"]


def test_a_missing_baseline_leaves_its_received_log_and_says_how_to_accept_it(billing, tmp_path):
    path = tmp_path / "renew.cpin"
    with pytest.raises(callpin.BaselineMissing) as raised:
        _pin_echo(path, [1])
    assert raised.value.received == str(path) + ".received"
    assert os.listdir(tmp_path) == ["renew.cpin.received"]
    assert f"or accept its received log {path}.received with: callpin review --baselines {tmp_path}" in str(
        raised.value
    )


def test_update_mode_rewrites_the_baseline_and_leaves_no_received_log(billing, tmp_path):
    path = tmp_path / "renew.cpin"
    _pin_echo(path, [1], mode="new")
    with pytest.raises(callpin.Drift):
        _pin_echo(path, [2])
    pinned = _pin_echo(path, [2], mode="update")
    assert os.listdir(tmp_path) == ["renew.cpin"]
    assert [e.args for e in callpin.load(path)] == [(2,)]
    assert pinned is not None


def test_the_received_log_is_written_under_ci_too(billing, tmp_path, monkeypatch):
    path = tmp_path / "renew.cpin"
    _pin_echo(path, [1], mode="new")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(callpin.Drift) as raised:
        _pin_echo(path, [2])
    assert (tmp_path / "renew.cpin.received").exists()
    assert "(locally: CI only keeps the received log)" in str(raised.value)


def test_a_large_drift_shows_a_bounded_message_that_names_the_rest(billing, tmp_path):
    path = tmp_path / "renew.cpin"
    _pin_echo(path, range(5000), mode="new")
    with pytest.raises(callpin.Drift) as raised:
        _pin_echo(path, [value + 10_000 for value in range(5000)])
    lines = str(raised.value).splitlines()
    assert len(lines) <= 60
    assert "… 4980 more differences not shown" in lines
    assert "counts: the same in both logs for 1 label" in lines
    assert f"all of it: callpin diff {path} {path}.received (add --format html -o drift.html for a page)" in lines
    assert lines[-1].startswith("next: callpin review --baselines ")
    assert len(raised.value.diff.ops) == 5000


def test_diff_lines_zero_shows_every_difference(billing, tmp_path):
    path = tmp_path / "renew.cpin"
    _pin_echo(path, range(100), mode="new")
    with pytest.raises(callpin.Drift) as raised:
        _pin_echo(path, [value + 10_000 for value in range(100)], diff_lines=0)
    assert sum(line.startswith("changed") for line in str(raised.value).splitlines()) == 100


# ---------------------------------------------------------------------------
# A runner of pins (the pytest plugin) and plain pins.


class Runner:
    """A PinObserver as the plugin is one: a run mode and budget, and what it heard."""

    def __init__(self, mode="check", diff_lines=None):
        self.mode = mode
        self.diff_lines = diff_lines
        self.heard = []

    def shown(self, path):
        return os.path.basename(path)

    def command_path(self, path):
        return "relative/" + os.path.basename(path)

    def create_command(self):
        return "pytest test_x.py::test_y --callpin-mode=new"

    def review_command(self):
        return "callpin review --baselines pins"

    def pinned(self, path, outcome, note):
        self.heard.append((os.path.basename(path), outcome))


@pytest.fixture
def runner():
    observer = Runner()
    observe(observer)
    yield observer
    unobserve(observer)


def test_a_plain_pin_follows_the_runs_mode_and_reports_to_it(billing, tmp_path, runner):
    runner.mode = "new"
    _pin_echo(tmp_path / "renew.cpin", [1])
    runner.mode = "check"
    _pin_echo(tmp_path / "renew.cpin", [1])
    assert runner.heard == [("renew.cpin", "written"), ("renew.cpin", "same")]


def test_a_pins_own_mode_wins_over_the_runs(billing, tmp_path, runner):
    _pin_echo(tmp_path / "renew.cpin", [1], mode="new")
    assert runner.heard == [("renew.cpin", "written")]


def test_the_runner_names_the_baseline_and_the_commands_in_messages(billing, tmp_path, runner):
    with pytest.raises(callpin.BaselineMissing) as missing:
        _pin_echo(tmp_path / "renew.cpin", [1])
    assert str(missing.value).splitlines() == [
        "no baseline at renew.cpin; create it with: pytest test_x.py::test_y --callpin-mode=new",
        "or accept its received log renew.cpin.received with: callpin review --baselines pins",
    ]
    _pin_echo(tmp_path / "renew.cpin", [1], mode="new")
    with pytest.raises(callpin.Drift) as drift:
        _pin_echo(tmp_path / "renew.cpin", [2])
    text = str(drift.value)
    assert text.splitlines()[0] == "interactions differ from renew.cpin"
    assert "all of it: callpin diff relative/renew.cpin relative/renew.cpin.received" in text
    assert runner.heard[-1] == ("renew.cpin", "drifted")


def test_nested_runners_report_to_the_innermost_until_it_goes(billing, tmp_path, runner):
    inner = Runner(mode="new")
    observe(inner)
    _pin_echo(tmp_path / "a.cpin", [1])
    unobserve(inner)
    runner.mode = "new"
    _pin_echo(tmp_path / "b.cpin", [1])
    assert inner.heard == [("a.cpin", "written")]
    assert runner.heard == [("b.cpin", "written")]


# ---------------------------------------------------------------------------
# Rules that evolve, and the comparison's options.

VERSION = callpin.rule(r"\d+\.\d+\.\d+", "version")


def test_a_baseline_recorded_with_fewer_rules_passes_when_the_calls_are_the_same(billing, tmp_path):
    path = tmp_path / "renew.cpin"
    with callpin.pin(path, spy="cp_billing.echo", mode="new"):
        billing.echo("lib 1.2.3")
    with callpin.pin(path, spy="cp_billing.echo", mode="check", normalize=callpin.DEFAULT_RULES.with_rules([VERSION])):
        billing.echo("lib 1.2.3")
    with pytest.raises(callpin.Drift):
        with callpin.pin(
            path, spy="cp_billing.echo", mode="check", normalize=callpin.DEFAULT_RULES.with_rules([VERSION])
        ):
            billing.echo("other 1.2.3")


def test_update_with_new_rules_says_whether_a_call_changed(billing, tmp_path):
    path = tmp_path / "renew.cpin"
    rules = callpin.DEFAULT_RULES.with_rules([VERSION])
    with callpin.pin(path, spy="cp_billing.echo", mode="new"):
        billing.echo("lib 1.2.3")
    same = callpin.pin(path, spy="cp_billing.echo", mode="update", normalize=rules)
    with same:
        billing.echo("lib 1.2.3")
    assert same.outcome == "updated"
    assert callpin.load(path).rules == rules
    changed = callpin.pin(path, spy="cp_billing.echo", mode="update", normalize=rules.with_rules([]))
    with changed:
        billing.echo(
            "lib 2.0.0",
        )
        billing.echo("again")
    assert changed.outcome == "updated"
    assert changed.diff is not None and changed.diff.summary["extra"] == 1


def test_update_notes_name_no_call_changed_or_the_changes(billing, tmp_path):
    notes: list[tuple[str, str | None]] = []

    class Observer:
        mode = "update"
        diff_lines = None

        def shown(self, path):
            return os.path.basename(path)

        def pinned(self, path, outcome, note):
            notes.append((outcome, note))

        def command_path(self, path):
            return path

    path = tmp_path / "renew.cpin"
    with callpin.pin(path, spy="cp_billing.echo", mode="new"):
        billing.echo("lib 1.2.3")
    observer = Observer()
    observe(observer)
    try:
        rules = callpin.DEFAULT_RULES.with_rules([VERSION])
        with callpin.pin(path, spy="cp_billing.echo", normalize=rules):
            billing.echo("lib 1.2.3")
        other = callpin.DEFAULT_RULES.with_rules([VERSION, callpin.rule("lib", "name")])
        with callpin.pin(path, spy="cp_billing.echo", normalize=other):
            billing.echo("lib 1.2.3")
            billing.echo("lib 1.2.3")
    finally:
        unobserve(observer)
    assert notes[0] == ("updated", "rewrote renew.cpin with new normalization rules; no call changed")
    assert notes[1][0] == "updated"
    assert notes[1][1].startswith("updated renew.cpin with new normalization rules: 1 difference")


def test_a_rule_under_another_pattern_fails_naming_it_with_both_patterns(billing, tmp_path):
    path = tmp_path / "renew.cpin"
    with callpin.pin(path, spy="cp_billing.echo", mode="new", normalize=callpin.DEFAULT_RULES.with_rules([VERSION])):
        billing.echo("lib 1.2.3")
    other = callpin.DEFAULT_RULES.with_rules([callpin.rule(r"\d+", "version")])
    with pytest.raises(callpin.RulesMismatch) as raised:
        with callpin.pin(path, spy="cp_billing.echo", mode="check", normalize=other):
            billing.echo("lib 1.2.3")
    message = str(raised.value)
    assert "'version' is '\\\\d+\\\\.\\\\d+\\\\.\\\\d+' in one and '\\\\d+' in the other" in message
    assert message.count("'version' is") == 1


def test_pin_compares_with_its_order_and_ignore(billing, tmp_path):
    path = tmp_path / "renew.cpin"
    with callpin.pin(path, spy="cp_billing.echo", mode="new"):
        billing.echo({"id": 1, "at": "monday"})
        billing.echo(2)
    with callpin.pin(path, spy="cp_billing.echo", mode="check", order="none", ignore=["args[0].at"]):
        billing.echo(2)
        billing.echo({"id": 1, "at": "tuesday"})
    with pytest.raises(callpin.Drift):
        with callpin.pin(path, spy="cp_billing.echo", mode="check", ignore=["args[0].at"]):
            billing.echo(2)
            billing.echo({"id": 1, "at": "tuesday"})


def test_pin_refuses_a_bad_order_or_ignore_before_the_block_runs(tmp_path):
    with pytest.raises(UsageError, match="unknown order"):
        callpin.pin(tmp_path / "a.cpin", spy="os.getcwd", order="random")
    with pytest.raises(UsageError, match="cannot ignore"):
        callpin.pin(tmp_path / "a.cpin", spy="os.getcwd", ignore=["label"])
