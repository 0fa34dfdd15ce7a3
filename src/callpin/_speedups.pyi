"""Types of the C extension: codec.Encoder and the per-call path of recorder.py, which document them."""

from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from .normalize import Numbering, RuleSet

class Encoder:
    rules: RuleSet
    numbering: Numbering
    def __init__(self, rules: RuleSet = ...) -> None: ...
    def encode(self, value: Any, /) -> bytes: ...
    def encode_event(
        self,
        kind: int,
        label: str,
        args: Iterable[Any],
        kwargs: dict[str, Any],
        value: Any,
        error: tuple[str, str] | None,
        thread: int,
        depth: int,
    ) -> bytes: ...

def configure(codec: ModuleType, /) -> None: ...

class ThreadState:
    inside: bool

class Lock:
    def __enter__(self) -> bool: ...
    def __exit__(self, *exc_info: object) -> None: ...
    def locked(self) -> bool: ...

class Spy:
    recording: Any
    label: str
    stub: Callable[..., Any] | None
    record_raise: bool
    record_return: bool
    def __init__(
        self,
        recording: Any,
        label: str,
        stub: Callable[..., Any] | None,
        record_return: bool,
        describe_error: Callable[[BaseException], tuple[str, str]],
        /,
    ) -> None: ...
    def __call__(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any], /) -> Any: ...
