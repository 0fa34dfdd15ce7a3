"""Which instance attributes of an object callpin records as its state, read without running its code.

An object of a class with no canonical form of its own (no `callpin.register`, not a
dataclass, attrs class, namedtuple, enum or exception) is recorded by its state: the
attributes it holds in its `__dict__` and its `__slots__`, read from the instance
dictionary and the slot descriptors directly, so that no property, `__getattr__` or
`__getattribute__` of the object runs. docs/FORMAT.md ("Objects") states the policy.
"""

from __future__ import annotations

import types
import weakref
from typing import Any

from .values import Instance, ObjectState, Opaque, qualified_name

# Where each class seen keeps its slots, base classes first, as (stored name, index of
# the declaring class in the MRO): reading a class's MRO on every value would cost more
# than encoding most of them. Held weakly, and holding no descriptor (a descriptor
# refers to its class): a class made at run time (one per call of a factory) must not
# be kept alive by being recorded.
_SLOTS: weakref.WeakKeyDictionary[type, tuple[tuple[str, int], ...]] = weakref.WeakKeyDictionary()
# Py_TPFLAGS_IMMUTABLETYPE: set for every type written in C, never for a class statement's.
_WRITTEN_IN_C = 1 << 8


def _slots(cls: type) -> tuple[tuple[str, int], ...]:
    known = _SLOTS.get(cls)
    if known is not None:
        return known
    found: list[tuple[str, int]] = []
    seen: set[str] = set()
    mro = cls.__mro__
    for index in range(len(mro) - 1, -1, -1):
        klass = mro[index]
        declared = klass.__dict__.get("__slots__", ())
        for name in (declared,) if isinstance(declared, str) else declared:
            if not isinstance(name, str) or name in ("__dict__", "__weakref__"):
                continue
            stored = (
                f"_{klass.__name__.lstrip('_')}{name}" if name.startswith("__") and not name.endswith("__") else name
            )
            descriptor = klass.__dict__.get(stored)
            # A member descriptor reads the slot itself; anything else there (a
            # property defined over the slot's name) would run the class's code.
            if isinstance(descriptor, types.MemberDescriptorType) and stored not in seen:
                seen.add(stored)
                found.append((stored, index))
    result = tuple(found)
    if len(_SLOTS) < 4096:
        _SLOTS[cls] = result
    return result


def instance_state(obj: Any) -> tuple[tuple[str, Any], ...] | None:
    """The recorded attributes of `obj` in order (slots, base classes first, then `__dict__` by name), or None.

    None means the object has no state callpin can read (a builtin such as a function,
    a module or a class; an object of a type written in C with no attribute set): it is
    recorded by its repr, as is an object with no attribute set whose class defines its
    own `__repr__`. Any other instance with no attribute set has an empty state (it is
    still numbered as one object). Names in `__dict__` starting with two underscores are
    left out (the interpreter's and callpin's own bookkeeping); slots are all recorded
    (pydantic keeps a model's extra fields in `__pydantic_extra__`).
    """
    cls = type(obj)
    if cls.__module__ == "builtins" or isinstance(obj, type):
        return None
    fields: list[tuple[str, Any]] = []
    mro = cls.__mro__
    for name, index in _slots(cls):
        descriptor = mro[index].__dict__.get(name)
        if not isinstance(descriptor, types.MemberDescriptorType):
            continue  # replaced since it was seen: reading it now would run code
        try:
            fields.append((name, descriptor.__get__(obj, cls)))
        except AttributeError:
            continue
    try:
        held = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        held = None
    if type(held) is dict:
        # By name: the order attributes were set in is not always the same from run to
        # run (an ORM sets a loaded row's columns in the order of a set of its own).
        fields.extend(
            sorted(
                ((name, value) for name, value in dict.items(held) if type(name) is str and not name.startswith("__")),
                key=_name,
            )
        )
    if not fields and (cls.__flags__ & _WRITTEN_IN_C or vars(object)["__repr__"] is not _repr_of(cls)):
        # A type written in C (itertools.count) keeps its data out of reach; a class
        # with no attribute set and a repr of its own (a sentinel) says what it is there.
        return None
    return tuple(fields)


def by_state(obj: Any) -> ObjectState | Opaque:
    """`obj` by its state (number 0: the encoder gives it its number in the log), or by
    its repr when it has no state callpin can read."""
    fields = instance_state(obj)
    if fields is None:
        return by_repr(obj)
    return ObjectState(qualified_name(type(obj)), 0, fields)


def by_identity(obj: Any) -> Instance:
    """`obj` by its identity alone, `<Type#n>` (number 0: the encoder gives it its number)."""
    return Instance(qualified_name(type(obj)), 0)


def by_repr(obj: Any) -> Opaque:
    """`obj` by its type's name and its repr alone (normalized when written)."""
    return Opaque(qualified_name(type(obj)), repr(obj))


def _name(attribute: tuple[str, Any]) -> str:
    return attribute[0]


def _repr_of(cls: type) -> Any:
    """The `__repr__` the class gives its instances (looked up on the class, never the instance)."""
    for klass in cls.__mro__:
        found = vars(klass).get("__repr__")
        if found is not None:
            return found
    return None
