"""probe: re-run a capture under ambient perturbations and name what it silently depends on.

The capture command runs in child processes over a matrix of cells (timezone, locale,
hash seed, working directory, environment variables, directory listing order, the
clock), several times per cell, each run with its own `CALLPIN_OUTPUT_DIR` so every
recorder also writes its actual log there. Comparing the logs' fingerprints separates
three signals: *unstable* (runs in one cell differ: in-process nondeterminism),
*ambient* (stable in a cell but different from the baseline cell: the cell's setting
leaks into the capture), and *error* (the command failed or wrote no log in that cell,
in a way the baseline cell did not: an environment trap).

The modules: `cells` (the matrix), `children` (one run in one cell), `child_site` (the
hook that reverses listings and shifts the clock in the children), `classify` (the
judgement), `report` (table, findings, JSON), `run` (the pool, progress and Ctrl-C).
"""

from __future__ import annotations

from .cells import GROUPS, Cell, build_cells, parse_env
from .report import Finding, ProbeReport
from .run import Terminated, probe

__all__ = ["GROUPS", "Cell", "Finding", "ProbeReport", "Terminated", "build_cells", "parse_env", "probe"]
