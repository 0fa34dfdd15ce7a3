"""Resolve spy targets, wrap them with wrapt proxies, patch their aliases and restore exactly."""

from __future__ import annotations

import difflib
import importlib
import inspect
import sys
import threading
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, NamedTuple, TypeAlias

import wrapt

from . import _impl
from .errors import TargetError, UsageError
from .forms import see_through
from .module_globals import GlobalsIndex, Mark, imported_since, mark

Flavor: TypeAlias = Literal["sync", "async", "generator"]
Handler: TypeAlias = Callable[[Any, Any, tuple[Any, ...], dict[str, Any]], Any]


class BoundSpyProxy(wrapt.BoundFunctionWrapper):  # type: ignore[type-arg]  # subscripted only from wrapt 2
    """A spied method bound to its instance (what `obj.method` gives while it is spied)."""


class SpyProxy(wrapt.FunctionWrapper):  # type: ignore[type-arg]  # subscripted only from wrapt 2
    """The proxy put in place of a spied target: a wrapt FunctionWrapper of callpin's own.

    Its own type (and its bound form's) lets the encoder see through it: a spied function
    or method that is itself passed as a value is recorded as the unspied one would be.
    """

    __bound_function_wrapper__ = BoundSpyProxy

    def __init__(self, wrapped: Any, wrapper: Handler) -> None:
        if type(wrapped) in _impl.PROXY_TYPES:
            # wrapt takes the binding of a FunctionWrapper it wraps and works out any
            # other's from its type, which the C spy's proxy does not have: a builtin
            # under it would bind as a callable, its __self__ taken for a receiver.
            # Bound as the proxy it wraps, as over another FunctionWrapper.
            binding = wrapped._self_binding
            _FUNCTION_WRAPPER_BASE.__init__(self, wrapped, None, wrapper, None, binding)
        else:
            super().__init__(wrapped, wrapper)


# wrapt's base of FunctionWrapper, whose __init__ takes the binding.
_FUNCTION_WRAPPER_BASE: Any = wrapt.FunctionWrapper.__base__


class FunctionSpyProxy(SpyProxy):
    """The SpyProxy of a plain function reached without binding (a module's or an instance's attribute).

    wrapt's call of a FunctionWrapper over a function asks the function for `__self__`
    (one bound by hand could hold a receiver there) and catches the AttributeError a
    plain function raises: about half of a pass-through call's time. This proxy is made
    only for a function whose own dict holds no `__self__`, under the binding wrapt
    gives a staticmethod in its own field, so a call hands the handler no receiver and
    asks nothing. Everything else binds as a function's proxy does: `_self_binding`
    reads "function" (a proxy over this one takes that binding), and reading it through
    a class or an instance (copied into a class while it is in place) gives the
    BoundSpyProxy wrapt's own binding gives.
    """

    def __init__(self, wrapped: Any, wrapper: Handler) -> None:
        _FUNCTION_WRAPPER_BASE.__init__(self, wrapped, None, wrapper, None, "staticmethod")

    # Read-only here: wrapt's own field holds "staticmethod".
    @property
    def _self_binding(self) -> str:  # type: ignore[override]
        return "function"

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        descriptor = self.__wrapped__.__get__(instance, owner)
        # wrapt's stubs leave out the owner its base's __init__ takes.
        return BoundSpyProxy(descriptor, instance, self._self_wrapper, None, "function", self, owner)  # type: ignore[call-arg]


# Every type of callpin's proxies: wrapt's FunctionWrapper of callpin's own, and the C
# spy's own (_impl.PROXY_TYPES).
PROXY_TYPES: tuple[type, ...] = (SpyProxy, FunctionSpyProxy, BoundSpyProxy, *_impl.PROXY_TYPES)
see_through(*PROXY_TYPES)


def make_proxy(wrapped: Any, handler: Handler, *, bound: bool = True) -> Any:
    """The proxy of one target: the C spy's own for a C Spy, else a wrapt FunctionWrapper of callpin's.

    `bound`: the target is a class's attribute, read by binding (a method). A plain
    function that is not gets the FunctionSpyProxy.
    """
    made = _impl.PROXY_OF.get(type(handler))
    if made is not None:
        return made(wrapped, handler)
    if not bound and type(wrapped) is types.FunctionType and "__self__" not in wrapped.__dict__:
        return FunctionSpyProxy(wrapped, handler)
    return SpyProxy(wrapped, handler)


@dataclass(frozen=True, eq=False)
class Target:
    """An attribute of any object to spy on, made with `callpin.target(obj, "name")`."""

    owner: object
    name: str

    def __str__(self) -> str:
        return f"{_dotted(self.owner)}.{self.name}"


def target(owner: object, name: str) -> Target:
    """The attribute `name` of `owner` (a module, class or instance) as a spy or stub target."""
    if not isinstance(name, str) or not name.isidentifier():
        raise UsageError(f"target() needs an attribute name, got {name!r}")
    return Target(owner, name)


TargetSpec: TypeAlias = str | Target
SpySpec: TypeAlias = TargetSpec | Iterable[TargetSpec] | Mapping[str, TargetSpec]


class Patch(NamedTuple):
    """One place a recording patched: the label its calls carry, where, and whether an alias."""

    label: str
    place: str
    alias: bool


@dataclass(frozen=True, eq=False)
class Site:
    """One resolved callable attribute: where it lives, what was there, and how it binds."""

    label: str
    owner: object
    name: str
    original: Any
    present: bool  # the name was in the owner's own __dict__ (else restore deletes it)
    flavor: Flavor

    @property
    def place(self) -> str:
        return f"{_dotted(self.owner)}.{self.name}"

    @property
    def key(self) -> tuple[int, str]:
        return id(self.owner), self.name


# ---------------------------------------------------------------------------
# Resolution.


def resolve(spy: SpySpec) -> list[Site]:
    """Every callable named by a `spy=` argument, in order, each attribute once."""
    sites: dict[tuple[int, str], Site] = {}
    for label, spec in _labelled(spy):
        for site in _expand(label, spec):
            known = sites.get(site.key)
            if known is None:
                sites[site.key] = site
            elif known.label != site.label:
                raise TargetError(
                    str(spec),
                    f"{site.place} is targeted twice, as {known.label!r} and {site.label!r}",
                )
    return list(sites.values())


def resolve_one(spec: TargetSpec) -> Site:
    """The one callable a stub key names (a class counts: the stub replaces its constructor)."""
    owner, name, value = _locate(spec)
    if owner is None:
        raise TargetError(str(spec), f"a stub replaces one callable, and this is a {_what(value)}")
    return _site(str(spec), owner, name, _raw(owner, name), explicit=str(spec))


def _labelled(spy: SpySpec) -> list[tuple[str, TargetSpec]]:
    if isinstance(spy, (str, Target)):
        return [(str(spy), spy)]
    if isinstance(spy, Mapping):
        pairs = list(spy.items())
        for label, _ in pairs:
            if not isinstance(label, str) or not label:
                raise UsageError(f"spy labels must be non-empty strings, got {label!r}")
    else:
        try:
            pairs = [(str(spec), spec) for spec in spy]
        except TypeError:
            raise UsageError(f"spy= takes a target, a list of targets or {{label: target}}, got {spy!r}") from None
    for _, spec in pairs:
        if not isinstance(spec, (str, Target)):
            raise UsageError(f"a spy target is a dotted name or callpin.target(obj, name), got {spec!r}")
    return pairs


def _expand(label: str, spec: TargetSpec) -> list[Site]:
    owner, name, found = _locate(spec)
    if isinstance(found, types.ModuleType):
        sites = [
            _site(f"{label}.{attr}", found, attr, value)
            for attr, value in list(vars(found).items())
            if _public(attr) and _defined_in_module(value, found)
        ]
    elif isinstance(found, type):
        sites = [
            _site(f"{label}.{attr}", found, attr, value)
            for attr, value in list(vars(found).items())
            if _public(attr) and _is_method(value)
        ]
        if _constructible(found):
            sites.insert(0, _site(label, found, "__init__", _raw(found, "__init__")))
    else:
        assert owner is not None
        return [_site(label, owner, name, _raw(owner, name), explicit=str(spec))]
    if not sites:
        raise TargetError(str(spec), f"the {_what(found)} defines no public functions to spy on")
    return sites


def _locate(spec: TargetSpec) -> tuple[object | None, str, Any]:
    """The owner, attribute name and value a target names (no owner for a whole module)."""
    if isinstance(spec, Target):
        owner, name = spec.owner, spec.name
        try:
            return owner, name, getattr(owner, name)
        except AttributeError:
            missing = f"{_dotted(owner)} has no attribute {name!r}{_suggest(owner, name)}"
            raise TargetError(str(spec), missing) from None
    module, rest, imported = _import_longest(spec)
    if not rest:
        return None, "", module
    owner = module
    for index, part in enumerate(rest[:-1]):
        owner = _attribute(spec, owner, part, imported, rest[: index + 1])
    return owner, rest[-1], _attribute(spec, owner, rest[-1], imported, rest)


def _import_longest(text: str) -> tuple[types.ModuleType, list[str], str]:
    """Import `a`, `a.b`, `a.b.c`... while each is a module; the last one and the rest."""
    parts = text.split(".")
    if not all(part.isidentifier() for part in parts):
        raise TargetError(text, "not a dotted name like 'package.module.function'")
    module: types.ModuleType | None = None
    imported = ""
    for end in range(1, len(parts) + 1):
        name = ".".join(parts[:end])
        if module is not None and name not in sys.modules:
            # An attribute of the module that is not a module is what the name means:
            # trying to import it costs a search of every finder, at every block. (A
            # submodule already imported is taken even when its package binds something
            # else under its name, `from .thing import thing`.)
            attribute = getattr(module, parts[end - 1], None)
            if attribute is not None and not isinstance(attribute, types.ModuleType):
                break
        try:
            found = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                break
            # A module on the path exists but a dependency of it is missing: that is
            # the user's error to see, not a reason to try a shorter name.
            raise TargetError(text, f"importing {name!r} failed: {exc}") from exc
        except Exception as exc:
            failure = f"importing {name!r} raised {type(exc).__name__}: {exc}"
            raise TargetError(text, failure) from exc
        module, imported = found, name
    if module is None:
        raise TargetError(text, f"no module named {parts[0]!r} can be imported")
    return module, parts[imported.count(".") + 1 :], imported


def _attribute(text: str, owner: object, name: str, imported: str, walked: list[str]) -> Any:
    try:
        return getattr(owner, name)
    except AttributeError:
        where = ".".join([imported, *walked[:-1]])
        missing = f"{where!r} has no attribute {name!r}{_suggest(owner, name)}"
        raise TargetError(text, f"imported {imported!r}, but {missing}") from None


def _raw(owner: object, name: str) -> Any:
    """The attribute as stored (a staticmethod object, not the function it returns)."""
    if isinstance(owner, type):
        for klass in owner.__mro__:
            if name in vars(klass):
                return vars(klass)[name]
    own = _own_dict(owner)
    if own is not None and name in own:
        return own[name]
    return getattr(owner, name)


def _site(label: str, owner: object, name: str, raw: Any, explicit: str | None = None) -> Site:
    shown = explicit or f"{_dotted(owner)}.{name}"
    if isinstance(raw, property) or (isinstance(owner, type) and _is_data_descriptor(raw)):
        raise TargetError(shown, "is a property or other descriptor; callpin spies callables only")
    if isinstance(raw, (staticmethod, classmethod)):
        function = raw.__func__
    elif callable(raw):
        function = raw
    else:
        raise TargetError(shown, f"is a {type(raw).__name__}, not a callable")
    own = _own_dict(owner)
    return Site(
        label=label,
        owner=owner,
        name=name,
        original=raw,
        present=own is not None and name in own,
        flavor=_flavor(function),
    )


def _flavor(function: Any) -> Flavor:
    if inspect.iscoroutinefunction(function):
        return "async"
    if inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
        return "generator"
    return "sync"


def _constructible(cls: type) -> bool:
    """Whether a spied class's construction is recorded: its `__init__` is spied under the class's label.

    The instance `__init__` receives is the new one, so it is numbered like any receiver
    from its construction on. A type whose attributes cannot be set (a builtin, most
    extension types) is spied by its methods only.
    """
    return not cls.__flags__ & _IMMUTABLE_TYPE


# Py_TPFLAGS_IMMUTABLETYPE: setting an attribute of such a type raises TypeError.
_IMMUTABLE_TYPE = 1 << 8


def _wrappable(site: Site) -> Any:
    """What a site's proxy wraps: its original, but for `object.__init__` under a class with its own `__new__`.

    `object.__init__` checks its arguments by whether it is the class's `__init__`
    and `__new__` is `object.__new__`; once a proxy is the class's `__init__`, it
    would refuse the arguments of a class whose own `__new__` takes them, and name
    itself rather than the class for one that takes none. These stand in for it as
    it behaves in each case.
    """
    if site.name == "__init__" and site.original is object.__init__ and isinstance(site.owner, type):
        new: object = site.owner.__new__
        if new is object.__new__:
            return _init_taking_no_arguments
        return _init_ignoring_arguments
    return site.original


def _init_ignoring_arguments(self: object, *args: Any, **kwargs: Any) -> None:
    """`object.__init__` under a class with its own `__new__`: the arguments are `__new__`'s."""


def _init_taking_no_arguments(self: object, *args: Any, **kwargs: Any) -> None:
    """`object.__init__` under a class with neither `__init__` nor `__new__` of its own: no arguments."""
    if args or kwargs:
        raise TypeError(f"{type(self).__name__}() takes no arguments")


def _public(name: str) -> bool:
    return not name.startswith("_")


def _defined_in_module(value: Any, module: types.ModuleType) -> bool:
    return (
        isinstance(value, (types.FunctionType, types.BuiltinFunctionType))
        and getattr(value, "__module__", None) == module.__name__
    )


def _is_method(value: Any) -> bool:
    return isinstance(value, (types.FunctionType, staticmethod, classmethod))


def _is_data_descriptor(value: Any) -> bool:
    return hasattr(type(value), "__set__") or hasattr(type(value), "__delete__")


def _own_dict(owner: object) -> Mapping[str, Any] | None:
    try:
        return vars(owner)
    except TypeError:
        return None


def _dotted(owner: object) -> str:
    if isinstance(owner, types.ModuleType):
        return owner.__name__
    if isinstance(owner, type):
        return f"{owner.__module__}.{owner.__qualname__}"
    cls = type(owner)
    return f"{cls.__module__}.{cls.__qualname__}()"


def _what(found: object) -> str:
    if isinstance(found, types.ModuleType):
        return f"module {found.__name__!r}"
    if isinstance(found, type):
        return f"class {_dotted(found)!r}"
    return "callable"


def _suggest(owner: object, name: str) -> str:
    try:
        names = dir(owner)
    except Exception:  # a broken __dir__ only costs the suggestion
        return ""
    close = difflib.get_close_matches(name, [n for n in names if isinstance(n, str)], n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


# ---------------------------------------------------------------------------
# Patching.


class _Layer:
    """One patch of one place: the proxy put there and what it covered."""

    __slots__ = ("name", "owner", "present", "previous", "proxy")

    def __init__(self, owner: object, name: str, proxy: Any, previous: Any, present: bool) -> None:
        self.owner = owner
        self.name = name
        self.proxy = proxy
        self.previous = previous
        self.present = present


# Every place callpin has patched, bottom layer first. Recorders nest, but they do not
# always end in the order they began: a generator closed late, a thread, a recording
# stopped by hand. A layer that is not on top is taken out of the middle, and the
# layer above it inherits what it covered, so the last one to go puts back the original.
_layers: dict[tuple[int, str], list[_Layer]] = {}
_layers_lock = threading.RLock()


class Patcher:
    """Put wrapt proxies in place of targets (and their aliases) and put everything back.

    A site owned by a module is also patched wherever another module global holds the
    very same object (`from billing import charge_card`); the same proxy goes in every
    place, so a nested recorder that spies it again finds and wraps every place too.
    Restoring undoes the patches in reverse order, putting back the identical object,
    or deleting the attribute when the patch had shadowed an inherited one, whatever
    order nested patchers are restored in.
    """

    def __init__(self) -> None:
        self._placed: list[_Layer] = []
        self.patches: list[Patch] = []
        self._since: Mark | None = None

    def patch(self, wired: list[tuple[Site, Handler]], *, aliases: bool, opener: str | None = None) -> None:
        """Patch every site with its handler; on failure restore what was done and raise."""
        with _layers_lock:
            # Modules imported from here on may bind a proxy; restore() sweeps them.
            self._since = mark()
            # Another thread may have patched a place since it was resolved: what is
            # there now is what this patch covers and wraps, so the calls reach both.
            current = [(_current(site), handler) for site, handler in wired]
            proxies = [
                (site, make_proxy(_wrappable(site), handler, bound=isinstance(site.owner, type)))
                for site, handler in current
            ]
            # Aliases are found before anything is patched, so the search itself never
            # runs through a proxy (a spied builtin it uses, say).
            found = _aliases(proxies, opener) if aliases else []
            try:
                for site, proxy in proxies:
                    self._put(site.owner, site.name, proxy, site.original, site.present, site.place)
                    self.patches.append(Patch(site.label, site.place, alias=False))
                for site, proxy, module, name in found:
                    place = f"{module.__name__}.{name}"
                    self._put(module, name, proxy, site.original, True, place)
                    self.patches.append(Patch(site.label, place, alias=True))
            except BaseException:
                self.restore()
                raise

    def _put(self, owner: object, name: str, value: Any, previous: Any, present: bool, place: str) -> None:
        try:
            setattr(owner, name, value)
        except (AttributeError, TypeError) as exc:
            raise TargetError(place, f"cannot patch it ({exc})") from None
        if isinstance(owner, types.ModuleType):
            _index.note(owner, name, value)
        layer = _Layer(owner, name, value, previous, present)
        _layers.setdefault((id(owner), name), []).append(layer)
        self._placed.append(layer)

    def restore(self) -> None:
        """Put back every patched attribute, last patched first; safe to call twice."""
        failures: list[BaseException] = []
        with _layers_lock:
            swept = {id(layer.proxy): layer for layer in self._placed if isinstance(layer.owner, types.ModuleType)}
            while self._placed:
                try:
                    _unlayer(self._placed.pop())
                except BaseException as exc:  # restore the rest, then report
                    failures.append(exc)
            if swept and self._since is not None:
                _sweep_proxies(swept, self._since)
            for layer in swept.values():
                _index.forget(layer.proxy)
        if failures:
            raise failures[0]


def _current(site: Site) -> Site:
    """The site with what its place holds now (a proxy put there since it was resolved)."""
    try:
        raw = _raw(site.owner, site.name)
    except AttributeError:
        raise TargetError(site.place, "it disappeared before it could be patched") from None
    if raw is site.original:
        return site
    own = _own_dict(site.owner)
    return replace(site, original=raw, present=own is not None and site.name in own)


def _unlayer(layer: _Layer) -> None:
    """Take one patch away: undo it when it is on top, else hand what it covered upwards."""
    key = id(layer.owner), layer.name
    stack = _layers[key]
    index = next(i for i, other in enumerate(stack) if other is layer)
    del stack[index]
    if not stack:
        del _layers[key]
    if index < len(stack):
        above = stack[index]
        if above.previous is layer.proxy:
            above.previous, above.present = layer.previous, layer.present
        return
    if layer.present:
        setattr(layer.owner, layer.name, layer.previous)
    else:
        delattr(layer.owner, layer.name)


def _sweep_proxies(swept: dict[int, _Layer], since: Mark) -> None:
    """Put back what the proxies covered in module globals bound while they were in place.

    A module imported inside the block (`from billing import charge_card`) bound the
    proxy itself; left there, it would keep the whole recording alive and stay a proxy.
    Only the modules imported since the block began are read (module_globals.imported_since).
    This holds with `aliases=False` too: it only turns off patching the aliases found
    when the block starts.
    """
    for _, module in imported_since(since)[0]:
        namespace = module.__dict__
        for name, value in namespace.copy().items():
            layer = swept.get(id(value))
            if layer is not None and layer.proxy is value and namespace.get(name) is value:
                namespace[name] = layer.previous


# Test code: the modules pytest collected as test modules and conftests (the plugin names
# them after collection). Their references are never rebound; see `test_code`.
_test_modules: set[str] = set()


def keep_test_modules(names: Iterable[str]) -> None:
    """Name modules as test code: aliases held there are never patched (the pytest plugin calls this)."""
    _test_modules.update(names)


def forget_test_modules() -> None:
    """Forget the modules named as test code (at the end of a pytest run)."""
    _test_modules.clear()


def test_code(module_name: str, opener: str | None) -> bool:
    """Whether a module is test code, whose references to a spied object stay as they are.

    The module that opened the recording (the caller of `record()` / `pin()`, `__main__`
    for a script) and every module pytest collected as a test module or conftest. A
    test's own `real = billing.charge_card` is the original its stub delegates to, or
    checks restoration against: rebinding it to the proxy turns a delegating stub into
    endless recursion, and makes the check compare the proxy with itself.
    """
    return module_name == opener or module_name in _test_modules


# Module globals by the callable they hold, kept up to date from newly imported modules.
_index = GlobalsIndex()


def _aliases(
    proxies: list[tuple[Site, Any]],
    opener: str | None = None,
) -> list[tuple[Site, Any, types.ModuleType, str]]:
    """Every other module global holding a module-owned site's original object, outside test code."""
    owned = [(site, proxy) for site, proxy in proxies if isinstance(site.owner, types.ModuleType)]
    if not owned:
        return []
    _index.refresh()
    patched = {site.key for site, _ in proxies}
    found: list[tuple[Site, Any, types.ModuleType, str]] = []
    for site, proxy in owned:
        for module, name in _index.holders(site.original):
            module_name = module.__name__ if isinstance(module.__name__, str) else ""
            # callpin's own modules are never patched: its machinery must not route
            # through the spies it installs.
            if module_name == "callpin" or module_name.startswith("callpin.") or test_code(module_name, opener):
                continue
            if (id(module), name) in patched:
                continue
            found.append((site, proxy, module, name))
    found.sort(key=lambda hit: (str(hit[2].__name__), hit[3]))
    return found
