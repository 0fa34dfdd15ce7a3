"""Loaded in bite's child processes: write down how each failure of the test command came about.

`callpin bite` copies this file, stdlib only, beside its start-up hook as
`callpin_bite_failures.py` and names it in PYTEST_PLUGINS, so every pytest the test
command starts (xdist workers too) loads it as a plugin, with or without plugin
autoloading and whether or not callpin is installed there. Each failed test, and each
failed collection, appends one JSON line to the file named by CALLPIN_BITE_FAILURES:

    {"kind": "drift" | "assert" | "error", "type": "<module>.<class>", "where": "<node id>"}

The start-up hook calls `note` for an exception no code caught, so a plain script that
dies of one says the same. Classes are told apart by name, never imported: a child
must not need callpin to say that a `callpin.errors.Drift` ended it.
"""

from __future__ import annotations

import json
import os
from typing import Any

_FAILURES_ENV = "CALLPIN_BITE_FAILURES"

# A pin reported a difference: the strongest evidence that the harness watches the call.
_DRIFT = ("callpin.errors", "Drift")
# pytest.fail() and a pytest.raises() that saw nothing are the test's own verdicts: a
# `Failed`, which pytest presents as a builtin, under its outcome base class.
_OUTCOME = ("_pytest.outcomes", "OutcomeException")


def kind(error: BaseException) -> str:
    """`drift` for a pin's Drift, `assert` for an assertion or a test's own verdict, else `error`."""
    ancestry = [(cls.__module__, cls.__qualname__) for cls in type(error).__mro__]
    if _DRIFT in ancestry:
        return "drift"
    if isinstance(error, AssertionError) or (type(error).__name__ == "Failed" and _OUTCOME in ancestry):
        return "assert"
    return "error"


def note(error: BaseException | None, where: str) -> None:
    """Append how `error` ended the work at `where` (None: a failure without an exception at hand)."""
    path = os.environ.get(_FAILURES_ENV)
    if not path:
        return
    line = {
        "kind": "error" if error is None else kind(error),
        "type": "" if error is None else f"{type(error).__module__}.{type(error).__qualname__}",
        "where": where,
    }
    # One short line written with O_APPEND: xdist workers share the file.
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def pytest_exception_interact(node: Any, call: Any, report: Any) -> None:
    """pytest calls this for each failed test or collection (never for a skip or an xfail)."""
    excinfo = getattr(call, "excinfo", None)
    note(None if excinfo is None else excinfo.value, str(getattr(node, "nodeid", "")))
