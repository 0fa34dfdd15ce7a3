"""What bite would run: the pinned labels, the project, and the mutants of its SOURCE snapshot.

The labels come from the call events of the baselines (or from --label); the mutants are
made again from the sources every time, so a mutant's id names the same mutant as long
as its lines are unchanged (`show`).
"""

from __future__ import annotations

import difflib
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from ..errors import UsageError
from ..logfile import load
from ..project_index import module_name
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
    *,
    loose: bool = False,
) -> list[Mutant]:
    """The mutants of every Python file of the snapshot.

    Each file is analysed as the module its place in the project names (the folders with
    an `__init__.py` above it are its packages), so a call of the module's own function
    resolves to the label a whole-module pin records.
    """
    mutants: list[Mutant] = []
    for name, data in snapshot.items():
        if data is None or not name.endswith(".py"):
            continue
        module, root, package = module_name(project.root / name)
        try:
            text, encoding = decode_source(data)
            found = make_mutants(
                text,
                name,
                labels,
                operators,
                encoding=encoding,
                module=module,
                package=package,
                roots=[root],
                loose=loose,
            )
            mutants.extend(found)
        except (SyntaxError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot parse {name}: {exc}") from None
    return mutants


def _closest_pinned(label: str, baselines: str | os.PathLike[str]) -> list[str]:
    """The pinned labels nearest to `label` by spelling, or none when the baselines name none."""
    try:
        pinned = read_labels(baselines)
    except UsageError:
        return []
    return difflib.get_close_matches(label, pinned, n=3, cutoff=0.5)


def check_labels(labels: Sequence[str], mutants: Sequence[Mutant], baselines: str | os.PathLike[str]) -> None:
    """Refuse a --label that no call site in SOURCE matched, naming it and the closest pinned labels."""
    matched = {call for mutant in mutants for call in mutant.calls}
    for label in labels:
        if label in matched:
            continue
        closest = _closest_pinned(label, baselines)
        hint = f"; closest pinned labels: {', '.join(closest)}" if closest else "; no pinned label is close"
        raise UsageError(f"--label {label} matches no call site in SOURCE{hint}")


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` as (K, N), 1 <= K <= N; anything else is a usage error."""
    index, slash, count = text.partition("/")
    if slash and index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count):
        return int(index), int(count)
    raise UsageError(f"--shard takes K/N with 1 <= K <= N, got {text!r}")


def in_shard(mutant_id: str, shard: tuple[int, int]) -> bool:
    """Whether the mutant with this id belongs to shard K of N.

    A digest of the id alone decides, so every machine of a CI matrix picks the same
    split from the same sources, and a mutant added elsewhere moves no other one.
    """
    index, count = shard
    digest = hashlib.sha1(mutant_id.encode(), usedforsecurity=False).digest()
    return int.from_bytes(digest[:8], "big") % count == index - 1


def plan(
    sources: Sequence[str | os.PathLike[str]],
    *,
    baselines: str | os.PathLike[str] = "baselines",
    labels: Sequence[str] = (),
    operators: Sequence[str] = OPERATORS,
    shard: tuple[int, int] | None = None,
    loose: bool = False,
) -> tuple[Project, dict[str, bytes | None], list[Mutant]]:
    """The project, the SOURCE snapshot and the mutants bite would run (of one shard), from the current folder.

    `loose` also mutates calls whose binding the code does not show when their last name
    is a pinned label's (`gateway.charge_card` with a `gateway` parameter): name matching.
    """
    check_operators(operators)
    project = Project.locate()
    snapshot = snapshot_sources(project, sources)
    chosen = list(labels) or read_labels(baselines)
    mutants = find_mutants(project, snapshot, chosen, operators, loose=loose)
    check_labels(labels, mutants, baselines)
    if shard is not None:
        mutants = [mutant for mutant in mutants if in_shard(mutant.id, shard)]
    return project, snapshot, mutants


def show(
    sources: Sequence[str | os.PathLike[str]],
    mutant_id: str,
    *,
    baselines: str | os.PathLike[str] = "baselines",
    labels: Sequence[str] = (),
    operators: Sequence[str] = OPERATORS,
    loose: bool = False,
) -> Mutant:
    """The mutant with this id, made again from the current sources."""
    _, _, mutants = plan(sources, baselines=baselines, labels=labels, operators=operators, loose=loose)
    for mutant in mutants:
        if mutant.id == mutant_id:
            return mutant
    raise UsageError(f"no mutant {mutant_id!r} in these sources (ids change when the mutated lines do)")
