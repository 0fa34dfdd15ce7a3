"""callpin bite: prove the harness can fail by mutating collaborator calls in scratch copies.

The pinned labels name the collaborators; their call sites in the code under test are
found with `ast`; each mutant (two adjacent calls swapped, a call deleted, a call
duplicated) is made from the source text and runs the user's test command in its own
scratch copy of the project. A mutant the tests do not catch *survived*: the harness is
not wired to that call. docs/bite.md tells the whole story.
"""

from __future__ import annotations

import ast
import concurrent.futures
import contextlib
import difflib
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import IO, Any

from .atomic import process_alive as _process_alive
from .errors import BiteError, UsageError
from .logfile import load

OPERATORS = ("swap", "delete", "duplicate")
OUTCOMES = ("caught", "timeout", "survived", "error")
DEFAULT_TEST = "python -m pytest -x -q"
BRANCH_PREFIX = "callpin-bite"

# Without --timeout, a mutant may take this many times the unmutated run, and never
# less than the floor: a duplicated call inside a loop may legitimately be slower.
_TIMEOUT_FACTOR = 5.0
_TIMEOUT_FLOOR = 10.0
_OUTPUT_TAIL = 20

_MARKER_ENV = "CALLPIN_BITE_MARKER"
_WATCH_ENV = "CALLPIN_BITE_WATCH"
_HOOK = Path(__file__).with_name("_bite_hook.py")
_FOLDER_PREFIX = "callpin-bite-"
_RUN_ID = re.compile(r"^(\d+)-[0-9a-f]+$")

# Variables that point git at one particular index or work tree (set inside git hooks,
# for instance). Inherited, they would aim bite's own git commands, and the test
# command's, at the user's index instead of the scratch worktree's.
_GIT_LOCAL_ENV = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_PREFIX",
        "GIT_NAMESPACE",
        "GIT_CEILING_DIRECTORIES",
        "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    }
)
# Never copied into a temporary copy: caches that would carry stale bytecode, and
# virtual environments (folders holding a pyvenv.cfg), which are large and location-bound.
_SKIPPED_DIRS = frozenset(
    {
        ".git",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        ".tox",
        ".nox",
    }
)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


# ---------------------------------------------------------------------------
# Which collaborators: labels.


def read_labels(baselines: str | os.PathLike[str]) -> list[str]:
    """The labels of every call event in the `*.cpin` logs under `baselines`, sorted."""
    folder = Path(baselines)
    if not folder.is_dir():
        raise UsageError(f"no baselines folder {folder}; name the collaborators with --label")
    labels: set[str] = set()
    for path in sorted(folder.rglob("*.cpin")):
        labels.update(event.label for event in load(path) if event.kind == "call")
    if not labels:
        raise UsageError(f"no call events in the logs under {folder}; name the collaborators with --label")
    return sorted(labels)


def _compatible(dotted: str, label: str) -> bool:
    # `billing.charge_card` (imported as a top-level module) and
    # `examples.renewals.billing.charge_card` (spied by its full name) are one function.
    dotted = dotted.lstrip(".")
    return dotted == label or dotted.endswith("." + label) or label.endswith("." + dotted)


class _CallMatcher:
    """Which label, if any, a call expression of one source file calls."""

    def __init__(self, tree: ast.Module, labels: Sequence[str]) -> None:
        self._labels = sorted(set(labels))
        self._bound: dict[str, str] = {}
        self._star: list[str] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self._bound[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".", 1)[0]
                        self._bound[top] = top
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for alias in node.names:
                    if alias.name == "*":
                        self._star.append(module)
                    else:
                        joined = module + alias.name if module.endswith(".") else f"{module}.{alias.name}"
                        self._bound[alias.asname or alias.name] = joined

    def _dotted(self, expr: ast.expr) -> str | None:
        if isinstance(expr, ast.Name):
            return self._bound.get(expr.id)
        if isinstance(expr, ast.Attribute):
            base = self._dotted(expr.value)
            return None if base is None else f"{base}.{expr.attr}"
        return None

    def label(self, call: ast.Call) -> str | None:
        func = call.func
        dotted = self._dotted(func)
        if dotted is not None:
            return next((label for label in self._labels if _compatible(dotted, label)), None)
        if isinstance(func, ast.Attribute):
            # An attribute call on anything that is not an imported name
            # (`gateway.charge_card`, `self.billing.charge_card`) matches by the name alone.
            return next((label for label in self._labels if label.rsplit(".", 1)[-1] == func.attr), None)
        if isinstance(func, ast.Name):
            for label in self._labels:
                module, _, name = label.rpartition(".")
                if name == func.id and any(_compatible(star, module) for star in self._star if module):
                    return label
        return None


# ---------------------------------------------------------------------------
# Mutants: made from the source text by line ranges.


@dataclass(frozen=True)
class Mutant:
    """One mutated version of one source file."""

    id: str
    operator: str
    path: str
    line: int
    end_line: int
    calls: tuple[str, ...]
    original: str = field(repr=False)
    text: str = field(repr=False)
    encoding: str = field(default="utf-8", repr=False)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def diff(self) -> str:
        """The unified diff of the source file, original to mutant."""
        lines = difflib.unified_diff(_lines(self.original), _lines(self.text), f"a/{self.path}", f"b/{self.path}")
        return "".join(
            line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n" for line in lines
        )

    def data(self) -> bytes:
        """The mutated file's bytes, in the source file's own encoding."""
        return self.text.encode(self.encoding, "surrogateescape")


@dataclass(frozen=True)
class _Statement:
    node: ast.stmt
    first: int
    last: int
    calls: tuple[str, ...]
    is_call: bool
    assigns_call: bool


def _lines(text: str) -> list[str]:
    # Python's own line breaks only: str.splitlines would also split at form feeds and
    # other characters the tokenizer treats as ordinary.
    pieces = re.split(r"(\r\n|\r|\n)", text)
    lines = [pieces[i] + pieces[i + 1] for i in range(0, len(pieces) - 1, 2)]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


def _calls_in(node: ast.AST) -> list[ast.Call]:
    found: list[ast.Call] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Call):
            found.append(current)
        stack.extend(child for child in ast.iter_child_nodes(current) if not isinstance(child, _SCOPES))
    return sorted(found, key=lambda call: (call.lineno, call.col_offset))


def _direct_call(expr: ast.expr | None) -> ast.Call | None:
    if isinstance(expr, ast.Await):
        expr = expr.value
    return expr if isinstance(expr, ast.Call) else None


def _statement(node: ast.stmt, lines: list[str], matcher: _CallMatcher) -> _Statement | None:
    """The statement as a mutation unit, or None when it shares a line with other code."""
    if isinstance(node, _SCOPES) or node.end_lineno is None or node.end_col_offset is None:
        return None
    first, last = node.lineno - 1, node.end_lineno - 1
    head = lines[first].encode("utf-8", "surrogatepass")[: node.col_offset]
    tail = lines[last].encode("utf-8", "surrogatepass")[node.end_col_offset :].strip()
    if head.strip() or (tail and not tail.startswith(b"#")):
        return None
    calls = tuple(label for label in map(matcher.label, _calls_in(node)) if label is not None)
    if not calls:
        return None

    def is_collaborator(expr: ast.expr | None) -> bool:
        call = _direct_call(expr)
        return call is not None and matcher.label(call) is not None

    return _Statement(
        node,
        first,
        last,
        calls,
        is_call=isinstance(node, ast.Expr) and is_collaborator(node.value),
        assigns_call=isinstance(node, (ast.Assign, ast.AnnAssign)) and is_collaborator(node.value),
    )


def _blocks(tree: ast.Module) -> Iterator[tuple[list[ast.stmt], bool]]:
    for node in ast.walk(tree):
        for _, value in ast.iter_fields(node):
            if isinstance(value, list) and value and all(isinstance(item, ast.stmt) for item in value):
                yield value, isinstance(node, ast.Module)


def _newline(lines: list[str]) -> str:
    for line in lines:
        stripped = line.rstrip("\r\n")
        if stripped != line:
            return line[len(stripped) :]
    return "\n"


def _mutant_id(operator: str, path: str, spans: Sequence[tuple[int, int]], lines: list[str]) -> str:
    digest = hashlib.sha1(f"{path}\0{operator}".encode(), usedforsecurity=False)
    for first, last in spans:
        digest.update(f"\0{first + 1}-{last + 1}\0".encode())
        digest.update("".join(lines[first : last + 1]).encode("utf-8", "surrogatepass"))
    return f"{operator}-{digest.hexdigest()[:8]}"


def _check_operators(operators: Sequence[str]) -> None:
    unknown = sorted(set(operators) - set(OPERATORS))
    if unknown or not operators:
        what = f"unknown operator {unknown[0]!r}" if unknown else "no operator"
        raise UsageError(f"{what}; choose from {', '.join(OPERATORS)}")


def make_mutants(
    text: str,
    path: str,
    labels: Sequence[str],
    operators: Sequence[str] = OPERATORS,
    *,
    encoding: str = "utf-8",
) -> list[Mutant]:
    """Every mutant of one source text, in source order; `path` names it in ids and diffs.

    Only the mutated lines change: the rest of the text is kept character for character.
    A mutant that does not parse, or parses to the same tree as the original, is dropped.
    """
    _check_operators(operators)
    tree = ast.parse(text, filename=path)
    original_dump = ast.dump(tree)
    matcher = _CallMatcher(tree, labels)
    # Work on a text that ends with a line break, so that moved and copied lines always
    # carry one; the break added here is taken off every mutant again.
    added = "" if not text or text.endswith(("\n", "\r")) else _newline(_lines(text))
    lines = _lines(text + added)

    made: dict[str, Mutant] = {}

    def emit(operator: str, spans: list[tuple[int, int]], new_lines: list[str], calls: tuple[str, ...]) -> None:
        mutated = "".join(new_lines)
        if added and mutated.endswith(added):
            mutated = mutated[: -len(added)]
        try:
            if ast.dump(ast.parse(mutated)) == original_dump:
                return
        except SyntaxError:
            return
        mutant_id = _mutant_id(operator, path, spans, lines)
        made[mutant_id] = Mutant(
            mutant_id,
            operator,
            path,
            spans[0][0] + 1,
            spans[-1][1] + 1,
            calls,
            text,
            mutated,
            encoding,
        )

    for block, is_module in _blocks(tree):
        units = [_statement(node, lines, matcher) for node in block]
        for index, unit in enumerate(units):
            if unit is None:
                continue
            a, b = unit.first, unit.last + 1
            if "swap" in operators and index + 1 < len(units):
                other = units[index + 1]
                if other is not None:
                    c, d = other.first, other.last + 1
                    emit(
                        "swap",
                        [(a, b - 1), (c, d - 1)],
                        lines[:a] + lines[c:d] + lines[b:c] + lines[a:b] + lines[d:],
                        (unit.calls[0], other.calls[0]),
                    )
            if "delete" in operators and unit.is_call:
                filler: list[str] = []
                if len(block) == 1 and not is_module:
                    indent = lines[a][: len(lines[a]) - len(lines[a].lstrip())]
                    filler = [f"{indent}pass{_newline(lines[b - 1 : b])}"]
                emit("delete", [(a, b - 1)], lines[:a] + filler + lines[b:], unit.calls[:1])
            if "duplicate" in operators and (unit.is_call or unit.assigns_call):
                emit("duplicate", [(a, b - 1)], lines[:b] + lines[a:b] + lines[b:], unit.calls[:1])

    order = {name: rank for rank, name in enumerate(OPERATORS)}
    return sorted(made.values(), key=lambda m: (m.line, order[m.operator], m.end_line, m.id))


def decode_source(data: bytes) -> tuple[str, str]:
    """A Python source file's text and encoding (PEP 263 cookie or BOM, else UTF-8)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding, "surrogateescape"), encoding


# ---------------------------------------------------------------------------
# The project: its root, git or not, and a snapshot of the SOURCE files.


@dataclass(frozen=True)
class Project:
    """The folder the test command runs in: a git repository's top level, or the current folder."""

    root: Path
    head: str | None

    @property
    def git(self) -> bool:
        return self.head is not None

    @classmethod
    def locate(cls) -> Project:
        cwd = Path.cwd().resolve()
        try:
            found = _run_git(cwd, "rev-parse", "--show-toplevel", check=False)
        except FileNotFoundError:
            return cls(cwd, None)
        if found.returncode != 0:
            return cls(cwd, None)
        root = Path(found.stdout.strip()).resolve()
        head = _run_git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
        if head.returncode != 0:
            raise UsageError(f"the repository {root} has no commit yet; commit once, then run bite")
        return cls(root, head.stdout.strip())


def _git_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _GIT_LOCAL_ENV}
    # Read-only commands must not refresh the user's index behind their back.
    env["GIT_OPTIONAL_LOCKS"] = "0"
    return env


def _run_git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    # A session of its own: a Ctrl-C meant for bite must not kill git half-way through
    # creating or removing a worktree; bite cleans up itself.
    result = subprocess.run(
        ["git", "--literal-pathspecs", "-c", "core.hooksPath=/dev/null", *args],
        cwd=root,
        env=_git_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="surrogateescape",
        start_new_session=True,
        check=False,
    )
    if check and result.returncode != 0:
        raise BiteError(f"git {' '.join(args[:2])} failed: {result.stderr.strip()}")
    return result


def _relative(project: Project, path: Path) -> str:
    try:
        return path.resolve().relative_to(project.root).as_posix()
    except ValueError:
        raise UsageError(f"{path} is outside the project {project.root}") from None


def _walk_python(folder: Path) -> Iterator[Path]:
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not (Path(current, d) / "pyvenv.cfg").exists())
        yield from (Path(current, name) for name in sorted(files) if name.endswith(".py"))


def snapshot_sources(project: Project, sources: Sequence[str | os.PathLike[str]]) -> dict[str, bytes | None]:
    """The SOURCE files as they are now: relative path to bytes, None for a deleted tracked file.

    In git, every file git tracks or would track under SOURCE (so the user's uncommitted
    and untracked changes travel into the scratch worktrees); outside git, the Python files.
    """
    if not sources:
        raise UsageError("name at least one SOURCE file or folder")
    paths = []
    for source in sources:
        path = Path(source)
        if not path.exists():
            raise UsageError(f"no such file or folder: {source}")
        paths.append(path.resolve())
        _relative(project, path)
    names: set[str] = {_relative(project, path) for path in paths if path.is_file()}
    if project.git:
        listed = _run_git(
            project.root,
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            *(_relative(project, path) or "." for path in paths),
        )
        names.update(name for name in listed.stdout.split("\0") if name)
    else:
        for path in paths:
            if path.is_dir():
                names.update(_relative(project, found) for found in _walk_python(path))
    snapshot: dict[str, bytes | None] = {}
    for name in sorted(names):
        target = project.root / name
        # A symlink out of the project would carry its target's text into the copies,
        # and make bite's report about a file the tests may never import from there.
        if not target.resolve().is_relative_to(project.root):
            raise UsageError(
                f"{name} is a symlink to {target.resolve()}, outside the project {project.root}; "
                "bite mutates only files inside it"
            )
        snapshot[name] = target.read_bytes() if target.is_file() else None
    return snapshot


def find_mutants(
    project: Project,
    snapshot: dict[str, bytes | None],
    labels: Sequence[str],
    operators: Sequence[str] = OPERATORS,
) -> list[Mutant]:
    """The mutants of every Python file of the snapshot."""
    mutants: list[Mutant] = []
    for name, data in snapshot.items():
        if data is None or not name.endswith(".py"):
            continue
        try:
            text, encoding = decode_source(data)
            mutants.extend(make_mutants(text, name, labels, operators, encoding=encoding))
        except (SyntaxError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot parse {name}: {exc}") from None
    return mutants


def plan(
    sources: Sequence[str | os.PathLike[str]],
    *,
    baselines: str | os.PathLike[str] = "baselines",
    labels: Sequence[str] = (),
    operators: Sequence[str] = OPERATORS,
) -> tuple[Project, dict[str, bytes | None], list[Mutant]]:
    """The project, the SOURCE snapshot and the mutants bite would run, from the current folder."""
    _check_operators(operators)
    project = Project.locate()
    snapshot = snapshot_sources(project, sources)
    chosen = list(labels) or read_labels(baselines)
    return project, snapshot, find_mutants(project, snapshot, chosen, operators)


def show(
    sources: Sequence[str | os.PathLike[str]],
    mutant_id: str,
    *,
    baselines: str | os.PathLike[str] = "baselines",
    labels: Sequence[str] = (),
    operators: Sequence[str] = OPERATORS,
) -> Mutant:
    """The mutant with this id, made again from the current sources."""
    _, _, mutants = plan(sources, baselines=baselines, labels=labels, operators=operators)
    for mutant in mutants:
        if mutant.id == mutant_id:
            return mutant
    raise UsageError(f"no mutant {mutant_id!r} in these sources (ids change when the mutated lines do)")


# ---------------------------------------------------------------------------
# Scratch copies, the start-up hook and child processes.


def _stale(run_id: str) -> bool:
    match = _RUN_ID.match(run_id)
    return match is not None and not _process_alive(int(match.group(1)))


def _import_root(root: Path, relative: str) -> Path:
    folder = (root / relative).parent
    while folder != root and (folder / "__init__.py").exists():
        folder = folder.parent
    return folder


def _module_name(root: Path, relative: str) -> str:
    path = (root / relative).relative_to(_import_root(root, relative))
    parts = list(path.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@dataclass(frozen=True)
class _Execution:
    returncode: int | None
    timed_out: bool
    seconds: float
    imported: dict[str, tuple[bool, str | None]]
    output: str


class _Scratch:
    """One run's scratch copies: git worktrees on scratch branches, or temporary copies."""

    def __init__(self, project: Project, snapshot: dict[str, bytes | None], command: str) -> None:
        self.project = project
        self.snapshot = snapshot
        self.command = command
        self.run_id = f"{os.getpid()}-{secrets.token_hex(3)}"
        self.cancelled = threading.Event()
        self._git_lock = threading.Lock()
        self._lock = threading.Lock()
        self._processes: set[subprocess.Popen[bytes]] = set()
        temp = Path(tempfile.gettempdir()).resolve()
        if temp == project.root or project.root in temp.parents:
            raise UsageError(f"the temporary folder {temp} is inside the project; set TMPDIR elsewhere")
        self._prune(temp)
        self.folder = temp / f"{_FOLDER_PREFIX}{self.run_id}"
        self.folder.mkdir()
        for sub in ("hook", "markers", "logs", "copies"):
            (self.folder / sub).mkdir()
        shutil.copyfile(_HOOK, self.folder / "hook" / "sitecustomize.py")

    # -- lifetime --------------------------------------------------------------------

    def _prune(self, temp: Path) -> None:
        """Remove what a killed run left behind: its worktrees, branches and folder."""
        if self.project.git:
            stale = {ref.split("/")[1] for ref in self._scratch_branches("") if ref.count("/") >= 2}
            for run_id in sorted(run for run in stale if _stale(run)):
                self._sweep(run_id)
        for leftover in temp.glob(f"{_FOLDER_PREFIX}*"):
            if _stale(leftover.name[len(_FOLDER_PREFIX) :]):
                shutil.rmtree(leftover, ignore_errors=True)

    def _scratch_branches(self, run_id: str) -> list[str]:
        prefix = f"refs/heads/{BRANCH_PREFIX}/{run_id + '/' if run_id else ''}"
        listed = _run_git(self.project.root, "for-each-ref", "--format=%(refname)", prefix)
        return [ref[len("refs/heads/") :] for ref in listed.stdout.splitlines() if ref]

    def _sweep(self, run_id: str) -> None:
        branches = set(self._scratch_branches(run_id))
        listed = _run_git(self.project.root, "worktree", "list", "--porcelain").stdout
        for entry in listed.split("\n\n"):
            fields = dict(line.split(" ", 1) for line in entry.splitlines() if " " in line)
            if fields.get("branch", "").removeprefix("refs/heads/") in branches:
                self._forget_worktree(Path(fields["worktree"]))
        if branches:
            _run_git(self.project.root, "branch", "-D", "--", *sorted(branches), check=False)

    def _forget_worktree(self, path: Path) -> None:
        remove = ("worktree", "remove", "--force", "--force", str(path))
        if _run_git(self.project.root, *remove, check=False).returncode != 0:
            # A worktree git will not remove (a submodule inside, say): delete the files,
            # then let git forget the now missing worktree.
            shutil.rmtree(path, ignore_errors=True)
            _run_git(self.project.root, *remove, check=False)

    def close(self) -> None:
        """Stop every child and remove every worktree, branch and file of this run."""
        self.cancel()
        if self.project.git:
            with self._git_lock:
                self._sweep(self.run_id)
        shutil.rmtree(self.folder, ignore_errors=True)

    def cancel(self) -> None:
        self.cancelled.set()
        with self._lock:
            for process in self._processes:
                _kill_group(process)

    # -- copies ----------------------------------------------------------------------

    def _branch(self, name: str) -> str:
        return f"{BRANCH_PREFIX}/{self.run_id}/{name}"

    def create(self, name: str, files: dict[str, bytes | None]) -> Path:
        """A fresh scratch copy of the project with the snapshot and `files` written into it."""
        path = self.folder / "copies" / name
        if self.project.git:
            assert self.project.head is not None
            with self._git_lock:
                _run_git(
                    self.project.root,
                    "worktree",
                    "add",
                    "--quiet",
                    "--no-track",
                    "-b",
                    self._branch(name),
                    str(path),
                    self.project.head,
                )
        else:
            shutil.copytree(self.project.root, path, symlinks=True, ignore=_skip_in_copy)
        for relative, data in {**self.snapshot, **files}.items():
            target = path / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.parent.resolve().is_relative_to(path.resolve()):
                raise BiteError(f"{relative} lies in a folder that leads out of the scratch copy")
            # A symlink in the copy (checked out from the project, or copied as one)
            # may point into the user's tree: the file is written in its place instead,
            # never through it.
            if data is None or target.is_symlink():
                target.unlink(missing_ok=True)
            if data is not None:
                target.write_bytes(data)
        return path

    def discard(self, name: str, path: Path) -> None:
        if self.project.git:
            with self._git_lock:
                self._forget_worktree(path)
                _run_git(self.project.root, "branch", "-D", "--", self._branch(name), check=False)
        else:
            shutil.rmtree(path, ignore_errors=True)

    # -- running ---------------------------------------------------------------------

    def attempt(
        self,
        name: str,
        files: dict[str, bytes | None],
        watched: Sequence[str],
        timeout: float | None,
    ) -> _Execution | None:
        """Make a copy, run the command in it, remove it; None once the run is cancelled."""
        if self.cancelled.is_set():
            return None
        try:
            copy = self.create(name, files)
        except OSError as exc:
            raise BiteError(f"cannot make the scratch copy {name}: {exc}") from exc
        try:
            return self.execute(name, copy, watched, timeout)
        finally:
            self.discard(name, copy)

    def _environment(self, copy: Path, marker: Path, watched: Sequence[str]) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if key not in _GIT_LOCAL_ENV}
        roots = dict.fromkeys([str(_import_root(copy, name)) for name in watched] + [str(copy)])
        previous = env.get("PYTHONPATH")
        env["PYTHONPATH"] = os.pathsep.join([str(self.folder / "hook"), *roots, *([previous] if previous else [])])
        env[_MARKER_ENV] = str(marker)
        env[_WATCH_ENV] = json.dumps(sorted({Path(name).name for name in watched}))
        return env

    def execute(self, name: str, copy: Path, watched: Sequence[str], timeout: float | None) -> _Execution:
        """Run the test command in `copy` and say which copy of each watched file it imported."""
        marker = self.folder / "markers" / name
        log = self.folder / "logs" / name
        started = time.monotonic()
        with open(log, "wb") as output:
            process = subprocess.Popen(
                self.command,
                shell=True,
                cwd=copy,
                env=self._environment(copy, marker, watched),
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            with self._lock:
                self._processes.add(process)
                if self.cancelled.is_set():
                    _kill_group(process)
            timed_out = False
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                # Whatever the command left running in its group goes with it.
                _kill_group(process)
                process.wait()
                with self._lock:
                    self._processes.discard(process)
        seen = [line.split("\t", 1) for line in _read_text(marker).splitlines() if "\t" in line]
        imported = {}
        for relative in watched:
            expected = os.path.realpath(copy / relative)
            original = os.path.realpath(self.project.root / relative)
            module = _module_name(copy, relative)
            hit = any(path == expected for path, _ in seen)
            elsewhere = next(
                (path for path, name in seen if path != expected and (path == original or name == module)),
                None,
            )
            imported[relative] = (hit, elsewhere)
        tail = _read_text(log).splitlines()[-_OUTPUT_TAIL:]
        return _Execution(
            None if timed_out else process.returncode,
            timed_out,
            time.monotonic() - started,
            imported,
            "\n".join(tail),
        )


def _skip_in_copy(folder: str, names: list[str]) -> set[str]:
    return {name for name in names if name in _SKIPPED_DIRS or (Path(folder, name) / "pyvenv.cfg").exists()}


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


# ---------------------------------------------------------------------------
# Signals: clean up on Ctrl-C and SIGTERM, then let them take effect.


class _Terminated(BaseException):
    """SIGTERM arrived while bite was running."""


class _SignalGuard:
    """Turn SIGINT and SIGTERM into exceptions while bite runs, hold them off while it
    cleans up, then restore the caller's handlers and deliver a SIGTERM to them."""

    _SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.received: list[int] = []
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _SignalGuard:
        # Handlers can only be set from the main thread; elsewhere the caller owns signals.
        if threading.current_thread() is threading.main_thread():
            for signum in self._SIGNALS:
                self._previous[signum] = signal.signal(signum, self._raise)
        return self

    def _raise(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise _Terminated

    def _note(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)

    def hold(self) -> None:
        """From now on only note signals: cleaning up must run to the end."""
        for signum in self._previous:
            signal.signal(signum, self._note)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        if signal.SIGTERM in self.received:
            signal.raise_signal(signal.SIGTERM)
            # Still here: the caller's handler returned or ignores SIGTERM.
            raise SystemExit(128 + signal.SIGTERM)
        if signal.SIGINT in self.received and kind is None:
            raise KeyboardInterrupt


# ---------------------------------------------------------------------------
# Results and the report.


@dataclass(frozen=True)
class Result:
    """What the test command did with one mutant."""

    mutant: Mutant
    outcome: str
    detail: str = ""


@dataclass(frozen=True)
class Report:
    """Every mutant's outcome; `lines()` is the text report, `to_json()` the machine one."""

    results: tuple[Result, ...]
    isolation: str

    def count(self, outcome: str) -> int:
        return sum(1 for result in self.results if result.outcome == outcome)

    @property
    def exit_code(self) -> int:
        """1 when a mutant survived, else 2 when one could not be run, else 0."""
        if self.count("survived"):
            return 1
        return 2 if self.count("error") else 0

    def summary(self) -> str:
        counts = ", ".join(f"{self.count(outcome)} {outcome}" for outcome in OUTCOMES)
        total = len(self.results)
        return f"bite: {total} mutant{'s' if total != 1 else ''} in {self.isolation}: {counts}"

    def lines(self) -> Iterator[str]:
        rows = [("ID", "OPERATOR", "WHERE", "CALLS", "OUTCOME")]
        rows += [
            (
                r.mutant.id,
                r.mutant.operator,
                r.mutant.where,
                " <-> ".join(r.mutant.calls),
                r.outcome,
            )
            for r in self.results
        ]
        widths = [max(len(row[column]) for row in rows) for column in range(4)]
        for row in rows:
            yield ("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[4])
        for result in self.results:
            if result.outcome == "survived":
                mutant = result.mutant
                yield ""
                yield f"survived {mutant.id}: {mutant.operator} {' <-> '.join(mutant.calls)}"
                yield from mutant.diff().splitlines()
        for result in self.results:
            if result.outcome == "error":
                yield ""
                yield f"error {result.mutant.id}: {result.detail}"
        yield ""
        yield self.summary()

    def to_json(self) -> dict[str, Any]:
        return {
            "isolation": self.isolation,
            "mutants": [
                {
                    "id": r.mutant.id,
                    "operator": r.mutant.operator,
                    "file": r.mutant.path,
                    "line": r.mutant.line,
                    "end_line": r.mutant.end_line,
                    "calls": list(r.mutant.calls),
                    "outcome": r.outcome,
                    "detail": r.detail,
                    "diff": r.mutant.diff(),
                }
                for r in self.results
            ],
            "summary": {outcome: self.count(outcome) for outcome in OUTCOMES},
            "exit_code": self.exit_code,
        }


class _Progress:
    """A one-line progress bar on a terminal's stderr; nothing anywhere else."""

    _WIDTH = 24

    def __init__(self, stream: IO[str] | None, total: int) -> None:
        isatty = getattr(stream, "isatty", None)
        self._stream = stream if stream is not None and isatty is not None and isatty() else None
        self._total = total
        self._done = 0

    def advance(self) -> None:
        self._done += 1
        if self._stream is None:
            return
        filled = self._WIDTH * self._done // max(self._total, 1)
        bar = "#" * filled + "-" * (self._WIDTH - filled)
        self._stream.write(f"\rbite [{bar}] {self._done}/{self._total} mutants")
        if self._done == self._total:
            self._stream.write("\n")
        self._stream.flush()


# ---------------------------------------------------------------------------
# The run.


def _cpu_count() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def default_timeout(baseline_seconds: float) -> float:
    """The per-mutant timeout when none is given, from the unmutated run's duration."""
    return max(_TIMEOUT_FLOOR, _TIMEOUT_FACTOR * baseline_seconds)


def _imported_problem(relative: str, imported: tuple[bool, str | None]) -> str | None:
    hit, elsewhere = imported
    if elsewhere is not None:
        return f"the test command imported {relative} from {elsewhere}, not from the scratch copy"
    if not hit:
        return f"the test command never imported {relative} from the scratch copy"
    return None


def _judge(mutant: Mutant, execution: _Execution) -> Result:
    problem = _imported_problem(mutant.path, execution.imported[mutant.path])
    if problem is not None:
        return Result(mutant, "error", problem)
    if execution.timed_out:
        return Result(mutant, "timeout", f"stopped after {execution.seconds:.1f}s")
    if execution.returncode != 0:
        return Result(mutant, "caught", f"exit {execution.returncode}")
    return Result(mutant, "survived", "the test command passed")


def _check_baseline(execution: _Execution) -> dict[str, str]:
    """The files the unmutated run did not import from its copy, with the reason."""
    if execution.timed_out:
        raise BiteError("the unmutated test command timed out in a scratch copy", output=execution.output)
    if execution.returncode != 0:
        raise BiteError(
            f"the unmutated test command failed (exit {execution.returncode}) in a scratch "
            "copy; bite needs a passing command",
            output=execution.output,
        )
    problems = {
        relative: problem
        for relative, imported in execution.imported.items()
        if (problem := _imported_problem(relative, imported)) is not None
    }
    if problems and len(problems) == len(execution.imported):
        first = next(iter(problems.values()))
        raise BiteError(
            f"the unmutated run imports no SOURCE file from the scratch copy ({first}); "
            "check PYTHONPATH, installed copies and the test command",
            output=execution.output,
        )
    return problems


def run(
    project: Project,
    snapshot: dict[str, bytes | None],
    mutants: Sequence[Mutant],
    *,
    test: str = DEFAULT_TEST,
    jobs: int | None = None,
    timeout: float | None = None,
    progress: IO[str] | None = None,
) -> Report:
    """Run the unmutated command, then every mutant, each in its own scratch copy."""
    if not mutants:
        raise UsageError("no call sites of the pinned labels in SOURCE; nothing to mutate")
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {jobs}")
    if timeout is not None and timeout <= 0:
        raise UsageError(f"--timeout must be more than 0 seconds, got {timeout}")
    workers = jobs or _cpu_count()
    watched = sorted({mutant.path for mutant in mutants})
    results: dict[str, Result] = {}
    with _SignalGuard() as guard:
        pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="callpin-bite")
        scratch: _Scratch | None = None
        try:
            scratch = _Scratch(project, snapshot, test)
            baseline = pool.submit(scratch.attempt, "baseline", {}, watched, timeout).result()
            assert baseline is not None
            missed = _check_baseline(baseline)
            limit = timeout if timeout is not None else default_timeout(baseline.seconds)
            bar = _Progress(progress, len(mutants))
            pending = {}
            for mutant in mutants:
                if mutant.path in missed:
                    results[mutant.id] = Result(mutant, "error", missed[mutant.path])
                    bar.advance()
                    continue
                files: dict[str, bytes | None] = {mutant.path: mutant.data()}
                future = pool.submit(scratch.attempt, mutant.id, files, [mutant.path], limit)
                pending[future] = mutant
            for future in concurrent.futures.as_completed(pending):
                execution = future.result()
                assert execution is not None
                results[pending[future].id] = _judge(pending[future], execution)
                bar.advance()
        finally:
            guard.hold()
            if scratch is not None:
                scratch.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
            if scratch is not None:
                scratch.close()
    isolation = "git worktrees" if project.git else "temporary copies"
    return Report(tuple(results[mutant.id] for mutant in mutants), isolation)


def bite(
    sources: Sequence[str | os.PathLike[str]],
    *,
    test: str = DEFAULT_TEST,
    baselines: str | os.PathLike[str] = "baselines",
    labels: Sequence[str] = (),
    operators: Sequence[str] = OPERATORS,
    jobs: int | None = None,
    timeout: float | None = None,
    progress: IO[str] | None = None,
) -> Report:
    """Mutate the calls to the pinned collaborators in `sources` and run `test` on each mutant.

    Runs from the current folder: the project is its git repository (scratch worktrees)
    or the folder itself (temporary copies). Raises CallpinError when it cannot run.
    """
    project, snapshot, mutants = plan(sources, baselines=baselines, labels=labels, operators=operators)
    return run(project, snapshot, mutants, test=test, jobs=jobs, timeout=timeout, progress=progress)


__all__ = [
    "DEFAULT_TEST",
    "OPERATORS",
    "OUTCOMES",
    "Mutant",
    "Project",
    "Report",
    "Result",
    "bite",
    "decode_source",
    "default_timeout",
    "find_mutants",
    "make_mutants",
    "plan",
    "read_labels",
    "run",
    "show",
    "snapshot_sources",
]
