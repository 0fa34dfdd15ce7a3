"""Installed as `sitecustomize` in bite's child processes: note where watched source files run from.

`callpin bite` copies this file, stdlib only, into a folder it puts first on PYTHONPATH, so
every Python process the test command starts (pytest, its xdist workers, a subprocess)
imports it at start-up. It adds an audit hook that sees each module body being executed
(the `exec` audit event carries the code object, whose `co_filename` is the file the
module really came from) and appends one line per watched file name to the marker file:

    <real path of the executed file> TAB <module name, or empty>

bite then decides whether the mutated scratch copy was the file imported, or whether the
same module came from somewhere else. Only the file's own name is compared in the hook,
so the cost for every other module is one set lookup.

It also makes the process say how it failed: it names `callpin_bite_failures` (copied
beside it from `_failures.py`) in PYTEST_PLUGINS, so pytest loads it, and it notes an
exception that no code caught.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

_MARKER_ENV = "CALLPIN_BITE_MARKER"
_WATCH_ENV = "CALLPIN_BITE_WATCH"
_FAILURES_ENV = "CALLPIN_BITE_FAILURES"
_FAILURES_PLUGIN = "callpin_bite_failures"


def _report_failures() -> None:
    if not os.environ.get(_FAILURES_ENV):
        return
    # Named here rather than by bite: only a process that runs this hook can import the
    # plugin, and a pytest told to load a plugin it cannot import fails outright.
    plugins = [name for name in os.environ.get("PYTEST_PLUGINS", "").split(",") if name.strip()]
    if _FAILURES_PLUGIN not in plugins:
        os.environ["PYTEST_PLUGINS"] = ",".join([*plugins, _FAILURES_PLUGIN])
    previous = sys.excepthook

    def excepthook(kind: type[BaseException], error: BaseException, tb: Any) -> None:
        from callpin_bite_failures import note  # type: ignore[import-not-found]  # _failures.py, copied beside

        note(error, sys.argv[0] if sys.argv else "")
        previous(kind, error, tb)

    sys.excepthook = excepthook


def _install() -> None:
    marker = os.environ.get(_MARKER_ENV)
    watch = os.environ.get(_WATCH_ENV)
    if not marker or not watch:
        return
    names = frozenset(json.loads(watch))

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event != "exec" or not args:
            return
        code = args[0]
        filename = getattr(code, "co_filename", None)
        if (
            not isinstance(filename, str)
            or getattr(code, "co_name", None) != "<module>"
            or os.path.basename(filename) not in names
        ):
            return
        real = os.path.realpath(filename)
        module = ""
        # importlib puts the module in sys.modules before it executes the body.
        for name, value in list(sys.modules.items()):
            if getattr(value, "__file__", None) == filename:
                module = name
                break
        with open(marker, "a", encoding="utf-8") as out:
            out.write(f"{real}\t{module}\n")

    sys.addaudithook(hook)


if __name__ == "sitecustomize":
    _install()
    _report_failures()
    from callpin_site_chain import chain  # type: ignore[import-not-found]  # site_hook.py, copied beside this file

    chain(__file__)
