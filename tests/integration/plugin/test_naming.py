"""Baseline names: bound to the test, distinct and stable, never outside the folder."""

from __future__ import annotations

import os

from .project import SHARED_BASELINE, baselines, module_source, pinned_test, run

pytest_plugins = ["pytester"]

HOSTILE = [
    "../../escape",
    "/etc/passwd",
    "..",
    "with space",
    "x" * 500,
    "ünïcødé ☃",
    "C:\\windows",
    "tab\there",
]


def test_parametrized_tests_get_distinct_stable_names(project):
    project.makepyfile(
        test_shop=module_source("""
@pytest.mark.parametrize("amount", [1, 2, 30])
def test_renew(callpin, amount, monkeypatch):
    monkeypatch.setenv("SHOP_AMOUNT", str(amount))
    with callpin.pin(spy=["collab.charge"]):
        shop.renew()
""")
    )
    run(project, "--callpin-mode=new").assert_outcomes(passed=3)
    assert baselines(project) == [
        "baselines/test_shop/test_renew-1.cpin",
        "baselines/test_shop/test_renew-2.cpin",
        "baselines/test_shop/test_renew-30.cpin",
    ]
    result = run(project)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["check mode: 0 written, 0 updated, 0 drifted, 0 missing, 3 unchanged"])


def test_hostile_ids_stay_inside_the_baselines_folder(project):
    project.makepyfile(
        test_shop=module_source(f"""
@pytest.mark.parametrize("case", range({len(HOSTILE)}), ids={HOSTILE!r})
def test_renew(callpin, case):
    with callpin.pin(spy=["collab.charge"]):
        shop.renew()
""")
    )
    before = sorted(os.listdir(project.path)), sorted(os.listdir(project.path.parent))
    run(project, "--callpin-mode=new", "-p", "no:cacheprovider").assert_outcomes(passed=len(HOSTILE))
    after = sorted(os.listdir(project.path)), sorted(os.listdir(project.path.parent))
    assert after == (sorted([*before[0], "baselines"]), before[1])
    written = baselines(project)
    assert len(written) == len(HOSTILE)
    root = (project.path / "baselines").resolve()
    for relative in written:
        path = (project.path / relative).resolve()
        assert path.parent == root / "test_shop"
        assert len(path.name) <= 255
    run(project).assert_outcomes(passed=len(HOSTILE))


def test_classes_and_folders_shape_the_path(project):
    folder = project.mkdir("suite")
    (folder / "test_shop.py").write_text(
        module_source("""
class TestRenewals:
    class TestActive:
        def test_renew(self, callpin):
            with callpin.pin(spy=["collab.charge"]):
                shop.renew()
""")
    )
    run(project, "--callpin-mode=new").assert_outcomes(passed=1)
    assert baselines(project) == ["baselines/suite/test_shop/TestRenewals.TestActive.test_renew.cpin"]


def test_named_pins_get_their_own_baselines(project):
    project.makepyfile(
        test_shop=module_source("""
def test_renew(callpin):
    with callpin.pin("charge", spy=["collab.charge"]):
        shop.renew()
    with callpin.pin("receipt", spy=["collab.receipt"]):
        shop.renew()
    assert callpin.path("receipt").name == "test_renew-receipt.cpin"
""")
    )
    run(project, "--callpin-mode=new").assert_outcomes(passed=1)
    assert baselines(project) == [
        "baselines/test_shop/test_renew-charge.cpin",
        "baselines/test_shop/test_renew-receipt.cpin",
    ]


def test_a_second_pin_with_the_same_name_is_refused(project):
    project.makepyfile(
        test_shop=module_source("""
def test_renew(callpin):
    with callpin.pin(spy=["collab.charge"]):
        shop.renew()
    with callpin.pin(spy=["collab.receipt"]):
        shop.renew()
""")
    )
    result = run(project, "--callpin-mode=new")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E *callpin.errors.UsageError: "
            "callpin.pin() used twice in one test with the same name; "
            "give each pin its own name",
        ]
    )


def test_two_tests_cannot_share_a_baseline(project):
    project.makepyfile(test_shop=module_source(SHARED_BASELINE))
    result = run(project, "--callpin-mode=new")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E *callpin.errors.UsageError: "
            "baselines/test_shop/test_renew-a-b.cpin is already the baseline "
            "of test_shop.py::test_renew[[]a] (pin 'b'); give this pin another name",
        ]
    )
    assert baselines(project) == ["baselines/test_shop/test_renew-a-b.cpin"]


def test_two_tests_cannot_have_baselines_that_differ_only_in_case(project):
    project.makepyfile(test_shop=module_source(pinned_test("test_Renew"), pinned_test("test_renew")))
    result = run(project, "--callpin-mode=new")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E *callpin.errors.UsageError: "
            "baselines/test_shop/test_renew.cpin and baselines/test_shop/test_Renew.cpin, "
            "the baseline of test_shop.py::test_Renew, differ only in case "
            "(one file on macOS and Windows); give this pin another name",
        ]
    )
    assert baselines(project) == ["baselines/test_shop/test_Renew.cpin"]


def test_the_fixture_gives_the_path_and_the_stubs(project):
    project.makepyfile(
        test_shop=module_source("""
def test_renew(callpin, request):
    assert callpin.path() == request.config.rootpath / "baselines" / "test_shop" / "test_renew.cpin"
    stub = {"collab.charge": callpin.returns("stubbed")}
    with callpin.pin(spy=["collab.charge"], stub=stub) as rec:
        assert shop.collab.charge("card", 1) == "stubbed"
    stub = {"collab.receipt": callpin.raises(KeyError)}
    with callpin.record(spy=["collab.receipt"], stub=stub) as rec:
        with pytest.raises(KeyError):
            shop.collab.receipt("ada", 1)
    assert [event.label for event in rec.events] == ["collab.receipt", "collab.receipt"]
""")
    )
    run(project, "--callpin-mode=new").assert_outcomes(passed=1)
    assert baselines(project) == ["baselines/test_shop/test_renew.cpin"]
