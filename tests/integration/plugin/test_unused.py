"""Unused baselines: found by full runs only, never a skipped test's; pruning; strict."""

from __future__ import annotations

import shutil

import pytest

from .project import baselines, module_source, pinned_test, run

pytest_plugins = ["pytester"]

USED = [
    "baselines/test_more/test_other.cpin",
    "baselines/test_shop/test_refund.cpin",
    "baselines/test_shop/test_renew.cpin",
]
UNUSED = ["baselines/test_removed/test_x.cpin", "baselines/test_shop/test_gone.cpin"]


@pytest.fixture
def suite(project: pytest.Pytester) -> pytest.Pytester:
    """Three pinned tests and their baselines, two unused baselines, and a non-baseline file."""
    project.makepyfile(
        test_shop=module_source(pinned_test("test_renew"), pinned_test("test_refund")),
        test_more=module_source(pinned_test("test_other")),
    )
    run(project, "--callpin-mode=new").assert_outcomes(passed=3)
    for stray in UNUSED:
        (project.path / stray).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(project.path / USED[0], project.path / stray)
    (project.path / "baselines" / "MANIFEST").write_text("kept\n")
    return project


def unused_lines(paths: list[str]) -> list[str]:
    return [
        f"{len(paths)} unused baseline{'s' if len(paths) != 1 else ''}:",
        *(f"  {p}" for p in paths),
    ]


def test_a_full_run_lists_the_baselines_no_test_used(suite):
    result = run(suite)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "check mode: 0 written, 0 updated, 0 drifted, 0 missing, 3 unchanged",
            *unused_lines(UNUSED),
            "remove with --callpin-prune",
        ]
    )


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        (["-k", "renew"], "-k selects part of the suite"),
        (["-m", "not slow"], "-m selects part of the suite"),
        (["--deselect", "test_more.py::test_other"], "--deselect selects part of the suite"),
        (["--ignore", "test_more.py"], "--ignore selects part of the suite"),
        (["--lf"], "--lf selects part of the suite"),
        (["test_shop.py::test_renew"], "a test id on the command line selects part of the suite"),
        (["test_shop.py"], "the paths on the command line are part of the suite"),
    ],
    ids=["-k", "-m", "deselect", "ignore", "lf", "node-id", "path"],
)
def test_a_partial_run_neither_lists_nor_prunes_unused_baselines(suite, arguments, reason):
    result = run(suite, "--callpin-prune", *arguments)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([f"unused baselines not checked, nothing pruned: not a full run ({reason})"])
    result.stdout.no_fnmatch_line("*unused baseline*:")
    assert baselines(suite) == sorted([*USED, *UNUSED, "baselines/MANIFEST"])


def test_a_run_naming_the_whole_suite_is_a_full_run(suite):
    result = run(suite, ".")
    result.stdout.fnmatch_lines(unused_lines(UNUSED))


def test_deselection_by_another_plugin_makes_the_run_partial(suite):
    suite.makeconftest("""
def pytest_collection_modifyitems(config, items):
    dropped = [item for item in items if item.name == "test_other"]
    items[:] = [item for item in items if item.name != "test_other"]
    config.hook.pytest_deselected(items=dropped)
""")
    result = run(suite, "--callpin-prune")
    result.stdout.fnmatch_lines(
        [
            "unused baselines not checked, nothing pruned: not a full run (tests were deselected)",
        ]
    )
    assert "baselines/test_more/test_other.cpin" in baselines(suite)


# Ways test_refund can end without reaching its pin; its baseline is still its own.
NOT_REACHING_THE_PIN = {
    "skip-marker": '@pytest.mark.skip(reason="later")\n' + pinned_test("test_refund"),
    "skip-call": """
def test_refund(callpin):
    pytest.skip("later")
""",
    "skipif": '@pytest.mark.skipif(True, reason="not here")\n' + pinned_test("test_refund"),
    "xfail": """
@pytest.mark.xfail(reason="known", strict=True)
def test_refund(callpin):
    raise RuntimeError("before the pin")
""",
    "failed-before-pin": """
def test_refund(callpin):
    assert False, "broke before the pin"
""",
    "setup-error": """
@pytest.fixture
def broken():
    raise RuntimeError("no database")

def test_refund(callpin, broken):
    pass
""",
}


@pytest.mark.parametrize("source", NOT_REACHING_THE_PIN.values(), ids=NOT_REACHING_THE_PIN.keys())
def test_the_baseline_of_a_test_that_did_not_reach_its_pin_is_not_unused(suite, source):
    suite.makepyfile(test_shop=module_source(pinned_test("test_renew"), source))
    result = run(suite, "--callpin-prune")
    result.stdout.fnmatch_lines(["pruned 2 unused baselines:", *unused_lines(UNUSED)[1:]])
    assert baselines(suite) == sorted([*USED, "baselines/MANIFEST"])


def test_the_baseline_of_a_removed_test_is_unused(suite):
    suite.makepyfile(test_shop=module_source(pinned_test("test_renew")))
    result = run(suite)
    result.stdout.fnmatch_lines(unused_lines(sorted(["baselines/test_shop/test_refund.cpin", *UNUSED])))


def test_a_test_that_failed_between_two_pins_keeps_both_baselines(suite):
    suite.makepyfile(
        test_shop=module_source(
            pinned_test("test_renew"),
            """
def test_refund(callpin):
    with callpin.pin("first", spy=["collab.charge"]):
        shop.renew()
    with callpin.pin("second", spy=["collab.receipt"]):
        shop.renew()
""",
        )
    )
    run(suite, "--callpin-mode=new").assert_outcomes(passed=3)
    suite.makepyfile(
        test_shop=module_source(
            pinned_test("test_renew"),
            """
def test_refund(callpin):
    with callpin.pin("first", spy=["collab.charge"]):
        shop.renew()
    assert False, "broke between the pins"
""",
        )
    )
    result = run(suite)
    result.stdout.fnmatch_lines(unused_lines(UNUSED))
    assert "test_refund-second.cpin" not in result.stdout.str()


def test_the_baselines_of_a_skipped_module_are_not_unused(suite):
    suite.makepyfile(test_more='import pytest\npytest.skip("no gateway", allow_module_level=True)\n')
    result = run(suite)
    result.stdout.fnmatch_lines(unused_lines(UNUSED))


def test_prune_removes_exactly_the_unused_baselines_and_their_empty_folders(suite):
    result = run(suite, "--callpin-prune")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["pruned 2 unused baselines:", *unused_lines(UNUSED)[1:]])
    assert baselines(suite) == sorted([*USED, "baselines/MANIFEST"])
    assert not (suite.path / "baselines" / "test_removed").exists()
    run(suite).stdout.no_fnmatch_line("*unused baseline*")


def test_strict_fails_a_full_run_with_unused_baselines(suite):
    result = run(suite, "--callpin-strict")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["2 unused baselines (--callpin-strict: the run fails):"])


@pytest.mark.parametrize("arguments", [["--callpin-prune"], ["-k", "renew"]], ids=["pruned", "partial"])
def test_strict_passes_when_nothing_unused_is_left_or_nothing_was_checked(suite, arguments):
    assert run(suite, "--callpin-strict", *arguments).ret == pytest.ExitCode.OK


def test_strict_passes_a_full_run_without_unused_baselines(suite):
    for stray in UNUSED:
        (suite.path / stray).unlink()
    assert run(suite, "--callpin-strict").ret == pytest.ExitCode.OK


def test_collection_errors_make_the_run_partial(suite):
    suite.makepyfile(test_broken="def test_(:\n")
    result = run(suite, "--continue-on-collection-errors", "--callpin-prune")
    result.stdout.fnmatch_lines(
        [
            "unused baselines not checked, nothing pruned: not a full run (collection errors)",
        ]
    )
    assert "baselines/test_shop/test_gone.cpin" in baselines(suite)


def test_a_run_stopped_by_a_failure_is_partial(suite, monkeypatch):
    monkeypatch.setenv("SHOP_ORDER", "receipt-first")
    result = run(suite, "-x", "--callpin-prune")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "unused baselines not checked, nothing pruned: not a full run (the run stopped early)",
        ]
    )
    assert "baselines/test_shop/test_gone.cpin" in baselines(suite)
