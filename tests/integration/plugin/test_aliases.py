"""Test code keeps its references: the plugin names collected test modules and conftests."""

from __future__ import annotations

import pytest

from .project import run

pytest_plugins = ["pytester"]

# The recording is opened in a helper module, so the test module is not the opener: only
# the plugin's list of collected test modules keeps its ORIG from being rebound.
HELPER = """
import collab
import shop

def pinned_renew(callpin, look):
    real = collab.charge
    with callpin.pin(spy=["collab.charge"], stub={"collab.charge": lambda *a, **k: real(*a, **k)}) as rec:
        shop.renew()
        look()
    return rec
"""

TEST = """
import collab
import conftest
from helper import pinned_renew

ORIG = collab.charge

def test_renew(callpin):
    seen = []
    rec = pinned_renew(callpin, lambda: seen.append((ORIG, conftest.SAVED, collab.charge)))
    (held, saved, patched), = seen
    assert type(patched).__name__ in ("SpyProxy", "FunctionSpyProxy")  # the C spy's, or the pure-Python one
    assert type(held).__name__ == type(saved).__name__ == "function"
    assert [event.label for event in rec.events] == ["collab.charge"]
"""

CONFTEST = """
import collab

SAVED = collab.charge


"""


def test_collected_test_modules_and_conftests_are_never_rebound(project: pytest.Pytester):
    project.makepyfile(helper=HELPER, test_aliases=TEST, conftest=CONFTEST)
    run(project, "--callpin-mode=new").assert_outcomes(passed=1)
    run(project).assert_outcomes(passed=1)
