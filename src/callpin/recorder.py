"""record(): patch one block's spies and stubs, keep its journal of events, restore, give its log."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import xxhash

from . import _impl, codec
from .errors import BaselineMissing, Drift, LogFormatError, ModeRefused, RulesMismatch, UsageError
from .journal import AsyncSpy, Journal, run_stub
from .logfile import Event, Log, decode_event, load, log_bytes, private_copy, write_log
from .normalize import DEFAULT_RULES, RuleSet
from .spy import Handler, Patch, Patcher, Site, SpySpec, TargetSpec, resolve, resolve_one

if TYPE_CHECKING:
    from .diff import Diff

Outcomes: TypeAlias = Literal["raise", "all", "none"]
OUTCOMES = ("raise", "all", "none")

OUTPUT_DIR_VARIABLE = "CALLPIN_OUTPUT_DIR"

# The "inside callpin" flag of every recording in the process (journal.ThreadState);
# with the C speedups it shows the flag the C spies read, one per thread for both.
_thread_state = _impl.ThreadState()


def returns(value: Any) -> Callable[..., Any]:
    """A stub that accepts any arguments and returns `value` (the same object every call)."""

    def stub(*args: Any, **kwargs: Any) -> Any:
        return value

    return stub


def raises(exc: BaseException | type[BaseException]) -> Callable[..., Any]:
    """A stub that accepts any arguments and raises `exc` (a class is instantiated per call)."""
    if not (isinstance(exc, BaseException) or (isinstance(exc, type) and issubclass(exc, BaseException))):
        raise UsageError(f"raises() needs an exception or exception class, got {exc!r}")

    def stub(*args: Any, **kwargs: Any) -> Any:
        raise exc

    return stub


def record(
    path: str | os.PathLike[str] | None = None,
    *,
    spy: SpySpec,
    stub: Mapping[TargetSpec, Callable[..., Any]] | None = None,
    outcomes: Outcomes = "raise",
    normalize: RuleSet = DEFAULT_RULES,
    aliases: bool = True,
    meta: Mapping[str, Any] | None = None,
) -> Recording:
    """Record every call to the `spy` targets made inside a `with` block.

    ::

        with callpin.record("renew.cpin", spy=["billing.charge_card"]) as rec:
            renewals.renew(case)

    On leaving the block the targets are restored and, when `path` is given, the log
    is written there atomically. See `Recording` for what is recorded and when.
    """
    return Recording(path, spy=spy, stub=stub, outcomes=outcomes, normalize=normalize, aliases=aliases, meta=meta)


class Recording:
    """The interactions captured by one `record()` block, and the spies that capture them.

    Entering patches the targets (and, with `aliases`, every module global holding the
    same object); leaving restores them exactly, on a normal exit, an exception or a
    KeyboardInterrupt. Each spied call appends a `call` event *before* it delegates,
    with its arguments encoded at that moment; `outcomes` adds `raise` events
    ("raise", the default), also `return` events ("all"), or neither ("none").

    The log is written to `path` (and, when the environment variable
    CALLPIN_OUTPUT_DIR is set, copied there; see `export`) when the block ends
    normally or with an ``Exception``: a block that raised still made those calls.
    A block left by KeyboardInterrupt or SystemExit writes nothing, so an interrupted
    run never replaces a complete log with a partial one.

    A Recording is entered once. Its parts are public so that `pin()` can reuse it:
    `stop()` ends recording and restores, `log()` is the result, `write()` and
    `export()` store it.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        spy: SpySpec,
        stub: Mapping[TargetSpec, Callable[..., Any]] | None = None,
        outcomes: Outcomes = "raise",
        normalize: RuleSet = DEFAULT_RULES,
        aliases: bool = True,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        if outcomes not in OUTCOMES:
            raise UsageError(f"outcomes must be one of {', '.join(OUTCOMES)}; got {outcomes!r}")
        if not isinstance(normalize, RuleSet):
            raise UsageError(f"normalize= takes a RuleSet (e.g. callpin.DEFAULT_RULES), got {normalize!r}")
        if stub is not None and not isinstance(stub, Mapping):
            raise UsageError(f"stub= takes {{target: callable}}, got {stub!r}")
        for key, replacement in (stub or {}).items():
            if not callable(replacement):
                raise UsageError(f"the stub for {str(key)!r} is not callable: {replacement!r}")
        self.path = None if path is None else os.fspath(path)
        self.rules = normalize
        self.outcomes: Outcomes = outcomes
        self.meta: dict[str, Any] = dict(meta or {})
        self.targets: list[Patch] = []
        self._spy = spy
        self._stub = dict(stub or {})
        self._aliases = aliases
        self._patcher = Patcher()
        self._state = "new"
        self._labels: list[str] = []

        # The event sequence the spies and marks append to, with the live
        # implementation's encoder and lock (journal.py has the per-call path).
        self._journal = Journal(
            _impl.Encoder(normalize), lock=_impl.Lock(), state=_thread_state, record_raise=outcomes != "none"
        )
        self._record_return = outcomes == "all"
        self._decoder = codec.Decoder()
        self._decoded_lock = threading.Lock()
        self._events: list[Event] = []

    # -- the block ---------------------------------------------------------------------

    def __enter__(self) -> Recording:
        if self._state != "new":
            raise UsageError("a Recording can be entered only once; call callpin.record() again")
        self._state = "stopped"
        sites = resolve(self._spy)
        stubs: dict[tuple[int, str], tuple[Site, Callable[..., Any]]] = {}
        for key, replacement in self._stub.items():
            stubbed = resolve_one(key)
            stubs[stubbed.key] = (stubbed, replacement)
        wired: list[tuple[Site, Handler]] = []
        for site in sites:
            matched = stubs.pop(site.key, None)
            wired.append((site, self._spy_handler(site, None if matched is None else matched[1])))
        # A target stubbed but not spied is replaced and records nothing.
        for stubbed, replacement in stubs.values():
            wired.append((stubbed, _stub_handler(stubbed, replacement)))
        self._labels = [site.label for site in sites]
        self._patcher.patch(wired, aliases=self._aliases)
        self._journal.start()
        self._state = "recording"
        self.targets = list(self._patcher.patches)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: object, tb: object) -> None:
        self.stop()
        if kind is None or issubclass(kind, Exception):
            if self.path is not None:
                self.write(self.path)
            self.export(self.path)

    def stop(self) -> None:
        """Restore every patched place and stop recording; later calls are not recorded."""
        if self._state != "recording":
            return
        self._state = "stopped"
        self._journal.stop()
        self._patcher.restore()

    # -- results -----------------------------------------------------------------------

    @property
    def frames(self) -> list[bytes]:
        """The encoded event frames so far, in log order (a copy)."""
        return self._journal.snapshot()

    @property
    def events(self) -> list[Event]:
        """The events so far, decoded (a copy)."""
        frames = self.frames
        with self._decoded_lock:
            for index in range(len(self._events), len(frames)):
                self._events.append(decode_event(frames[index], index, self._decoder))
            return self._events[: len(frames)]

    def log(self) -> Log:
        """The recording as a `Log`: the frames, rules, meta and fingerprint its file would have."""
        return Log.from_frames(self.frames, rules=self.rules, meta=self.meta)

    def mark(self, name: str, value: Any) -> None:
        """Pin a value of the code under test (a return value, a payload's text): a `mark` event."""
        if not isinstance(name, str):
            raise UsageError(f"a mark's name is a string, got {name!r}")
        if self._state != "recording":
            raise UsageError("mark() works only inside the record() block")
        self._journal.mark(name, value)

    def write(self, path: str | os.PathLike[str]) -> str:
        """Write the log to `path` atomically (temporary file, then replace); its fingerprint."""
        return write_log(path, self.frames, rules=self.rules, meta=self.meta)

    def export(self, source: str | os.PathLike[str] | None) -> str | None:
        """Copy the log into CALLPIN_OUTPUT_DIR when it is set; the path written, else None.

        The name comes from `source` (a log path) when given, else from the first
        spied label. See `output_name` for the rule; a name already taken in the
        folder gets `-2`, `-3`... before `.cpin`, so no log is ever overwritten there.
        """
        folder = os.environ.get(OUTPUT_DIR_VARIABLE)
        if not folder:
            return None
        name = output_name(source, self._labels[0] if self._labels else None)
        return _write_unique(os.path.join(folder, name), self.frames, self.rules, self.meta)

    # -- wiring ------------------------------------------------------------------------

    def _spy_handler(self, site: Site, stub: Callable[..., Any] | None) -> Handler:
        if site.flavor == "async":
            return AsyncSpy(self._journal, site.label, stub, self._record_return)
        # The generator is the user's to iterate; its "return value" is only the
        # generator object, so no return event is written for it.
        record_return = self._record_return and site.flavor != "generator"
        handler: Handler = _impl.Spy(self._journal, site.label, stub, record_return)
        return handler


def _stub_handler(site: Site, stub: Callable[..., Any]) -> Handler:
    """The handler of a target that is stubbed but not spied: replace, record nothing."""
    if site.flavor == "async":

        def replace_async(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            return run_stub(stub, args, kwargs)

        return replace_async

    def replace(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return stub(*args, **kwargs)

    return replace


# ---------------------------------------------------------------------------
# CALLPIN_OUTPUT_DIR.

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def output_name(source: str | os.PathLike[str] | None, label: str | None) -> str:
    """The name a recording's copy gets in CALLPIN_OUTPUT_DIR.

    From a log path, as written, so the name never depends on the working folder:
    a relative path keeps all its folders, minus `.` and `..`
    (`baselines/tests/test_renewals/test_renew.cpin` stays that, `../out/renew.cpin`
    becomes `out/renew.cpin`); an absolute path keeps its last folder and file name
    (`/tmp/pytest-7/test_renew0/renew.cpin` becomes `test_renew0/renew.cpin`).
    Without a path: the first spied label, `examples.renewals.billing.charge_card.cpin`
    (`recording.cpin` when nothing is spied). Characters other than letters, digits,
    `.`, `_` and `-` become `_`, leading dots are dropped, and the name ends in `.cpin`.
    A part longer than 100 characters (before `.cpin`) keeps its first 91 and ends in
    `-` and 8 hex digits of its xxh3-64, so the log and the temporary names written on
    the way stay within what a file system accepts.
    """
    if source is not None:
        text = os.fspath(source)
        parts = [part for part in re.split(r"[\\/]+", text) if part not in ("", ".", "..")]
        if os.path.isabs(text):
            parts = parts[-2:]
        parts = parts or ["recording"]
    else:
        parts = [label or "recording"]
    cleaned = [_UNSAFE.sub("_", part).lstrip(".") or "_" for part in parts]
    cleaned[-1] = cleaned[-1].removesuffix(".cpin")
    clipped = [_clip(part) for part in cleaned]
    return "/".join(clipped) + ".cpin"


_MAX_OUTPUT_PART = 100


def _clip(part: str) -> str:
    if len(part) <= _MAX_OUTPUT_PART:
        return part
    digest = xxhash.xxh3_64_hexdigest(part.encode("ascii"))[:8]
    return f"{part[: _MAX_OUTPUT_PART - 9]}-{digest}"


def _write_unique(path: str, frames: list[bytes], rules: RuleSet, meta: dict[str, Any]) -> str:
    """Write a log at `path`, or at `stem-2.cpin`, `stem-3.cpin`... if taken; the path used.

    The log is written completely to a private name first and then hard-linked to
    the first free name, which fails rather than replaces when the name exists: two
    processes sharing the folder never overwrite each other and no reader ever sees a
    half-written file.
    """
    stem = path[: -len(".cpin")]
    with private_copy(path, log_bytes(frames, rules=rules, meta=meta)) as private:
        number = 1
        while True:
            candidate = path if number == 1 else f"{stem}-{number}.cpin"
            try:
                os.link(private, candidate)
            except FileExistsError:
                number += 1
                continue
            return candidate


# ---------------------------------------------------------------------------
# pin(): record, then compare with a baseline.

MODES = ("check", "new", "update")
MODE_VARIABLE = "CALLPIN_MODE"
PROBE_VARIABLE = "CALLPIN_PROBE"
_FALSE = ("", "0", "false", "no", "off")


def ci_active() -> bool:
    """Whether the environment says this is CI (`CI` set to a true value)."""
    return os.environ.get("CI", "").strip().lower() not in _FALSE


def resolve_mode(mode: str | None) -> str:
    """The pin mode: the argument, else CALLPIN_MODE, else `check`; writing modes refused in CI."""
    chosen = mode or os.environ.get(MODE_VARIABLE) or "check"
    if chosen not in MODES:
        raise UsageError(f"unknown pin mode {chosen!r} (choose from {', '.join(MODES)})")
    if chosen != "check" and ci_active():
        raise ModeRefused(
            f"pin mode {chosen!r} writes baselines and is refused under CI "
            f"(CI={os.environ.get('CI')}); refresh baselines locally and bless them"
        )
    return chosen


def pin(
    path: str | os.PathLike[str],
    *,
    spy: SpySpec,
    mode: str | None = None,
    on_result: Callable[[str, str | None], None] | None = None,
    create_command: str | None = None,
    shown_as: str | None = None,
    **record_options: Any,
) -> Pin:
    """Record like `record()`, then compare with the baseline at `path` when the block ends.

    ::

        with callpin.pin("baselines/renew.cpin", spy=["billing.charge_card"]):
            renewals.renew(case)

    `check` (default) raises `callpin.Drift` when the calls differ, with the rendered
    diff as its message and the `Diff` as `.diff`, and `BaselineMissing` when there is
    no baseline; `new` writes a missing baseline; `update` rewrites a differing one.
    The mode comes from `mode`, else CALLPIN_MODE; under CI, `new` and `update` are
    refused. A block that raises is not compared: its exception is the failure.
    `shown_as` is how messages name the baseline (default: `path`), e.g. a path
    relative to a project's root where `path` is absolute.
    """
    return Pin(
        path,
        spy=spy,
        mode=mode,
        on_result=on_result,
        create_command=create_command,
        shown_as=shown_as,
        **record_options,
    )


class Pin:
    """The context manager `pin()` returns: a `Recording` compared with a baseline on exit.

    After the block, `outcome` is one of `same`, `written`, `updated`, `drifted`,
    `missing` (or None when the block raised), and `diff` is the comparison made.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        spy: SpySpec,
        mode: str | None = None,
        on_result: Callable[[str, str | None], None] | None = None,
        create_command: str | None = None,
        shown_as: str | None = None,
        **record_options: Any,
    ) -> None:
        self.path = os.fspath(path)
        self.shown = shown_as or self.path
        self.mode = resolve_mode(mode)
        self.recording = Recording(None, spy=spy, **record_options)
        self.outcome: str | None = None
        self.diff: Diff | None = None
        self._on_result = on_result
        self._create_command = create_command or (
            f"CALLPIN_MODE=new python -m pytest (or callpin.pin(..., mode='new')) to write {self.shown}"
        )

    def __enter__(self) -> Recording:
        return self.recording.__enter__()

    def __exit__(self, kind: type[BaseException] | None, exc: object, tb: object) -> None:
        # A failed comparison is reported at the test's `with` line, not inside callpin.
        __tracebackhide__ = True
        self.recording.stop()
        if kind is not None and not issubclass(kind, Exception):
            return
        self.recording.export(self.shown)
        if kind is not None or os.environ.get(PROBE_VARIABLE, "") not in _FALSE:
            # A raising block is already a failure; a probe run only records.
            return
        self._compare()

    def _report(self, outcome: str, note: str | None = None) -> None:
        self.outcome = outcome
        if self._on_result is not None:
            self._on_result(outcome, note)

    def _compare(self) -> None:
        __tracebackhide__ = True
        from .diff import diff
        from .render import render_text, summary_line

        new_log = self.recording.log()
        if not os.path.exists(self.path):
            if self.mode == "check":
                self._report("missing")
                raise BaselineMissing(self.shown, self._create_command)
            self.recording.write(self.path)
            self._report("written", f"wrote {self.shown} ({_count_events(len(new_log))})")
            return
        try:
            with open(self.path, "rb") as file:
                old_log = load(self.shown, data=file.read())
        except LogFormatError:
            if self.mode != "update":
                raise
            self.recording.write(self.path)
            events = _count_events(len(new_log))
            self._report("updated", f"rewrote unreadable {self.shown} ({events})")
            return
        if old_log.rules != new_log.rules:
            if self.mode == "update":
                self.recording.write(self.path)
                self._report("updated", f"rewrote {self.shown} with new normalization rules")
                return
            raise RulesMismatch(
                f"{self.shown} was recorded with rules {_rule_names(old_log.rules)}, "
                f"this recording uses {_rule_names(new_log.rules)}: re-record the baseline "
                "(mode 'update') or record with the baseline's rules"
            )
        if old_log.fingerprint == new_log.fingerprint and len(old_log) == len(new_log):
            self._report("same")
            return
        self.diff = found = diff(old_log, new_log)
        if found.same:
            self._report("same")
            return
        if self.mode == "update":
            self.recording.write(self.path)
            self._report("updated", f"updated {self.shown}: {summary_line(found)}")
            return
        self._report("drifted", f"drifted {self.shown}: {summary_line(found)}")
        rendered = f"interactions differ from {self.shown}\n{render_text(found)}"
        raise Drift(self.shown, found, rendered)


def _count_events(count: int) -> str:
    return f"{count} event{'' if count == 1 else 's'}"


def _rule_names(rules: RuleSet) -> str:
    return "[" + ", ".join(name for name, _ in rules.describe()) + "]"
