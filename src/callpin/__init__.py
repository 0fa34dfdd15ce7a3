"""callpin: pin the interactions of legacy code before a refactor."""

from ._impl import IMPLEMENTATION
from .cases import Case, Cases, cases
from .diff import Diff, diff
from .errors import (
    BaselineMissing,
    CallpinError,
    CorruptLog,
    Drift,
    LimitExceeded,
    LogFormatError,
    NotALog,
    RulesMismatch,
    TargetError,
    TruncatedLog,
    UnsupportedVersion,
    UsageError,
)
from .event import Event
from .forms import Registration, identity, opaque, register, unregister
from .logfile import Log, load
from .normalize import DEFAULT_RULES, RuleSet, rule, secret_keys
from .pinning import Pin, pin
from .recorder import Recording, raises, record, returns
from .spy import target
from .stubs import with_receiver
from .values import (
    Custom,
    Cycle,
    EnumValue,
    ExceptionValue,
    Instance,
    ObjectState,
    Opaque,
    Placeholder,
    Record,
    Unencodable,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_RULES",
    "IMPLEMENTATION",
    "BaselineMissing",
    "CallpinError",
    "Case",
    "Cases",
    "CorruptLog",
    "Custom",
    "Cycle",
    "Diff",
    "Drift",
    "EnumValue",
    "Event",
    "ExceptionValue",
    "Instance",
    "LimitExceeded",
    "Log",
    "LogFormatError",
    "NotALog",
    "ObjectState",
    "Opaque",
    "Pin",
    "Placeholder",
    "Record",
    "Recording",
    "Registration",
    "RuleSet",
    "RulesMismatch",
    "TargetError",
    "TruncatedLog",
    "Unencodable",
    "UnsupportedVersion",
    "UsageError",
    "__version__",
    "cases",
    "diff",
    "identity",
    "load",
    "opaque",
    "pin",
    "raises",
    "record",
    "register",
    "returns",
    "rule",
    "secret_keys",
    "target",
    "unregister",
    "with_receiver",
]
