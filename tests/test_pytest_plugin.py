"""The plugin's session and report; pytest runs are in tests/integration/plugin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from callpin.pytest_plugin import (
    Claim,
    PinReport,
    PinSession,
)


def report(**changes):
    fields = dict(
        mode="check",
        outcomes={"written": [], "updated": [], "drifted": [], "missing": []},
        unchanged=0,
        notes=[],
        partial=None,
        unused=[],
        pruned=[],
        prune=False,
        strict=False,
    )
    fields.update(changes)
    return PinReport(**fields)


def test_the_report_counts_then_notes_then_unused():
    lines = list(
        report(
            outcomes={
                "written": ["b/new.cpin"],
                "updated": [],
                "drifted": [],
                "missing": ["b/x.cpin"],
            },
            unchanged=2,
            notes=["wrote b/new.cpin (1 event)"],
            unused=["b/old.cpin"],
        ).lines()
    )
    assert lines == [
        "check mode: 1 written, 0 updated, 0 drifted, 1 missing, 2 unchanged",
        "wrote b/new.cpin (1 event)",
        "write the missing baselines with --callpin-mode=new",
        "their received logs wait beside them: callpin review accepts or rejects each",
        "1 unused baseline:",
        "  b/old.cpin",
        "remove with --callpin-prune",
    ]


def test_strict_fails_only_while_unused_baselines_remain():
    assert report(strict=True, unused=["b/old.cpin"]).fails
    assert not report(strict=True, unused=["b/old.cpin"], pruned=["b/old.cpin"]).fails
    assert not report(strict=False, unused=["b/old.cpin"]).fails
    assert not report(strict=True).fails


def test_a_shared_baseline_is_listed_and_fails_the_run():
    shared = "b/t/test_x.cpin is the baseline of both t.py::test_x and t.py::test_y (pin 'x')"
    clashing = report(shared=[shared])
    assert clashing.fails
    assert list(clashing.lines())[1] == f"{shared}: the run fails; give one of the pins a name"
    assert clashing.as_json()["shared"] == [shared]
    assert not report().fails


def shown(key):
    return f"baselines/{key}"


@pytest.mark.parametrize(
    ("held", "claim", "clash"),
    [
        (("t/a.cpin", "t.py::a", None), ("t/a.cpin", "t.py::a", None), None),
        (("t/a-x.cpin", "t.py::a", "x"), ("t/a-x.cpin", "t.py::a", "x"), None),
        (
            ("t/a-b.cpin", "t.py::a", "b"),
            ("t/a-b.cpin", "t.py::a-b", None),
            "baselines/t/a-b.cpin is the baseline of both t.py::a (pin 'b') and t.py::a-b",
        ),
        (
            ("t/Test_a.cpin", "t.py::Test_a", None),
            ("t/test_A.cpin", "t.py::test_A", None),
            "baselines/t/Test_a.cpin of t.py::Test_a and baselines/t/test_A.cpin of t.py::test_A "
            "differ only in case (one file on macOS and Windows)",
        ),
    ],
)
def test_two_claims_on_one_file_clash_unless_they_are_one_pin(held, claim, clash):
    assert Claim(*claim).clash(Claim(*held), shown) == clash


class Report:
    """What the controller reads of a test report."""

    def __init__(self, nodeid, *events):
        self.nodeid = nodeid
        self.user_properties = [("callpin", json.dumps(event)) for event in events]
        self.failed = self.skipped = False


def session(tmp_path):
    return PinSession(
        mode="check",
        root=tmp_path / "baselines",
        rootdir=tmp_path,
        prune=False,
        strict=False,
        report_file=None,
        dir_option=None,
    )


def test_the_controller_finds_a_baseline_claimed_on_two_workers(tmp_path):
    pins = session(tmp_path)
    same = {"key": "t/test_a-b.cpin", "outcome": "same", "note": None}
    pins.absorb(Report("t.py::test_a[a]", {**same, "name": "b"}))
    pins.absorb(Report("t.py::test_a[a]", {**same, "name": "b"}))  # the teardown report repeats it
    assert pins.shared == []
    pins.absorb(Report("t.py::test_a[a-b]", {**same, "name": None}))
    pins.absorb(Report("t.py::test_a[a-b]", {**same, "name": None}))
    assert pins.shared == [
        "baselines/t/test_a-b.cpin is the baseline of both t.py::test_a[a] (pin 'b') and t.py::test_a[a-b]"
    ]
    assert pins.verdict(pytest.ExitCode.OK).fails


def test_the_controller_finds_baselines_that_differ_only_in_case(tmp_path):
    pins = session(tmp_path)
    pins.absorb(Report("t.py::test_A", {"key": "t/test_A.cpin", "name": None, "outcome": "same", "note": None}))
    pins.absorb(Report("t.py::test_a", {"key": "t/test_a.cpin", "name": None, "outcome": "same", "note": None}))
    assert pins.shared == [
        "baselines/t/test_A.cpin of t.py::test_A and baselines/t/test_a.cpin of t.py::test_a "
        "differ only in case (one file on macOS and Windows)"
    ]


def test_the_plugin_is_registered_as_a_pytest11_entry_point():
    from importlib.metadata import entry_points

    (found,) = [point for point in entry_points(group="pytest11") if point.name == "callpin"]
    assert found.value == "callpin.pytest_plugin"
    assert Path(found.load().__file__).name == "pytest_plugin.py"
