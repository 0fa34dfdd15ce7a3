"""probe's judgement without child processes: the matrix, error kinds, classification, the table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.sample_logs import call, write

from callpin.errors import UsageError
from callpin.probe import build_cells, child_site, parse_env
from callpin.probe.cells import CLOCK_OFFSET, CLOCK_VARIABLE, ORDER_VARIABLE, PROXY
from callpin.probe.children import Run, absolute_arguments, fresh_folder_paths, keep_rootdir, resolve_command
from callpin.probe.classify import classify, error_kind
from callpin.probe.report import WIDTH, Finding, ProbeReport, shorten
from callpin.site_hook import install_hook

CELLS = build_cells(("tz", "cwd", "env", "order", "clock"), locales=[])
BY_NAME = {cell.name: cell for cell in CELLS}


def test_every_group_has_its_cells_with_short_unique_names():
    cells = build_cells(locales=["C", "C.UTF-8", "en_US.utf8"])
    names = [cell.name for cell in cells]
    assert names == [
        "baseline",
        "tz=Asia/Tokyo",
        "tz=America/Los_Angeles",
        "locale=C",
        "locale=C.UTF-8",
        "hashseed=1",
        "hashseed=2",
        "cwd=fresh",
        "env=set",
        "order=reversed",
        "clock=+400d5h17m",
    ]
    shorts = [cell.short for cell in cells]
    assert shorts == ["base", "tz1", "tz2", "loc1", "loc2", "hs1", "hs2", "cwd", "env", "ord", "clk"]


def test_the_env_order_and_clock_cells_set_what_they_change_and_the_baseline_none_of_it():
    env = build_cells(("env",), locales=[], extra_env={"API_URL": "http://elsewhere"})[1]
    assert env.env["HTTPS_PROXY"] == env.env["http_proxy"] == PROXY
    assert env.env["API_URL"] == "http://elsewhere"
    assert env.fresh_home
    assert BY_NAME["order=reversed"].env[ORDER_VARIABLE] == "reverse"
    assert BY_NAME["clock=+400d5h17m"].env[CLOCK_VARIABLE] == str(CLOCK_OFFSET)
    baseline = BY_NAME["baseline"]
    assert not {"HTTPS_PROXY", ORDER_VARIABLE, CLOCK_VARIABLE} & baseline.env.keys()
    assert not baseline.fresh_home and not baseline.fresh_cwd


@pytest.mark.parametrize("words", [["NAME"], ["=value"]])
def test_env_assignments_need_a_name_and_an_equals_sign(words):
    with pytest.raises(UsageError, match="--env takes NAME=VALUE"):
        parse_env(words)


def test_env_assignments_keep_equals_signs_in_the_value():
    assert parse_env(["A=b=c", "EMPTY="]) == {"A": "b=c", "EMPTY": ""}


def test_env_assignments_without_the_env_cell_are_refused():
    with pytest.raises(UsageError, match="add env to --cells"):
        build_cells(("tz",), locales=[], extra_env={"A": "b"})


def test_a_relative_program_is_found_from_the_project_folder_in_every_cell(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert resolve_command(["./run.sh", "capture.py"], tmp_path) == [str(script), "capture.py"]
    with pytest.raises(UsageError, match=r"command not found: \./missing\.sh"):
        resolve_command(["./missing.sh"], tmp_path)
    (tmp_path / "plain.sh").write_text("")
    with pytest.raises(UsageError, match=r"command not executable: \./plain\.sh"):
        resolve_command(["./plain.sh"], tmp_path)


def test_a_bare_program_is_found_on_path(tmp_path):
    assert Path(resolve_command(["sh", "-c", "true"], tmp_path)[0]).name == "sh"
    with pytest.raises(UsageError, match="command not found: no-such-program-here"):
        resolve_command(["no-such-program-here"], tmp_path)


def test_only_arguments_naming_project_files_become_absolute(tmp_path):
    (tmp_path / "tests").mkdir()
    resolved = absolute_arguments(["py", "tests", "-q", "nothing"], tmp_path)
    assert resolved == ["py", str(tmp_path / "tests"), "-q", "nothing"]


def test_a_pytest_node_id_of_a_project_file_becomes_absolute_with_its_test(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("")
    resolved = absolute_arguments(["py", "tests/test_x.py::test_one[a::b]", "gone.py::test_two", "::x"], tmp_path)
    assert resolved == ["py", f"{tmp_path}/tests/test_x.py::test_one[a::b]", "gone.py::test_two", "::x"]
    (tmp_path / "tests" / "pytest.ini").write_text("[pytest]\n")
    assert keep_rootdir(["pytest", "tests/test_x.py::test_one"], tmp_path) is None


def test_pytest_naming_no_test_path_is_given_the_project_or_its_testpaths(tmp_path):
    project = tmp_path / "project"
    (project / "tests" / "unit").mkdir(parents=True)
    (project / "tests" / "e2e").mkdir()
    assert fresh_folder_paths(["pytest", "-q", "-p", "no:cacheprovider"], project) == [str(project)]
    assert fresh_folder_paths(["/venv/bin/python3.12", "-X", "dev", "-m", "pytest", "-k", "sends"], project) == [
        str(project)
    ]
    assert fresh_folder_paths(["pytest", "tests"], project) == []  # a path given
    assert fresh_folder_paths(["pytest", f"{project}/tests/unit"], project) == []  # an absolute one
    assert fresh_folder_paths(["pytest", "--pyargs", "shop"], project) == []
    assert fresh_folder_paths(["python", "-m", "unittest"], project) == []
    assert fresh_folder_paths(["./run.sh"], project) == []  # not known to be pytest
    # pytest collects its testpaths only from its rootdir: in the fresh folder they are given.
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\ntestpaths = ['tests/u*']\n")
    assert fresh_folder_paths(["pytest"], project) == [str(project / "tests" / "unit")]
    (project / "pytest.ini").write_text("[pytest]\ntestpaths = tests/e2e tests/unit\n")  # pytest.ini comes first
    assert fresh_folder_paths(["pytest"], project) == [str(project / "tests" / "e2e"), str(project / "tests" / "unit")]
    (project / "pytest.ini").write_text("[pytest]\naddopts = -q\n")
    assert fresh_folder_paths(["pytest"], project) == [str(project)]
    (project / "pytest.ini").unlink()
    (project / "pyproject.toml").write_text("[project]\nname = 'shop'\n")  # no pytest section: read on
    (project / "setup.cfg").write_text("[tool:pytest]\ntestpaths = tests/e2e\n")
    assert fresh_folder_paths(["pytest"], project) == [str(project / "tests" / "e2e")]


def test_pytest_keeps_the_project_as_rootdir_only_when_no_configuration_fixes_it(tmp_path):
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    assert keep_rootdir(["pytest", "tests"], project) == str(project)
    (project / "tests" / "tox.ini").write_text("[tox]\n")
    assert keep_rootdir(["pytest", "tests"], project) == str(project)
    (project / "tests" / "pytest.ini").write_text("[pytest]\n")
    assert keep_rootdir(["pytest", "tests"], project) is None
    (project / "tests" / "pytest.ini").unlink()
    (project / "setup.cfg").write_text("[tool:pytest]\n")
    assert keep_rootdir(["pytest", "tests"], project) is None


@pytest.mark.parametrize(
    ("returncode", "tail", "kind"),
    [
        (1, "========== 1 failed in 0.03s ==========", "exit 1"),
        (1, "FileNotFoundError: [Errno 2] No such file or directory: 'data.txt'", "exit 1: FileNotFoundError"),
        (1, "json.decoder.JSONDecodeError: Expecting value", "exit 1: JSONDecodeError"),
        (2, "", "exit 2"),
    ],
)
def test_an_error_kind_holds_no_text_that_changes_between_runs(returncode, tail, kind):
    assert error_kind(returncode, tail) == kind


def test_a_timeout_is_its_own_kind():
    assert error_kind(-1, "whatever", timed_out=True) == "timeout"


class Runs:
    """Runs of one log `a.cpin`, built from the events each cell's runs record."""

    def __init__(self, tmp_path: Path) -> None:
        self.folder = tmp_path
        self.made: list[Run] = []

    def add(self, cell: str, *arguments: object, returncode: int = 0, tail: str = "") -> None:
        number = 1 + sum(run.cell.name == cell for run in self.made)
        logs = {}
        if arguments:
            path = self.folder / f"{BY_NAME[cell].short}-{number}.cpin"
            write(path, *(call("collab.send", a) for a in arguments))
            logs["a.cpin"] = path
        self.made.append(Run(BY_NAME[cell], number, returncode, tail, logs))

    def everywhere(self, *arguments: object, returncode: int = 0, tail: str = "", but: tuple[str, ...] = ()) -> None:
        for cell in CELLS:
            if cell.name not in but:
                self.add(cell.name, *arguments, returncode=returncode, tail=tail)
                self.add(cell.name, *arguments, returncode=returncode, tail=tail)

    def report(self) -> ProbeReport:
        return classify(CELLS, self.made)


def test_the_same_log_everywhere_is_volatile_nowhere(tmp_path):
    runs = Runs(tmp_path)
    runs.everywhere("x")
    report = runs.report()
    assert set(report.table["a.cpin"].values()) == {"ok"}
    assert report.volatile == [] and not report.failed


def test_a_stable_log_that_differs_from_the_baseline_is_ambient_under_that_cell(tmp_path):
    runs = Runs(tmp_path)
    runs.everywhere("x", but=("clock=+400d5h17m",))
    runs.add("clock=+400d5h17m", "y")
    runs.add("clock=+400d5h17m", "y")
    report = runs.report()
    assert report.table["a.cpin"]["clock=+400d5h17m"] == "AMBIENT"
    assert report.volatile == ["clock"]
    assert report.findings[0].detail == "#0 collab.send: args[0]: 'x' → 'y'"


def test_two_runs_of_one_cell_that_differ_are_unstable(tmp_path):
    runs = Runs(tmp_path)
    runs.everywhere("x", but=("order=reversed",))
    runs.add("order=reversed", "x")
    runs.add("order=reversed", "z")
    report = runs.report()
    assert report.table["a.cpin"]["order=reversed"] == "UNSTABLE"
    assert report.volatile == ["unstable"]


def test_a_log_unstable_in_one_cell_is_judged_ambient_in_no_other(tmp_path):
    # Runs drawn from the same nondeterminism (a dict filled in memory-address order):
    # two cells whose runs happened to agree differ from the baseline by chance alone.
    runs = Runs(tmp_path)
    runs.everywhere("x", but=("order=reversed", "cwd=fresh", "clock=+400d5h17m"))
    runs.add("order=reversed", "x")
    runs.add("order=reversed", "z")
    for cell in ("cwd=fresh", "clock=+400d5h17m"):
        runs.add(cell, "z")
        runs.add(cell, "z")
    report = runs.report()
    row = report.table["a.cpin"]
    assert [row[cell] for cell in ("order=reversed", "cwd=fresh", "clock=+400d5h17m")] == ["UNSTABLE"] * 3
    assert report.volatile == ["unstable"]
    assert {f.signal for f in report.findings} == {"unstable"}
    chance = next(f for f in report.findings if f.cell == "clock=+400d5h17m")
    assert chance.detail == (
        "#0 collab.send: args[0]: 'x' → 'z' (runs agree in this cell, but the log is unstable elsewhere)"
    )


def test_errors_of_the_baseline_kind_with_other_timings_are_one_baseline_finding_and_no_setting(tmp_path):
    runs = Runs(tmp_path)
    for n, cell in enumerate(CELLS):
        for run in (1, 2):
            runs.add(cell.name, "x", returncode=1, tail=f"1 failed, 3 passed in 0.{n}{run}s")
    report = runs.report()
    assert [(f.cell, f.signal) for f in report.findings] == [("baseline", "error")]
    assert report.findings[0].detail == "exit 1: 1 failed, 3 passed in <time>"
    assert report.volatile == []
    assert report.failed
    assert report.verdict_line() == "VOLATILE: none"


def test_an_error_only_in_one_cell_names_that_cell(tmp_path):
    runs = Runs(tmp_path)
    runs.everywhere("x", but=("cwd=fresh",))
    runs.add("cwd=fresh", returncode=1, tail="FileNotFoundError: data.txt")
    runs.add("cwd=fresh", returncode=1, tail="FileNotFoundError: data.txt")
    report = runs.report()
    assert report.table["a.cpin"]["cwd=fresh"] == "ERROR"
    assert report.volatile == ["cwd"]
    assert not report.failed


def test_a_log_missing_in_one_cell_of_a_passing_command_is_an_error_there(tmp_path):
    runs = Runs(tmp_path)
    runs.everywhere("x", but=("env=set",))
    runs.add("env=set")
    runs.add("env=set")
    report = runs.report()
    assert report.findings[0].detail == "no log written"
    assert report.volatile == ["env"]


def test_the_volatile_line_orders_settings_the_same_way_whatever_the_findings_order(tmp_path):
    runs = Runs(tmp_path)
    runs.everywhere("x", but=("tz=Asia/Tokyo", "clock=+400d5h17m", "order=reversed"))
    for cell, argument in (("clock=+400d5h17m", "c"), ("order=reversed", "o"), ("tz=Asia/Tokyo", "t")):
        runs.add(cell, argument)
        runs.add(cell, argument)
    assert runs.report().verdict_line() == "VOLATILE: tz, order, clock"


def test_the_table_fits_120_columns_with_every_cell_and_a_long_log_name():
    cells = build_cells(locales=["C", "C.UTF-8", "en_US.utf8"])
    long_name = "baselines/tests/characterization/test_session_adapters/test_send_merges_environment_proxies.cpin"
    report = ProbeReport(cells, table={long_name: {cell.name: "AMBIENT" for cell in cells}})
    lines = list(report.lines())
    assert max(map(len, lines[: lines.index("")])) <= WIDTH
    assert all(len(line) <= WIDTH for line in lines if not line.startswith("  "))
    assert lines[1].startswith("…/test_send_merges_environment_proxies.cpin")
    assert "clk clock=+400d5h17m" in "\n".join(lines)
    assert report.as_json()["table"][long_name]["clock=+400d5h17m"] == "AMBIENT"


def test_the_legend_points_to_full_log_names_only_where_they_are():
    cells = build_cells(locales=["C"])
    long_name = "baselines/tests/characterization/test_session_adapters/test_send_merges_environment_proxies.cpin"
    finding = Finding(long_name, "ambient", "tz=Asia/Tokyo", "x: 1 → 2")

    def legend(table: dict[str, dict[str, str]], findings: list[Finding]) -> str:
        lines = list(ProbeReport(cells, table=table, findings=findings).lines())
        return next(line for line in lines if line.startswith("AMB ambient"))

    shortened = {long_name: {cell.name: "ok" for cell in cells}}
    assert legend(shortened, []).endswith("- no log; full log names in --format json")
    assert legend(shortened, [finding]).endswith("full log names below and in --format json")
    other = Finding("a.cpin", "ambient", "tz=Asia/Tokyo", "x: 1 → 2")
    assert legend({**shortened, "a.cpin": {}}, [other]).endswith("- no log; full log names in --format json")
    assert legend({"a.cpin": {cell.name: "ok" for cell in cells}}, []).endswith("- no log")


def test_a_short_name_keeps_the_end_of_the_path():
    assert shorten("a/b/c.cpin", 20) == "a/b/c.cpin"
    assert shorten("folder/inner/test_thing.cpin", 20) == "…/test_thing.cpin"
    assert len(shorten("x" * 50, 20)) == 20


CHILD = """
import datetime, glob, json, os, pathlib, sys, time
import sitecustomize
real = float(sys.argv[1])
print(json.dumps({
    "listdir": os.listdir("d"),
    "scandir": [entry.name for entry in os.scandir("d")],
    "iterdir": [path.name for path in pathlib.Path("d").iterdir()],
    "glob": [os.path.basename(name) for name in glob.glob("d/*")],
    "walk": next(os.walk("d"))[2],
    "time": round(time.time() - real),
    "now": round(datetime.datetime.now().timestamp() - real),
    "today": (datetime.date.today() - datetime.date.fromtimestamp(real)).days,
    "localtime": round(time.mktime(time.localtime()) - real),
    "same_type": type(datetime.datetime.now()) is datetime.datetime,
    "chained": getattr(sitecustomize, "CHAINED", False),
}))
"""


def _child(tmp_path: Path, **variables: str) -> dict[str, Any]:
    hook = tmp_path / "hook"
    hook.mkdir(exist_ok=True)
    install_hook(child_site.__file__, hook)
    # A sitecustomize the hook hides: it must still run.
    other = tmp_path / "other"
    other.mkdir(exist_ok=True)
    (other / "sitecustomize.py").write_text("import sys\nsys.modules['sitecustomize'].CHAINED = True\n")
    folder = tmp_path / "d"
    folder.mkdir(exist_ok=True)
    for name in ("a", "b", "c", "d"):
        (folder / name).touch()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), str(other)]), **variables}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(time.time())],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_the_child_hook_changes_nothing_unless_asked_and_runs_the_sitecustomize_it_hides(tmp_path):
    plain = _child(tmp_path)
    assert plain["time"] == plain["now"] == plain["today"] == 0
    assert plain["listdir"] == plain["scandir"]
    assert plain["chained"] is True


def test_the_child_hook_reverses_every_listing(tmp_path):
    plain = _child(tmp_path)
    reversed_ = _child(tmp_path, CALLPIN_PROBE_ORDER="reverse")
    for way in ("listdir", "scandir", "iterdir", "glob", "walk"):
        assert reversed_[way] == list(reversed(plain[way])), way
    assert reversed_["chained"] is True


def test_the_child_hook_shifts_the_clock_and_keeps_the_datetime_type(tmp_path):
    shifted = _child(tmp_path, CALLPIN_PROBE_CLOCK=str(CLOCK_OFFSET))
    # Rounded to whole seconds: the child starts a moment after the parent read the clock.
    assert abs(int(shifted["time"]) - CLOCK_OFFSET) <= 5
    assert abs(int(shifted["now"]) - CLOCK_OFFSET) <= 5
    assert abs(int(shifted["localtime"]) - CLOCK_OFFSET) <= 5
    assert shifted["today"] in (400, 401)
    assert shifted["same_type"] is True
