"""Seams: every call each function of a source makes, classified for pinning.

`find(sources)` reads SOURCE files and folders with `bindings` (never importing them) and
sorts each call a function makes into one of KINDS:

- `collaborator`: bound to another module of the project or to a third-party package,
  with the dotted target `spy=` takes and whether a baseline already pins it;
- `internal`: a function of the same module (a private one is flagged: pinning it
  stops the refactor the pin is for);
- `ambient`: a standard-library call that makes a log nondeterministic (`uuid.uuid4`,
  `time.time`, `datetime.now`, `random.*`, `os.environ`, directory listings), with the
  rule or stub that tames it;
- `unresolved`: a call on a parameter or an attribute whose binding the code does not show.

Other standard-library and builtin calls (`json.dumps`, `len`), and exceptions built to be
raised (`raise NotFound(...)`), are counted, not listed.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bindings import Bindings, analyze_file
from .call_site import Function, Site, matches
from .errors import UsageError
from .logfile import load
from .source_files import python_files

KINDS = ("collaborator", "internal", "ambient", "unresolved")

# The standard library's sources of nondeterminism, by dotted prefix, and how to tame each.
_CLOCK = "stub it (stub={'%s': callpin.returns(...)}) or pass the time in"
_STAMP = "the built-in timestamp rule numbers its ISO 8601 text; pass the clock in for other forms"
_LISTING = "sort the listing (sorted(...)); callpin probe's order cell shows the dependence"
_ENVIRON = "set it in the test (monkeypatch.setenv); callpin probe's env cell shows the dependence"
AMBIENT: dict[str, str] = {
    "uuid.uuid1": "the built-in uuid rule numbers it (on by default)",
    "uuid.uuid4": "the built-in uuid rule numbers it (on by default)",
    "time.time": _CLOCK,
    "time.time_ns": _CLOCK,
    "time.monotonic": _CLOCK,
    "time.perf_counter": _CLOCK,
    "time.localtime": _CLOCK,
    "time.gmtime": _CLOCK,
    "time.strftime": _CLOCK,
    "time.ctime": _CLOCK,
    "datetime.datetime.now": _STAMP,
    "datetime.datetime.utcnow": _STAMP,
    "datetime.datetime.today": _STAMP,
    "datetime.date.today": "pass the date in, or a rule for its text",
    "random": "seed it in the test (random.seed(0)) or stub it",
    "secrets": "stub it: its values are random by design",
    "os.environ": _ENVIRON,
    "os.getenv": _ENVIRON,
    "os.listdir": _LISTING,
    "os.scandir": _LISTING,
    "os.walk": _LISTING,
    "glob.glob": _LISTING,
    "glob.iglob": _LISTING,
    "pathlib.Path.iterdir": _LISTING,
    "pathlib.Path.glob": _LISTING,
    "pathlib.Path.rglob": _LISTING,
    "os.getpid": "stub it, or leave it out of what the code passes on",
    "socket.gethostname": "stub it, or leave it out of what the code passes on",
    "tempfile": "use pytest's tmp_path and a rule for its paths",
}


def ambient_hint(target: str) -> str | None:
    """How to tame a nondeterministic standard-library target, or None when it is not one."""
    parts = target.split(".")
    for end in range(len(parts), 0, -1):
        hint = AMBIENT.get(".".join(parts[:end]))
        if hint is not None:
            return hint % target if "%s" in hint else hint
    return None


@dataclass(frozen=True)
class Seam:
    """The calls of one function to one callee: a kind, where, how many times."""

    kind: str
    target: str | None  # the dotted target; None for an unresolved call
    text: str  # the callee as written
    file: str
    lines: tuple[int, ...]
    binding: str
    constructs: bool = False
    private: bool = False
    pinned: bool | None = None  # collaborators only
    hint: str | None = None  # ambient: the rule or stub; unresolved: why

    @property
    def count(self) -> int:
        return len(self.lines)

    @property
    def name(self) -> str:
        return self.target or self.text

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "target": self.target,
            "text": self.text,
            "file": self.file,
            "lines": list(self.lines),
            "count": self.count,
            "binding": self.binding,
            "constructs": self.constructs,
            "private": self.private,
            "pinned": self.pinned,
            "hint": self.hint,
        }


@dataclass(frozen=True)
class FunctionSeams:
    """One function, method or class body of a source file, and its seams by kind."""

    module: str
    function: Function
    file: str
    seams: tuple[Seam, ...]
    node: ast.AST | None = field(default=None, compare=False, repr=False)
    others: int = 0  # standard-library and builtin calls that are none of KINDS

    @property
    def dotted(self) -> str:
        return f"{self.module}.{self.function.qualname}"

    def of(self, kind: str) -> list[Seam]:
        return [seam for seam in self.seams if seam.kind == kind]

    def spy(self) -> list[str]:
        """The `spy=` targets of its collaborators, in source order: a class it constructs
        once (spying the class records its methods), not each of its methods."""
        collaborators = self.of("collaborator")
        classes = [seam.target for seam in collaborators if seam.constructs and seam.target]
        chosen: list[str] = []
        for seam in sorted(collaborators, key=lambda seam: seam.lines[0]):
            target = seam.target
            if target is None or target in chosen:
                continue
            if not seam.constructs and any(target.startswith(cls + ".") for cls in classes):
                continue
            chosen.append(target)
        return chosen

    def as_json(self) -> dict[str, Any]:
        return {
            "module": self.module,
            "function": self.function.qualname,
            "kind": self.function.kind,
            "file": self.file,
            "line": self.function.line,
            "private": self.function.private,
            "seams": [seam.as_json() for seam in self.seams],
            "other_calls": self.others,
        }


def pinned_labels(baselines: str | os.PathLike[str]) -> list[str]:
    """The call labels of the `*.cpin` logs under `baselines`; none when there is no such folder.

    A log that cannot be read is a usage error naming it: a seam shown as unpinned because
    its baseline is damaged would mislead.
    """
    folder = Path(baselines)
    if not folder.is_dir():
        return []
    labels: set[str] = set()
    for path in sorted(folder.rglob("*.cpin")):
        try:
            labels.update(event.label for event in load(path) if event.kind == "call")
        except Exception as exc:
            raise UsageError(f"cannot read the baseline {path}: {exc}") from None
    return sorted(labels)


def split_source(spec: str) -> tuple[str, str | None]:
    """`path::Function.method` as (path, qualname); a plain path as (path, None)."""
    path, sep, function = spec.partition("::")
    if sep and not function:
        raise UsageError(f"{spec!r}: name a function after '::'")
    return path, function or None


def find(sources: Sequence[str], *, baselines: str | os.PathLike[str] = "baselines") -> list[FunctionSeams]:
    """The seams of every function of SOURCE files and folders (`path::qualname` for one)."""
    labels = pinned_labels(baselines)
    found: list[FunctionSeams] = []
    for spec in sources:
        path, only = split_source(spec)
        if not os.path.exists(path):
            raise UsageError(f"no such file or folder: {path}")
        matched = False
        for file in python_files(Path(path)):
            for function in _file_seams(file, labels):
                if only is None or function.function.qualname == only:
                    matched = True
                    found.append(function)
        if only is not None and not matched:
            raise UsageError(f"no function {only} in {path}")
    return found


def choose(found: Sequence[FunctionSeams], name: str) -> FunctionSeams:
    """The one function named `name` (a qualname, or the module's dotted name and a qualname)."""
    chosen = [f for f in found if name in (f.function.qualname, f.dotted)]
    if len(chosen) == 1:
        return chosen[0]
    if not chosen:
        raise UsageError(f"no function {name} in SOURCE")
    raise UsageError(f"{name} names {len(chosen)} functions; say which: {', '.join(f.dotted for f in chosen)}")


def _file_seams(file: Path, labels: list[str]) -> Iterator[FunctionSeams]:
    shown = os.path.relpath(file) if not file.is_absolute() or _inside_cwd(file) else str(file)
    try:
        found = analyze_file(file)
    except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"cannot parse {shown}: {exc}") from None
    nodes = _definitions(found)
    scopes: dict[str, list[Site]] = {}
    for site in found.calls:
        scopes.setdefault(site.scope, []).append(site)
    # A read (not a call) of another module's attribute matters only when it is ambient: os.environ.
    for site in found.reads:
        if site.origin == "stdlib" and site.target is not None and ambient_hint(site.target) is not None:
            scopes.setdefault(site.scope, []).append(site)
    raised = _raised(found.tree)
    functions = list(found.functions)
    if scopes.get(""):
        functions.insert(0, Function("<module>", 1, 1, "module"))
    for function in functions:
        sites = scopes.get("" if function.kind == "module" else function.qualname, [])
        seams, others = _classify(sites, shown, labels, raised)
        yield FunctionSeams(found.module, function, shown, seams, nodes.get(function.line), others)


def _inside_cwd(file: Path) -> bool:
    try:
        file.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return False
    return True


def _definitions(found: Bindings) -> dict[int, ast.AST]:
    return {
        node.lineno: node
        for node in ast.walk(found.tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }


def _raised(tree: ast.AST) -> set[int]:
    """The callee nodes of the calls a `raise` statement raises (`raise NotFound(...)`)."""
    return {
        id(node.exc.func) for node in ast.walk(tree) if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
    }


def _classify(sites: Iterable[Site], file: str, labels: list[str], raised: set[int]) -> tuple[tuple[Seam, ...], int]:
    grouped: dict[tuple[str, str], list[Site]] = {}
    others = 0
    for site in sites:
        kind = _kind(site)
        if kind == "collaborator" and site.constructs and id(site.node) in raised:
            # An exception built to be raised is an outcome, not a collaborator call: the
            # pin records it as the `raise` of the spied call it escapes (or the test asserts
            # it), and a class with no public methods of its own cannot be a spy= target.
            kind = None
        if kind is None:
            others += 1
            continue
        grouped.setdefault((kind, site.target or site.text), []).append(site)
    seams = []
    for (kind, _), group in grouped.items():
        first = group[0]
        target = first.target
        seams.append(
            Seam(
                kind,
                target,
                first.text,
                file,
                tuple(sorted({site.line for site in group})),
                first.binding,
                constructs=any(site.constructs for site in group),
                private=kind == "internal" and target is not None and target.rsplit(".", 1)[-1].startswith("_"),
                pinned=_pinned(target, labels) if kind == "collaborator" and target else None,
                hint=_hint(kind, first),
            )
        )
    order = {kind: rank for rank, kind in enumerate(KINDS)}
    seams.sort(key=lambda seam: (order[seam.kind], seam.lines[0], seam.name))
    return tuple(seams), others


def _hint(kind: str, site: Site) -> str | None:
    if kind == "ambient" and site.target is not None:
        return ambient_hint(site.target)
    return site.binding if kind == "unresolved" else None


def _kind(site: Site) -> str | None:
    if site.target is None:
        return "unresolved"
    if site.origin in ("project", "third-party"):
        return "collaborator"
    if site.origin == "module":
        return "internal"
    if site.origin == "stdlib" and ambient_hint(site.target) is not None:
        return "ambient"
    return None


def _pinned(target: str, labels: list[str]) -> bool:
    # A class is pinned when a baseline records one of its methods.
    return any(matches(target, label) or matches(target, label.rpartition(".")[0]) for label in labels)
