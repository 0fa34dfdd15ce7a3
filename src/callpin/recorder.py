"""record(): patch one block's spies and stubs, keep its journal of events, restore, give its log."""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TypeAlias

from . import _impl, codec
from .errors import TargetError, UsageError
from .event import Event, decode_event
from .export import export_log
from .journal import AsyncSpy, Journal, Spy
from .logfile import Log, write_log
from .normalize import DEFAULT_RULES, Rule, RuleSet
from .secret_arguments import secret_positions
from .spy import Handler, Patch, Patcher, Site, SpySpec, Target, TargetSpec, resolve, resolve_one
from .stubs import plain, stub_handler, stubbed_spy

Outcomes: TypeAlias = Literal["raise", "all", "none"]
OUTCOMES = ("raise", "all", "none")

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
    normalize: RuleSet | Iterable[Rule] | None = DEFAULT_RULES,
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
        normalize: RuleSet | Iterable[Rule] | None = DEFAULT_RULES,
        aliases: bool = True,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        if outcomes not in OUTCOMES:
            raise UsageError(f"outcomes must be one of {', '.join(OUTCOMES)}; got {outcomes!r}")
        normalize = rule_set(normalize)
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
        self._opener = _opener()
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
            stubbed = _stub_site(key)
            stubs[stubbed.key] = (stubbed, replacement)
        wired: list[tuple[Site, Handler]] = []
        for site in sites:
            matched = stubs.pop(site.key, None)
            wired.append((site, self._spy_handler(site, None if matched is None else matched[1])))
        # A class stubbed whose construction is spied: the stub replaces the class, so the
        # spy of its `__init__` never runs; the stub's place is spied under the class's
        # label instead (the constructor's arguments, the stub's result).
        constructions = {id(site.owner): site for site in sites if site.name == "__init__"}
        for place, (stubbed, replacement) in list(stubs.items()):
            construction = constructions.get(id(stubbed.original))
            if isinstance(stubbed.original, type) and construction is not None:
                del stubs[place]
                spied = dataclasses.replace(stubbed, label=construction.label)
                wired.append((spied, self._spy_handler(spied, replacement)))
        # A target stubbed but not spied is replaced and records nothing (the spies of
        # outer recordings still record it: see stubs.py).
        for stubbed, replacement in stubs.values():
            wired.append((stubbed, stub_handler(replacement, stubbed.flavor)))
        self._labels = [site.label for site in sites]
        self._patcher.patch(wired, aliases=self._aliases, opener=self._opener)
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

    @property
    def past_budget(self) -> dict[tuple[str, str], int]:
        """Outermost objects whose state was over `codec.OBJECT_BUDGET`, counted by
        `(type name, how)`: "shallow" (their own values pinned, the objects they hold by
        identity) or "identity" (by identity and a digest of their state alone)."""
        return dict(self._journal.encoder.identities.past_budget)

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
        spied label; see `export.export_log`.
        """
        return export_log(source, self._labels[0] if self._labels else None, self.frames, self.rules, self.meta)

    # -- wiring ------------------------------------------------------------------------

    def _spy_handler(self, site: Site, stub: Callable[..., Any] | None) -> Handler:
        # The spy runs a plain stub itself; one that takes the receiver, or that must
        # run beneath an outer recording's spy of the same place, runs beneath this one.
        if stub is not None and not plain(stub, site.original):
            return stubbed_spy(self._spy_handler(site, None), stub, site.flavor)
        # Positional arguments with secret names are redacted by Journal.emit, which the
        # Python spies call (the C spy writes its events itself).
        positions = secret_positions(site.original, site.owner, self.rules)
        if positions:
            known = self._journal.secret_args.get(site.label, frozenset())
            self._journal.secret_args[site.label] = known | positions
        if site.flavor == "async":
            return AsyncSpy(self._journal, site.label, stub, self._record_return)
        # The generator is the user's to iterate; its "return value" is only the
        # generator object, so no return event is written for it.
        record_return = self._record_return and site.flavor != "generator"
        spy = Spy if positions else _impl.Spy
        handler: Handler = spy(self._journal, site.label, stub, record_return)
        return handler


def rule_set(normalize: RuleSet | Iterable[Rule] | None) -> RuleSet:
    """What `normalize=` gives: a RuleSet as it is, an iterable of rules as a RuleSet, None or () for none."""
    if isinstance(normalize, RuleSet):
        return normalize
    if normalize is None:
        return RuleSet()
    if isinstance(normalize, Rule):
        return RuleSet([normalize])
    if not isinstance(normalize, (str, bytes, Mapping)):
        try:
            rules = list(normalize)
        except TypeError:
            rules = None
        if rules is not None and all(isinstance(one, Rule) for one in rules):
            return RuleSet(rules)
    raise UsageError(
        "normalize= takes a RuleSet (callpin.DEFAULT_RULES, DEFAULT_RULES.with_rules([...])), "
        f"an iterable of rules (callpin.rule(...)), or None for none; got {normalize!r}"
    )


def _stub_site(key: object) -> Site:
    """The site a stub key names; a key that is not a target says what one must be."""
    what_a_key_is = (
        "a stub key is a spy target: a dotted path such as 'billing.charge_card' or "
        "'billing.Gateway.charge', or callpin.target(owner, 'name')"
    )
    if not isinstance(key, (str, Target)):
        raise UsageError(f"{what_a_key_is}; got {key!r}")
    try:
        return resolve_one(key)
    except TargetError as exc:
        raise TargetError(str(key), f"{str(exc).split(': ', 1)[-1]} ({what_a_key_is})") from None


def _opener() -> str | None:
    """The module that opened the recording: the first caller outside callpin's own modules."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_globals.get("__name__")
        if not (isinstance(name, str) and (name == "callpin" or name.startswith("callpin."))):
            return name if isinstance(name, str) else None
        frame = frame.f_back  # type: ignore[assignment]
    return None
