"""The pytest plugin: the `callpin` fixture, modes, CI refusal, unused baselines, quarantine.

One `PinSession` per run holds the mode and the baselines folder and gathers what the
tests did (written, updated, drifted, missing, used baselines) from the test reports'
`user_properties`, so the same code works in one process and on an xdist controller.
Baseline names come from one function, `names.baseline_stem`; the end-of-run verdict is a
`PinReport`, which yields the terminal lines and the JSON document.
"""

from __future__ import annotations

import glob
import json
import os
import shlex
import sys
import types
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from . import forms, quarantine
from .atomic import replace_file
from .errors import ModeRefused, UsageError
from .names import baseline_path, owned
from .pinning import MODES, Pin, observe, pin, resolve_mode, unobserve
from .recorder import Recording, raises, record, returns
from .spy import forget_test_modules, keep_test_modules

if TYPE_CHECKING:
    from pluggy import Result

    from .spy import SpySpec

OUTCOMES = ("written", "updated", "drifted", "missing")

_PROPERTY = "callpin"
_WORKER_KEY = "callpin_partial"


# ---------------------------------------------------------------------------
# What a run covered.


def _partial_reason(config: pytest.Config) -> str | None:
    """Why the command line selects less than the whole suite, or None when it selects all of it."""
    option = config.option
    for flag, dest in (
        ("--collect-only", "collectonly"),
        ("--setup-only", "setuponly"),
        ("--setup-plan", "setupplan"),
    ):
        if getattr(option, dest, False):
            return f"{flag}: no test ran"
    for flag, dest in (
        ("-k", "keyword"),
        ("-m", "markexpr"),
        ("--deselect", "deselect"),
        ("--ignore", "ignore"),
        ("--ignore-glob", "ignore_glob"),
        ("--lf", "lf"),
        ("--sw", "stepwise"),
    ):
        if getattr(option, dest, None):
            return f"{flag} selects part of the suite"
    if config.args_source is pytest.Config.ArgsSource.TESTPATHS:
        return None
    rootdir = config.rootpath.resolve()
    invoked = config.invocation_params.dir
    given: set[Path] = set()
    for arg in config.args:
        if "::" in arg:
            return "a test id on the command line selects part of the suite"
        given.add((invoked / arg).resolve())
    if rootdir in given:
        return None
    suite = {
        Path(found).resolve()
        for pattern in config.getini("testpaths")
        for found in glob.glob(str(rootdir / pattern), recursive=True)
    } or {rootdir}
    if suite <= given:
        return None
    return "the paths on the command line are part of the suite"


# ---------------------------------------------------------------------------
# The end-of-run verdict.


@dataclass
class PinReport:
    """What one run did to its baselines; yields the terminal lines and the JSON document."""

    mode: str
    outcomes: dict[str, list[str]]
    unchanged: int
    notes: list[str]
    partial: str | None
    unused: list[str]
    pruned: list[str]
    prune: bool
    strict: bool
    shared: list[str] = field(default_factory=list)
    review: str = "callpin review"

    @property
    def fails(self) -> bool:
        """A baseline two pins share fails the run; unused ones only under --callpin-strict, not once pruned."""
        return bool(self.shared) or (self.strict and bool(self.unused) and not self.pruned)

    def lines(self) -> Iterator[str]:
        counts = ", ".join(f"{len(self.outcomes[kind])} {kind}" for kind in OUTCOMES)
        yield f"{self.mode} mode: {counts}, {self.unchanged} unchanged"
        yield from self.notes
        for clash in self.shared:
            yield f"{clash}: the run fails; give one of the pins a name"
        if self.outcomes["missing"]:
            yield "write the missing baselines with --callpin-mode=new"
        if self.outcomes["missing"] or self.outcomes["drifted"]:
            yield f"their received logs wait beside them: {self.review} accepts or rejects each"
        if self.partial is not None:
            pruning = ", nothing pruned" if self.prune else ""
            yield f"unused baselines not checked{pruning}: not a full run ({self.partial})"
            return
        if self.pruned:
            yield f"pruned {len(self.pruned)} unused baseline{_plural(self.pruned)}:"
            yield from (f"  {path}" for path in self.pruned)
        elif self.unused:
            verdict = " (--callpin-strict: the run fails)" if self.strict else ""
            yield f"{len(self.unused)} unused baseline{_plural(self.unused)}{verdict}:"
            yield from (f"  {path}" for path in self.unused)
            yield "remove with --callpin-prune"

    def as_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            **{kind: self.outcomes[kind] for kind in OUTCOMES},
            "unchanged": self.unchanged,
            "full_run": self.partial is None,
            "partial_reason": self.partial,
            "unused": self.unused,
            "pruned": self.pruned,
            "shared": self.shared,
        }


def _plural(items: list[str]) -> str:
    return "" if len(items) == 1 else "s"


# ---------------------------------------------------------------------------
# The session: mode, folder, and what the tests did.


# eq=False: the session is registered as a plugin, and pluggy keeps plugins in sets.
@dataclass(frozen=True)
class Claim:
    """One pin's hold on a baseline: its key (relative to the baselines folder), test and name."""

    key: str
    nodeid: str
    name: str | None

    def owner(self) -> str:
        return self.nodeid + (f" (pin {self.name!r})" if self.name else "")

    def clash(self, held: Claim, shown: Callable[[str], str]) -> str | None:
        """Why this claim cannot share a file with `held` (the claim made first), or None.

        Keys that differ only in case are one file on a case-insensitive filesystem
        (macOS, Windows): a repository with both breaks on those machines.
        """
        if (held.nodeid, held.name) == (self.nodeid, self.name):
            return None
        if held.key == self.key:
            return f"{shown(self.key)} is the baseline of both {held.owner()} and {self.owner()}"
        return (
            f"{shown(held.key)} of {held.owner()} and {shown(self.key)} of {self.owner()} "
            "differ only in case (one file on macOS and Windows)"
        )


@dataclass(eq=False)
class PinSession:
    """One run's callpin state, registered as a plugin for the run.

    It learns what the tests did only from their reports, which is also all an xdist
    controller sees: each pin adds a `("callpin", json)` pair to the test's
    `user_properties`, which travel with every report of that test.
    """

    mode: str
    root: Path
    rootdir: Path
    prune: bool
    strict: bool
    report_file: Path | None
    dir_option: str | None
    invocation_dir: Path = field(default_factory=Path.cwd)
    diff_lines: int | None = None
    partial: str | None = None
    used: set[str] = field(default_factory=set)
    unchanged: int = 0
    outcomes: dict[str, list[str]] = field(default_factory=lambda: {kind: [] for kind in OUTCOMES})
    notes: list[str] = field(default_factory=list)
    # Baselines claimed by a pin, by their key casefolded: (key, node id, pin name). The
    # fixture refuses a second claim within one process; the controller of an xdist run
    # finds those made on different workers in the reports.
    claims: dict[str, Claim] = field(default_factory=dict)
    owners: dict[str, Claim] = field(default_factory=dict)
    shared: list[str] = field(default_factory=list)
    report: PinReport | None = None
    # Node ids whose baselines must never count as unused: tests that were skipped,
    # xfailed or failed (they may not have reached their pins), and skipped modules.
    _protected_tests: set[str] = field(default_factory=set)
    _protected_collectors: set[str] = field(default_factory=set)
    # How many of each test's user_properties were already read: every report of a
    # test (setup, call, teardown) carries all of them so far.
    _read: dict[str, int] = field(default_factory=dict)
    # The test running now (its pins report into its user_properties), and the names
    # the fixture gave the pins of their paths.
    _current: pytest.Item | None = None
    _names: dict[str, str | None] = field(default_factory=dict)

    # -- what every pin of the run is told, and tells (pinning.PinObserver) --------------

    def shown(self, path: str | Path) -> str:
        """A baseline as messages name it: relative to the rootdir when it is inside it."""
        absolute = Path(os.path.abspath(path))
        try:
            return absolute.relative_to(self.rootdir).as_posix()
        except ValueError:
            return str(path)

    def command_path(self, path: str) -> str:
        """`path` as a command typed in the folder pytest was started in names it."""
        return Path(os.path.relpath(os.path.abspath(path), self.invocation_dir)).as_posix()

    def create_command(self) -> str | None:
        """The command, for the folder pytest was started in, that writes the running test's baselines."""
        item = self._current
        if item is None:
            return None
        test_file = os.path.relpath(item.path, self.invocation_dir)
        _, sep, rest = item.nodeid.partition("::")
        words = ["pytest", f"{Path(test_file).as_posix()}{sep}{rest}", "--callpin-mode=new"]
        if self.dir_option:
            words.append(f"--callpin-dir={self.dir_option}")
        return shlex.join(words)

    def review_command(self) -> str:
        folder = self.command_path(str(self.root))
        return "callpin review" if folder == "baselines" else f"callpin review --baselines {shlex.quote(folder)}"

    def name(self, path: Path, name: str | None) -> None:
        """The fixture names the pin of `path` before it runs (None: the test's own pin)."""
        self._names[os.path.abspath(path)] = name

    def pinned(self, path: str, outcome: str, note: str | None) -> None:
        absolute = Path(os.path.abspath(path))
        key = absolute.relative_to(self.root).as_posix() if absolute.is_relative_to(self.root) else None
        event = {
            "key": key,
            "path": self.shown(absolute),
            "name": self._names.get(str(absolute)),
            "outcome": outcome,
            "note": note,
        }
        item = self._current
        if item is not None:
            item.user_properties.append((_PROPERTY, json.dumps(event)))
        else:
            # A pin outside any test (a conftest at collection, say): counted here only.
            self._absorb_event(event, nodeid="")

    def key(self, path: Path) -> str:
        """A baseline as the used set holds it: relative to the baselines folder, POSIX."""
        return path.relative_to(self.root).as_posix()

    def shown_key(self, key: str) -> str:
        return self.shown(self.root / key)

    def not_full(self, reason: str) -> None:
        if self.partial is None:
            self.partial = reason

    def absorb(self, report: pytest.TestReport) -> None:
        properties = [value for key, value in report.user_properties if key == _PROPERTY and isinstance(value, str)]
        start = self._read.get(report.nodeid, 0)
        self._read[report.nodeid] = max(start, len(properties))
        for value in properties[start:]:
            self._absorb_event(json.loads(value), report.nodeid)
        if report.failed or report.skipped or hasattr(report, "wasxfail"):
            self._protected_tests.add(report.nodeid)

    def _absorb_event(self, event: dict[str, Any], nodeid: str) -> None:
        key = event.get("key")
        if key is not None:
            # Only a baseline under the baselines folder can be unused, pruned or shared.
            self.used.add(key)
            claim = Claim(key, nodeid, event.get("name"))
            clash = claim.clash(self.owners.setdefault(claim.key.casefold(), claim), self.shown_key)
            if clash is not None and clash not in self.shared:
                self.shared.append(clash)
        outcome = event["outcome"]
        if outcome == "same":
            self.unchanged += 1
        elif outcome in self.outcomes:
            self.outcomes[outcome].append(event["path"])
        if event.get("note"):
            self.notes.append(event["note"])

    def find_unused(self) -> list[str]:
        if not self.root.is_dir():
            return []
        found = []
        for path in sorted(self.root.rglob("*.cpin")):
            if not path.is_file():
                continue
            key = self.key(path)
            if key in self.used:
                continue
            parts = tuple(key.split("/"))
            if any(owned(nodeid, parts, collector=False) for nodeid in self._protected_tests):
                continue
            if any(owned(nodeid, parts, collector=True) for nodeid in self._protected_collectors):
                continue
            found.append(self.shown(path))
        return found

    def _prune(self, unused: list[str]) -> list[str]:
        pruned = []
        for shown in unused:
            path = self.rootdir / shown
            path.unlink(missing_ok=True)
            pruned.append(shown)
            # Folders left empty go too, up to (not including) the baselines folder.
            folder = path.parent
            while folder != self.root and self.root in folder.parents and not any(folder.iterdir()):
                folder.rmdir()
                folder = folder.parent
        return pruned

    def verdict(self, exitstatus: int) -> PinReport:
        if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            self.not_full(f"the run ended with exit status {int(exitstatus)}")
        unused: list[str] = []
        pruned: list[str] = []
        if self.partial is None:
            unused = self.find_unused()
            if self.prune:
                pruned = self._prune(unused)
        return PinReport(
            mode=self.mode,
            outcomes=self.outcomes,
            unchanged=self.unchanged,
            notes=self.notes,
            partial=self.partial,
            unused=unused,
            pruned=pruned,
            prune=self.prune,
            strict=self.strict,
            shared=self.shared,
            review=self.review_command(),
        )

    # -- hooks -------------------------------------------------------------------------

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        if items:
            self.not_full("tests were deselected")
            _tell_controller(items[0].config, self.partial)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.not_full("collection errors")
        elif report.skipped:
            self._protected_collectors.add(report.nodeid)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.absorb(report)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
        self._current = item
        try:
            yield
        finally:
            self._current = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: Any, sched: Any) -> None:
        self.not_full("a worker crashed")

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        if error:
            self.not_full("a worker went down")
        reason = getattr(node, "workeroutput", {}).get(_WORKER_KEY)
        if reason:
            self.not_full(reason)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if _is_worker(session.config):
            return
        if session.shouldfail or session.shouldstop:
            self.not_full("the run stopped early")
        self.report = report = self.verdict(exitstatus)
        if report.fails and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.report_file is not None:
            # Replaced whole, like a baseline: a reader never sees half a report.
            replace_file(self.report_file, (json.dumps(report.as_json(), indent=2) + "\n").encode())

    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> None:
        report = self.report
        if report is None:
            return
        anything = self.used or report.unused or report.pruned
        if not anything:
            return
        terminalreporter.section("callpin")
        for line in report.lines():
            terminalreporter.write_line(line)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _tell_controller(config: pytest.Config, reason: str | None) -> None:
    """On an xdist worker, hand a reason the run is partial to the controller."""
    output = getattr(config, "workeroutput", None)
    if output is not None and reason is not None:
        output.setdefault(_WORKER_KEY, reason)


_SESSION_KEY = pytest.StashKey[PinSession]()


# ---------------------------------------------------------------------------
# Options and start-up.


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("callpin", "callpin: pinned interactions")
    group.addoption(
        "--callpin-mode",
        dest="callpin_mode",
        choices=MODES,
        default=None,
        help="check (default): compare with the baselines; new: also write missing ones; "
        "update: also rewrite those that differ. Default: $CALLPIN_MODE, else check.",
    )
    group.addoption(
        "--callpin-update",
        dest="callpin_mode",
        action="store_const",
        const="update",
        help="shorthand for --callpin-mode=update",
    )
    group.addoption(
        "--callpin-dir",
        dest="callpin_dir",
        default=None,
        metavar="DIR",
        help="the baselines folder; a relative one is taken from the rootdir (default: baselines)",
    )
    group.addoption(
        "--callpin-prune",
        dest="callpin_prune",
        action="store_true",
        default=False,
        help="delete the unused baselines a full run finds",
    )
    group.addoption(
        "--callpin-strict",
        dest="callpin_strict",
        action="store_true",
        default=False,
        help="fail the run when a full run finds unused baselines",
    )
    group.addoption(
        "--callpin-diff-lines",
        dest="callpin_diff_lines",
        type=int,
        default=None,
        metavar="N",
        help="show at most N lines of a drift's differences (default 40; 0 or -vv: all of them)",
    )
    group.addoption(
        "--callpin-report",
        dest="callpin_report",
        default=None,
        metavar="FILE",
        help="write a JSON report of written, updated, drifted, missing and unused baselines",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{quarantine.QUARANTINE}(until, reason): report a drift as xfail until the date (YYYY-MM-DD, UTC), "
        "then fail with 'quarantine expired'",
    )
    try:
        mode = resolve_mode(config.getoption("callpin_mode"))
    except ModeRefused as exc:
        # `pytest --help` runs no test, so it writes nothing.
        if not config.getoption("help", False):
            raise pytest.UsageError(f"callpin: {exc}") from None
        mode = "check"
    except UsageError as exc:
        raise pytest.UsageError(f"callpin: {exc}") from None
    try:
        quarantine.check_today()
    except UsageError as exc:
        raise pytest.UsageError(f"callpin: {exc}") from None
    rootdir = config.rootpath.resolve()
    folder = config.getoption("callpin_dir")
    root = rootdir / folder if folder else rootdir / "baselines"
    report_file = config.getoption("callpin_report")
    diff_lines = config.getoption("callpin_diff_lines")
    if diff_lines is None and config.get_verbosity() >= 2:
        diff_lines = 0  # -vv: every line of a drift
    session = PinSession(
        mode=mode,
        root=Path(os.path.normpath(root)),
        rootdir=rootdir,
        prune=config.getoption("callpin_prune"),
        strict=config.getoption("callpin_strict"),
        report_file=config.invocation_params.dir / report_file if report_file else None,
        dir_option=folder,
        invocation_dir=Path(config.invocation_params.dir),
        diff_lines=diff_lines,
        partial=_partial_reason(config),
    )
    config.stash[_SESSION_KEY] = session
    config.pluginmanager.register(session, "callpin-session")
    # Every pin of the run, the fixture's or a plain callpin.pin(), reports to the session.
    observe(session)


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(_SESSION_KEY, None)
    if session is not None:
        unobserve(session)
    forget_test_modules()


def pytest_collection_finish(session: pytest.Session) -> None:
    # Test modules and conftests are test code: their references to a spied object are
    # never rebound (spy.test_code), wherever the recording is opened from.
    names = {
        module.obj.__name__
        for item in session.items
        if (module := item.getparent(pytest.Module)) is not None and hasattr(module.obj, "__name__")
    }
    names.update(
        plugin.__name__
        for plugin in session.config.pluginmanager.get_plugins()
        if isinstance(plugin, types.ModuleType)
        and os.path.basename(getattr(plugin, "__file__", "") or "") == "conftest.py"
    )
    keep_test_modules(names)


# ---------------------------------------------------------------------------
# Quarantine (the rule is in quarantine.py).


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, Result[pytest.CollectReport], None]:
    outcome = yield
    quarantine.collection_problems(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport], None]:
    outcome = yield
    quarantine.judge(item, call, outcome.get_result())


# ---------------------------------------------------------------------------
# Forms registered in a test.


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """A form registered in a test's body (`callpin.register`) holds for that test: the
    logs of the tests after it never depend on which tests ran before them. Forms
    registered at import (a conftest.py, a test module) or in a fixture are kept."""
    registered = forms.registered_forms()
    yield
    forms.restore_forms(registered)


# ---------------------------------------------------------------------------
# The fixture.


def _package() -> Any:
    # The package's own namespace, looked up rather than imported: nothing inside callpin
    # imports callpin (its __init__ imports everything), and by the time a test asks,
    # the package has long been loaded, this module being part of it.
    return sys.modules[__name__.rpartition(".")[0]]


class PinFixture:
    """The `callpin` fixture: the module's API with the baseline path bound to the test.

    `pin` and `record` are bound to the test; every other public name of callpin
    (`returns`, `raises`, `target`, `rule`, `RuleSet`, `DEFAULT_RULES`, `register`,
    `load`, `diff`, the errors...) is the module's own, so a test needs no second import.
    """

    returns = staticmethod(returns)
    raises = staticmethod(raises)

    def __getattr__(self, name: str) -> Any:
        api = _package()
        if name in api.__all__:
            return getattr(api, name)
        raise AttributeError(f"the callpin fixture has no {name!r} (nor has the callpin module)")

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *_package().__all__})

    def __init__(self, request: pytest.FixtureRequest, session: PinSession) -> None:
        self._node = request.node
        self._session = session
        self._names: set[str | None] = set()

    def path(self, name: str | None = None) -> Path:
        """This test's baseline path (of the pin called `name`)."""
        return baseline_path(self._session.root, self._node.nodeid, name)

    def pin(self, name: str | None = None, *, spy: SpySpec, **options: Any) -> Pin:
        """`callpin.pin(...)` bound to this test's baseline; a second pin in one test needs a name.

        The mode is the run's (--callpin-mode, CALLPIN_MODE); `options` are those of
        `callpin.record()` (stub, outcomes, normalize, aliases, meta).
        """
        if name is not None and (not isinstance(name, str) or not name):
            raise UsageError(f"a pin's name is a non-empty string, got {name!r}")
        if name in self._names:
            raise UsageError(
                "callpin.pin() used twice in one test with the same name"
                + (f" {name!r}" if name else "")
                + "; give each pin its own name"
            )
        self._names.add(name)
        path = self.path(name)
        key = self._session.key(path)
        claim = Claim(key, self._node.nodeid, name)
        held = self._session.claims.setdefault(key.casefold(), claim)
        if (held.nodeid, held.name) != (claim.nodeid, claim.name):
            shown = self._session.shown(path)
            raise UsageError(
                f"{shown} is already the baseline of {held.owner()}; give this pin another name"
                if held.key == key
                else f"{shown} and {self._session.shown_key(held.key)}, the baseline of {held.owner()}, "
                "differ only in case (one file on macOS and Windows); give this pin another name"
            )
        self._session.name(path, name)
        return pin(path, spy=spy, **options)

    def record(self, path: str | os.PathLike[str] | None = None, *, spy: SpySpec, **options: Any) -> Recording:
        """`callpin.record(...)`, unchanged: a log of this block, written only where asked."""
        return record(path, spy=spy, **options)


@pytest.fixture
def callpin(request: pytest.FixtureRequest) -> PinFixture:
    """callpin's API with baseline paths bound to the running test: `callpin.pin(spy=...)`."""
    return PinFixture(request, request.config.stash[_SESSION_KEY])


__all__ = [
    "PinFixture",
    "PinReport",
    "PinSession",
    "callpin",
]
