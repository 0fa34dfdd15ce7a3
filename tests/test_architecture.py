"""The shape of src/callpin that docs/architecture.md describes: one job per module, no import cycles."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "callpin"
MAX_LINES = 700
# The reference codec mirrors the C encoder function for function; it is one job, and
# splitting it would separate each encoding from the decoding that reads it back.
LONGER_ALLOWED = {"callpin.codec"}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every callpin module `name` imports anywhere: top level, in functions, under TYPE_CHECKING."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            submodules = {f"{target}.{alias.name}" for alias in node.names} & MODULES.keys()
            found |= submodules if node.module is None else {target, *submodules}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {one for one in found if one in MODULES and one != name}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycle_through(start: str) -> list[str] | None:
    """A path of imports from `start` back to itself, if there is one."""
    stack = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        for nxt in sorted(GRAPH[node]):
            if nxt == start:
                return [*path, start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, [*path, nxt]))
    return None


def test_the_package_has_the_modules_this_test_reads():
    assert {"callpin", "callpin.errors", "callpin.codec", "callpin.recorder"} <= MODULES.keys()


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_imports_itself_back(name):
    # The package's __init__ re-exports: it imports everything and nothing imports it.
    assert _cycle_through(name) is None, " -> ".join(_cycle_through(name) or [])


def test_errors_is_a_leaf_that_imports_nothing_of_callpin():
    assert GRAPH["callpin.errors"] == set()


def test_nothing_inside_the_package_imports_the_package_itself():
    importers = sorted(name for name, imported in GRAPH.items() if "callpin" in imported)
    assert importers == []


@pytest.mark.parametrize("name", sorted(set(MODULES) - LONGER_ALLOWED))
def test_a_module_stays_under_the_size_of_one_job(name):
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_starts_with_a_one_line_docstring_of_its_job(name):
    docstring = ast.get_docstring(ast.parse(MODULES[name].read_text(encoding="utf-8")))
    assert docstring, f"{name} has no docstring"
    first = docstring.splitlines()[0]
    assert first.strip() and first.rstrip().endswith((".", ":")), first


def test_no_module_is_a_grab_bag():
    grab_bags = {"utils", "util", "helpers", "misc", "common"}
    assert not [name for name in MODULES if name.rpartition(".")[2] in grab_bags]
