"""Baseline naming, ownership, the report's lines; pytest runs are in tests/integration/plugin."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path, PurePosixPath

import pytest

from callpin.pytest_plugin import (
    Claim,
    PinReport,
    PinSession,
    _owned,
    baseline_path,
    baseline_stem,
    today,
)

SAFE_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*[A-Za-z0-9_-]$|^[A-Za-z0-9_-]$")


@pytest.mark.parametrize(
    ("nodeid", "stem"),
    [
        ("tests/test_renewals.py::test_renew", ("tests", "test_renewals", "test_renew")),
        ("test_x.py::test_y[1-2]", ("test_x", "test_y-1-2")),
        (
            "tests/test_renewals.py::TestRenew::test_renew[active]",
            ("tests", "test_renewals", "TestRenew.test_renew-active"),
        ),
        ("a/b/test_c.py::TestA::TestB::test_d", ("a", "b", "test_c", "TestA.TestB.test_d")),
        # Cleaned names carry the first 8 hex digits of the xxh3-64 of the original text:
        # fixed values, so a name never changes between runs, machines or versions.
        ("test_x.py::test_y[a::b]", ("test_x", "test_y-a__b-80a74f34")),
        (
            "tests/test_renewals.py::test_renew[a b]",
            ("tests", "test_renewals", "test_renew-a_b-ef9ba058"),
        ),
        (
            "tests/test_x.py::test_y[ünïcødé with spaces/and slashes]",
            ("tests", "test_x", "test_y-_n_c_d__with_spaces_and_slashes-f913fc25"),
        ),
    ],
)
def test_stems_follow_the_test_file_and_name(nodeid, stem):
    assert baseline_stem(nodeid) == stem


@pytest.mark.parametrize(
    "param",
    [
        "../../etc/passwd",
        "/abs",
        "..",
        ".",
        "a\\b",
        "C:",
        "con",
        "x" * 500,
        "\x00nul",
        "tab\t",
        "é",
        "a b",
        "a.",
    ],
)
def test_every_component_is_one_safe_name_inside_the_folder(param, tmp_path):
    nodeid = f"../{param}/test_x.py::test_y[{param}]"
    path = baseline_path(tmp_path, nodeid, name=param)
    relative = PurePosixPath(path.relative_to(tmp_path).as_posix())
    assert ".." not in relative.parts
    for part in relative.parts:
        assert SAFE_NAME.match(part.removesuffix(".cpin")), part
        assert len(part) <= 255
    assert path.resolve().is_relative_to(tmp_path.resolve())


def test_cleaned_names_keep_distinct_ids_apart():
    ids = ["a b", "a_b", "a/b", "a.b", "a-b", "ä b"]
    names = {baseline_stem(f"test_x.py::test_y[{one}]")[-1] for one in ids}
    assert len(names) == len(ids)


def test_long_ids_are_shortened_with_a_hash():
    first = baseline_stem("test_x.py::test_y[" + "a" * 300 + "1]")[-1]
    second = baseline_stem("test_x.py::test_y[" + "a" * 300 + "2]")[-1]
    assert len(first) == len(second) == 100
    assert first != second


def test_a_named_pin_adds_its_name(tmp_path):
    assert baseline_path(tmp_path, "tests/test_x.py::test_y", "charge") == (
        tmp_path / "tests" / "test_x" / "test_y-charge.cpin"
    )
    assert baseline_path(tmp_path, "tests/test_x.py::test_y") == tmp_path / "tests" / "test_x" / "test_y.cpin"


@pytest.mark.parametrize(
    ("nodeid", "collector", "file", "owned"),
    [
        ("t/test_x.py::test_y", False, "t/test_x/test_y.cpin", True),
        ("t/test_x.py::test_y", False, "t/test_x/test_y-second.cpin", True),
        ("t/test_x.py::test_y", False, "t/test_x/test_yz.cpin", False),
        ("t/test_x.py::test_y", False, "t/test_other/test_y.cpin", False),
        ("t/test_x.py::test_y[1]", False, "t/test_x/test_y-1.cpin", True),
        ("t/test_x.py::test_y[1]", False, "t/test_x/test_y-2.cpin", False),
        ("t/test_x.py", True, "t/test_x/anything.cpin", True),
        ("t/test_x.py", True, "t/test_y/anything.cpin", False),
        ("t/test_x.py::TestA", True, "t/test_x/TestA.test_b.cpin", True),
        ("t/test_x.py::TestA", True, "t/test_x/TestAB.test_b.cpin", False),
    ],
)
def test_ownership_of_a_baseline(nodeid, collector, file, owned):
    assert _owned(nodeid, tuple(file.split("/")), collector=collector) is owned


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


def test_today_comes_from_CALLPIN_TODAY(monkeypatch):
    monkeypatch.setenv("CALLPIN_TODAY", "2031-07-04")
    assert today() == dt.date(2031, 7, 4)


def test_the_plugin_is_registered_as_a_pytest11_entry_point():
    from importlib.metadata import entry_points

    (found,) = [point for point in entry_points(group="pytest11") if point.name == "callpin"]
    assert found.value == "callpin.pytest_plugin"
    assert Path(found.load().__file__).name == "pytest_plugin.py"


def test_a_test_file_outside_the_rootdir_does_not_share_a_baseline_with_one_inside():
    outside = baseline_stem("../x/test_a.py::test_b")
    assert outside != baseline_stem("x/test_a.py::test_b")
    assert outside == ("_-482c6323", "x", "test_a", "test_b")


@pytest.mark.parametrize(
    ("reserved", "start"),
    [
        ("CON", "CON"),
        ("con", "con"),
        ("aux", "aux"),
        ("COM1", "COM1"),
        ("lpt9", "lpt9"),
        ("Nul.txt", "Nul_txt"),
        ("PRN.x.y", "PRN_x.y"),
    ],
)
def test_names_windows_reserves_get_a_hash(reserved, start):
    folder, _, test = baseline_stem(f"{reserved}/test_x.py::{reserved}")
    assert re.fullmatch(re.escape(start) + r"-[0-9a-f]{8}", folder)
    assert test == folder
