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
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

_MARKER_ENV = "CALLPIN_BITE_MARKER"
_WATCH_ENV = "CALLPIN_BITE_WATCH"


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
    from callpin_site_chain import chain  # type: ignore[import-not-found]  # site_hook.py, copied beside this file

    chain(__file__)
