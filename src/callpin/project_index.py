"""The project's modules as files: a source file's dotted name, and what a project module defines.

Read with `ast`, never imported: `bindings` asks whether a name of another project
module is a module, a function or a class (a call of a class constructs an instance).
"""

from __future__ import annotations

import ast
import io
import os
import tokenize
from pathlib import Path


def module_name(path: str | os.PathLike[str]) -> tuple[str, Path, bool]:
    """A source file's dotted module name, the folder that name is relative to, and
    whether it is a package (`__init__.py`): the folders holding an `__init__.py` above
    the file are its packages."""
    file = Path(path).resolve()
    folder = file.parent
    while (folder / "__init__.py").exists() and folder.parent != folder:
        folder = folder.parent
    parts = list(file.relative_to(folder).with_suffix("").parts)
    package = parts[-1] == "__init__"
    if package:
        parts.pop()
    return ".".join(parts) or file.parent.name, folder, package


def source_encoding(data: bytes) -> str:
    """A Python source's encoding: its PEP 263 cookie or BOM, else UTF-8."""
    return tokenize.detect_encoding(io.BytesIO(data).readline)[0]


class ProjectIndex:
    """The project's modules under `roots`, read with `ast` to tell a class from a function."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = roots
        self._tops: dict[str, bool] = {}
        self._kinds: dict[str, dict[str, str] | None] = {}

    def has(self, top: str) -> bool:
        if top not in self._tops:
            self._tops[top] = any((root / top).is_dir() or (root / f"{top}.py").is_file() for root in self.roots)
        return self._tops[top]

    def _file(self, dotted: str) -> Path | None:
        parts = dotted.split(".")
        for root in self.roots:
            base = root.joinpath(*parts)
            for candidate in (base.with_name(f"{parts[-1]}.py"), base / "__init__.py"):
                if candidate.is_file():
                    return candidate
        return None

    def _top_level(self, dotted: str) -> dict[str, str] | None:
        if dotted not in self._kinds:
            file = self._file(dotted)
            kinds: dict[str, str] | None = None
            if file is not None:
                try:
                    tree = ast.parse(file.read_bytes())
                except (SyntaxError, ValueError, OSError):
                    tree = None
                if tree is not None:
                    kinds = {}
                    for node in tree.body:
                        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            kinds[node.name] = "function"
                        elif isinstance(node, ast.ClassDef):
                            kinds[node.name] = "class"
            self._kinds[dotted] = kinds
        return self._kinds[dotted]

    def kind(self, dotted: str) -> str | None:
        """`module`, `function` or `class` for a name of a project module; None when unknown."""
        parts = dotted.split(".")
        if not self.has(parts[0]):
            return None
        for end in range(len(parts), 0, -1):
            module = ".".join(parts[:end])
            if self._file(module) is None:
                continue
            rest = parts[end:]
            if not rest:
                return "module"
            kinds = self._top_level(module)
            return kinds.get(rest[0]) if kinds is not None and len(rest) == 1 else None
        return None
