"""A form registered in a test's body holds for that test, not for the tests after it."""

from __future__ import annotations

import pytest

import callpin

from .project import run

pytest_plugins = ["pytester"]

REGISTERS_THEN_PINS = """
import collab
import callpin as package

class Cents:
    def __init__(self, value):
        self.value = value

KEPT = package.register(type("Kept", (), {}), lambda kept: "kept")  # at import: for every test

def test_a_registers_a_form(callpin):
    callpin.register(Cents, lambda cents: cents.value)
    with callpin.pin(spy=["collab.charge"]):
        collab.charge("card_A", Cents(5))

def test_b_pins_the_same_call(callpin):
    with callpin.pin(spy=["collab.charge"]):
        collab.charge("card_A", Cents(5))
    assert KEPT.cls in package.forms.registered_forms()
"""


def test_a_form_registered_in_a_test_is_undone_when_it_ends(project: pytest.Pytester):
    project.makepyfile(test_forms=REGISTERS_THEN_PINS)
    run(project, "--callpin-mode=new").assert_outcomes(passed=2)
    folder = project.path / "baselines" / "test_forms"
    (registered,) = callpin.load(folder / "test_a_registers_a_form.cpin")
    (by_state,) = callpin.load(folder / "test_b_pins_the_same_call.cpin")
    assert registered.args[1] == callpin.Custom("test_forms.Cents", 5)
    assert by_state.args[1] == callpin.ObjectState("test_forms.Cents", 1, (("value", 5),))
    # The second test's log is the same run alone as after the first.
    run(project, "test_forms.py::test_b_pins_the_same_call").assert_outcomes(passed=1)
    run(project).assert_outcomes(passed=2)
