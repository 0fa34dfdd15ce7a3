"""--callpin-dir: where baselines live; relative to the rootdir, wherever pytest starts."""

from __future__ import annotations

import pytest

from .project import baselines, module_source, pinned_test, run

pytest_plugins = ["pytester"]


@pytest.fixture
def shop_test(project: pytest.Pytester) -> pytest.Pytester:
    project.makeini("[pytest]\n")
    project.makepyfile(test_shop=module_source(pinned_test()))
    return project


def test_a_relative_folder_is_taken_from_the_rootdir(shop_test, monkeypatch):
    elsewhere = shop_test.mkdir("elsewhere")
    monkeypatch.chdir(elsewhere)
    run(shop_test, "--callpin-dir=pins/v1", "--callpin-mode=new", "../test_shop.py").assert_outcomes(passed=1)
    assert baselines(shop_test, "pins") == ["pins/v1/test_shop/test_renew.cpin"]
    assert not (elsewhere / "pins").exists()
    assert not (shop_test.path / "baselines").exists()


def test_an_absolute_folder_is_used_as_it_is(shop_test, tmp_path_factory):
    folder = tmp_path_factory.mktemp("outside")
    result = run(shop_test, f"--callpin-dir={folder}", "--callpin-mode=new")
    result.assert_outcomes(passed=1)
    assert [p.relative_to(folder).as_posix() for p in folder.rglob("*.cpin")] == ["test_shop/test_renew.cpin"]
    result.stdout.fnmatch_lines([f"wrote {folder}/test_shop/test_renew.cpin (2 events)"])


def test_unused_baselines_are_looked_for_in_the_chosen_folder(shop_test):
    run(shop_test, "--callpin-dir=pins", "--callpin-mode=new").assert_outcomes(passed=1)
    (shop_test.path / "pins" / "test_shop" / "test_old.cpin").write_bytes(b"")
    (shop_test.path / "baselines").mkdir()
    (shop_test.path / "baselines" / "not_mine.cpin").write_bytes(b"")
    result = run(shop_test, "--callpin-dir=pins")
    result.stdout.fnmatch_lines(["1 unused baseline:", "  pins/test_shop/test_old.cpin"])
    result.stdout.no_fnmatch_line("*not_mine*")
