"""Types of the C extension: the same interface as callpin.codec.Encoder, which documents it."""

from collections.abc import Iterable
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
