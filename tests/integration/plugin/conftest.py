"""Fixtures of the plugin tests: a clean environment and a throw-away project.

pytester itself is enabled by each test module (`pytest_plugins = ["pytester"]`):
pytest refuses `pytest_plugins` in a conftest below the top level.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from .project import COLLAB, SHOP, module_source, pinned_test, run


@pytest.fixture(autouse=True)
def _plugin_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # The child pytest inherits this process's environment; CI=true (as on CI) would
    # refuse the writing modes these tests exercise.
    for name in (
        "CI",
        "CALLPIN_MODE",
        "CALLPIN_TODAY",
        "CALLPIN_OUTPUT_DIR",
        "CALLPIN_PROBE",
        "SHOP_ORDER",
        "SHOP_AMOUNT",
        "PYTEST_ADDOPTS",
    ):
        monkeypatch.delenv(name, raising=False)
    # Modules are re-imported between in-process runs; a .pyc from an earlier run of
    # the same second and size would be taken for the edited source.
    monkeypatch.setattr(sys, "dont_write_bytecode", True)


@pytest.fixture
def project(pytester: pytest.Pytester) -> Iterator[pytest.Pytester]:
    """A pytester project with collab.py and shop.py importable, and no tests yet."""
    pytester.makepyfile(collab=COLLAB, shop=SHOP)
    pytester.syspathinsert()
    yield pytester


@pytest.fixture
def pinned(project: pytest.Pytester) -> pytest.Pytester:
    """The project with one pinned test whose baseline is written (the shop's renew())."""
    project.makepyfile(test_shop=module_source(pinned_test()))
    run(project, "--callpin-mode=new").assert_outcomes(passed=1)
    return project
