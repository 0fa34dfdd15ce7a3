"""Mutants of one source text: the calls to the pinned collaborators swapped, deleted or duplicated.

Pure: source text and labels in, mutants out; nothing here reads a file or runs code.
The call sites are found with `ast` (`_CallMatcher` says which label a call expression
calls); each mutant is made from the source text by line ranges, so everything but the
mutated lines is kept character for character.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import io
import re
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ..errors import UsageError

OPERATORS = ("swap", "delete", "duplicate")

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


# ---------------------------------------------------------------------------
# Which collaborators a call calls: labels.


def _compatible(dotted: str, label: str) -> bool:
    # `billing.charge_card` (imported as a top-level module) and
    # `examples.renewals.billing.charge_card` (spied by its full name) are one function.
    dotted = dotted.lstrip(".")
    return dotted == label or dotted.endswith("." + label) or label.endswith("." + dotted)


class _CallMatcher:
    """Which label, if any, a call expression of one source file calls."""

    def __init__(self, tree: ast.Module, labels: Sequence[str]) -> None:
        self._labels = sorted(set(labels))
        self._bound: dict[str, str] = {}
        self._star: list[str] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self._bound[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".", 1)[0]
                        self._bound[top] = top
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for alias in node.names:
                    if alias.name == "*":
                        self._star.append(module)
                    else:
                        joined = module + alias.name if module.endswith(".") else f"{module}.{alias.name}"
                        self._bound[alias.asname or alias.name] = joined

    def _dotted(self, expr: ast.expr) -> str | None:
        if isinstance(expr, ast.Name):
            return self._bound.get(expr.id)
        if isinstance(expr, ast.Attribute):
            base = self._dotted(expr.value)
            return None if base is None else f"{base}.{expr.attr}"
        return None

    def label(self, call: ast.Call) -> str | None:
        func = call.func
        dotted = self._dotted(func)
        if dotted is not None:
            return next((label for label in self._labels if _compatible(dotted, label)), None)
        if isinstance(func, ast.Attribute):
            # An attribute call on anything that is not an imported name
            # (`gateway.charge_card`, `self.billing.charge_card`) matches by the name alone.
            return next((label for label in self._labels if label.rsplit(".", 1)[-1] == func.attr), None)
        if isinstance(func, ast.Name):
            for label in self._labels:
                module, _, name = label.rpartition(".")
                if name == func.id and any(_compatible(star, module) for star in self._star if module):
                    return label
        return None


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


def _statement(node: ast.stmt, lines: list[str], matcher: _CallMatcher) -> _Statement | None:
    """The statement as a mutation unit, or None when it shares a line with other code."""
    if isinstance(node, _SCOPES) or node.end_lineno is None or node.end_col_offset is None:
        return None
    first, last = node.lineno - 1, node.end_lineno - 1
    head = lines[first].encode("utf-8", "surrogatepass")[: node.col_offset]
    tail = lines[last].encode("utf-8", "surrogatepass")[node.end_col_offset :].strip()
    if head.strip() or (tail and not tail.startswith(b"#")):
        return None
    calls = tuple(label for label in map(matcher.label, _calls_in(node)) if label is not None)
    if not calls:
        return None

    def is_collaborator(expr: ast.expr | None) -> bool:
        call = _direct_call(expr)
        return call is not None and matcher.label(call) is not None

    return _Statement(
        node,
        first,
        last,
        calls,
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
) -> list[Mutant]:
    """Every mutant of one source text, in source order; `path` names it in ids and diffs.

    Only the mutated lines change: the rest of the text is kept character for character.
    A mutant that does not parse, or parses to the same tree as the original, is dropped.
    """
    check_operators(operators)
    tree = ast.parse(text, filename=path)
    original_dump = ast.dump(tree)
    matcher = _CallMatcher(tree, labels)
    # Work on a text that ends with a line break, so that moved and copied lines always
    # carry one; the break added here is taken off every mutant again.
    added = "" if not text or text.endswith(("\n", "\r")) else _newline(_lines(text))
    lines = _lines(text + added)

    made: dict[str, Mutant] = {}

    def emit(operator: str, spans: list[tuple[int, int]], new_lines: list[str], calls: tuple[str, ...]) -> None:
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
                    )
            if "delete" in operators and unit.is_call:
                filler: list[str] = []
                if len(block) == 1 and not is_module:
                    indent = lines[a][: len(lines[a]) - len(lines[a].lstrip())]
                    filler = [f"{indent}pass{_newline(lines[b - 1 : b])}"]
                emit("delete", [(a, b - 1)], lines[:a] + filler + lines[b:], unit.calls[:1])
            if "duplicate" in operators and (unit.is_call or unit.assigns_call):
                emit("duplicate", [(a, b - 1)], lines[:b] + lines[a:b] + lines[b:], unit.calls[:1])

    order = {name: rank for rank, name in enumerate(OPERATORS)}
    return sorted(made.values(), key=lambda m: (m.line, order[m.operator], m.end_line, m.id))


def decode_source(data: bytes) -> tuple[str, str]:
    """A Python source file's text and encoding (PEP 263 cookie or BOM, else UTF-8)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding, "surrogateescape"), encoding
