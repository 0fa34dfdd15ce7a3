"""The file names callpin makes: baseline paths of tests and the names of exported logs."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import pytest

from callpin.names import baseline_path, baseline_stem, output_name, owned

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
    ("nodeid", "collector", "file", "expected"),
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
def test_ownership_of_a_baseline(nodeid, collector, file, expected):
    assert owned(nodeid, tuple(file.split("/")), collector=collector) is expected


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


@pytest.mark.parametrize(
    ("source", "label", "expected"),
    [
        ("renew.cpin", None, "renew.cpin"),
        ("baselines/tests/test_x/test_y.cpin", None, "baselines/tests/test_x/test_y.cpin"),
        ("/tmp/pytest-of-me/pytest-9/test_y0/out.cpin", None, "test_y0/out.cpin"),
        ("../logs/./renew", None, "logs/renew.cpin"),
        # A part that had to be cleaned carries a hash of what it was, as a baseline's does.
        ("baselines/test x/.hidden[1].cpin", None, "baselines/test_x-7caebaa4/hidden_1_-d1cdfcb1.cpin"),
        ("/", None, "recording.cpin"),
        (
            None,
            "examples.renewals.billing.charge_card",
            "examples.renewals.billing.charge_card.cpin",
        ),
        (None, None, "recording.cpin"),
    ],
)
def test_output_name_rule(source, label, expected):
    assert output_name(source, label) == expected


def test_clipped_names_of_different_sources_differ():
    assert output_name(None, "x" * 300 + "1") != output_name(None, "x" * 300 + "2")
    assert len(output_name(None, "x" * 300)) == len("x" * 91 + "-12345678.cpin")
