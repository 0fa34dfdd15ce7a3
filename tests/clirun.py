"""Run the `callpin` command line in-process from a given folder: (exit code, stdout, stderr)."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from callpin.cli import cli


def run_in(folder: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`callpin ARGS...` with `folder` as the working directory, then back where it was."""
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        result = CliRunner(env=env).invoke(cli, list(args), catch_exceptions=False)
    finally:
        os.chdir(cwd)
    return result.exit_code, result.stdout, result.stderr
