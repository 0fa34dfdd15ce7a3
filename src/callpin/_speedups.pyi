"""Types of the C extension: the encoder, the per-call path, its proxies, a diff's hot passes (documented in Python)."""

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .align import Correspondence
from .frame_keys import FrameKeys
from .journal import Journal
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
    def encode_call(
        self, kind: int, label: str, args: tuple[Any, ...], kwargs: dict[str, Any], thread: int, depth: int, /
    ) -> bytes: ...

def configure(**interface: object) -> None: ...

class ThreadState:
    inside: bool

class Lock:
    def __enter__(self) -> bool: ...
    def __exit__(self, *exc_info: object) -> None: ...
    def acquire(self) -> bool: ...
    def release(self) -> None: ...
    def locked(self) -> bool: ...

class Spy:
    journal: Journal
    label: str
    stub: Callable[..., Any] | None
    record_raise: bool
    record_return: bool
    def __init__(self, journal: Journal, label: str, stub: Callable[..., Any] | None, record_return: bool) -> None: ...
    def __call__(self, wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any], /) -> Any: ...

def proxy_types(object_proxy: type, function_wrapper_base: type, /) -> tuple[type, type]: ...
def frame_keys(frames: list[bytes], parse: Callable[[bytes, int], bytes], /) -> FrameKeys: ...
def correspond(a: Sequence[int], b: Sequence[int], exact_gap_cells: int, /) -> Correspondence: ...
