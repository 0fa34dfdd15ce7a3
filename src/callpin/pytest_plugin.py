"""The pytest plugin: the `callpin` fixture, baseline modes, CI safety, unused baselines, quarantine.

One `PinSession` per run holds the mode and the baselines folder, and gathers what the
tests did (written, updated, drifted, missing, used baselines) from the test reports, so
the same code works in one process and on an xdist controller. Baseline names come
from one function, `baseline_stem`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import xxhash

from . import recorder
from .errors import BaselineMissing, Drift
from .recorder import MODES, ci_active, raises, returns

_PROPERTY = "callpin"
_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_MAX_COMPONENT = 100
_QUARANTINE = "callpin_quarantine"


def today() -> dt.date:
    """The date quarantines are judged by: `CALLPIN_TODAY` (YYYY-MM-DD) when set, else today in UTC."""
    forced = os.environ.get("CALLPIN_TODAY")
    if forced:
        return dt.date.fromisoformat(forced)
    return dt.datetime.now(dt.timezone.utc).date()


# ---------------------------------------------------------------------------
# Baseline naming: the one place that turns a test id into a path.


def _component(text: str) -> str:
    """One path component that every filesystem accepts and that never escapes its folder.

    Anything outside [A-Za-z0-9._-] becomes `_`, leading dots are dropped, and whenever
    that changed the text, or it is too long, a hash of the original keeps it unique.
    """
    cleaned = _SAFE.sub("_", text).lstrip(".") or "_"
    if cleaned != text or len(cleaned) > _MAX_COMPONENT:
        digest = xxhash.xxh3_64_hexdigest(text.encode("utf-8", "surrogatepass"))[:8]
        cleaned = f"{cleaned[: _MAX_COMPONENT - 9]}-{digest}"
    return cleaned


def baseline_stem(nodeid: str) -> tuple[str, ...]:
    """Path components of a test's baseline, without the `.cpin`: file path, then test name.

    `tests/test_renewals.py::TestRenew::test_renew[active]` →
    `("tests", "test_renewals", "TestRenew.test_renew-active")`.
    """
    file_part, _, rest = nodeid.partition("::")
    file_path = file_part[:-3] if file_part.endswith(".py") else file_part
    folders = [_component(part) for part in file_path.split("/") if part not in ("", ".", "..")]
    name, _, param = rest.partition("[")
    test = name.replace("::", ".")
    if param:
        test = f"{test}-{param[:-1] if param.endswith(']') else param}"
    return (*folders, _component(test or "_"))


def baseline_path(root: Path, nodeid: str, name: str | None = None) -> Path:
    *folders, test = baseline_stem(nodeid)
    file_name = f"{test}-{_component(name)}" if name else test
    return root.joinpath(*folders, f"{file_name}.cpin")


# ---------------------------------------------------------------------------
# The session: mode, folder, and what happened.


@dataclass
class PinSession:
    """One run's callpin state; gathers outcomes from test reports (also on an xdist controller)."""

    mode: str
    root: Path
    rootdir: Path
    prune: bool
    strict: bool
    report_file: str | None
    full_run: bool = True
    used: set[str] = field(default_factory=set)
    protected: list[tuple[str, ...]] = field(default_factory=list)
    outcomes: dict[str, list[str]] = field(
        default_factory=lambda: {"written": [], "updated": [], "drifted": [], "missing": []}
    )
    notes: list[str] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)

    def relative(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.rootdir.resolve()).as_posix()
        except ValueError:
            return str(path)

    def absorb(self, report: pytest.TestReport) -> None:
        for key, value in report.user_properties:
            if key != _PROPERTY:
                continue
            event = json.loads(value)
            self.used.add(event["path"])
            outcome = event.get("outcome")
            if outcome in self.outcomes and event["path"] not in self.outcomes[outcome]:
                self.outcomes[outcome].append(event["path"])
            if event.get("note"):
                self.notes.append(event["note"])
        if report.skipped or hasattr(report, "wasxfail"):
            self.protected.append(baseline_stem(report.nodeid))
        if report.when == "call" and report.failed and not any(k == _PROPERTY for k, _ in report.user_properties):
            # A test that failed before its pin ran may own baselines it did not get to use.
            self.protected.append(baseline_stem(report.nodeid))

    def _is_protected(self, relative_to_root: tuple[str, ...]) -> bool:
        for stem in self.protected:
            folders, test = stem[:-1], stem[-1]
            if relative_to_root[:-1] != folders:
                continue
            file_name = relative_to_root[-1]
            if file_name == f"{test}.cpin" or (file_name.startswith(f"{test}-") and file_name.endswith(".cpin")):
                return True
        return False

    def find_unused(self) -> list[str]:
        if not self.root.is_dir():
            return []
        found = []
        for path in sorted(self.root.rglob("*.cpin")):
            relative = self.relative(path)
            if relative in self.used:
                continue
            if self._is_protected(path.relative_to(self.root).parts):
                continue
            found.append(relative)
        return found

    def lines(self) -> Iterator[str]:
        counts = ", ".join(f"{len(paths)} {kind}" for kind, paths in self.outcomes.items())
        yield f"callpin ({self.mode} mode): {counts}"
        for note in self.notes:
            yield f"  {note}"
        if not self.full_run:
            yield "  unused baselines not checked (not a full run)"
        elif self.unused:
            yield f"  {len(self.unused)} unused baseline(s) (no test used them):"
            for path in self.unused:
                yield f"    {path}"
            if not self.prune:
                yield "  remove them with --callpin-prune (on a full run)"
        for path in self.pruned:
            yield f"  pruned {path}"

    def as_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode, **self.outcomes, "unused": self.unused, "pruned": self.pruned,
            "full_run": self.full_run,
        }

    # -- hooks: this object is registered as a plugin for the run --------------------

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        if items:
            self.full_run = False

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if not _is_full_run(config):
            self.full_run = False

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.absorb(report)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: Any, sched: Any) -> None:
        self.full_run = False

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        if error:
            self.full_run = False

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if hasattr(session.config, "workerinput"):
            return
        if session.shouldfail or session.shouldstop:
            self.full_run = False
        if self.full_run and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            self.unused = self.find_unused()
            if self.prune:
                for relative in self.unused:
                    (self.rootdir / relative).unlink(missing_ok=True)
                    self.pruned.append(relative)
            elif self.strict and self.unused:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.report_file:
            Path(self.report_file).write_text(json.dumps(self.as_json(), indent=2) + "\n")

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if hasattr(config, "workerinput"):
            return
        if not (self.used or self.unused or self.pruned or any(self.outcomes.values())):
            return
        terminalreporter.section("callpin")
        for line in self.lines():
            terminalreporter.write_line(line)


_SESSION_KEY = pytest.StashKey[PinSession]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("callpin", "callpin: pinned interactions")
    group.addoption("--callpin-mode", dest="callpin_mode", choices=MODES, default=None,
                    help="check (default): compare with baselines; new: write missing ones; "
                         "update: rewrite those that differ. Also CALLPIN_MODE.")
    group.addoption("--callpin-update", dest="callpin_mode", action="store_const", const="update",
                    help="shorthand for --callpin-mode=update")
    group.addoption("--callpin-dir", dest="callpin_dir", default=None,
                    help="baselines folder (default: baselines/ at the rootdir)")
    group.addoption("--callpin-prune", dest="callpin_prune", action="store_true", default=False,
                    help="delete unused baselines after a full run")
    group.addoption("--callpin-strict", dest="callpin_strict", action="store_true", default=False,
                    help="fail the run when a full run finds unused baselines")
    group.addoption("--callpin-report", dest="callpin_report", default=None, metavar="FILE",
                    help="write a JSON report of written, updated, drifted, missing and unused baselines")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{_QUARANTINE}(until, reason): report a drift as xfail until the date (YYYY-MM-DD, UTC), "
        "then fail with 'quarantine expired'",
    )
    mode = config.getoption("callpin_mode") or os.environ.get("CALLPIN_MODE") or "check"
    if mode not in MODES:
        raise pytest.UsageError(f"callpin: unknown mode {mode!r} (choose from {', '.join(MODES)})")
    if mode != "check" and ci_active():
        raise pytest.UsageError(
            f"callpin: mode {mode!r} writes baselines and is refused under CI (CI={os.environ.get('CI')}); "
            "refresh baselines locally and bless them"
        )
    rootdir = Path(str(config.rootpath))
    folder = config.getoption("callpin_dir")
    root = (Path(folder) if os.path.isabs(folder) else rootdir / folder) if folder else rootdir / "baselines"
    state = PinSession(
        mode=mode, root=root, rootdir=rootdir,
        prune=config.getoption("callpin_prune"), strict=config.getoption("callpin_strict"),
        report_file=config.getoption("callpin_report"),
    )
    config.stash[_SESSION_KEY] = state
    config.pluginmanager.register(state, "callpin-session")


def _session(config: pytest.Config) -> PinSession:
    return config.stash[_SESSION_KEY]


def _is_full_run(config: pytest.Config) -> bool:
    option = config.option
    if getattr(option, "keyword", "") or getattr(option, "markexpr", ""):
        return False
    if getattr(option, "lf", False) or getattr(option, "deselect", None) or getattr(option, "failedfirst", False):
        return False
    rootdir = Path(str(config.rootpath)).resolve()
    testpaths = [str((rootdir / p).resolve()) for p in config.getini("testpaths")]
    for arg in config.args:
        if "::" in arg:
            return False
        resolved = str((Path(str(config.invocation_params.dir)) / arg).resolve())
        if resolved != str(rootdir) and resolved not in testpaths:
            return False
    return True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    marker = item.get_closest_marker(_QUARANTINE)
    if marker is None or call.when != "call":
        return
    until, reason = _quarantine_terms(marker)
    drifted = call.excinfo is not None and isinstance(call.excinfo.value, Drift)
    if today() > until:
        report.outcome = "failed"
        detail = f"\n{call.excinfo.value}" if drifted and call.excinfo is not None else (
            "" if call.excinfo is not None else " (the baseline matches now; remove the marker)"
        )
        report.longrepr = f"quarantine expired on {until.isoformat()}: {reason}{detail}"
    elif drifted:
        report.outcome = "skipped"
        report.wasxfail = f"callpin quarantine until {until.isoformat()}: {reason}"  # type: ignore[attr-defined]


def _quarantine_terms(marker: pytest.Mark) -> tuple[dt.date, str]:
    until = marker.kwargs.get("until")
    reason = marker.kwargs.get("reason")
    if not until or not reason or not isinstance(reason, str):
        raise pytest.UsageError(f"@pytest.mark.{_QUARANTINE} needs until='YYYY-MM-DD' and reason='...'")
    try:
        return dt.date.fromisoformat(str(until)), reason
    except ValueError:
        raise pytest.UsageError(f"@pytest.mark.{_QUARANTINE}: until={until!r} is not a YYYY-MM-DD date") from None


def pytest_collection_finish(session: pytest.Session) -> None:
    for item in session.items:
        marker = item.get_closest_marker(_QUARANTINE)
        if marker is not None:
            _quarantine_terms(marker)


# ---------------------------------------------------------------------------
# The fixture.


class PinFixture:
    """The `callpin` fixture: the module's API with the baseline path bound to the test."""

    returns = staticmethod(returns)
    raises = staticmethod(raises)

    def __init__(self, request: pytest.FixtureRequest, state: PinSession) -> None:
        self._request = request
        self._state = state
        self._names: set[str | None] = set()

    def path(self, name: str | None = None) -> Path:
        """The baseline path of this test (and pin name)."""
        return baseline_path(self._state.root, self._request.node.nodeid, name)

    def _report(self, path: Path, outcome: str | None, note: str | None = None) -> None:
        event = {"path": self._state.relative(path), "outcome": outcome, "note": note}
        self._request.node.user_properties.append((_PROPERTY, json.dumps(event)))

    def pin(self, name: str | None = None, *, spy: Any, **options: Any) -> recorder.Pin:
        """`callpin.pin(...)` bound to this test's baseline; a second pin in a test needs a name."""
        if name in self._names:
            raise pytest.UsageError(
                "callpin.pin() used twice in one test with the same name; give each pin a name"
            )
        self._names.add(name)
        path = self.path(name)
        command = f"pytest {self._request.node.nodeid!r} --callpin-mode=new"
        return recorder.pin(path, spy=spy, mode=self._state.mode, on_result=self._on_result(path),
                            create_command=command, **options)

    def _on_result(self, path: Path) -> Callable[[str, str | None], None]:
        def report(outcome: str, note: str | None) -> None:
            self._report(path, None if outcome == "same" else outcome, note)

        return report

    def record(self, path: str | os.PathLike[str] | None = None, *, spy: Any, **options: Any) -> recorder.Recording:
        return recorder.record(path, spy=spy, **options)


@pytest.fixture
def callpin(request: pytest.FixtureRequest) -> PinFixture:
    """callpin's API with baseline paths bound to the running test."""
    return PinFixture(request, _session(request.config))


__all__ = ["BaselineMissing", "PinFixture", "baseline_path", "baseline_stem", "callpin", "today"]
