"""Positional arguments whose parameters have secret names, redacted as keyword arguments are.

The encoders redact the value under a secret name: a keyword argument `password=...` is
`<secret:1>`. A positional argument has no name in the log, so `auth(client, "hunter2")`
wrote the password. A spied callable's signature names its positional parameters; the
arguments given for those whose names the recording's rules call secret are written as
`<secret:N>`, numbered as a keyword argument's value would be (the same password passed
both ways shares its number). The signature is read once per spied callable, never called.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

from .codec import Encoder
from .normalize import NO_RULES, Numbering, RuleSet
from .values import Placeholder

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def secret_positions(original: Any, owner: object, rules: RuleSet) -> frozenset[int]:
    """The indices, among the positional arguments a spy is given (a method's receiver not
    among them), of the parameters of `original` whose names `rules` call secret."""
    if not rules.key_rules:
        return frozenset()
    function, receives_owner = original, False
    if isinstance(original, staticmethod):
        function = original.__func__
    elif isinstance(original, classmethod):
        function, receives_owner = original.__func__, True
    elif isinstance(owner, type) and isinstance(original, types.FunctionType):
        receives_owner = True  # an instance method: `self` is the receiver, not an argument
    try:
        parameters = inspect.signature(function, follow_wrapped=False).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature, an odd callable
        return frozenset()
    names = [parameter.name for parameter in parameters if parameter.kind in _POSITIONAL]
    if receives_owner:
        names = names[1:]
    return frozenset(index for index, name in enumerate(names) if rules.secret_key(name))


def redacted(args: tuple[Any, ...], positions: frozenset[int], numbering: Numbering) -> tuple[Any, ...]:
    """`args` with the values at `positions` (None excepted) as `<secret:N>` placeholders,
    numbered by a str's text, anything else's encoding without normalization, as the
    encoders number a keyword argument's secret value."""
    return tuple(
        _secret(arg, numbering) if index in positions and arg is not None else arg for index, arg in enumerate(args)
    )


def _secret(value: Any, numbering: Numbering) -> Placeholder:
    key = value if type(value) is str else "\x00" + Encoder(NO_RULES).encode(value).hex()
    return Placeholder("secret", numbering.number("secret", key))
