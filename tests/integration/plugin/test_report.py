"""The end-of-run report: the terminal section (only when there is news) and --callpin-report."""

from __future__ import annotations

import json
import shutil

import pytest

from .project import baselines, module_source, pinned_test, run

pytest_plugins = ["pytester"]


@pytest.fixture
def mixed(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """Something of everything: an unchanged, a drifted, a missing and an unused baseline."""
    project.makepyfile(test_shop=module_source(pinned_test("test_same"), pinned_test("test_drifts")))
    run(project, "--callpin-mode=new").assert_outcomes(passed=2)
    project.makepyfile(
        test_shop=module_source(
            pinned_test("test_same"),
            """
def test_drifts(callpin, monkeypatch):
    monkeypatch.setenv("SHOP_ORDER", "receipt-first")
    with callpin.pin(spy=["collab.charge", "collab.receipt"]):
        shop.renew()
""",
            pinned_test("test_new"),
        )
    )
    shutil.copy(
        project.path / "baselines/test_shop/test_same.cpin",
        project.path / "baselines/test_shop/test_old.cpin",
    )
    return project


def test_the_terminal_section_counts_and_lists(mixed):
    result = run(mixed)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.re_match_lines(
        [
            r"^=+ callpin =+$",
            r"^check mode: 0 written, 0 updated, 1 drifted, 1 missing, 1 unchanged$",
            r"^drifted baselines/test_shop/test_drifts\.cpin: "
            r"2 differences: 2 moved, 0 missing, 0 extra, 0 changed$",
            r"^write the missing baselines with --callpin-mode=new$",
            r"^1 unused baseline:$",
            r"^  baselines/test_shop/test_old\.cpin$",
            r"^remove with --callpin-prune$",
            r"^=+ short test summary info =+$",
        ]
    )


def test_the_json_report_lists_every_outcome(mixed, monkeypatch):
    monkeypatch.chdir(mixed.mkdir("elsewhere"))
    run(mixed, "--callpin-report=out/callpin.json", "..")
    report = json.loads((mixed.path / "elsewhere" / "out" / "callpin.json").read_text())
    assert report == {
        "mode": "check",
        "written": [],
        "updated": [],
        "drifted": ["baselines/test_shop/test_drifts.cpin"],
        "missing": ["baselines/test_shop/test_new.cpin"],
        "unchanged": 1,
        "full_run": True,
        "partial_reason": None,
        "unused": ["baselines/test_shop/test_old.cpin"],
        "pruned": [],
        "shared": [],
    }


def test_the_json_report_of_a_partial_run_writing_baselines(mixed):
    run(
        mixed,
        "--callpin-update",
        "--callpin-prune",
        "--callpin-report=callpin.json",
        "-k",
        "new or drifts",
    )
    report = json.loads((mixed.path / "callpin.json").read_text())
    assert report == {
        "mode": "update",
        "written": ["baselines/test_shop/test_new.cpin"],
        "updated": ["baselines/test_shop/test_drifts.cpin"],
        "drifted": [],
        "missing": [],
        "unchanged": 0,
        "full_run": False,
        "partial_reason": "-k selects part of the suite",
        "unused": [],
        "pruned": [],
        "shared": [],
    }


def test_the_json_report_names_what_was_pruned(mixed):
    run(mixed, "--callpin-mode=new", "--callpin-prune", "--callpin-report=callpin.json")
    report = json.loads((mixed.path / "callpin.json").read_text())
    assert (report["written"], report["unused"], report["pruned"]) == (
        ["baselines/test_shop/test_new.cpin"],
        ["baselines/test_shop/test_old.cpin"],
        ["baselines/test_shop/test_old.cpin"],
    )


def test_no_section_and_no_files_when_no_test_uses_callpin(project):
    project.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = run(project)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.no_fnmatch_line("*callpin ==*")
    result.stdout.no_fnmatch_line("*mode:*")
    assert not (project.path / "baselines").exists()


def test_no_section_for_a_partial_run_that_used_no_pin(project):
    project.makepyfile(test_plain="def test_plain():\n    pass\n\ndef test_other():\n    pass\n")
    (project.path / "baselines").mkdir()
    (project.path / "baselines" / "test_old.cpin").write_bytes(b"")
    result = run(project, "-k", "plain")
    result.stdout.no_fnmatch_line("*callpin ==*")


def test_a_section_for_unused_baselines_even_when_no_test_uses_callpin(project):
    project.makepyfile(test_plain="def test_plain():\n    pass\n")
    (project.path / "baselines").mkdir()
    (project.path / "baselines" / "test_old.cpin").write_bytes(b"")
    result = run(project)
    result.stdout.fnmatch_lines(
        [
            "*= callpin =*",
            "check mode: 0 written, 0 updated, 0 drifted, 0 missing, 0 unchanged",
            "1 unused baseline:",
            "  baselines/test_old.cpin",
        ]
    )
    assert baselines(project) == ["baselines/test_old.cpin"]
