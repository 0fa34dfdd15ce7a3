"""The hook probe's children start with: reversed directory listings and a shifted clock, when asked.

probe copies this file as `sitecustomize.py` into a folder first on the children's
PYTHONPATH, in every cell, so the baseline starts the same way as the others. It acts
only when imported under that name, and only on what its variables ask for:

- CALLPIN_PROBE_ORDER=reverse: `os.listdir` and `os.scandir` return their entries in
  reverse order; `Path.iterdir`, `glob`, `os.walk` and `shutil` list through them.
- CALLPIN_PROBE_CLOCK=SECONDS: `time.time`, `time.time_ns`, the no-argument forms of
  `time.localtime`, `gmtime`, `ctime`, `asctime`, `strftime`, and `datetime.now`,
  `utcnow`, `today`, `date.today` read the wall clock shifted by SECONDS. The
  datetime types stay the same objects, so `type(x) is datetime` still holds.

Then it runs the `sitecustomize` the child would have found without it.
"""

from __future__ import annotations

import os
from typing import Any

_ORDER = "CALLPIN_PROBE_ORDER"
_CLOCK = "CALLPIN_PROBE_CLOCK"


class _Listing:
    """What `os.scandir` returns, with the entries reversed: iterable, closable, a context manager."""

    def __init__(self, entries: list[Any]) -> None:
        entries.reverse()
        self._entries = iter(entries)

    def __iter__(self) -> _Listing:
        return self

    def __next__(self) -> Any:
        return next(self._entries)

    def close(self) -> None:
        self._entries = iter(())

    def __enter__(self) -> _Listing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def reverse_listings() -> None:
    """Make `os.listdir` and `os.scandir` return their entries in reverse order."""
    listdir = os.listdir
    scandir = os.scandir

    def reversed_listdir(path: Any = ".") -> list[Any]:
        names = listdir(path)
        names.reverse()
        return names

    def reversed_scandir(path: Any = ".") -> _Listing:
        with scandir(path) as found:
            return _Listing(list(found))

    os.listdir = reversed_listdir
    os.scandir = reversed_scandir  # type: ignore[assignment]


def _type_dict(cls: type) -> dict[str, Any]:
    # The mapping proxy of a built-in type wraps its real dict, the only way to give a
    # C type such as datetime a new classmethod while it stays the same type.
    import gc

    found: dict[str, Any] = gc.get_referents(cls.__dict__)[0]
    return found


def shift_clock(offset: float) -> None:
    """Make the wall clock read `offset` seconds later for Python code of this process."""
    import ctypes
    import datetime
    import time

    real_time = time.time
    real_time_ns = time.time_ns
    nanoseconds = int(offset * 1_000_000_000)

    def now_seconds() -> float:
        return real_time() + offset

    def now_nanoseconds() -> int:
        return real_time_ns() + nanoseconds

    def defaulting(function: Any) -> Any:
        def shifted(secs: float | None = None) -> Any:
            return function(now_seconds() if secs is None else secs)

        return shifted

    for name in ("localtime", "gmtime", "ctime"):
        setattr(time, name, defaulting(getattr(time, name)))
    real_strftime = time.strftime
    real_asctime = time.asctime
    shifted_localtime = time.localtime

    def strftime(fmt: str, t: Any = None) -> str:
        return real_strftime(fmt, shifted_localtime() if t is None else t)

    def asctime(t: Any = None) -> str:
        return real_asctime(shifted_localtime() if t is None else t)

    time.strftime = strftime
    time.asctime = asctime
    time.time = now_seconds
    time.time_ns = now_nanoseconds
    real_utcnow = datetime.datetime.utcnow
    delta = datetime.timedelta(seconds=offset)

    def now(cls: Any, tz: Any = None) -> Any:
        return cls.fromtimestamp(now_seconds(), tz)

    def utcnow(cls: Any) -> Any:
        return real_utcnow() + delta

    def today(cls: Any) -> Any:
        return cls.fromtimestamp(now_seconds())

    replaced = {datetime.datetime: {"now": now, "utcnow": utcnow, "today": today}, datetime.date: {"today": today}}
    for cls, methods in replaced.items():
        found = _type_dict(cls)
        for name, method in methods.items():
            found[name] = classmethod(method)
        ctypes.pythonapi.PyType_Modified(ctypes.py_object(cls))


def install() -> None:
    """Apply what the variables ask for, then the hidden sitecustomize."""
    if os.environ.get(_ORDER) == "reverse":
        reverse_listings()
    offset = os.environ.get(_CLOCK)
    if offset:
        shift_clock(float(offset))
    from callpin_site_chain import chain  # type: ignore[import-not-found]  # site_hook.py, copied beside this file

    chain(__file__)


if __name__ == "sitecustomize":
    install()
