"""Running the capture once in one cell: the command as a shell finds it, the cell's environment, its process group.

Each run is a child in its own session (so its process group is its own and a
terminal's Ctrl-C reaches probe only); `Children` ends every group still running when
probe stops, and every run's group when the run ends, so nothing it started outlives it.
"""

from __future__ import annotations

import configparser
import os
import shutil
import signal
import ssl
import subprocess
import tempfile
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..site_hook import install_hook
from .cells import CA_VARIABLES, CONTROLLED, Cell

_HOOK = Path(__file__).with_name("child_site.py")
# Files from which pytest takes its rootdir whatever the working folder; without one,
# it falls back to a folder that contains the working folder (see `keep_rootdir`).
_PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "setup.py")
_PYTEST_SECTIONS = {"tox.ini": "[pytest]", "setup.cfg": "[tool:pytest]"}


@dataclass
class Run:
    """One execution of the command in one cell."""

    cell: Cell
    number: int
    returncode: int
    stderr_tail: str
    logs: dict[str, Path]
    timed_out: bool = False


def resolve_command(command: list[str], root: Path) -> list[str]:
    """`command` with its program found as a shell would: a path from `root`, a bare name on PATH.

    Every cell runs the same file, whatever its working folder.
    """
    program = command[0]
    if "/" in program or (os.altsep and os.altsep in program):
        found: str | None = str(root / program)
        if not os.path.lexists(str(found)):
            found = None
    else:
        found = shutil.which(program)
    if found is None:
        raise UsageError(f"command not found: {program}")
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        raise UsageError(f"command not executable: {program}")
    return [os.path.abspath(found), *command[1:]]


def _project_path(argument: str, root: Path) -> Path | None:
    """The file or folder of the project a relative argument names, a pytest node id's
    (`tests/test_x.py::test_one`) included; None for anything else."""
    path = argument.split("::", 1)[0]
    if argument.startswith("-") or not path or os.path.isabs(path):
        return None
    candidate = root / path
    return candidate if candidate.exists() else None


def absolute_arguments(command: list[str], root: Path) -> list[str]:
    """Arguments naming files or folders of the project (or tests in them, by node id) as
    absolute paths.

    In the cwd cell only the working directory moves, so those still resolve.
    """
    resolved = [command[0]]
    for argument in command[1:]:
        candidate = _project_path(argument, root)
        if candidate is None:
            resolved.append(argument)
        else:
            resolved.append(str(candidate) + argument[len(argument.split("::", 1)[0]) :])
    return resolved


def fresh_folder_paths(command: list[str], root: Path) -> list[str]:
    """The paths a pytest command must be given to collect the project's tests in a fresh
    working folder; none when it is not pytest or names them itself.

    With no path, pytest collects its `testpaths` only when run from its rootdir, and
    else the working folder, which is empty in the fresh one (`no tests ran`, a finding
    about the command, not the capture). So a pytest command (`pytest`, `python -m
    pytest`) naming no file or folder of the project, relative or absolute, and not
    `--pyargs`, is given the `testpaths` of the project's configuration (its globs
    expanded from the configuration's folder), else the project's folder.
    """
    program = os.path.basename(command[0])
    module = next((command[i + 1] for i in range(1, len(command) - 1) if command[i] == "-m"), None)
    if program not in ("pytest", "py.test") and not (program.startswith("python") and module == "pytest"):
        return []
    if "--pyargs" in command or any(_names_project(argument, root) for argument in command[1:]):
        return []
    found = _configuration(root)
    if found is not None:
        folder, patterns = found
        paths = sorted({str(path) for pattern in patterns for path in folder.glob(pattern)})
        if paths:
            return paths
    return [str(root)]


def _names_project(argument: str, root: Path) -> bool:
    if _project_path(argument, root) is not None:
        return True
    path = argument.split("::", 1)[0]
    return os.path.isabs(path) and Path(path).resolve().is_relative_to(root.resolve()) and os.path.exists(path)


def _configuration(root: Path) -> tuple[Path, list[str]] | None:
    """The folder of the pytest configuration pytest finds from `root` and its `testpaths`."""
    for folder in (root, *root.parents):
        for name in ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
            path = folder / name
            if not path.is_file():
                continue
            try:
                found = _testpaths(path)
            except (OSError, ValueError, configparser.Error, tomllib.TOMLDecodeError):
                continue
            if found is not None:
                return folder, found
    return None


def _testpaths(path: Path) -> list[str] | None:
    """A configuration file's `testpaths`; None when it is not pytest's configuration."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.name == "pyproject.toml":
        options = tomllib.loads(text).get("tool", {}).get("pytest", {}).get("ini_options")
        if not isinstance(options, dict):
            return None
        value = options.get("testpaths", [])
        return value.split() if isinstance(value, str) else [str(one) for one in value]
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    section = "tool:pytest" if path.name == "setup.cfg" else "pytest"
    if not parser.has_section(section):
        return [] if path.name in ("pytest.ini", ".pytest.ini") else None
    return parser.get(section, "testpaths", fallback="").split()


def _configured(folder: Path) -> bool:
    if any((folder / name).is_file() for name in _PYTEST_CONFIGS):
        return True
    for name, section in _PYTEST_SECTIONS.items():
        path = folder / name
        if path.is_file() and section in path.read_text(encoding="utf-8", errors="replace"):
            return True
    return False


def keep_rootdir(command: list[str], root: Path) -> str | None:
    """The rootdir pytest must be given in a fresh working folder to name tests as in `root`; None if it keeps it.

    pytest takes its rootdir from a configuration file above its path arguments, found
    from any working folder; without one, from a folder containing the working folder,
    which moves with it, and with it every node id and baseline path.
    """
    starts = [root, *filter(None, (_project_path(a, root) for a in command[1:]))]
    for start in starts:
        folder = start if start.is_dir() else start.parent
        if any(_configured(f) for f in (folder, *folder.parents)):
            return None
    return str(root)


def _collect_logs(output_dir: Path) -> dict[str, Path]:
    """The logs a run wrote: regular files inside its output folder, never through a symlink.

    The command writes that folder; a link it left there (a log named `x.cpin` pointing
    at a file elsewhere) must not make probe read outside its scratch folder.
    """
    inside = output_dir.resolve()
    return {
        p.relative_to(output_dir).as_posix(): p
        for p in sorted(output_dir.rglob("*.cpin"))
        if not p.is_symlink() and p.is_file() and p.resolve().is_relative_to(inside)
    }


def _lines(data: bytes) -> list[str]:
    return [line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()]


def telling_line(stdout: bytes, stderr: bytes) -> str:
    """The line of a run's output that says what failed.

    pytest's first `FAILED` / `ERROR` summary line (it names the test and the
    exception) when there is one, else the last line of stderr, else of stdout.
    """
    out, err = _lines(stdout), _lines(stderr)
    summary = [line for line in out if line.startswith(("FAILED ", "ERROR "))]
    if summary:
        return summary[0]
    return (err or out or [""])[-1]


def _ca_bundle(folder: Path) -> Path:
    """A copy of the system's CA bundle at a new path (empty when there is none)."""
    bundle = folder / "ca-bundle.pem"
    system = ssl.get_default_verify_paths().cafile
    if system and os.path.isfile(system):
        shutil.copyfile(system, bundle)
    else:
        bundle.touch()
    return bundle


class Children:
    """The runs of one probe: each started in its own process group, all ended on `stop()`."""

    def __init__(self, command: list[str], root: Path, scratch: Path, timeout: float) -> None:
        self.command = command
        self.root = root
        self.scratch = scratch
        self.timeout = timeout
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[bytes]] = set()
        self._stopped = False
        self._hook = scratch / "hook"
        self._hook.mkdir()
        install_hook(_HOOK, self._hook)
        self._rootdir = keep_rootdir(command, root)
        self._fresh_folder_paths = fresh_folder_paths(command, root)

    def environment(self, cell: Cell, output_dir: Path, home: Path | None) -> dict[str, str]:
        """The child's variables: the inherited ones minus those a cell controls, then the cell's."""
        env = {key: value for key, value in os.environ.items() if key not in CONTROLLED}
        env.update(cell.env)
        env["CALLPIN_OUTPUT_DIR"] = str(output_dir)
        # The capture only records: pin() writes the actual log and does not compare, so a
        # drift caused by the cell is seen here as a changed log, not as a failed command.
        env["CALLPIN_PROBE"] = "1"
        env.pop("CALLPIN_MODE", None)
        inherited = os.environ.get("PYTHONPATH")
        # `python -m` imports from its working folder; in a fresh one the project's
        # modules must still import as they do from the project, or the cell fails
        # on an import instead of showing what reads relative paths.
        project = [str(self.root)] if cell.fresh_cwd else []
        env["PYTHONPATH"] = os.pathsep.join([str(self._hook), *project, *([inherited] if inherited else [])])
        if cell.fresh_cwd and self._rootdir is not None:
            given = os.environ.get("PYTEST_ADDOPTS")
            env["PYTEST_ADDOPTS"] = " ".join([f"--rootdir={self._rootdir}", *([given] if given else [])])
        if home is not None:
            # The bundle goes beside the fresh HOME, which stays empty.
            env["HOME"] = str(home)
            bundle = str(_ca_bundle(home.parent))
            env.update({name: bundle for name in CA_VARIABLES})
        return env

    def execute(self, cell: Cell, number: int) -> Run | None:
        """Run the command once in `cell`; None when probe stopped before it started."""
        folder = self.scratch / f"{cell.short}-run{number}"
        output_dir = folder / "output"
        output_dir.mkdir(parents=True)
        # A fresh working folder and HOME live in a temp folder of their own, one per
        # run, removed when it ends: their paths read the same in every run of the cell
        # once the `tmp` rule numbers that folder (`<tmp:1>/cwd`), so a capture that
        # records them is ambient under the cell, not unstable in it.
        place = Path(tempfile.mkdtemp(prefix="callpin-probe-")) if cell.fresh_cwd or cell.fresh_home else None
        try:
            return self._run(cell, number, output_dir, place)
        finally:
            if place is not None:
                shutil.rmtree(place, ignore_errors=True)

    def _run(self, cell: Cell, number: int, output_dir: Path, place: Path | None) -> Run | None:
        cwd, args = self.root, self.command
        if cell.fresh_cwd and place is not None:
            cwd = place / "cwd"
            cwd.mkdir()
            args = [*absolute_arguments(self.command, self.root), *self._fresh_folder_paths]
        home = None
        if cell.fresh_home and place is not None:
            home = place / "home"
            home.mkdir()
        env = self.environment(cell, output_dir, home)
        with self._lock:
            if self._stopped:
                return None
            try:
                process = subprocess.Popen(
                    args,
                    cwd=cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                )
            except OSError as exc:
                return Run(cell, number, 127, f"cannot run {self.command[0]}: {exc.strerror}", {})
            self._running.add(process)
        timed_out = False
        try:
            stdout, stderr = process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _end_group(process)
            stdout, stderr = process.communicate()
        finally:
            # Whatever the command left running in its group goes with it.
            _end_group(process)
            with self._lock:
                self._running.discard(process)
        if timed_out:
            return Run(cell, number, -1, f"timed out after {self.timeout:g} s", _collect_logs(output_dir), True)
        tail = telling_line(stdout, stderr)
        return Run(cell, number, process.returncode, tail, _collect_logs(output_dir))

    def stop(self) -> None:
        """Start no more runs and end the process group of every run still going."""
        with self._lock:
            self._stopped = True
            running = list(self._running)
        for process in running:
            _end_group(process)
        deadline = time.monotonic() + 1.0
        for process in running:
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass


def _end_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
