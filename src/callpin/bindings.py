"""Bindings: what each call site of a module is bound to, read from its source with `ast` alone.

A call is resolved to a dotted target only when the code shows the binding: a module
imported under any name, a name imported from another module, a module-level alias, a
parameter whose default is a module, `self` / `cls` inside a class, a local built by
calling a class, or a function of the same module. Everything else is *unresolved*, with
the reason: a parameter without a default, the result of a call, an attribute of an object
whose binding the code does not show. Nothing is imported or run.

`callpin seams` lists these bindings; `callpin bite` asks the same analysis which call
sites call the pinned labels (`Bindings.calls_to`), so what one calls a collaborator is
exactly what the other mutates.
"""

from __future__ import annotations

import ast
import builtins
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

from .call_site import Function, Match, Site, match
from .project_index import ProjectIndex, module_name, source_encoding

# PEP 8 class names: CapWords, with at least one lower-case letter (`LEDGER` is a constant).
_CAPWORDS = re.compile(r"_*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*")
_BUILTIN_NAMES = frozenset(dir(builtins))
_BUILTIN_CLASSES = frozenset(name for name in _BUILTIN_NAMES if isinstance(getattr(builtins, name), type))


def analyze(
    source: str | ast.Module,
    module: str,
    *,
    package: bool = False,
    roots: Sequence[str | os.PathLike[str]] = (),
    filename: str = "<source>",
) -> Bindings:
    """The bindings of one module's source.

    `module` is its dotted name (relative imports resolve against it; `package` when the
    source is a package's `__init__.py`). `roots` are the folders whose top-level modules
    and packages are the project's, as opposed to third-party and standard-library ones;
    the project's modules are read (never imported) to tell a class from a function.
    Pass a tree to keep its nodes: `Bindings.site(call)` looks a call of it up.
    Raises SyntaxError for a source that does not parse.
    """
    tree = source if isinstance(source, ast.Module) else ast.parse(source, filename=filename)
    return Bindings(tree, module, package=package, index=ProjectIndex([Path(root) for root in roots]))


def analyze_file(path: str | os.PathLike[str], *, text: str | None = None) -> Bindings:
    """The bindings of one source file, named and rooted by `module_name`.

    `text` is the file's decoded text when the caller has read it already.
    """
    module, root, package = module_name(path)
    if text is None:
        with open(path, "rb") as file:
            data = file.read()
        text = data.decode(source_encoding(data), "surrogateescape")
    return analyze(text, module, package=package, roots=[root], filename=os.fspath(path))


# ---------------------------------------------------------------------------
# Values the analysis gives a name or an expression.


@dataclass(frozen=True)
class _Ref:
    """A dotted name: a module, or an attribute of one (function, class, method, alias).

    `of_instance`: the attribute was read from an instance of a class the analysis has
    not read (`order.save`): a method of the class, or data the instance holds, whose
    own attributes the code does not show (`order.lines.append` is no target).
    """

    dotted: str
    how: str
    of_instance: bool = False


@dataclass(frozen=True)
class _Object:
    """An instance of the class named `cls` (also `self` in its methods)."""

    cls: str
    how: str


@dataclass(frozen=True)
class _Super:
    """`super()` inside a method of the class named `cls`."""

    cls: str


@dataclass(frozen=True)
class _Unknown:
    """A value whose binding the code does not show, and why."""

    reason: str


_Value: TypeAlias = _Ref | _Object | _Super | _Unknown


@dataclass(frozen=True)
class _Binder:
    """One statement binding a name: a fixed value, or an expression evaluated in a scope."""

    value: _Value | None = None
    expr: ast.expr | None = None
    scope: _Scope | None = None
    how: str = "alias"  # "alias", "default" or "with"


_UNKNOWN_LOCAL = _Binder(_Unknown("local"))


class _Scope:
    """One namespace: the module, a function, a class body, a lambda or a comprehension."""

    def __init__(self, kind: str, parent: _Scope | None, qualname: str, node: ast.AST) -> None:
        self.kind = kind
        self.parent = parent
        # The qualified name calls made here are reported under: lambdas and
        # comprehensions report under the function they are written in.
        self.qualname = qualname
        self.node = node
        self.names: dict[str, list[_Binder]] = {}
        self.globals: set[str] = set()
        self.nonlocals: set[str] = set()
        self.cls: _ClassInfo | None = None  # the class of a method
        self.self_name: str | None = None  # the name of a method's instance parameter

    def child_prefix(self) -> str:
        if self.kind == "module":
            return ""
        if self.kind == "class":
            return f"{self.qualname}."
        return f"{self.qualname}.<locals>." if self.qualname else ""


@dataclass
class _ClassInfo:
    dotted: str
    scope: _Scope
    bases: list[ast.expr]
    self_attrs: dict[str, list[_Binder]] = field(default_factory=dict)


# ---------------------------------------------------------------------------
# The analysis.


class Bindings:
    """The call sites of one module and what each is bound to; see `analyze`."""

    def __init__(self, tree: ast.Module, module: str, *, package: bool, index: ProjectIndex) -> None:
        self.module = module
        self.tree = tree
        self._package = module if package else module.rpartition(".")[0]
        self._index = index
        self._root = _Scope("module", None, "", tree)
        self._stars: list[str] = []
        self._classes: dict[str, _ClassInfo] = {}
        self._memo: dict[tuple[int, str], _Value] = {}
        self._busy: set[tuple[int, object]] = set()
        self._pending: list[tuple[_Scope, list[ast.AST]]] = []
        self._call_nodes: list[tuple[ast.Call, _Scope]] = []
        self._read_nodes: list[tuple[ast.expr, _Scope]] = []
        self.functions: list[Function] = []

        self._declare(self._root, tree.body)
        self._pending.append((self._root, list(tree.body)))
        # Each scope's own statements are all collected before the bodies nested in
        # it, so a `nonlocal` in an inner function finds the outer function's names.
        while self._pending:
            scope, body = self._pending.pop(0)
            for node in body:
                self._walk(node, scope)

        self.calls: list[Site] = sorted(
            (self._site(call.func, scope, call) for call, scope in self._call_nodes), key=_position
        )
        self._by_node = {id(site.node): site for site in self.calls}
        reads = (self._site(node, scope, None) for node, scope in self._read_nodes)
        self.reads: list[Site] = sorted(
            (site for site in reads if site.origin not in (None, "module")),
            key=_position,
        )
        self.functions.sort(key=lambda function: (function.line, function.qualname))

    # -- what bite and seams ask ----------------------------------------------------

    def site(self, call: ast.Call) -> Site | None:
        """The site of a call node of the analysed tree."""
        return self._by_node.get(id(call.func))

    def label(self, call: ast.Call, labels: Iterable[str], *, loose: bool = False) -> Match | None:
        """The pinned label this call calls, if any (the first in sorted order)."""
        site = self.site(call)
        return None if site is None else match(site, sorted(set(labels)), loose)

    def calls_to(self, labels: Iterable[str], *, loose: bool = False) -> list[Match]:
        """Every call site bound to one of the pinned `labels`, in source order.

        With `loose`, an unresolved call also matches a label by its last name
        (`low_conn.send(...)` and `billing.send`): today's name matching, marked as such.
        """
        chosen = sorted(set(labels))
        found = (match(site, chosen, loose) for site in self.calls)
        return [match for match in found if match is not None]

    def is_class(self, dotted: str) -> bool:
        """Whether the code (or the project's modules, or the naming convention) says
        `dotted` names a class."""
        if dotted in self._classes:
            return True
        if dotted == self.module or dotted.startswith(self.module + "."):
            return False
        if dotted.startswith("builtins."):
            return dotted[len("builtins.") :] in _BUILTIN_CLASSES
        kind = self._index.kind(dotted)
        if kind is not None:
            return kind == "class"
        return _CAPWORDS.fullmatch(dotted.rsplit(".", 1)[-1]) is not None

    def origin(self, dotted: str) -> str:
        """Where a dotted target lives: one of `call_site.ORIGINS`."""
        if dotted == self.module or dotted.startswith(self.module + "."):
            return "module"
        top = dotted.split(".", 1)[0]
        if top == "builtins":
            return "builtin"
        if top == self.module.split(".", 1)[0] or self._index.has(top):
            return "project"
        if top in sys.stdlib_module_names:
            return "stdlib"
        return "third-party"

    # -- building the scopes ---------------------------------------------------------

    def _declare(self, scope: _Scope, body: Iterable[ast.AST]) -> None:
        """Record a scope's `global` and `nonlocal` names before its statements bind any."""
        stack = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Global):
                scope.globals.update(node.names)
            elif isinstance(node, ast.Nonlocal):
                scope.nonlocals.update(node.names)
            elif not isinstance(node, _NEW_SCOPES):
                stack.extend(ast.iter_child_nodes(node))

    def _bind(self, scope: _Scope, name: str, binder: _Binder) -> None:
        owner: _Scope | None = scope
        if name in scope.globals:
            owner = self._root
        elif name in scope.nonlocals:
            owner = scope.parent
            while owner is not None and (owner.kind == "class" or name not in owner.names):
                owner = owner.parent
            # What an inner function assigns to an outer one's name is not followed.
            binder = _UNKNOWN_LOCAL
        if owner is not None:
            owner.names.setdefault(name, []).append(binder)

    def _bind_targets(self, target: ast.expr, scope: _Scope, binder: _Binder) -> None:
        if isinstance(target, ast.Name):
            self._bind(scope, target.id, binder)
            return
        if self._self_attribute(target, scope) is not None and binder.expr is not None:
            assert isinstance(target, ast.Attribute) and scope.cls is not None
            scope.cls.self_attrs.setdefault(target.attr, []).append(binder)
            return
        # Unpacking, starred, subscripts, attributes: any names in them bind unknown values.
        self._walk(target, scope)

    def _self_attribute(self, target: ast.AST, scope: _Scope) -> str | None:
        """The attribute name of a `self.name` target in a method, else None."""
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and scope.cls is not None
            and target.value.id == scope.self_name
        ):
            return target.attr
        return None

    def _walk(self, node: ast.AST, scope: _Scope, *, chained: bool = False) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._function(node, scope)
        elif isinstance(node, ast.ClassDef):
            self._class(node, scope)
        elif isinstance(node, ast.Lambda):
            self._lambda(node, scope)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            self._comprehension(node, scope)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self._bind(scope, alias.asname, _Binder(_Ref(alias.name, "import")))
                else:
                    top = alias.name.split(".", 1)[0]
                    self._bind(scope, top, _Binder(_Ref(top, "import")))
        elif isinstance(node, ast.ImportFrom):
            self._import_from(node, scope)
        elif isinstance(node, ast.Assign):
            self._walk(node.value, scope)
            for target in node.targets:
                self._bind_targets(target, scope, _Binder(expr=node.value, scope=scope))
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self._walk(node.value, scope)
                self._bind_targets(node.target, scope, _Binder(expr=node.value, scope=scope))
            elif not isinstance(node.target, ast.Name):
                self._walk(node.target, scope)
            elif scope.kind == "class":
                # A field declared in a class body (a dataclass's): an instance attribute.
                self._bind(scope, node.target.id, _Binder(_Unknown("attribute")))
            self._walk(node.annotation, scope)
        elif isinstance(node, ast.NamedExpr):
            self._walk(node.value, scope)
            owner = scope
            # An assignment expression in a comprehension binds in the enclosing function.
            while owner.kind == "comprehension" and owner.parent is not None:
                owner = owner.parent
            self._bind(owner, node.target.id, _Binder(expr=node.value, scope=scope))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                self._walk(item.context_expr, scope)
                if item.optional_vars is not None:
                    binder = _Binder(expr=item.context_expr, scope=scope, how="with")
                    self._bind_targets(item.optional_vars, scope, binder)
            for statement in node.body:
                self._walk(statement, scope)
        elif isinstance(node, ast.ExceptHandler):
            if node.name:
                self._bind(scope, node.name, _UNKNOWN_LOCAL)
            for child in ast.iter_child_nodes(node):
                self._walk(child, scope)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)):
            if node.name:
                self._bind(scope, node.name, _UNKNOWN_LOCAL)
            for child in ast.iter_child_nodes(node):
                self._walk(child, scope)
        elif isinstance(node, ast.MatchMapping):
            if node.rest:
                self._bind(scope, node.rest, _UNKNOWN_LOCAL)
            for child in ast.iter_child_nodes(node):
                self._walk(child, scope)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                self._bind(scope, node.id, _UNKNOWN_LOCAL)
            elif isinstance(node.ctx, ast.Load) and not chained:
                self._read_nodes.append((node, scope))
        elif isinstance(node, ast.Call):
            self._call_nodes.append((node, scope))
            self._walk(node.func, scope, chained=True)
            for child in (*node.args, *node.keywords):
                self._walk(child, scope)
        elif isinstance(node, ast.Attribute):
            if isinstance(node.ctx, ast.Load) and not chained:
                self._read_nodes.append((node, scope))
            elif isinstance(node.ctx, ast.Store) and scope.cls is not None:
                # `self.x += 1`, `self.a, self.b = ...`: a value the code does not show.
                name = self._self_attribute(node, scope)
                if name is not None:
                    scope.cls.self_attrs.setdefault(name, []).append(_UNKNOWN_LOCAL)
            self._walk(node.value, scope, chained=True)
        else:
            for child in ast.iter_child_nodes(node):
                self._walk(child, scope)

    def _import_from(self, node: ast.ImportFrom, scope: _Scope) -> None:
        base = self._absolute(node.module, node.level)
        for alias in node.names:
            if alias.name == "*":
                if base is not None:
                    self._stars.append(base)
                continue
            value: _Value = _Ref(f"{base}.{alias.name}", "from-import") if base else _Unknown("relative import")
            self._bind(scope, alias.asname or alias.name, _Binder(value))

    def _absolute(self, module: str | None, level: int) -> str | None:
        if level == 0:
            return module
        parts = self._package.split(".") if self._package else []
        if level - 1 >= len(parts):
            return None
        kept = parts[: len(parts) - (level - 1)]
        return ".".join([*kept, module] if module else kept) or None

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: _Scope) -> None:
        for child in (*node.decorator_list, *node.args.defaults, *node.args.kw_defaults):
            if child is not None:
                self._walk(child, scope)
        qualname = scope.child_prefix() + node.name
        dotted = f"{self.module}.{qualname}"
        decorators = {_decorator_name(d) for d in node.decorator_list}
        if scope.kind == "class" and decorators & _PROPERTIES:
            self._bind(scope, node.name, _Binder(_Unknown("property")))
        else:
            self._bind(scope, node.name, _Binder(_Ref(dotted, "module")))
        kind = "method" if scope.kind == "class" else "function"
        self.functions.append(Function(qualname, node.lineno, node.end_lineno or node.lineno, kind))
        inner = _Scope("function", scope, qualname, node)
        self._parameters(node, node.args, scope, inner)
        self._declare(inner, node.body)
        self._pending.append((inner, list(node.body)))

    def _parameters(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
        args: ast.arguments,
        outer: _Scope,
        inner: _Scope,
    ) -> None:
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        pairs: list[tuple[ast.arg, ast.expr | None]] = list(zip(positional, defaults, strict=True))
        pairs += list(zip(args.kwonlyargs, args.kw_defaults, strict=True))
        for arg, default in pairs:
            binder = _Binder(_Unknown("parameter"))
            if default is not None:
                binder = _Binder(expr=default, scope=outer, how="default")
            inner.names.setdefault(arg.arg, []).append(binder)
        for rest in (args.vararg, args.kwarg):
            if rest is not None:
                inner.names.setdefault(rest.arg, []).append(_Binder(_Unknown("parameter")))
        info = outer.cls if outer.kind == "class" else None
        if info is None or not positional or isinstance(node, ast.Lambda):
            return
        decorators = {_decorator_name(d) for d in node.decorator_list}
        if "staticmethod" in decorators:
            return
        first = positional[0].arg
        value: _Value = _Ref(info.dotted, "cls") if "classmethod" in decorators else _Object(info.dotted, "self")
        inner.names[first] = [_Binder(value)]
        inner.cls = info
        inner.self_name = first

    def _class(self, node: ast.ClassDef, scope: _Scope) -> None:
        for child in (*node.decorator_list, *node.bases, *node.keywords):
            self._walk(child, scope)
        qualname = scope.child_prefix() + node.name
        dotted = f"{self.module}.{qualname}"
        self._bind(scope, node.name, _Binder(_Ref(dotted, "module")))
        self.functions.append(Function(qualname, node.lineno, node.end_lineno or node.lineno, "class"))
        inner = _Scope("class", scope, qualname, node)
        info = _ClassInfo(dotted, inner, list(node.bases))
        inner.cls = info
        self._classes[dotted] = info
        self._declare(inner, node.body)
        self._pending.append((inner, list(node.body)))

    def _lambda(self, node: ast.Lambda, scope: _Scope) -> None:
        for child in (*node.args.defaults, *node.args.kw_defaults):
            if child is not None:
                self._walk(child, scope)
        inner = _Scope("lambda", scope, scope.qualname, node)
        self._parameters(node, node.args, scope, inner)
        self._pending.append((inner, [node.body]))

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, scope: _Scope) -> None:
        # The first iterable is evaluated in the enclosing scope, the rest inside.
        first, *rest = node.generators
        self._walk(first.iter, scope)
        inner = _Scope("comprehension", scope, scope.qualname, node)
        body: list[ast.AST] = [first.target, *first.ifs]
        for generator in rest:
            body.extend([generator.iter, generator.target, *generator.ifs])
        body.extend([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt])
        self._pending.append((inner, body))

    # -- resolving ------------------------------------------------------------------

    def _site(self, expr: ast.expr, scope: _Scope, call: ast.Call | None) -> Site:
        value = self._eval(expr, scope)
        text = _text(expr)
        line, column = expr.lineno, expr.col_offset
        end = (call or expr).end_lineno or line
        if call is not None:
            line, column = call.lineno, call.col_offset
        if isinstance(value, _Ref):
            origin = self.origin(value.dotted)
            constructs = call is not None and self.is_class(value.dotted)
            return Site(line, column, end, scope.qualname, text, value.dotted, value.how, origin, constructs, expr)
        reason = value.reason if isinstance(value, _Unknown) else "object"
        return Site(line, column, end, scope.qualname, text, None, reason, None, False, expr)

    def _eval(self, expr: ast.expr, scope: _Scope) -> _Value:
        if isinstance(expr, ast.Name):
            return self._lookup(scope, expr.id)
        if isinstance(expr, ast.Attribute):
            return self._member(self._eval(expr.value, scope), expr.attr)
        if isinstance(expr, ast.Call):
            if isinstance(expr.func, ast.Name) and expr.func.id == "super" and not expr.args:
                owner = self._method_class(scope)
                if owner is not None and self._lookup(scope, "super") == _Ref("builtins.super", "builtin"):
                    return _Super(owner.dotted)
            callee = self._eval(expr.func, scope)
            if isinstance(callee, _Ref) and callee.dotted in _STDLIB_FACTORIES:
                return _Object(_STDLIB_FACTORIES[callee.dotted], "instance")
            if isinstance(callee, _Ref) and self.is_class(callee.dotted):
                return _Object(callee.dotted, "instance")
            return callee if isinstance(callee, _Unknown) else _Unknown("call result")
        display = _DISPLAYS.get(type(expr))
        if isinstance(expr, ast.Constant) and expr.value is not None and expr.value is not Ellipsis:
            display = type(expr.value).__name__
        if display is not None:
            # A literal's type is shown by the code: `", ".join(...)` calls builtins.str.join.
            return _Object(f"builtins.{display}", "instance")
        return _Unknown("expression")

    def _method_class(self, scope: _Scope | None) -> _ClassInfo | None:
        while scope is not None and scope.kind != "function":
            scope = scope.parent
        return None if scope is None else scope.cls

    def _lookup(self, scope: _Scope, name: str) -> _Value:
        current: _Scope | None = self._root if name in scope.globals else scope
        first = True
        while current is not None:
            # A class body's names are not visible from the functions nested in it.
            skip = current.kind == "class" and not first
            if not skip and name in current.names and name not in current.nonlocals:
                return self._value_of(current, name)
            first = False
            current = current.parent
        if name in _BUILTIN_NAMES:
            return _Ref(f"builtins.{name}", "builtin")
        if len(self._stars) == 1:
            return _Ref(f"{self._stars[0]}.{name}", "star-import")
        return _Unknown("star import" if self._stars else "unbound")

    def _value_of(self, scope: _Scope, name: str) -> _Value:
        key = (id(scope), name)
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            return _Unknown("cycle")
        self._busy.add(key)
        try:
            value = self._combine(scope.names[name])
        finally:
            self._busy.discard(key)
        self._memo[key] = value
        return value

    def _combine(self, binders: list[_Binder]) -> _Value:
        """The one value every binding statement of a name agrees on, or unknown."""
        values = [self._binder_value(binder) for binder in binders]
        first = values[0]
        if all(value == first for value in values[1:]):
            return first
        return _Unknown("conflict")

    def _binder_value(self, binder: _Binder) -> _Value:
        if binder.value is not None:
            return binder.value
        assert binder.expr is not None and binder.scope is not None
        value = self._eval(binder.expr, binder.scope)
        if binder.how == "with":
            # `with Session() as s`: a class's __enter__ returns the instance by convention.
            return value if isinstance(value, _Object) else _Unknown("with")
        if isinstance(value, _Ref):
            return _Ref(value.dotted, binder.how, value.of_instance)
        if binder.how == "default":
            # A default that is no module, class or instance (`conn=None`) says nothing of
            # what callers pass: the value is the parameter's.
            return _Object(value.cls, "default") if isinstance(value, _Object) else _Unknown("parameter")
        return value

    def _member(self, base: _Value, attr: str) -> _Value:
        if isinstance(base, _Unknown):
            return base
        if isinstance(base, _Ref) and base.of_instance:
            return _Unknown("attribute")
        if isinstance(base, _Super):
            return self._inherited(self._classes[base.cls], attr, "self", set())
        if isinstance(base, _Ref):
            info = self._classes.get(base.dotted)
            if info is not None:
                return self._class_member(info, attr, base.how, instance=False)
            return _Ref(f"{base.dotted}.{attr}", base.how)
        info = self._classes.get(base.cls)
        if info is not None:
            return self._class_member(info, attr, base.how, instance=True)
        return _Ref(f"{base.cls}.{attr}", base.how, of_instance=True)

    def _class_member(
        self, info: _ClassInfo, attr: str, how: str, *, instance: bool, seen: set[str] | None = None
    ) -> _Value:
        seen = seen or set()
        seen.add(info.dotted)
        in_body = attr in info.scope.names
        if instance and attr in info.self_attrs:
            if in_body:
                return _Unknown("conflict")
            key = (id(info), attr)
            if key in self._busy:
                return _Unknown("cycle")
            self._busy.add(key)
            try:
                return self._combine(info.self_attrs[attr])
            finally:
                self._busy.discard(key)
        if in_body:
            value = self._value_of(info.scope, attr)
            if isinstance(value, _Ref) and value.dotted == f"{info.dotted}.{attr}":
                return _Ref(value.dotted, how)
            return value
        return self._inherited(info, attr, how, seen)

    def _inherited(self, info: _ClassInfo, attr: str, how: str, seen: set[str]) -> _Value:
        outside: list[str] = []
        parent = info.scope.parent
        assert parent is not None
        for base_expr in info.bases:
            base = self._eval(base_expr, parent)
            if not isinstance(base, _Ref) or base.dotted == "builtins.object":
                if not isinstance(base, _Ref):
                    outside.append("")
                continue
            local = self._classes.get(base.dotted)
            if local is None:
                outside.append(base.dotted)
            elif local.dotted not in seen:
                found = self._class_member(local, attr, how, instance=True, seen=seen)
                if not (isinstance(found, _Unknown) and found.reason == "attribute"):
                    return found
        # One base the module does not define: the attribute is that base's.
        if len(outside) == 1 and outside[0]:
            return _Ref(f"{outside[0]}.{attr}", how)
        return _Unknown("attribute")


# Standard-library functions whose result is a standard-library object of a known class:
# `logger = logging.getLogger(__name__)` makes `logger.debug(...)` a call of
# logging.Logger.debug (no collaborator, no binding to show), not an unresolved one.
_STDLIB_FACTORIES = {"logging.getLogger": "logging.Logger", "re.compile": "re.Pattern"}
_NEW_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_DISPLAYS: dict[type[ast.expr], str] = {
    ast.List: "list",
    ast.ListComp: "list",
    ast.Dict: "dict",
    ast.DictComp: "dict",
    ast.Set: "set",
    ast.SetComp: "set",
    ast.Tuple: "tuple",
    ast.JoinedStr: "str",
}
# Decorators whose function is read as an attribute, not called by its name.
_PROPERTIES = frozenset({"property", "cached_property", "setter", "getter", "deleter"})


def _decorator_name(expr: ast.expr) -> str:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return ""


def _text(expr: ast.expr) -> str:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return f"{_text(expr.value)}.{expr.attr}"
    if isinstance(expr, ast.Call):
        return f"{_text(expr.func)}()"
    return ast.unparse(expr) if not isinstance(expr, (ast.Lambda, ast.JoinedStr)) else type(expr).__name__.lower()


def _position(site: Site) -> tuple[int, int, int]:
    return site.line, site.column, site.end_line
