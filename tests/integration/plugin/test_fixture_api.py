"""The `callpin` fixture carries the whole public API beside its bound pin and record."""

from __future__ import annotations

import pytest

import callpin

from .project import run

pytest_plugins = ["pytester"]

USES_THE_API = """
import collab
import shop

def test_the_api(callpin):
    rules = callpin.DEFAULT_RULES.with_rules([callpin.rule(r"card_[A-Z]", "card")])
    assert isinstance(rules, callpin.RuleSet)
    charge = callpin.target(collab, "charge")
    with callpin.pin(spy=[charge, "collab.receipt"], normalize=rules) as rec:
        shop.renew()
    assert "<card:1>" in rec.events[0].render()
    assert callpin.Drift.__name__ == "Drift" and callpin.load and callpin.diff and callpin.register
    assert "target" in dir(callpin)
    try:
        callpin.no_such_name
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("an unknown name was found")
"""


def test_the_fixture_exposes_every_public_name(project: pytest.Pytester):
    project.makepyfile(test_api=USES_THE_API)
    run(project, "--callpin-mode=new").assert_outcomes(passed=1)


def test_every_public_name_is_reachable_from_the_fixture():
    from callpin.pytest_plugin import PinFixture

    fixture = PinFixture.__new__(PinFixture)
    for name in callpin.__all__:
        assert getattr(fixture, name) is not None, name
