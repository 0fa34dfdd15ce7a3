"""What bite would run: the pinned labels, the project, and the mutants of its SOURCE snapshot.

The labels come from the call events of the baselines (or from --label); the mutants are
made again from the sources every time, so a mutant's id names the same mutant as long
as its lines are unchanged (`show`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..errors import UsageError
from ..logfile import load
from .mutants import OPERATORS, Mutant, check_operators, decode_source, make_mutants
from .project import Project, snapshot_sources


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
    check_operators(operators)
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
