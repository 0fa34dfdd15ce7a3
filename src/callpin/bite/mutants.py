"""Mutants of one source text: the calls to the pinned collaborators swapped, deleted or duplicated.

Pure: source text and labels in, mutants out; nothing here reads a file or runs code.
A call site is a collaborator call when `bindings` shows its callee bound to a pinned
label (the analysis `callpin seams` prints); with `loose`, a call whose binding the code
does not show also matches by its last name. Each mutant is made from the source text by
line ranges, so everything but the mutated lines is kept character for character.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ..bindings import Bindings, analyze
from ..errors import UsageError
from ..project_index import source_encoding

OPERATORS = ("swap", "delete", "duplicate")

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


# ---------------------------------------------------------------------------
# Mutants: made from the source text by line ranges.


@dataclass(frozen=True)
class Mutant:
    """One mutated version of one source file."""

    id: str
    operator: str
    path: str
    line: int
    end_line: int
    calls: tuple[str, ...]
    original: str = field(repr=False)
    text: str = field(repr=False)
    encoding: str = field(default="utf-8", repr=False)
    # A call of the mutated lines matched a label by name alone (`--loose`).
    loose: bool = False

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def diff(self) -> str:
        """The unified diff of the source file, original to mutant."""
        lines = difflib.unified_diff(_lines(self.original), _lines(self.text), f"a/{self.path}", f"b/{self.path}")
        return "".join(
            line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n" for line in lines
        )

    def data(self) -> bytes:
        """The mutated file's bytes, in the source file's own encoding."""
        return self.text.encode(self.encoding, "surrogateescape")


@dataclass(frozen=True)
class _Statement:
    node: ast.stmt
    first: int
    last: int
    calls: tuple[str, ...]
    loose: bool
    is_call: bool
    assigns_call: bool


def _lines(text: str) -> list[str]:
    # Python's own line breaks only: str.splitlines would also split at form feeds and
    # other characters the tokenizer treats as ordinary.
    pieces = re.split(r"(\r\n|\r|\n)", text)
    lines = [pieces[i] + pieces[i + 1] for i in range(0, len(pieces) - 1, 2)]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


def _calls_in(node: ast.AST) -> list[ast.Call]:
    found: list[ast.Call] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Call):
            found.append(current)
        stack.extend(child for child in ast.iter_child_nodes(current) if not isinstance(child, _SCOPES))
    return sorted(found, key=lambda call: (call.lineno, call.col_offset))


def _direct_call(expr: ast.expr | None) -> ast.Call | None:
    if isinstance(expr, ast.Await):
        expr = expr.value
    return expr if isinstance(expr, ast.Call) else None


class _Labels:
    """Which pinned label a call of one analysed tree calls."""

    def __init__(self, bindings: Bindings, labels: Sequence[str], loose: bool) -> None:
        self._bindings = bindings
        self._labels = sorted(set(labels))
        self._loose = loose

    def of(self, call: ast.Call) -> tuple[str, bool] | None:
        """The label and whether it matched by name alone, or None."""
        found = self._bindings.label(call, self._labels, loose=self._loose)
        return None if found is None else (found.label, found.loose)


def _statement(node: ast.stmt, lines: list[str], matcher: _Labels) -> _Statement | None:
    """The statement as a mutation unit, or None when it shares a line with other code."""
    if isinstance(node, _SCOPES) or node.end_lineno is None or node.end_col_offset is None:
        return None
    first, last = node.lineno - 1, node.end_lineno - 1
    head = lines[first].encode("utf-8", "surrogatepass")[: node.col_offset]
    tail = lines[last].encode("utf-8", "surrogatepass")[node.end_col_offset :].strip()
    if head.strip() or (tail and not tail.startswith(b"#")):
        return None
    found = [label for label in map(matcher.of, _calls_in(node)) if label is not None]
    if not found:
        return None

    def is_collaborator(expr: ast.expr | None) -> bool:
        call = _direct_call(expr)
        return call is not None and matcher.of(call) is not None

    return _Statement(
        node,
        first,
        last,
        tuple(label for label, _ in found),
        any(loose for _, loose in found),
        is_call=isinstance(node, ast.Expr) and is_collaborator(node.value),
        assigns_call=isinstance(node, (ast.Assign, ast.AnnAssign)) and is_collaborator(node.value),
    )


def _blocks(tree: ast.Module) -> Iterator[tuple[list[ast.stmt], bool]]:
    for node in ast.walk(tree):
        for _, value in ast.iter_fields(node):
            if isinstance(value, list) and value and all(isinstance(item, ast.stmt) for item in value):
                yield value, isinstance(node, ast.Module)


def _newline(lines: list[str]) -> str:
    for line in lines:
        stripped = line.rstrip("\r\n")
        if stripped != line:
            return line[len(stripped) :]
    return "\n"


def _mutant_id(operator: str, path: str, spans: Sequence[tuple[int, int]], lines: list[str]) -> str:
    digest = hashlib.sha1(f"{path}\0{operator}".encode(), usedforsecurity=False)
    for first, last in spans:
        digest.update(f"\0{first + 1}-{last + 1}\0".encode())
        digest.update("".join(lines[first : last + 1]).encode("utf-8", "surrogatepass"))
    return f"{operator}-{digest.hexdigest()[:8]}"


def check_operators(operators: Sequence[str]) -> None:
    """Refuse an unknown operator, or none at all, with the ones there are."""
    unknown = sorted(set(operators) - set(OPERATORS))
    if unknown or not operators:
        what = f"unknown operator {unknown[0]!r}" if unknown else "no operator"
        raise UsageError(f"{what}; choose from {', '.join(OPERATORS)}")


def make_mutants(
    text: str,
    path: str,
    labels: Sequence[str],
    operators: Sequence[str] = OPERATORS,
    *,
    encoding: str = "utf-8",
    module: str | None = None,
    package: bool = False,
    roots: Sequence[str | os.PathLike[str]] = (),
    loose: bool = False,
) -> list[Mutant]:
    """Every mutant of one source text, in source order; `path` names it in ids and diffs.

    `module` is the text's dotted module name (by default `path` without `.py`, its
    folders as packages), `package` when it is a package's `__init__.py`, and `roots` the
    folders of the project's top-level modules, as `bindings.analyze` takes them.
    Only the mutated lines change: the rest of the text is kept character for character.
    A mutant that does not parse, or parses to the same tree as the original, is dropped.
    """
    check_operators(operators)
    tree = ast.parse(text, filename=path)
    original_dump = ast.dump(tree)
    if module is None:
        module, package = _default_module(path)
    matcher = _Labels(analyze(tree, module, package=package, roots=roots, filename=path), labels, loose)
    # Work on a text that ends with a line break, so that moved and copied lines always
    # carry one; the break added here is taken off every mutant again.
    added = "" if not text or text.endswith(("\n", "\r")) else _newline(_lines(text))
    lines = _lines(text + added)

    made: dict[str, Mutant] = {}

    def emit(
        operator: str, spans: list[tuple[int, int]], new_lines: list[str], calls: tuple[str, ...], loose: bool
    ) -> None:
        mutated = "".join(new_lines)
        if added and mutated.endswith(added):
            mutated = mutated[: -len(added)]
        try:
            if ast.dump(ast.parse(mutated)) == original_dump:
                return
        except SyntaxError:
            return
        mutant_id = _mutant_id(operator, path, spans, lines)
        made[mutant_id] = Mutant(
            mutant_id,
            operator,
            path,
            spans[0][0] + 1,
            spans[-1][1] + 1,
            calls,
            text,
            mutated,
            encoding,
            loose,
        )

    for block, is_module in _blocks(tree):
        units = [_statement(node, lines, matcher) for node in block]
        for index, unit in enumerate(units):
            if unit is None:
                continue
            a, b = unit.first, unit.last + 1
            if "swap" in operators and index + 1 < len(units):
                other = units[index + 1]
                if other is not None:
                    c, d = other.first, other.last + 1
                    emit(
                        "swap",
                        [(a, b - 1), (c, d - 1)],
                        lines[:a] + lines[c:d] + lines[b:c] + lines[a:b] + lines[d:],
                        (unit.calls[0], other.calls[0]),
                        unit.loose or other.loose,
                    )
            if "delete" in operators and unit.is_call:
                filler: list[str] = []
                if len(block) == 1 and not is_module:
                    indent = lines[a][: len(lines[a]) - len(lines[a].lstrip())]
                    filler = [f"{indent}pass{_newline(lines[b - 1 : b])}"]
                emit("delete", [(a, b - 1)], lines[:a] + filler + lines[b:], unit.calls[:1], unit.loose)
            if "duplicate" in operators and (unit.is_call or unit.assigns_call):
                emit("duplicate", [(a, b - 1)], lines[:b] + lines[a:b] + lines[b:], unit.calls[:1], unit.loose)

    order = {name: rank for rank, name in enumerate(OPERATORS)}
    return sorted(made.values(), key=lambda m: (m.line, order[m.operator], m.end_line, m.id))


def _default_module(path: str) -> tuple[str, bool]:
    parts = [part for part in path.replace("\\", "/").removesuffix(".py").split("/") if part]
    package = bool(parts) and parts[-1] == "__init__"
    if package:
        parts.pop()
    return ".".join(parts) or "__main__", package


def decode_source(data: bytes) -> tuple[str, str]:
    """A Python source file's text and encoding (PEP 263 cookie or BOM, else UTF-8)."""
    encoding = source_encoding(data)
    return data.decode(encoding, "surrogateescape"), encoding
