"""The `callpin` command line: parse arguments, call the library, map errors to exit codes.

`app` holds the group and its error boundary; each other module registers one family
of commands on it when imported: `logs` (diff, show, stats, verify, normalize),
`baselines` (git-setup, bless, gate, review), `checks` (probe, bite, demo) and
`characterize` (seams).
"""

from __future__ import annotations

from . import baselines, characterize, checks, logs
from .app import EXIT_DIFFERENT, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_SAME, cli, main

__all__ = [
    "EXIT_DIFFERENT",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_SAME",
    "baselines",
    "characterize",
    "checks",
    "cli",
    "logs",
    "main",
]
