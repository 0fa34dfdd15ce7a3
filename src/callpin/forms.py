"""How a value of a type the encoders do not handle themselves is seen: its canonical form.

Both encoders give such a value to `canonical_form`, so the C and the Python encoder see
every non-native type the same way. A form registered with `register` comes first; then
the built-in forms (enums, exceptions, dataclasses, attrs classes, namedtuples, builtin
subclasses, bound methods, partials, in-memory files, loggers, modules, deques, arrays),
the forms of well-known libraries (`library_forms`), a Mapping or Sequence of another
library by its items, and any other object by its state (`object_state`).
docs/FORMAT.md ("Values", "Objects") states each.
"""

from __future__ import annotations

import abc
import array
import collections
import dataclasses
import datetime as _dt
import enum
import functools
import io
import pathlib
import sys
import types
import uuid as _uuid
import weakref
from collections import UserString
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from .errors import UsageError
from .library_forms import form_of_library_type
from .object_state import by_identity, by_repr, by_state, instance_state
from .values import (
    INERT_TYPES,
    Custom,
    EnumValue,
    ExceptionValue,
    Instance,
    ObjectState,
    Opaque,
    Record,
    qualified_name,
)

_registry: dict[type, Callable[[Any], Any]] = {}

_NATIVE_TYPES = (
    type(None),
    bool,
    int,
    float,
    str,
    bytes,
    list,
    dict,
    tuple,
    set,
    frozenset,
    _uuid.UUID,
    _dt.datetime,
    _dt.date,
    _dt.time,
    _dt.timedelta,
    Decimal,
    pathlib.PurePosixPath,
)


class Registration:
    """A form given with `register`, which `undo()` (or leaving a `with` block) takes back:
    the type's form is then what it was before, registered or built in."""

    def __init__(self, cls: type, previous: Callable[[Any], Any] | None) -> None:
        self.cls, self._previous = cls, previous

    def undo(self) -> None:
        """Restore the form `cls` had before this registration."""
        if self._previous is None:
            _registry.pop(self.cls, None)
        else:
            _registry[self.cls] = self._previous
        _forms.clear()

    def __enter__(self) -> Registration:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.undo()


def register(cls: type, fn: Callable[[Any], Any]) -> Registration:
    """Give values of `cls` (and its subclasses) the canonical form `fn(value)`.

    The result is encoded in place of the value, tagged with the type's qualified name.
    Types callpin encodes natively (str, dict, datetime...) cannot be re-registered.
    The form holds for the process until undone: `with callpin.register(cls, fn): ...`
    holds it for the block (under the pytest plugin, one registered in a test's body holds
    for that test).
    """
    if not isinstance(cls, type):
        raise UsageError(f"register() needs a type, got {cls!r}")
    if cls in _NATIVE_TYPES or cls in INERT_TYPES:
        raise UsageError(f"{qualified_name(cls)} has a built-in canonical form")
    if not callable(fn):
        raise UsageError(f"register() needs a callable, got {fn!r}")
    done = Registration(cls, _registry.get(cls))
    _registry[cls] = fn
    _forms.clear()
    return done


def registered_forms() -> dict[type, Callable[[Any], Any]]:
    """A copy of the forms registered now, for `restore_forms`."""
    return dict(_registry)


def restore_forms(forms: Mapping[type, Callable[[Any], Any]]) -> bool:
    """Make the registered forms `forms` again; whether any had changed since."""
    if _registry == forms:
        return False
    _registry.clear()
    _registry.update(forms)
    _forms.clear()
    return True


def opaque(value: Any) -> Opaque:
    """The repr-only form: `callpin.register(cls, callpin.opaque)` records values of `cls` by repr."""
    return by_repr(value)


def identity(value: Any) -> Instance:
    """The identity-only form: `callpin.register(cls, callpin.identity)` records values of
    `cls` as `<Type#n>`, numbered as receivers are, with nothing of their state."""
    return by_identity(value)


def unregister(cls: type) -> None:
    """Remove a canonical form given with `register`."""
    _registry.pop(cls, None)
    _forms.clear()


def _registered(cls: type) -> Callable[[Any], Any] | None:
    if not _registry:
        return None
    for base in cls.__mro__:
        fn = _registry.get(base)
        if fn is not None:
            return fn
    return None


# The types of callpin's own proxies (spy.SpyProxy and its bound form). A value that is
# one is written as the object it wraps: a spied function or bound method passed as a
# value (a hook in a dict, a callback) reads as the unspied one would, so a log never
# depends on what else was spied.
_TRANSPARENT: set[type] = set()


def see_through(*proxy_types: type) -> None:
    """Have both encoders write instances of `proxy_types` as the object each wraps (`__wrapped__`)."""
    _TRANSPARENT.update(proxy_types)


def canonical_form(obj: Any) -> Any:
    """The value the encoder writes for `obj`, whose exact type it does not handle itself.

    Both implementations call this one function, so every non-native type is seen
    the same way by the C and the Python encoder. The result is always a value of a
    type the encoder handles natively (or an inert value type).
    """
    cls = type(obj)
    while cls in _TRANSPARENT:
        obj = obj.__wrapped__
        cls = type(obj)
    stream = _standard_stream(obj)
    if stream is not None:
        return stream
    try:
        claimed = obj.__class__
    except AttributeError:  # isinstance() too takes the type alone then
        claimed = cls
    if claimed is not cls:
        # An object that says it is of another class (a proxy, a mock with a spec) is
        # asked as isinstance() asks it, every time: what it claims is its own code.
        return _form_of(cls, lambda kinds: isinstance(obj, kinds))(obj)
    global _forms_token
    token = abc.get_cache_token()
    if token != _forms_token:
        _forms.clear()  # an ABC registered a class since: issubclass() may answer otherwise
        _forms_token = token
    form = _forms.get(cls)
    if form is None:
        form = _form_of(cls, lambda kinds: issubclass(cls, kinds))
        if len(_forms) < _FORMS_KEPT:
            _forms[cls] = form
    return form(obj)


# The standard streams, current (`sys.stderr`) or original (`sys.__stderr__`), by name:
# which object is there, and its repr (`<_io.TextIOWrapper name="<_io.FileIO name=6 ...>"`),
# depend on the test runner's capture mode and on how many files are open.
_STDIN, _STDOUT, _STDERR = (Opaque(f"sys.{name}", f"<sys.{name}>") for name in ("stdin", "stdout", "stderr"))


def _standard_stream(obj: Any) -> Opaque | None:
    # Asked of every object without a handler: plain attribute reads, no getattr call.
    if obj is sys.stderr or obj is sys.__stderr__:
        return _STDERR
    if obj is sys.stdout or obj is sys.__stdout__:
        return _STDOUT
    if obj is sys.stdin or obj is sys.__stdin__:
        return _STDIN
    return None


# The form of each class seen, which depends on its class alone when the object's
# `__class__` is its type: deciding it takes some twenty checks, reading it one lookup.
# Held weakly (a class made at run time must not be kept alive by being recorded) and
# cleared when a form is registered or an ABC registers a class.
_forms: weakref.WeakKeyDictionary[type, Callable[[Any], Any]] = weakref.WeakKeyDictionary()
_forms_token: object = None
_FORMS_KEPT = 4096

_BUILTIN_VALUES: tuple[tuple[type | tuple[type, ...], Callable[[Any], Any]], ...] = (
    (bool, bool),
    (int, int.__int__),
    (float, float.__float__),
    (str, str.__str__),
    ((bytes, bytearray, memoryview), bytes),
    (list, lambda obj: list(list.__iter__(obj))),
    # A subclass's own items() keeps its order (OrderedDict.move_to_end).
    (dict, lambda obj: dict(obj.items())),
    (frozenset, lambda obj: frozenset(frozenset.__iter__(obj))),
    (set, lambda obj: set(set.__iter__(obj))),
    (
        _dt.datetime,
        lambda obj: _dt.datetime(
            obj.year,
            obj.month,
            obj.day,
            obj.hour,
            obj.minute,
            obj.second,
            obj.microsecond,
            obj.tzinfo,
            fold=obj.fold,
        ),
    ),
    (_dt.date, lambda obj: _dt.date(obj.year, obj.month, obj.day)),
    (_dt.time, lambda obj: _dt.time(obj.hour, obj.minute, obj.second, obj.microsecond, obj.tzinfo, fold=obj.fold)),
    (_dt.timedelta, lambda obj: _dt.timedelta(obj.days, obj.seconds, obj.microseconds)),
    (_uuid.UUID, lambda obj: _uuid.UUID(int=obj.int)),
    (Decimal, lambda obj: Decimal(str(obj))),
    (pathlib.PurePath, lambda obj: pathlib.PurePosixPath(obj.as_posix())),
)


def _form_of(cls: type, is_a: Callable[[Any], bool]) -> Callable[[Any], Any]:
    """How values of `cls` are written; `is_a(kinds)` says whether such a value is one of `kinds`.

    What it returns must not refer to `cls` (it is kept in `_forms`, which holds its
    classes weakly): it names the type of the value it is given.
    """
    fn = _registered(cls)
    if fn is opaque or fn is identity:
        return fn
    if fn is not None:
        return lambda obj: Custom(qualified_name(type(obj)), fn(obj))
    if is_a(enum.Enum):
        return _enum_value
    if is_a(BaseException):
        return lambda obj: ExceptionValue(qualified_name(type(obj)), tuple(obj.args))
    if dataclasses.is_dataclass(cls) and not is_a(type):
        return lambda obj: Record(
            qualified_name(type(obj)), tuple((f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj))
        )
    attrs_fields = getattr(cls, "__attrs_attrs__", None)
    if attrs_fields is not None and not is_a(type):
        return lambda obj: Record(
            qualified_name(type(obj)), tuple((a.name, getattr(obj, a.name)) for a in attrs_fields)
        )
    if is_a(tuple):
        names = getattr(cls, "_fields", None)
        if isinstance(names, tuple) and all(isinstance(n, str) for n in names):
            return lambda obj: Record(qualified_name(type(obj)), tuple(zip(names, tuple.__iter__(obj), strict=False)))
        return lambda obj: tuple(tuple.__iter__(obj))
    library_form = form_of_library_type(cls)
    if library_form is not None:
        return library_form
    if cls.__module__ not in _PLAIN_CONTAINER_MODULES and issubclass(cls, (dict, list)):
        # A dict or list subclass of another library keeps its type's name (a celery
        # Signature is a dict of its task, args and options: as a plain dict, a refactor
        # that passed `dict(signature)` read the same). Asked of the type: an object that
        # only claims to be a dict (a proxy) reads as the dict it claims to be.
        return _dict_of_its_type if issubclass(cls, dict) else _list_of_its_type
    for kinds, convert in _BUILTIN_VALUES:
        if is_a(kinds):
            return convert
    # Callables that hold an object, and loggers: asked of the type itself, whatever
    # the object says its `__class__` is, since their forms read its members.
    if cls is types.MethodType:
        return _bound_method
    if issubclass(cls, functools.partial):
        return _partial
    if issubclass(cls, (io.StringIO, io.BytesIO)):
        return _buffer
    logging = sys.modules.get("logging")  # not imported: no logger exists
    if logging is not None and issubclass(cls, logging.Logger):
        return _logger
    if issubclass(cls, types.ModuleType):
        return _module
    if issubclass(cls, collections.deque):
        return _deque
    if issubclass(cls, array.array):
        return _array
    if cls.__module__ != "builtins":
        # Mappings and sequences of other libraries (UserDict, a case-insensitive dict of
        # headers) read as their items; a UserString is a sequence of characters, and
        # its state (`data`) says more. The checks ask of the type, never of the
        # object's own `__class__`, which is its code to run (and may not be a type).
        if issubclass(cls, Mapping):
            return _by_items
        if issubclass(cls, Sequence) and not issubclass(cls, UserString):
            return _by_elements
        return by_state
    return opaque


# Where the dict and list subclasses that are plain containers live (OrderedDict,
# defaultdict, Counter): written as a dict, so a refactor between them and dict is no change.
_PLAIN_CONTAINER_MODULES = frozenset({"builtins", "collections"})


def _dict_of_its_type(obj: Any) -> Custom:
    """A dict subclass of another library as its items (its own `items()`, in its order), tagged with its type."""
    return Custom(qualified_name(type(obj)), dict(obj.items()))


def _list_of_its_type(obj: Any) -> Custom:
    """A list subclass of another library as its elements, tagged with its type."""
    return Custom(qualified_name(type(obj)), list(list.__iter__(obj)))


def _by_items(obj: Any) -> Any:
    """A Mapping of another library as its items; by its state when it refuses to give them."""
    try:
        items = dict(obj.items())
    except Exception as exc:
        # Its own code raised: what it holds is still there to read (a lazy mapping
        # not yet loaded, one that needs a connection). Dropped with its frames.
        exc.__traceback__ = None
        return by_state(obj)
    return Custom(qualified_name(type(obj)), items)


def _by_elements(obj: Any) -> Any:
    """A Sequence of another library as its elements; by its state when it refuses to give them."""
    try:
        elements = list(obj)
    except Exception as exc:
        exc.__traceback__ = None
        return by_state(obj)
    return Custom(qualified_name(type(obj)), elements)


def _module(obj: Any) -> Opaque:
    """A module by its name, `<module 'requests'>`: its repr names the file it was loaded
    from, which is where the virtual environment is (another path on another machine)."""
    try:
        name = object.__getattribute__(obj, "__dict__").get("__name__")
    except AttributeError:
        name = None
    return Opaque(qualified_name(type(obj)), f"<module {name!r}>" if type(name) is str else "<module>")


_DEQUE_ITER, _DEQUE_MAXLEN = collections.deque.__iter__, vars(collections.deque)["maxlen"]


def _deque(obj: Any) -> Any:
    """A deque as its elements, read with deque's own members; with its `maxlen` when it
    has one (`deque(iterable=[...], maxlen=3)`): a refactor that drops it keeps every
    element the collaborator appends."""
    elements = list(_DEQUE_ITER(obj))
    maxlen = _DEQUE_MAXLEN.__get__(obj, collections.deque)
    if maxlen is None:
        return Custom(qualified_name(type(obj)), elements)
    return Record(qualified_name(type(obj)), (("iterable", elements), ("maxlen", maxlen)))


_ARRAY_TOLIST, _ARRAY_TYPECODE = array.array.tolist, vars(array.array)["typecode"]


def _array(obj: Any) -> Record:
    """An `array.array` as its typecode and elements, read with array's own members: two
    arrays of the same numbers in another typecode write other bytes to a file."""
    return Record(
        qualified_name(type(obj)),
        (("typecode", _ARRAY_TYPECODE.__get__(obj, array.array)), ("initializer", _ARRAY_TOLIST(obj))),
    )


def _enum_value(obj: Any) -> EnumValue:
    """An enum member by its name; a flag value with no name (`Perm(0)`, bits no member
    has) by its value's repr, so two such values never read as one."""
    name = obj._name_
    return EnumValue(qualified_name(type(obj)), str(name) if name is not None else f"({obj._value_!r})")


def _bound_method(obj: types.MethodType) -> Record:
    """A bound method as its function's name and the object it is bound to, written as any
    object is, so that object has one number wherever it appears in the log."""
    func = obj.__func__
    name = func.__qualname__ if type(func) is types.FunctionType else func
    return Record("builtins.method", (("__func__", name), ("__self__", obj.__self__)))


_PARTIAL_MEMBERS = tuple((name, vars(functools.partial)[name]) for name in ("func", "args", "keywords"))


def _partial(obj: functools.partial[Any]) -> Record:
    """A `functools.partial` as its function and the arguments it adds, read through the
    type's own members (a subclass's properties never run)."""
    fields = tuple((name, member.__get__(obj, functools.partial)) for name, member in _PARTIAL_MEMBERS)
    return Record(qualified_name(type(obj)), fields)


def _buffer(obj: Any) -> ObjectState:
    """An in-memory file by its state: what it holds and where it is, read with the io
    type's own methods (a subclass's overrides never run), then the attributes a subclass
    gave it. Numbered and held to the budget as any object; a closed one is `closed=True`."""
    held: tuple[tuple[str, Any], ...]
    try:
        if issubclass(type(obj), io.StringIO):
            held = (("value", io.StringIO.getvalue(obj)), ("position", io.StringIO.tell(obj)))
        else:
            held = (("value", io.BytesIO.getvalue(obj)), ("position", io.BytesIO.tell(obj)))
    except ValueError:
        held = (("closed", True),)
    return ObjectState(qualified_name(type(obj)), 0, held + (instance_state(obj) or ()))


def _logger(obj: Any) -> Any:
    """A `logging.Logger` by its name, the one thing that says which logger it is: its
    state holds the process's whole registry of loggers (every library imported so far)
    and the levels and handlers a test runner sets."""
    try:
        name = object.__getattribute__(obj, "__dict__").get("name")
    except AttributeError:
        name = None
    if type(name) is not str:
        return by_state(obj)
    return Custom(qualified_name(type(obj)), name)
