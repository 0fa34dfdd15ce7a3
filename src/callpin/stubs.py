"""How a stub runs: with or without the receiver, and beneath the spies of the recordings around it.

A stub replaces what a target does, not what the recordings around it see. When an
outer recording spies the same target, the call an inner recording's stub answers
passes through the outer recording's spy first (that spy records it) and the stub
runs at the bottom, where the original would have run; whichever recording stubs the
target, every recording spying it records the call, and the innermost stub is the one
that answers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import wrapt

from .errors import UsageError
from .journal import run_stub
from .spy import PROXY_TYPES, Flavor, Handler


class ReceivingStub:
    """A stub that is given the receiver first, made with `callpin.with_receiver(stub)`."""

    __slots__ = ("stub",)

    def __init__(self, stub: Callable[..., Any]) -> None:
        self.stub = stub

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.stub(*args, **kwargs)

    def __repr__(self) -> str:
        return f"callpin.with_receiver({self.stub!r})"


def with_receiver(stub: Callable[..., Any]) -> ReceivingStub:
    """Mark a stub as wanting the receiver: it is called as `stub(receiver, *args, **kwargs)`.

    The receiver is what the call is bound to: the instance for a method, the class for
    a classmethod, None for a function or staticmethod. A stub of a method can then
    delegate to the real method on the same instance.
    """
    if isinstance(stub, ReceivingStub):
        return stub
    if not callable(stub):
        raise UsageError(f"with_receiver() needs a callable, got {stub!r}")
    return ReceivingStub(stub)


def plain(stub: Callable[..., Any], covered: Any) -> bool:
    """Whether a spy can run `stub` itself: no receiver wanted and no spy of callpin's beneath."""
    return not isinstance(stub, ReceivingStub) and not isinstance(covered, PROXY_TYPES)


def stub_handler(stub: Callable[..., Any], flavor: Flavor) -> Handler:
    """The handler of a target stubbed and not spied: it records nothing, the spies beneath do."""
    return _Replacement(stub, flavor)


def stubbed_spy(spy: Handler, stub: Callable[..., Any], flavor: Flavor) -> Handler:
    """The handler of a target spied and stubbed: `spy` (without a stub) records, then the stub runs beneath."""
    return _StubbedSpy(spy, _Replacement(stub, flavor))


class _Replacement:
    """A stub as a wrapt handler: run beneath the spies `wrapped` carries, with the receiver if it asked."""

    __slots__ = ("asynchronous", "receiving", "stub")

    def __init__(self, stub: Callable[..., Any], flavor: Flavor) -> None:
        self.receiving = isinstance(stub, ReceivingStub)
        self.stub = stub.stub if isinstance(stub, ReceivingStub) else stub
        self.asynchronous = flavor == "async"

    def __call__(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return _beneath(wrapped, instance, args, kwargs, self)

    def run(self, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.receiving:
            args = (instance, *args)
        if self.asynchronous:
            return run_stub(self.stub, args, kwargs)
        return self.stub(*args, **kwargs)


class _StubbedSpy:
    """A spy whose call is the stub's, run beneath the spies of outer recordings."""

    __slots__ = ("replacement", "spy")

    def __init__(self, spy: Handler, replacement: _Replacement) -> None:
        self.spy = spy
        self.replacement = replacement

    def __call__(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self.spy(_Below(wrapped, instance, self.replacement), instance, args, kwargs)


class _Below:
    """The call a spy delegates to when a stub answers: the stub, beneath what `wrapped` still spies."""

    __slots__ = ("instance", "replacement", "wrapped")

    def __init__(self, wrapped: Any, instance: Any, replacement: _Replacement) -> None:
        self.wrapped = wrapped
        self.instance = instance
        self.replacement = replacement

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _beneath(self.wrapped, self.instance, args, kwargs, self.replacement)


def _beneath(
    wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any], replacement: _Replacement
) -> Any:
    """Run `replacement` where `wrapped` would run, through the recording part of every spy in it."""
    layer = _layer(wrapped, instance)
    if layer is None:
        return replacement.run(instance, args, kwargs)
    handler, below = layer
    records = _recording_part(handler)
    if records is None:
        return _beneath(below, instance, args, kwargs, replacement)
    return records(_Below(below, instance, replacement), instance, args, kwargs)


def _layer(wrapped: Any, instance: Any) -> tuple[Any, Any] | None:
    """The handler of the callpin proxy `wrapped` is, and what that proxy wraps; None for anything else."""
    # wrapt hands a method called through its class (`Gateway.charge(gateway, 3)`) to
    # the handler as a partial of the bound proxy with the instance taken out: a
    # wrapt.PartialCallableObjectProxy from wrapt 2, a functools.partial before.
    kind = type(wrapped)
    if kind is wrapt.PartialCallableObjectProxy:
        if _only(wrapped._self_args, instance) and not wrapped._self_kwargs:
            wrapped = wrapped.__wrapped__
    elif kind is functools.partial and _only(wrapped.args, instance) and not wrapped.keywords:
        wrapped = wrapped.func
    # type(): isinstance() would ask the proxied object's own __class__.
    if not issubclass(type(wrapped), PROXY_TYPES):
        return None
    return wrapped._self_wrapper, wrapped.__wrapped__


def _only(args: tuple[Any, ...], instance: Any) -> bool:
    # By identity: comparing would run the instance's own __eq__.
    return len(args) == 1 and args[0] is instance


def _recording_part(handler: Any) -> Handler | None:
    """What a proxy's handler records, without its stub; None when it records nothing."""
    if isinstance(handler, _Replacement):
        return None
    if isinstance(handler, _StubbedSpy):
        return handler.spy
    if getattr(handler, "stub", None) is None:
        recording: Handler = handler
        return recording
    # A spy that runs its own stub: the same spy without it (journal.Spy or _speedups.Spy).
    twin: Handler = type(handler)(handler.journal, handler.label, None, handler.record_return)
    return twin
