"""Call sites: what one call of a module is bound to, and which pinned label it calls.

The records `bindings.analyze` gives (`Site`, `Function`, `Match`) and the one rule that
says a resolved target and a pinned label name the same callable (`matches`), shared by
`callpin seams` and `callpin bite`: what one calls a collaborator is what the other mutates.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import NamedTuple

# How the head of a resolved callee is bound.
BINDINGS = ("import", "from-import", "alias", "default", "self", "cls", "instance", "module", "builtin", "star-import")
# Where a resolved target lives: this module, another module of the project, a third-party
# package, the standard library, or the builtins.
ORIGINS = ("module", "project", "third-party", "stdlib", "builtin")


@dataclass(frozen=True)
class Site:
    """One call site (or one read of another module's attribute) and what the code binds it to.

    `scope` is the qualified name of the enclosing function, method or class (`renew`,
    `Session.send`, `outer.<locals>.inner`), empty at module level. `target` is the dotted
    name the callee is bound to, None when the code does not show it; `binding` says how
    it is bound (one of BINDINGS) or why it is not (`parameter`, `call result`,
    `attribute`, `unbound`, `conflict`, ...). `origin` is one of ORIGINS for a resolved
    target. `constructs` is true when the callee is a class: the call builds an instance.
    """

    line: int
    column: int
    end_line: int
    scope: str
    text: str
    target: str | None
    binding: str
    origin: str | None
    constructs: bool = False
    node: ast.expr = field(compare=False, repr=False, default_factory=lambda: ast.Constant(None))

    @property
    def name(self) -> str:
        """The callee's last name as written: `charge_card` for `gateway.charge_card(...)`."""
        return self.text.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Function:
    """A function, method or class of the module, by qualified name and lines."""

    qualname: str
    line: int
    end_line: int
    kind: str  # "function", "method" or "class"

    @property
    def private(self) -> bool:
        """A leading underscore on its own name: a helper its module keeps free to change."""
        return self.qualname.rsplit(".", 1)[-1].startswith("_")


class Match(NamedTuple):
    """A call site that calls a pinned label; `loose` when matched by name alone."""

    site: Site
    label: str
    loose: bool


def matches(target: str, label: str) -> bool:
    """Whether a resolved target and a pinned label name one callable.

    A label is a dotted name as the test spied it: `billing.charge_card` (the module
    imported at the top level) and `examples.renewals.billing.charge_card` (its full
    name) name the same function, so either may end the other at a dot.
    """
    return target == label or target.endswith("." + label) or label.endswith("." + target)


def match(site: Site, labels: list[str], loose: bool) -> Match | None:
    """The first of the sorted `labels` a site calls: by its resolved target, or, with
    `loose`, by the last name of a call whose binding the code does not show."""
    if site.target is not None:
        for label in labels:
            if matches(site.target, label):
                return Match(site, label, False)
        return None
    if loose:
        for label in labels:
            if label.rsplit(".", 1)[-1] == site.name:
                return Match(site, label, True)
    return None
