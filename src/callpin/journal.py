"""The event sequence of one recording and the per-call path that appends to it; the reference of _speedups' Spy.

A `Journal` owns what a recording's events go into: the encoder, the frames, the lock
that orders them, the thread and receiver numbering, the depth of spied calls. `Spy`
is what wrapt calls for one spied target: it appends the call event, delegates one
level deeper and appends the outcome. `_speedups.Spy` is the same per-call path in C;
it is built from a Journal and reads only the attributes the Journal documents, so
that marks, the Python spies and the C spies of one recording interleave in one
sequence with one numbering. `callpin._impl` binds `Spy`, `Lock` and `ThreadState`
from here or from `_speedups`.
"""

from __future__ import annotations

import contextvars
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from .event import KIND_CODES
from .secret_arguments import redacted
from .values import Instance

_CALL = KIND_CODES["call"]
_RETURN = KIND_CODES["return"]
_RAISE = KIND_CODES["raise"]
_MARK = KIND_CODES["mark"]
_NO_ARGS: tuple[Any, ...] = ()


class ThreadState(threading.local):
    """The per-thread flag `inside`: True while this thread runs callpin's own event path.

    A spied call made from there (a `__repr__` being encoded that calls a collaborator,
    a spied builtin callpin itself uses) is callpin's doing, not the code under test's:
    it passes straight through, unrecorded, by every recording. This is also what keeps
    a thread from waiting on the lock it holds. One instance is one flag, so a process
    shares one among all its recordings; every `_speedups.ThreadState` shows the one
    flag the C spies read.
    """

    inside = False


# A recording's lock: `_speedups.Lock` with the C speedups (which its C spies take
# without a Python call), this one without.
Lock = threading.Lock


def describe_error(exc: BaseException) -> tuple[str, str]:
    """An exception as a raise event carries it: type name (bare for builtins) and message."""
    cls = type(exc)
    name = cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    try:
        message = str(exc)
    except Exception:  # a broken __str__ must not change what the caller sees
        message = "<unprintable>"
    return name, message


class Journal:
    """The event sequence of one recording: every spy and mark of it appends here.

    Its attributes are the interface of the per-call path, the C `Spy` included (it
    reads these and nothing else of the recording):

    - `encoder`: the recording's `Encoder`, whose numbering follows the log's order;
    - `frames`: the encoded event frames, in log order;
    - `lock`: taken around numbering, encoding and appending, as one step;
    - `state`: the process's `ThreadState` flag;
    - `open`: whether calls are recorded (read before and again under the lock);
    - `threads`, `thread`: the ordinals given so far, and a `threading.local` whose
      `ordinal` is the calling thread's (numbered by first appearance);
    - `instances`, `instance_counts`: each receiver's `Instance` by id (the receiver is
      kept alive so its id is not reused within the log), and the numbers given per type;
    - `depth`: a ContextVar of spied-call nesting, so that each thread and each asyncio
      task counts its own;
    - `record_raise`: whether raise events are written;
    - `describe_error`: the error field of a raise event, given the exception;
    - `secret_args`: by label, the positional arguments `emit` writes as secrets (their
      targets get Python spies: the C spy does not read it).
    """

    __slots__ = (
        "depth",
        "encoder",
        "frames",
        "instance_counts",
        "instances",
        "kept",
        "lock",
        "open",
        "record_raise",
        "secret_args",
        "state",
        "thread",
        "threads",
    )

    describe_error = staticmethod(describe_error)

    def __init__(self, encoder: Any, *, lock: Any, state: ThreadState, record_raise: bool) -> None:
        self.encoder = encoder
        self.frames: list[bytes] = []
        self.lock = lock
        self.state = state
        self.open = False
        self.threads = 0
        self.thread = threading.local()
        # The encoder's identities: a receiver and the same object passed by value share a number.
        self.instances: dict[int, tuple[object, Instance]] = encoder.identities.instances
        self.instance_counts: dict[str, int] = encoder.identities.counts
        self.kept: dict[int, object] = encoder.identities.kept
        self.depth: contextvars.ContextVar[int] = contextvars.ContextVar(f"callpin-depth-{id(self):x}", default=0)
        self.record_raise = record_raise
        # By label, the positional arguments written as secrets (secret_arguments): their
        # calls are recorded by the Python spies, whose events this emit writes.
        self.secret_args: dict[str, frozenset[int]] = {}

    def start(self) -> None:
        """Start recording; the calling thread is thread 1 whether or not it makes the first call."""
        self.threads = 1
        self.thread.ordinal = 1
        self.open = True

    def stop(self) -> None:
        """Stop recording: later calls pass through unrecorded."""
        with self.lock:
            self.open = False
            # Receivers, and objects written by their repr, were kept alive only so
            # their ids could not be reused within this log.
            self.instances.clear()
            self.kept.clear()

    def snapshot(self) -> list[bytes]:
        """The frames so far, in log order (a copy)."""
        with self.lock:
            return list(self.frames)

    def mark(self, name: str, value: Any) -> None:
        """Append a `mark` event at the current depth (none while this thread runs callpin's own path)."""
        if not self.state.inside:
            self.emit(_MARK, name, _NO_ARGS, {}, value, None, self.depth.get(), None)

    def emit(
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
        """Encode one event and append it, in one step under the lock.

        A call event's keywords may come in any order (`Encoder.encode_call` writes
        them by name); the events with an outcome, and marks, have none.

        For a caller that has seen this thread's `state.inside` flag clear (every spy
        tests it before a call, and it is clear again when the call returns): the flag
        is set while the event is written.
        """
        state = self.state
        state.inside = True
        try:
            error = None if raised is None else self.describe_error(raised)
            # acquire and release, not `with`: half the time of the context manager's calls.
            lock = self.lock
            lock.acquire()
            try:
                if not self.open:
                    return
                local = self.thread
                try:
                    thread = local.ordinal
                except AttributeError:
                    self.threads += 1
                    thread = local.ordinal = self.threads
                if kind == _CALL and self.secret_args and label in self.secret_args:
                    args = redacted(args, self.secret_args[label], self.encoder.numbering)
                # type(): an isinstance() check would ask the receiver's own __class__.
                if receiver is not None and not issubclass(type(receiver), type):
                    args = (self.instance(receiver), *args)
                if value is None and error is None:
                    frame = self.encoder.encode_call(kind, label, args, kwargs, thread, depth)
                else:
                    frame = self.encoder.encode_event(kind, label, args, kwargs, value, error, thread, depth)
                self.frames.append(frame)
            finally:
                lock.release()
        finally:
            state.inside = False

    def instance(self, receiver: object) -> Instance:
        """The receiver's `Instance`: its type's name and its number among that type's receivers."""
        instance: Instance = self.encoder.identities.instance(receiver)
        return instance


class Spy:
    """What wrapt calls for one spied target: the whole per-call path of a recording.

    `Spy(journal, label, stub, record_return)`: the events are labelled `label`; `stub`
    (None: the target itself) is what runs; `record_return` adds return events. Raise
    events follow the journal's `record_raise`. `__call__` is the hot path and
    deliberately one small function: read the depth, append the call event, delegate
    one level deeper, append the outcome. The journal's depth variable, flag and
    `emit` are held here, one attribute away.
    """

    __slots__ = ("_depth", "_emit", "_state", "journal", "label", "record_raise", "record_return", "stub")

    def __init__(self, journal: Journal, label: str, stub: Callable[..., Any] | None, record_return: bool) -> None:
        self.journal = journal
        self.label = label
        self.stub = stub
        self.record_raise = journal.record_raise
        self.record_return = record_return
        self._depth = journal.depth
        self._emit = journal.emit
        self._state = journal.state

    def __call__(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        call = wrapped if self.stub is None else self.stub
        if self._state.inside or not self.journal.open:
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


class AsyncSpy(Spy):
    """The spy of a coroutine function: the call is recorded when made, the outcome when awaited.

    Python under both implementations: the await is Python's either way.
    """

    __slots__ = ()

    def __call__(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        journal = self.journal
        if self._state.inside or not journal.open:
            return _start(wrapped, self.stub, args, kwargs)
        depth = self._depth.get()
        self._emit(_CALL, self.label, args, kwargs, None, None, depth, instance)
        try:
            awaitable = _start(wrapped, self.stub, args, kwargs)
        except BaseException as exc:
            if self.record_raise:
                self._emit(_RAISE, self.label, _NO_ARGS, {}, None, exc, depth, None)
            raise
        return self._outcome(awaitable, depth)

    async def _outcome(self, awaitable: Awaitable[Any], depth: int) -> Any:
        token = self._depth.set(depth + 1)
        try:
            result = await awaitable
        except BaseException as exc:
            if self.record_raise:
                self._emit(_RAISE, self.label, _NO_ARGS, {}, None, exc, depth, None)
            raise
        finally:
            self._depth.reset(token)
        if self.record_return:
            self._emit(_RETURN, self.label, _NO_ARGS, {}, result, None, depth, None)
        return result


def _start(
    wrapped: Any, stub: Callable[..., Any] | None, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Awaitable[Any]:
    """Start a coroutine call; a stub runs when awaited, like the coroutine it replaces."""
    if stub is None:
        result: Awaitable[Any] = wrapped(*args, **kwargs)
        return result
    return run_stub(stub, args, kwargs)


async def run_stub(stub: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run the stub of a coroutine function when awaited, awaiting what it returns if awaitable."""
    result = stub(*args, **kwargs)
    if inspect.isawaitable(result):
        return await result
    return result
