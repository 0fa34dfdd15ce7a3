"""Every `$ callpin ...` line in the README and docs/ names a real command and real options.

The docs cannot drift from the command line: a renamed or removed command or option
fails here. (What the commands do is tested where they live, in tests/integration/.)
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from callpin.cli import cli

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def documented_commands() -> list[tuple[str, int, str]]:
    found = []
    for path in DOCS:
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if line.startswith("$ callpin"):
                found.append((path.relative_to(ROOT).as_posix(), number, line[2:]))
    return found


def _tokens(line: str) -> list[str]:
    text = line.split(" #", 1)[0]
    # Synopsis lines mark optional parts with brackets and alternatives with '|'.
    text = re.sub(r"[\[\]]", " ", text).replace(" | ", " ")
    return shlex.split(text)[1:]


def test_the_docs_show_commands():
    assert len(documented_commands()) >= 20


@pytest.mark.parametrize(
    ("where", "number", "line"), documented_commands(), ids=[f"{w}:{n}" for w, n, _ in documented_commands()]
)
def test_a_documented_command_line_uses_real_commands_and_options(where, number, line):
    tokens = _tokens(line)
    command: click.Command = cli
    if tokens and not tokens[0].startswith("-"):
        assert isinstance(cli, click.Group)
        sub = cli.get_command(click.Context(cli), tokens[0])
        assert sub is not None, f"{where}:{number}: no command {tokens[0]!r}"
        command, tokens = sub, tokens[1:]
    known = {"--help", "-h"}
    for parameter in command.params:
        if isinstance(parameter, click.Option):
            known.update(parameter.opts + parameter.secondary_opts)
    if command is cli:
        known.add("--version")
    for token in tokens:
        if token == "--":
            break
        if token.startswith("-") and not re.fullmatch(r"-\d+", token):
            name = token.split("=", 1)[0]
            assert name in known, f"{where}:{number}: {command.name} has no option {name}"
