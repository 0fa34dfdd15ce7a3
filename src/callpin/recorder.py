"""record(): own the spies, the event sequence, threads, depth, marks and outcomes of one log."""

from __future__ import annotations

import contextvars
import inspect
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from . import _impl, codec
from ._impl import Encoder
from .errors import UsageError
from .event import KIND_CODES, Event, decode_event
from .export import export_log
from .logfile import Log, write_log
from .normalize import DEFAULT_RULES, RuleSet
from .spy import Handler, Patch, Patcher, Site, SpySpec, TargetSpec, resolve, resolve_one

if TYPE_CHECKING:
    pass

Outcomes: TypeAlias = Literal["raise", "all", "none"]
OUTCOMES = ("raise", "all", "none")

_CALL = KIND_CODES["call"]
_RETURN = KIND_CODES["return"]
_RAISE = KIND_CODES["raise"]
_MARK = KIND_CODES["mark"]
_NO_ARGS: tuple[Any, ...] = ()


class _ThreadState(threading.local):
    # True while this thread is inside callpin's own event path (encoding a value,
    # numbering a thread). A spied call made from there (a __repr__ that calls a
    # collaborator, a spied builtin callpin itself uses) is callpin's doing, not the
    # code under test's: it passes straight through, unrecorded, by every recorder.
    # This is also what keeps it from waiting on the lock its own thread holds.
    inside = False


# With the C speedups the flag lives in C, where the C spies read it, and this
# object shows it to the Python path: one flag per thread for both.
_thread_state: _ThreadState = _ThreadState() if _impl.ThreadState is None else _impl.ThreadState()


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

        # The event sequence. One lock orders encoding and appending, because the
        # encoder's placeholder and instance numbering follow the order of the log.
        self._lock = _impl.Lock()
        self._open = False
        self._encoder = Encoder(normalize)
        self._frames: list[bytes] = []
        self._threads = 0
        self._thread = threading.local()
        self._instances: dict[int, tuple[object, codec.Instance]] = {}
        self._instance_counts: dict[str, int] = {}
        self._record_raise = outcomes != "none"
        self._record_return = outcomes == "all"
        # Depth follows the flow of control, so it lives in a context variable: each
        # thread and each asyncio task counts its own nesting.
        self._depth: contextvars.ContextVar[int] = contextvars.ContextVar(f"callpin-depth-{id(self):x}", default=0)
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
        # The recording thread is thread 1 whether or not it makes the first call.
        self._threads = 1
        self._thread.ordinal = 1
        self._patcher.patch(wired, aliases=self._aliases)
        self._open = True
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
        with self._lock:
            self._open = False
            # Receivers were kept alive only so their ids could not be reused
            # within this log.
            self._instances.clear()
        self._patcher.restore()

    # -- results -----------------------------------------------------------------------

    @property
    def frames(self) -> list[bytes]:
        """The encoded event frames so far, in log order (a copy)."""
        with self._lock:
            return list(self._frames)

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
        self._emit(_MARK, name, _NO_ARGS, {}, value, None, self._depth.get(), None)

    def write(self, path: str | os.PathLike[str]) -> str:
        """Write the log to `path` atomically (temporary file, then replace); its fingerprint."""
        return write_log(path, self.frames, rules=self.rules, meta=self.meta)

    def export(self, source: str | os.PathLike[str] | None) -> str | None:
        """Copy the log into CALLPIN_OUTPUT_DIR when it is set; the path written, else None.

        The name comes from `source` (a log path) when given, else from the first
        spied label; see `export.export_log`.
        """
        return export_log(source, self._labels[0] if self._labels else None, self.frames, self.rules, self.meta)

    # -- the per-call path -----------------------------------------------------------------

    def _spy_handler(self, site: Site, stub: Callable[..., Any] | None) -> Handler:
        if site.flavor == "async":
            return _AsyncSpy(self, site.label, stub, self._record_return)
        # The generator is the user's to iterate; its "return value" is only the
        # generator object, so no return event is written for it.
        record_return = self._record_return and site.flavor != "generator"
        if _CSpy is not None:
            handler: Handler = _CSpy(self, site.label, stub, record_return, _error)
            return handler
        return _Spy(self, site.label, stub, record_return)

    def _emit(
        self,
        kind: int,
        label: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        value: Any,
        raised: BaseException | None,
        depth: int,
        receiver: object,
    ) -> None:
        """Encode one event and append it, in one step under the lock."""
        state = _thread_state
        if state.inside:
            return
        state.inside = True
        try:
            error = None if raised is None else _error(raised)
            if len(kwargs) > 1:
                kwargs = _sorted_keywords(kwargs)
            with self._lock:
                if not self._open:
                    return
                local = self._thread
                try:
                    thread = local.ordinal
                except AttributeError:
                    self._threads += 1
                    thread = local.ordinal = self._threads
                # type(): an isinstance() check would ask the receiver's own __class__.
                if receiver is not None and not issubclass(type(receiver), type):
                    args = (self._instance(receiver), *args)
                self._frames.append(self._encoder.encode_event(kind, label, args, kwargs, value, error, thread, depth))
        finally:
            state.inside = False

    def _instance(self, receiver: object) -> codec.Instance:
        known = self._instances.get(id(receiver))
        if known is not None:
            return known[1]
        type_name = codec.qualified_name(type(receiver))
        number = self._instance_counts.get(type_name, 0) + 1
        self._instance_counts[type_name] = number
        instance = codec.Instance(type_name, number)
        # Holding the receiver keeps its id from being reused by another object
        # while this log is being recorded.
        self._instances[id(receiver)] = (receiver, instance)
        return instance


class _Spy:
    """What wrapt calls for one spied target: the whole per-call path of a recording.

    `__call__` is the hot path and deliberately one small function: read the depth,
    append the call event, delegate one level deeper, append the outcome. The
    recording's depth variable and `_emit` are held here, one attribute away.
    """

    __slots__ = ("_depth", "_emit", "label", "record_raise", "record_return", "recording", "stub")

    def __init__(
        self,
        recording: Recording,
        label: str,
        stub: Callable[..., Any] | None,
        record_return: bool,
    ) -> None:
        self.recording = recording
        self.label = label
        self.stub = stub
        self.record_raise = recording._record_raise
        self.record_return = record_return
        self._depth = recording._depth
        self._emit = recording._emit

    def __call__(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        call = wrapped if self.stub is None else self.stub
        if _thread_state.inside or not self.recording._open:
            return call(*args, **kwargs)
        variable = self._depth
        depth = variable.get()
        self._emit(_CALL, self.label, args, kwargs, None, None, depth, instance)
        token = variable.set(depth + 1)
        try:
            result = call(*args, **kwargs)
        except BaseException as exc:
            if self.record_raise:
                self._emit(_RAISE, self.label, _NO_ARGS, {}, None, exc, depth, None)
            raise
        finally:
            variable.reset(token)
        if self.record_return:
            self._emit(_RETURN, self.label, _NO_ARGS, {}, result, None, depth, None)
        return result


class _AsyncSpy(_Spy):
    """The spy of a coroutine function: the call is recorded when made, the outcome when awaited."""

    __slots__ = ()

    def __call__(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        rec = self.recording
        if _thread_state.inside or not rec._open:
            return _start(wrapped, self.stub, args, kwargs)
        depth = rec._depth.get()
        rec._emit(_CALL, self.label, args, kwargs, None, None, depth, instance)
        try:
            awaitable = _start(wrapped, self.stub, args, kwargs)
        except BaseException as exc:
            if self.record_raise:
                rec._emit(_RAISE, self.label, _NO_ARGS, {}, None, exc, depth, None)
            raise
        return self._outcome(awaitable, depth)

    async def _outcome(self, awaitable: Awaitable[Any], depth: int) -> Any:
        rec = self.recording
        token = rec._depth.set(depth + 1)
        try:
            result = await awaitable
        except BaseException as exc:
            if self.record_raise:
                rec._emit(_RAISE, self.label, _NO_ARGS, {}, None, exc, depth, None)
            raise
        finally:
            rec._depth.reset(token)
        if self.record_return:
            rec._emit(_RETURN, self.label, _NO_ARGS, {}, result, None, depth, None)
        return result


# The C spy (the same path as _Spy, with no Python frame per call) when the C
# speedups are live; None otherwise.
_CSpy: Any = _impl.Spy


def _start(
    wrapped: Any, stub: Callable[..., Any] | None, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Awaitable[Any]:
    """Start a coroutine call; a stub runs when awaited, like the coroutine it replaces."""
    if stub is None:
        result: Awaitable[Any] = wrapped(*args, **kwargs)
        return result
    return _run_stub(stub, args, kwargs)


async def _run_stub(stub: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    result = stub(*args, **kwargs)
    if inspect.isawaitable(result):
        return await result
    return result


def _stub_handler(site: Site, stub: Callable[..., Any]) -> Handler:
    """The handler of a target that is stubbed but not spied: replace, record nothing."""
    if site.flavor == "async":

        def replace_async(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            return _run_stub(stub, args, kwargs)

        return replace_async

    def replace(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return stub(*args, **kwargs)

    return replace


def _sorted_keywords(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments sorted by name: their order at a call site carries no meaning.

    Names are compared as the plain text they hold, so a `str` subclass's own
    comparisons never decide the order, nor raise into the call being recorded.
    """
    return dict(sorted(kwargs.items(), key=_keyword_name))


def _keyword_name(item: tuple[Any, Any]) -> Any:
    name = item[0]
    return str.__str__(name) if isinstance(name, str) else name


def _error(exc: BaseException) -> tuple[str, str]:
    """An exception as a raise event carries it: type name (bare for builtins) and message."""
    cls = type(exc)
    name = cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    try:
        message = str(exc)
    except Exception:  # a broken __str__ must not change what the caller sees
        message = "<unprintable>"
    return name, message


# ---------------------------------------------------------------------------
# CALLPIN_OUTPUT_DIR.
