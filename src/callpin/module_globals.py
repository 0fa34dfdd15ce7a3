"""Which module globals hold which callable: the index behind alias patching, and the modules imported since a point.

Finding every alias of a spied function (`from billing import charge_card` copies it
into the importing module) means knowing which globals of which modules hold it. Read
afresh on every block, that is a scan of every global of every loaded module: with 5,000
modules of 60 globals, tens of milliseconds per block, twice. The index here is built
once and then kept up to date from the modules imported since (they are appended to
`sys.modules`, so they are found from its end), so a block costs what its own targets
cost. What the index cannot see is a global of an already indexed module rebound by
running code after its import: aliases are the names a module binds when it is imported.
A module still being imported when it is indexed is indexed again later, whole.

`Mark` is a point in `sys.modules` (its last entry); `imported_since(mark)` gives the
modules added after it, which is also how a block finds, when it ends, the modules
imported while it ran.
"""

from __future__ import annotations

import sys
import threading
import types
from typing import NamedTuple, TypeGuard


class Mark(NamedTuple):
    """The last entry of `sys.modules` at one moment: its name and its module object."""

    name: str | None
    module: object


def mark() -> Mark:
    """The point `sys.modules` is at now."""
    modules = sys.modules.copy()
    for name in reversed(modules):
        return Mark(name, modules[name])
    return Mark(None, None)


def imported_since(point: Mark) -> tuple[list[tuple[str, types.ModuleType]], bool]:
    """The modules added to `sys.modules` after `point`, oldest first, and whether that is all of them.

    When the entry `point` names is gone (or was replaced), which modules are new can no
    longer be told from the order: then every module is returned, and the flag is True.
    """
    modules = sys.modules.copy()
    everything = point.name is None or modules.get(point.name) is not point.module
    if everything:
        pairs = list(modules.items())
    else:
        pairs = []
        for name in reversed(modules):
            if name == point.name:
                break
            pairs.append((name, modules[name]))
        pairs.reverse()
    found = [
        (name, module)
        for name, module in pairs
        if _is_module(module) and isinstance(getattr(module, "__dict__", None), dict)
    ]
    return found, everything


def _is_module(value: object) -> TypeGuard[types.ModuleType]:
    """Whether `value` is a module, asked of its type alone: `isinstance` would read the
    `__class__` of a global that is not one, which a lazy proxy (celery's `shared_task`
    promise, a lazy settings object) answers by evaluating itself, so recording changed
    the code under test (`callable` too asks the type alone)."""
    return issubclass(type(value), types.ModuleType)


def _initializing(module: types.ModuleType) -> bool:
    spec = getattr(module, "__spec__", None)
    return bool(getattr(spec, "_initializing", False))


class GlobalsIndex:
    """Module globals by the id of the callable they hold: {id: [(module name, global name)]}.

    Entries are hints, checked when used (the module still loaded, the global still
    holding that very object); `holders(obj)` gives only those that hold.
    """

    def __init__(self) -> None:
        self._places: dict[int, list[tuple[str, str]]] = {}
        self._point = Mark(None, None)
        self._pending: list[tuple[str, types.ModuleType]] = []
        self._lock = threading.Lock()

    def refresh(self) -> None:
        """Index the modules imported since the last refresh, and those that were still importing."""
        with self._lock:
            point = mark()
            if point == self._point and not self._pending:
                return
            fresh, everything = imported_since(self._point)
            again, self._pending = self._pending, []
            if everything:
                self._places.clear()
                again = []
            for name, module in [*again, *fresh]:
                self._index(name, module)
            self._point = point

    def _index(self, name: str, module: types.ModuleType) -> None:
        namespace = module.__dict__
        places = self._places
        for key, value in namespace.copy().items():
            if callable(value) and not _is_module(value):
                places.setdefault(id(value), []).append((name, key))
        if _initializing(module):
            self._pending.append((name, module))

    def note(self, module: types.ModuleType, key: str, value: object) -> None:
        """Index one global just bound by callpin itself (a proxy put in place, an original put back)."""
        name = getattr(module, "__name__", None)
        if isinstance(name, str) and callable(value):
            with self._lock:
                self._places.setdefault(id(value), []).append((name, key))

    def forget(self, value: object) -> None:
        """Drop what `note` indexed for a proxy that is gone from every place."""
        with self._lock:
            self._places.pop(id(value), None)

    def holders(self, obj: object) -> list[tuple[types.ModuleType, str]]:
        """Every (module, global name) that holds `obj` itself now, among those indexed."""
        found: list[tuple[types.ModuleType, str]] = []
        seen: set[tuple[int, str]] = set()
        for module_name, key in self._places.get(id(obj), ()):
            module = sys.modules.get(module_name)
            if not _is_module(module):
                continue
            namespace = getattr(module, "__dict__", None)
            if not isinstance(namespace, dict) or namespace.get(key) is not obj or (id(namespace), key) in seen:
                continue
            seen.add((id(namespace), key))
            found.append((module, key))
        return found
