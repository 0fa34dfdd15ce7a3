"""bless and gate: a refreshed baseline is not an accepted baseline until someone blesses it.

`bless` records, in baselines/MANIFEST, the fingerprint and event count of a baseline
together with a reason. `gate` compares the baselines of a git tree (the working tree,
the index or HEAD) with a base commit and blocks every baseline change whose manifest
line does not match, every manifest line whose file disagrees or is gone, and every
baseline without a line; it shows each changed baseline as an interaction diff.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from . import manifest
from .diff import diff
from .errors import CallpinError, GitError, LogFormatError, ManifestError, UsageError
from .git import READ_ONLY, run_git
from .logfile import Log, load
from .manifest import Entry
from .render_diff import render_text
from .text import counted

Tree = Literal["worktree", "staged", "committed"]
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


# ---------------------------------------------------------------------------
# git plumbing: read-only questions about one repository.


class Repository:
    """Read-only access to one git repository's trees, index and revisions."""

    def __init__(self, start: str | os.PathLike[str] = ".") -> None:
        try:
            top = run_git(["rev-parse", "--show-toplevel"], policy=READ_ONLY, cwd=start).text.strip()
        except GitError:
            raise GitError(f"{os.path.abspath(start)} is not inside a git repository") from None
        self.root = Path(top)

    def git(self, *args: str) -> str:
        return run_git(args, policy=READ_ONLY, cwd=self.root).text

    def blob(self, spec: str) -> bytes:
        return run_git(["cat-file", "blob", spec], policy=READ_ONLY, cwd=self.root).stdout

    def commit(self, ref: str) -> str:
        try:
            return self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
        except GitError:
            raise GitError(f"unknown revision {ref!r}") from None

    def has_commit(self, ref: str) -> bool:
        try:
            self.commit(ref)
        except GitError:
            return False
        return True

    def is_shallow(self) -> bool:
        return self.git("rev-parse", "--is-shallow-repository").strip() == "true"

    def default_base(self) -> str:
        """The merge base with the default branch, or the previous commit on it."""
        head = self.commit("HEAD") if self.has_commit("HEAD") else None
        if head is None:
            return EMPTY_TREE
        candidates = []
        try:
            candidates.append(self.git("symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD").strip())
        except GitError:
            pass
        candidates += ["origin/main", "origin/master", "main", "master"]
        for candidate in candidates:
            if not candidate or not self.has_commit(candidate):
                continue
            base = self.git("merge-base", "HEAD", candidate).strip()
            if base and base != head:
                return base
            break
        return self.commit("HEAD~1") if self.has_commit("HEAD~1") else EMPTY_TREE

    def tree_files(self, ref: str, folder: str) -> dict[str, str]:
        """`*.cpin` paths under folder at ref (relative to folder) → blob specs."""
        if ref == EMPTY_TREE:
            return {}
        listing = self.git("ls-tree", "-r", "-z", "--name-only", ref, "--", folder)
        return self._relative(listing.split("\0"), folder, lambda path: f"{ref}:{path}")

    def index_files(self, folder: str) -> dict[str, str]:
        listing = self.git("ls-files", "-z", "--cached", "--", folder)
        return self._relative(listing.split("\0"), folder, lambda path: f":{path}")

    @staticmethod
    def _relative(paths: list[str], folder: str, spec: Any) -> dict[str, str]:
        prefix = folder.rstrip("/") + "/"
        found: dict[str, str] = {}
        for path in paths:
            if path.startswith(prefix) and path.endswith(".cpin"):
                found[path[len(prefix) :]] = spec(path)
        return found

    def manifest_at(self, spec: str, name: str) -> dict[str, Entry]:
        try:
            text = self.blob(spec)
        except GitError:
            return {}
        try:
            return manifest.parse(text.decode("utf-8"), name)
        except UnicodeDecodeError:
            raise ManifestError(name, 1, "not UTF-8 text") from None


# ---------------------------------------------------------------------------
# One baseline's state on each side.


@dataclass(frozen=True)
class Snapshot:
    """A baseline file's bytes on one side, and what they say."""

    data: bytes
    log: Log | None
    damage: str | None

    @classmethod
    def of(cls, data: bytes, name: str) -> Snapshot:
        try:
            return cls(data, load(name, data=data), None)
        except LogFormatError as exc:
            return cls(data, None, exc.reason)

    def matches(self, entry: Entry | None) -> bool:
        return (
            entry is not None
            and self.log is not None
            and entry.fingerprint == self.log.fingerprint
            and entry.count == len(self.log)
        )

    def describe(self) -> str:
        if self.log is None:
            return f"damaged ({self.damage})"
        return f"{self.log.fingerprint}, {counted(len(self.log), 'event')}"


@dataclass
class Verdict:
    """What the gate says of one baseline."""

    path: str
    status: str  # unchanged, added, changed, removed
    blocking: bool
    message: str
    reason: str | None = None
    diff: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "status": self.status,
            "blocking": self.blocking,
            "message": self.message,
            "reason": self.reason,
            "diff": self.diff,
        }


@dataclass
class GateReport:
    """The gate's verdicts over one baselines folder, against one base commit."""

    base: str
    folder: str
    tree: Tree
    verdicts: list[Verdict] = field(default_factory=list)
    # Why the base is what it is, when a reader would not expect it (a shallow clone).
    note: str | None = None

    @property
    def blocked(self) -> bool:
        return any(v.blocking for v in self.verdicts)

    def summary(self) -> str:
        changed = [v for v in self.verdicts if v.status != "unchanged"]
        blocking = [v for v in self.verdicts if v.blocking]
        verdict = "BLOCKED" if blocking else "ok"
        return (
            f"gate: {verdict}: {len(changed)} baseline(s) changed since {self.base[:12]}, "
            f"{len(blocking)} blocking, {len(self.verdicts)} checked"
        )

    def next_step(self) -> str | None:
        """The command that unblocks the gate, once the diffs above are read and right."""
        blocking = [f"{self.folder}/{v.path}" for v in self.verdicts if v.blocking]
        if not blocking:
            return None
        return f"callpin bless {' '.join(shlex.quote(path) for path in blocking)} --reason '...'"

    def lines(self) -> Iterator[str]:
        """The text report: each changed or blocking baseline with its diff, the summary, the next step."""
        for verdict in self.verdicts:
            if verdict.status == "unchanged" and not verdict.blocking:
                continue
            mark = "BLOCKED" if verdict.blocking else "ok"
            yield f"{mark:8} {self.folder}/{verdict.path}: {verdict.message}"
            if verdict.diff:
                for line in verdict.diff.rstrip("\n").splitlines():
                    yield f"         {line}"
        if self.note is not None:
            yield f"gate: {self.note}"
        yield self.summary()
        step = self.next_step()
        if step is not None:
            yield f"next: read the changes above; accept those that are right with: {step}"

    def as_json(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "folder": self.folder,
            "tree": self.tree,
            "blocked": self.blocked,
            "baselines": [v.as_json() for v in self.verdicts],
            "note": self.note,
            "summary": self.summary(),
            "next": self.next_step(),
        }


def _interaction_diff(old: Snapshot | None, new: Snapshot | None) -> str | None:
    if old is not None and new is not None and old.log is not None and new.log is not None:
        try:
            return render_text(diff(old.log, new.log))
        except CallpinError as exc:
            return f"(cannot diff: {exc})"
    side = new if new is not None else old
    if side is None or side.log is None:
        return None
    counts = Counter(event.label for event in side.log if event.kind == "call")
    verb = "added" if new is not None else "removed"
    listing = ", ".join(f"{label} \u00d7{count}" for label, count in sorted(counts.items()))
    return f"{verb}: {counted(len(side.log), 'event')}" + (f" ({listing})" if listing else "")


def gate(
    *,
    base: str | None = None,
    folder: str = "baselines",
    tree: Tree = "worktree",
    start: str | os.PathLike[str] = ".",
) -> GateReport:
    """Check every baseline under `folder` of the repository at `start` against `base`."""
    repo = Repository(start)
    if tree == "staged" and base is None:
        base = "HEAD" if repo.has_commit("HEAD") else EMPTY_TREE
    base_commit = EMPTY_TREE if base == EMPTY_TREE else repo.commit(base) if base else repo.default_base()
    folder = _folder_in_repo(repo, folder, start)
    manifest_name = f"{folder}/{manifest.NAME}"

    old_files = repo.tree_files(base_commit, folder)
    new_files, new_manifest = _new_side(repo, folder, tree, manifest_name)

    report = GateReport(base_commit, folder, tree)
    if base is None and base_commit == EMPTY_TREE and repo.has_commit("HEAD") and repo.is_shallow():
        # Every manifest line is still checked against its file; only the diffs of
        # calls need the old side, which this clone does not have.
        report.note = (
            "compared with the empty tree: this clone is shallow and has no base commit; "
            "fetch the history (e.g. fetch-depth: 0) or pass --base REF to see diffs of calls"
        )
    for path in sorted(set(old_files) | set(new_files) | set(new_manifest)):
        old = (
            Snapshot.of(repo.blob(old_files[path]), f"{base_commit[:12]}:{folder}/{path}")
            if path in old_files
            else None
        )
        new = _read_new(repo, repo.root / folder / path, new_files.get(path), f"{folder}/{path}")
        report.verdicts.append(judge(path, old, new, new_manifest.get(path), base_commit))
    return report


def _folder_in_repo(repo: Repository, folder: str, start: str | os.PathLike[str]) -> str:
    absolute = (Path(start) / folder).resolve()
    try:
        relative = absolute.relative_to(repo.root.resolve())
    except ValueError:
        raise UsageError(f"baselines folder {folder} is outside the repository {repo.root}") from None
    return relative.as_posix() if relative.parts else "."


def _new_side(
    repo: Repository, folder: str, tree: Tree, manifest_name: str
) -> tuple[dict[str, str | None], dict[str, Entry]]:
    if tree == "committed":
        files: dict[str, str | None] = dict(repo.tree_files("HEAD", folder)) if repo.has_commit("HEAD") else {}
        return files, repo.manifest_at(f"HEAD:{manifest_name}", manifest_name)
    if tree == "staged":
        return dict(repo.index_files(folder)), repo.manifest_at(f":{manifest_name}", manifest_name)
    files = {path: None for path in manifest.baseline_files(repo.root / folder)}
    return files, manifest.read(repo.root / folder)


def _read_new(repo: Repository, disk: Path, spec: str | Any | None, name: str) -> Snapshot | None:
    if spec is not None:
        return Snapshot.of(repo.blob(spec), name)
    if not disk.is_file():
        return None
    try:
        data = disk.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror}") from None
    return Snapshot.of(data, name)


def judge(
    path: str,
    old: Snapshot | None,
    new: Snapshot | None,
    entry: Entry | None,
    base: str,
) -> Verdict:
    """The gate's judgement of one baseline: its bytes at `base` (`old`) and now (`new`), its manifest line.

    A change (added, changed, removed) passes only when the manifest line matches the new
    file; a manifest line that disagrees with an unchanged file, a damaged file, a line
    for a file that is gone and a file without a line all block. None means absent.
    """
    since = f"since {base[:12]}"
    if new is None:
        if entry is not None:
            return Verdict(
                path,
                "removed" if old else "unchanged",
                True,
                "listed in the manifest, but the file is gone",
                entry.reason,
                _interaction_diff(old, None) if old else None,
            )
        return Verdict(
            path, "removed", False, f"removed {since}, blessed (no manifest line)", None, _interaction_diff(old, None)
        )
    if new.log is None:
        return Verdict(
            path,
            "changed" if old is None or old.data != new.data else "unchanged",
            True,
            f"the file is damaged: {new.damage}",
        )
    changed = (
        old is None
        or old.log is None
        or not (old.log.fingerprint == new.log.fingerprint and len(old.log) == len(new.log))
    )
    status = "unchanged" if not changed else "added" if old is None else "changed"
    diff_text = _interaction_diff(old, new) if changed else None
    if entry is None:
        what = f"{status} {since} without a blessing" if changed else "has no manifest line"
        return Verdict(path, status, True, f"{what} (run: callpin bless {path} --reason ...)", None, diff_text)
    if not new.matches(entry):
        if changed:
            message = (
                f"{status} {since}, refreshed but not blessed: the manifest says "
                f"{entry.fingerprint}, {counted(entry.count, 'event')}; the file is {new.describe()}"
            )
        else:
            message = (
                f"manifest and file disagree (stale manifest or hand-edited log): the manifest says "
                f"{entry.fingerprint}, {counted(entry.count, 'event')}; the file is {new.describe()}"
            )
        return Verdict(path, status, True, message, entry.reason, diff_text)
    if changed:
        return Verdict(path, status, False, f"{status} {since}, blessed: {entry.reason}", entry.reason, diff_text)
    return Verdict(path, "unchanged", False, "unchanged", entry.reason)


# ---------------------------------------------------------------------------
# bless


@dataclass
class Blessing:
    """One baseline blessed: its new manifest line (None when its removal was blessed)."""

    path: str
    entry: Entry | None
    before: Counter[str]
    after: Counter[str]

    def describe(self) -> str:
        if self.entry is None:
            return f"blessed removal of {self.path}"
        labels = sorted(set(self.before) | set(self.after))
        counts = ", ".join(f"{label} {self.before[label]} → {self.after[label]}" for label in labels)
        return f"blessed {self.path}: {counted(self.entry.count, 'event')}, {self.entry.fingerprint}" + (
            f"; {counts}" if counts else ""
        )


def _call_counts(log: Log | None) -> Counter[str]:
    return Counter(event.label for event in log if event.kind == "call") if log is not None else Counter()


def bless(
    paths: list[str],
    *,
    reason: str,
    folder: str = "baselines",
    all_changed: bool = False,
    start: str | os.PathLike[str] = ".",
) -> list[Blessing]:
    """Record the current fingerprint of each baseline in the manifest, with a reason."""
    reason = manifest.check_reason(reason)
    root = Path(start) / folder
    if not root.is_dir():
        raise UsageError(f"no baselines folder at {root}")
    entries = manifest.read(root)
    targets = [_relative_to_folder(p, root, entries) for p in paths]
    if all_changed:
        for path in manifest.baseline_files(root):
            entry = entries.get(path)
            if entry is None or not Snapshot.of((root / path).read_bytes(), path).matches(entry):
                targets.append(path)
        targets += [path for path in entries if not (root / path).is_file()]
    if not targets:
        if all_changed:
            return []  # every baseline already matches its line: nothing to do, not an error
        raise UsageError("nothing to bless: give baseline paths or --all-changed")
    previous = _previous_versions(root)
    blessings: list[Blessing] = []
    for path in sorted(set(targets)):
        before = _call_counts(previous(path))
        file = root / path
        if not file.is_file():
            entries.pop(path, None)
            blessings.append(Blessing(path, None, before, Counter()))
            continue
        log = load(file)
        entry = Entry(path, log.fingerprint, len(log), reason)
        entries[path] = entry
        blessings.append(Blessing(path, entry, before, _call_counts(log)))
    manifest.write(root, entries.values())
    return blessings


def _relative_to_folder(given: str, root: Path, entries: dict[str, Entry]) -> str:
    candidate = Path(given)
    resolved_root = root.resolve()
    for option in (candidate, root / candidate):
        absolute = option.resolve() if option.is_absolute() or option.exists() else None
        if absolute is not None and absolute.is_relative_to(resolved_root):
            relative = absolute.relative_to(resolved_root).as_posix()
            if not relative.endswith(".cpin"):
                raise UsageError(f"{given} is not a .cpin baseline")
            return relative
    as_entry = candidate.as_posix()
    for name in (as_entry, os.path.relpath(candidate.resolve(), resolved_root)):
        if name in entries:
            return name
    raise UsageError(f"{given} is not a baseline under {root}")


def _previous_versions(root: Path) -> Any:
    """A function giving the HEAD version of a baseline as a Log, or None."""
    try:
        repo = Repository(root)
        folder = root.resolve().relative_to(repo.root.resolve()).as_posix()
        head = repo.has_commit("HEAD")
    except (GitError, ValueError):
        return lambda path: None

    def previous(path: str) -> Log | None:
        if not head:
            return None
        try:
            return load(path, data=repo.blob(f"HEAD:{folder}/{path}"))
        except (GitError, LogFormatError):
            return None

    return previous


# ---------------------------------------------------------------------------
# the pre-commit hook

# The hook runs the callpin that installed it, by its interpreter's absolute path, so it
# gates whether or not that environment is active (a callpin on PATH is the fallback).
# Without either it fails the commit and says how to fix it: a gate that skips itself
# when callpin is missing would let unblessed baselines through unnoticed.
HOOK = """#!/bin/sh
# callpin: block commits that change a baseline without blessing it (callpin gate --install-hook).
python={python}
if "$python" -c "import callpin" >/dev/null 2>&1; then
    exec "$python" -m callpin gate --staged --baselines {folder}
fi
if command -v callpin >/dev/null 2>&1; then
    exec callpin gate --staged --baselines {folder}
fi
echo "callpin pre-commit hook: callpin is missing ($python cannot import it, and no callpin is on PATH)," >&2
echo "so the baselines cannot be gated and the commit is stopped." >&2
echo "fix: install callpin, then run 'callpin gate --install-hook --force' with it" >&2
echo "(or commit with 'git commit --no-verify' to skip the gate this once)" >&2
exit 1
"""


def install_hook(*, folder: str = "baselines", force: bool = False, start: str | os.PathLike[str] = ".") -> Path:
    """Write the pre-commit hook; refuse to replace a hook that exists unless forced."""
    repo = Repository(start)
    hooks = repo.git("rev-parse", "--git-path", "hooks").strip()
    hook = (repo.root / hooks / "pre-commit") if not os.path.isabs(hooks) else Path(hooks) / "pre-commit"
    if hook.exists() and not force:
        raise UsageError(f"a pre-commit hook exists at {hook}; use --force to replace it")
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(
        HOOK.format(python=shlex.quote(sys.executable), folder=shlex.quote(_folder_in_repo(repo, folder, start)))
    )
    hook.chmod(0o755)
    return hook
