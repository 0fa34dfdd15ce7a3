"""Paths: no test id, SOURCE or exported log name leads callpin outside its own folders.

Baseline names from hostile test ids (fixed cases and hypothesis) stay inside the
baselines folder, one valid file name per component, never two ids on one file; a real
pytest run with hostile parametrize ids writes only under --callpin-dir. `callpin bite`
refuses SOURCE paths and symlinks that lead out of the project, with one line and exit
2, and touches nothing. `callpin probe` reads and writes only inside its scratch
folders, whatever names the command exports its logs under, and removes them after.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.integration.test_bite import (
    BILLING,
    BOTH_LABELS,
    CHECK,
    RENEWALS,
    checker,
    child_env,
    make_project,
    repository_state,
)

from callpin.names import baseline_path
from gitrepo import commit_all

from .conftest import Figures, Scale

PYTHON = sys.executable
REPO = Path(__file__).resolve().parents[2]
WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL"} | {f"{p}{n}" for p in ("COM", "LPT") for n in range(1, 10)}

HOSTILE = [
    "..",
    ".",
    "",
    "../../etc/passwd",
    "/etc/passwd",
    "/",
    "a/../../b",
    "a\\..\\..\\b",
    "C:\\Windows\\system32",
    "C:",
    "\\\\server\\share",
    "nul\x00byte",
    "\x00",
    "line\nbreak",
    "carriage\rreturn",
    "tab\t",
    "x" * 300,
    "é" * 200,
    "☃" * 90,
    "\U0001f600 emoji",
    "\udcff lone surrogate",
    "CON",
    "con",
    "NUL",
    "nul.txt",
    "COM1",
    "lpt9",
    "AUX",
    "PRN.cpin",
    "trailing.",
    "trailing ",
    "trailing. . .",
    "...",
    ".hidden",
    "a]b[c",
    "a::b",
    "-",
    "--callpin-dir=/tmp",
    "*?<>|\"'",
    "$HOME",
    "~",
]


def _violations(root: Path, path: Path) -> list[str]:
    """Why `path` is not a safe baseline under `root` (empty when it is)."""
    found = []
    real_root = os.path.realpath(root)
    if not os.path.realpath(path).startswith(real_root + os.sep):
        found.append(f"escapes: {path}")
    relative = os.path.relpath(path, root)
    for part in relative.split(os.sep):
        stem = part.split(".", 1)[0]
        if (
            part in ("", ".", "..")
            or len(part.encode("utf-8", "surrogatepass")) > 255
            or any(ch in part for ch in '\x00/\\:*?"<>|')
            or any(ord(ch) < 32 for ch in part)
            or part.endswith((".", " "))
            or stem.upper() in WINDOWS_RESERVED
        ):
            found.append(f"bad component {part!r} in {relative}")
    return found


def _nodeid(folders: list[str], classes: list[str], function: str, param: str | None) -> str:
    name = "::".join([*classes, function])
    test = f"{name}[{param}]" if param is not None else name
    return "/".join([*folders, "test_file.py"]) + "::" + test


def _identity(folders: list[str], classes: list[str], function: str, param: str | None) -> tuple:
    # `a/./b` and `a//b` name the same file as `a/b`; pytest never writes them itself.
    parts = "/".join(folders).split("/")
    return (tuple(f for f in parts if f not in ("", ".")), tuple(classes), function, param)


HOSTILE_TEXT = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=40), st.text(min_size=100, max_size=400))
IDENTIFIER = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True) | st.sampled_from(
    ["CON", "nul", "COM1", "ünïcødé", "_"]
)
# A folder name holding `::` cannot be told from the test part of a node id; pytest
# cannot collect from one either.
FOLDER = HOSTILE_TEXT.filter(lambda text: "::" not in text)
TEST_ID = st.tuples(
    st.lists(FOLDER, max_size=3),
    st.lists(IDENTIFIER, max_size=2),
    IDENTIFIER,
    st.none() | HOSTILE_TEXT,
)


def test_hostile_test_ids_stay_in_the_baselines_folder_on_distinct_files(
    tmp_path: Path, scale: Scale, figures: Figures
) -> None:
    root = tmp_path / "baselines"
    root.mkdir()
    tried = 0
    escaped: list[str] = []
    collisions: list[str] = []
    seen: dict[Path, tuple] = {}

    def check(folders: list[str], classes: list[str], function: str, param: str | None, pin: str | None) -> None:
        nonlocal tried
        tried += 1
        nodeid = _nodeid(folders, classes, function, param)
        path = baseline_path(root, nodeid, pin)
        escaped.extend(_violations(root, path))
        if pin is None:
            identity = _identity(folders, classes, function, param)
            if seen.setdefault(path, identity) != identity:
                collisions.append(f"{nodeid!r} and {seen[path]!r} share {path}")

    # Every fixed hostile text in every place a test id has.
    for text in HOSTILE:
        check([text], [], "test_y", None, None)
        check(["tests", text, "deeper"], [], "test_y", text, None)
        check([], [], "test_y", text, None)
        check([], ["TestA"], "test_y", text, text or None)
        check([], [], "test_y", None, text or None)

    @settings(
        max_examples=scale.pick(300, 10_000),
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(TEST_ID, st.none() | HOSTILE_TEXT.filter(bool))
    def hypothesised(test_id: tuple, pin: str | None) -> None:
        check(*test_id, pin)

    hypothesised()
    figures.add("paths", "hostile test ids tried", tried)
    figures.add("paths", "baseline paths escaped or invalid", len(escaped), zero=True)
    figures.add("paths", "baseline name collisions", len(collisions), zero=True)
    assert escaped == []
    assert collisions == []


HOSTILE_PARAMS = [
    "../../escape",
    "/etc/passwd",
    "..",
    ".",
    "C:\\windows\\..\\x",
    "line\nbreak",
    "nul\x00",
    "CON",
    "trailing. ",
    "x" * 400,
    "ünïcødé ☃",
    "a/b/../../../c",
]


def _listing(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*")}


def test_a_pytest_run_with_hostile_parametrize_ids_writes_only_under_callpin_dir(
    tmp_path: Path, figures: Figures
) -> None:
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "collab.py").write_text("def charge(card):\n    return card\n")
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "tests" / "test_hostile.py").write_text(
        textwrap.dedent(f"""
            import pytest
            import collab

            NAMES = {HOSTILE_PARAMS!r}

            @pytest.mark.parametrize("case", range(len(NAMES)), ids=NAMES)
            def test_pin(callpin, case):
                with callpin.pin(spy=["collab.charge"]):
                    collab.charge(case)
                with callpin.pin(NAMES[case], spy=["collab.charge"]):
                    collab.charge(case)
        """)
    )
    before = _listing(tmp_path)
    env = child_env(PYTHONPATH=str(project), CALLPIN_MODE="new")
    for name in ("CI", "CALLPIN_OUTPUT_DIR", "CALLPIN_PROBE"):
        env.pop(name, None)
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    done = subprocess.run(
        [
            PYTHON,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "--callpin-dir=pins",
            "tests",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    new = _listing(tmp_path) - before
    pins = {name for name in new if name.startswith(os.path.join("project", "pins"))}
    outside = sorted(
        name for name in new - pins if "__pycache__" not in name and name != os.path.join("project", "pins")
    )
    written = [name for name in pins if name.endswith(".cpin")]
    figures.add("paths", "pytest run: baselines written", len(written))
    figures.add("paths", "pytest run: files written outside --callpin-dir", len(outside), zero=True)
    assert outside == []
    assert len(written) == 2 * len(HOSTILE_PARAMS)
    for name in written:
        assert _violations(tmp_path / "project" / "pins", tmp_path / name) == []


# ---------------------------------------------------------------------------
# bite


def _bite(project: Path, scratch: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "callpin", "bite", *CHECK, *BOTH_LABELS, *args],
        cwd=project,
        env=child_env(TMPDIR=str(scratch)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_bite_refuses_sources_that_lead_out_of_the_project_and_touches_nothing(
    tmp_path: Path, scale: Scale, figures: Figures
) -> None:
    rng = random.Random("bite-paths")
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "renewals.py").write_text(RENEWALS)
    (outside / "deep" / "renewals.py").write_text(RENEWALS)
    project = make_project(
        tmp_path / "repo",
        {
            "billing.py": BILLING,
            "renewals.py": RENEWALS,
            "src/keep.py": "x = 1\n",
            "check.py": checker(["charge_card", "send_receipt"]),
        },
    )
    (project / "src" / "out_file.py").symlink_to(outside / "renewals.py")
    (project / "src" / "out_rel.py").symlink_to(Path("..", "..", "outside", "deep", "renewals.py"))
    (project / "linked").symlink_to(outside / "deep", target_is_directory=True)
    commit_all(project, "links out of the project")
    sources = [
        [str(outside / "renewals.py")],
        ["../outside/renewals.py"],
        ["src/../../outside/renewals.py"],
        ["src"],
        ["src/out_file.py"],
        ["src/out_rel.py"],
        ["linked"],
        ["linked/renewals.py"],
        ["."],
        ["renewals.py", "src/out_rel.py"],
        [str(outside)],
    ]
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    refused = 0
    writes: list[str] = []
    rounds = scale.pick(1, 4)
    for _ in range(rounds):
        rng.shuffle(sources)
        for source in sources:
            before = repository_state(project), _listing(outside), _listing(scratch)
            done = _bite(project, scratch, *source)
            after = repository_state(project), _listing(outside), _listing(scratch)
            lines = done.stderr.splitlines()
            assert done.returncode == 2, (source, done.stdout, done.stderr)
            assert len(lines) == 1 and lines[0].startswith("callpin: "), (source, lines)
            assert "outside the project" in lines[0], (source, lines)
            refused += 1
            if after != before:
                writes.append(f"{source}: {after} != {before}")
    assert (outside / "renewals.py").read_text() == RENEWALS
    assert (outside / "deep" / "renewals.py").read_text() == RENEWALS
    figures.add("paths", "bite: hostile SOURCE runs refused", refused)
    figures.add("paths", "bite: writes outside its scratch area", len(writes), zero=True)
    assert writes == []


# ---------------------------------------------------------------------------
# probe

EXPORTED = [
    "../escape.cpin",
    "../../../../../../tmp/escape.cpin",
    "/etc/escape.cpin",
    "a/../../b.cpin",
    "a\\..\\..\\c.cpin",
    "..",
    "",
    "x" * 600,
    "d" * 300 + "/" + "e" * 300,
    "nul\x00.cpin",
    "CON",
    "ünïcødé/☃.cpin",
    "trailing. /dots. .",
]


def test_probe_stays_in_its_scratch_folders_whatever_names_logs_get(
    tmp_path: Path, scale: Scale, figures: Figures
) -> None:
    rng = random.Random("probe-paths")
    project = tmp_path / "project"
    project.mkdir()
    (project / "collab.py").write_text("def send(x):\n    return x\n")
    decoy = tmp_path / "decoy.cpin"
    decoy.write_bytes(b"probe must not read this")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    names_tried = 0
    writes: list[str] = []
    escaped: list[str] = []
    for _ in range(scale.pick(1, 5)):
        names = rng.sample(EXPORTED, rng.randint(3, len(EXPORTED)))
        names_tried += len(names)
        (project / "capture.py").write_text(
            textwrap.dedent(f"""
            import os
            import callpin
            import collab

            with callpin.record(spy=["collab.send"]) as rec:
                collab.send(1)
            for name in {names!r}:
                rec.export(name)
            os.symlink({str(decoy)!r}, os.path.join(os.environ["CALLPIN_OUTPUT_DIR"], "z.cpin"))
        """)
        )
        before = _listing(tmp_path)
        env = child_env(TMPDIR=str(scratch), PYTHONPATH=os.pathsep.join([str(project), str(REPO)]))
        done = subprocess.run(
            [
                PYTHON,
                "-m",
                "callpin",
                "probe",
                "--cells",
                "hashseed",
                "--format",
                "json",
                "--",
                PYTHON,
                "capture.py",
            ],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        report = json.loads(done.stdout)
        for log in report["table"]:
            if log.startswith("/") or ".." in log.split("/") or log == "z.cpin":
                escaped.append(log)
        new = _listing(tmp_path) - before
        writes.extend(sorted(name for name in new if "__pycache__" not in name))
        assert decoy.read_bytes() == b"probe must not read this"
    figures.add("paths", "probe: hostile export names tried", names_tried)
    figures.add("paths", "probe: logs read from outside its output folders", len(escaped), zero=True)
    figures.add("paths", "probe: writes left outside or after its scratch folders", len(writes), zero=True)
    assert escaped == []
    assert writes == []
