"""The throw-away project of the plugin tests: two collaborators, code that calls them, runners."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

# Collaborators and the code under test. The order of the two calls and the amount
# come from the environment, so a test changes behaviour between runs without
# editing a module that an in-process run has already imported.
COLLAB = """
def charge(card, amount):
    return {"ok": True}

def receipt(email, amount):
    return "sent"
"""
SHOP = """
import os
import collab

def renew():
    amount = int(os.environ.get("SHOP_AMOUNT", "10"))
    if os.environ.get("SHOP_ORDER") == "receipt-first":
        collab.receipt("ada@example.com", amount)
        collab.charge("card_A", amount)
    else:
        collab.charge("card_A", amount)
        collab.receipt("ada@example.com", amount)
"""
SPY = '["collab.charge", "collab.receipt"]'

# The plugin is loaded through its entry point, as in a user's project; hypothesis'
# plugin is left out because it makes an in-process run many times slower.
QUIET = ("-p", "no:hypothesispytest")


def pinned_test(name: str = "test_renew", *, decorators: str = "") -> str:
    """Source of a test that pins one call of shop.renew()."""
    return textwrap.dedent(
        f"""
        {decorators}
        def {name}(callpin):
            with callpin.pin(spy={SPY}):
                shop.renew()
        """
    )


# test_renew[a] with a pin named "b" and test_renew[a-b] both name test_renew-a-b.cpin.
SHARED_BASELINE = """
@pytest.mark.parametrize("case", ["a", "a-b"])
def test_renew(callpin, case):
    with callpin.pin("b" if case == "a" else None, spy=["collab.charge"]):
        shop.renew()
"""


def module_source(*tests: str) -> str:
    return "import pytest\nimport shop\n" + "".join(tests)


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest in this process, with the plugin as installed."""
    return pytester.runpytest(*QUIET, *args)


def run_subprocess(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest in a child process (what xdist needs)."""
    return pytester.runpytest_subprocess(*QUIET, *args)


def baselines(pytester: pytest.Pytester, folder: str = "baselines") -> list[str]:
    """Every file under the baselines folder, relative to the project, sorted."""
    root = pytester.path / folder
    return sorted(path.relative_to(pytester.path).as_posix() for path in root.rglob("*") if path.is_file())


def read(pytester: pytest.Pytester, relative: str) -> bytes:
    return Path(pytester.path, relative).read_bytes()
