"""Modes: check, new, update; --callpin-update, CALLPIN_MODE, the command line first; CI refusal."""

from __future__ import annotations

import re
import shlex

import pytest

from .project import baselines, module_source, pinned_test, read, run

pytest_plugins = ["pytester"]

BASELINE = "baselines/test_shop/test_renew.cpin"


@pytest.fixture
def shop_test(project: pytest.Pytester) -> pytest.Pytester:
    project.makepyfile(test_shop=module_source(pinned_test()))
    return project


def test_check_mode_fails_a_missing_baseline_with_the_command_that_creates_it(shop_test):
    result = run(shop_test)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E *callpin.errors.BaselineMissing: no baseline at "
            "baselines/test_shop/test_renew.cpin; "
            "create it with: pytest test_shop.py::test_renew --callpin-mode=new",
            "E *or accept its received log baselines/test_shop/test_renew.cpin.received with: callpin review",
        ]
    )
    assert baselines(shop_test) == ["baselines/test_shop/test_renew.cpin.received"]


def test_the_command_for_a_missing_baseline_writes_it(shop_test):
    result = run(shop_test)
    command = result.stdout.str().split("create it with: ", 1)[1].splitlines()[0]
    words = shlex.split(command)
    assert words[0] == "pytest"
    run(shop_test, *words[1:]).assert_outcomes(passed=1)
    assert baselines(shop_test) == [BASELINE]
    assert run(shop_test).ret == pytest.ExitCode.OK


def test_the_command_quotes_a_parametrized_id_for_the_shell(project):
    project.makepyfile(
        test_shop=module_source("""
@pytest.mark.parametrize("case", ["a b"])
def test_renew(callpin, case):
    with callpin.pin(spy=["collab.charge"]):
        shop.renew()
""")
    )
    result = run(project)
    result.stdout.re_match_lines(
        [
            re.escape("E       callpin.errors.BaselineMissing: no baseline at ")
            + r"baselines/test_shop/test_renew-a_b-[0-9a-f]{8}\.cpin; "
            + re.escape("create it with: pytest 'test_shop.py::test_renew[a b]' --callpin-mode=new")
            + "$",
        ]
    )
    command = result.stdout.str().split("create it with: ", 1)[1].splitlines()[0]
    run(project, *shlex.split(command)[1:]).assert_outcomes(passed=1)
    assert run(project).ret == pytest.ExitCode.OK


def test_the_command_names_the_test_from_the_folder_pytest_started_in(project, monkeypatch):
    project.makeini("[pytest]\n")
    # Not `tests`: this process already imported a package of that name.
    tests = project.mkdir("suite")
    (tests / "test_shop.py").write_text(module_source(pinned_test()))
    monkeypatch.chdir(tests)
    result = run(project)
    result.stdout.fnmatch_lines(
        [
            "*no baseline at baselines/suite/test_shop/test_renew.cpin; "
            "create it with: pytest test_shop.py::test_renew --callpin-mode=new",
        ]
    )
    run(project, "test_shop.py::test_renew", "--callpin-mode=new").assert_outcomes(passed=1)
    assert baselines(project) == ["baselines/suite/test_shop/test_renew.cpin"]


def test_the_command_keeps_a_baselines_folder_given_on_the_command_line(shop_test):
    result = run(shop_test, "--callpin-dir=pins")
    result.stdout.fnmatch_lines(
        [
            "*create it with: pytest test_shop.py::test_renew --callpin-mode=new --callpin-dir=pins",
        ]
    )


def test_new_mode_writes_a_missing_baseline(shop_test):
    result = run(shop_test, "--callpin-mode=new")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=1)
    assert baselines(shop_test) == [BASELINE]
    result.stdout.fnmatch_lines(["new mode: 1 written, 0 updated, 0 drifted, 0 missing, 0 unchanged"])


def test_check_mode_passes_when_the_calls_match_and_writes_nothing(shop_test):
    run(shop_test, "--callpin-mode=new")
    before = read(shop_test, BASELINE)
    result = run(shop_test)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["check mode: 0 written, 0 updated, 0 drifted, 0 missing, 1 unchanged"])
    assert read(shop_test, BASELINE) == before


def test_new_mode_does_not_rewrite_a_baseline_that_differs(shop_test, monkeypatch):
    run(shop_test, "--callpin-mode=new")
    before = read(shop_test, BASELINE)
    monkeypatch.setenv("SHOP_ORDER", "receipt-first")
    result = run(shop_test, "--callpin-mode=new")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["E *callpin.errors.Drift: interactions differ from " + BASELINE])
    assert read(shop_test, BASELINE) == before


@pytest.mark.parametrize("option", [["--callpin-mode=update"], ["--callpin-update"]])
def test_update_mode_rewrites_a_baseline_that_differs_and_says_what_changed(shop_test, monkeypatch, option):
    run(shop_test, "--callpin-mode=new")
    before = read(shop_test, BASELINE)
    monkeypatch.setenv("SHOP_ORDER", "receipt-first")
    result = run(shop_test, *option)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "update mode: 0 written, 1 updated, 0 drifted, 0 missing, 0 unchanged",
            f"updated {BASELINE}: 2 differences: 2 moved, 0 missing, 0 extra, 0 changed",
        ]
    )
    assert read(shop_test, BASELINE) != before
    assert run(shop_test).ret == pytest.ExitCode.OK


def test_update_mode_leaves_a_matching_baseline_alone(shop_test):
    run(shop_test, "--callpin-mode=new")
    path = shop_test.path / BASELINE
    stamp = path.stat().st_mtime_ns, path.stat().st_ino
    result = run(shop_test, "--callpin-update")
    result.stdout.fnmatch_lines(["update mode: 0 written, 0 updated, 0 drifted, 0 missing, 1 unchanged"])
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == stamp


def test_update_mode_also_writes_a_missing_baseline(shop_test):
    run(shop_test, "--callpin-update").assert_outcomes(passed=1)
    assert baselines(shop_test) == [BASELINE]


def test_CALLPIN_MODE_chooses_the_mode(shop_test, monkeypatch):
    monkeypatch.setenv("CALLPIN_MODE", "new")
    run(shop_test).assert_outcomes(passed=1)
    assert baselines(shop_test) == [BASELINE]


def test_the_command_line_wins_over_CALLPIN_MODE(shop_test, monkeypatch):
    monkeypatch.setenv("CALLPIN_MODE", "new")
    result = run(shop_test, "--callpin-mode=check")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*BaselineMissing: no baseline at " + BASELINE + "*"])
    assert baselines(shop_test) == [BASELINE + ".received"]


def test_an_unknown_CALLPIN_MODE_is_a_usage_error(shop_test, monkeypatch):
    monkeypatch.setenv("CALLPIN_MODE", "overwrite")
    result = run(shop_test)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: callpin: CALLPIN_MODE='overwrite' is not a mode (choose from check, new, update)",
        ]
    )


@pytest.mark.parametrize(
    ("arguments", "variable", "mode"),
    [
        (["--callpin-mode=new"], None, "new"),
        (["--callpin-update"], None, "update"),
        ([], "update", "update"),
    ],
)
def test_writing_modes_are_refused_under_CI_at_start_up(shop_test, monkeypatch, arguments, variable, mode):
    monkeypatch.setenv("CI", "true")
    if variable:
        monkeypatch.setenv("CALLPIN_MODE", variable)
    result = run(shop_test, *arguments)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            f"ERROR: callpin: mode '{mode}' writes baselines and is refused under CI (CI=true); "
            "refresh baselines locally, review and bless them",
        ]
    )
    assert "collected" not in result.stdout.str()
    assert baselines(shop_test) == []


def test_check_mode_runs_under_CI(shop_test, monkeypatch):
    run(shop_test, "--callpin-mode=new")
    monkeypatch.setenv("CI", "true")
    assert run(shop_test).ret == pytest.ExitCode.OK


@pytest.mark.parametrize("value", ["", "0", "false"])
def test_a_false_CI_does_not_refuse(shop_test, monkeypatch, value):
    monkeypatch.setenv("CI", value)
    run(shop_test, "--callpin-mode=new").assert_outcomes(passed=1)
    assert baselines(shop_test) == [BASELINE]
