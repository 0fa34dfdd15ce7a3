"""pin(): a recording compared with its baseline, the modes and the CI policy."""

from __future__ import annotations

import os

import pytest

import callpin
from callpin.errors import ModeRefused, UsageError
from callpin.pinning import MODE_VARIABLE, ci_active, resolve_mode


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
