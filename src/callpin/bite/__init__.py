"""callpin bite, the public names: prove the harness can fail by mutating collaborator calls in scratch copies.

The pinned labels name the collaborators; their call sites in the code under test are
found with `ast`; each mutant (two adjacent calls swapped, a call deleted, a call
duplicated) is made from the source text and runs the user's test command in its own
scratch copy of the project. A mutant the tests do not catch *survived*: the harness is
not wired to that call. docs/bite.md tells the whole story.

One job a module: `mutants` (source text to mutants), `project` (the project's root and
SOURCE snapshot), `planning` (labels and mutants of a snapshot), `scratch` (worktrees,
copies and the commands run in them), `signals` (Ctrl-C and SIGTERM), `report` (results
as text and JSON), `runner` (the run), `_hook` (the start-up hook of the commands).
"""

from .mutants import OPERATORS, Mutant, decode_source, make_mutants
from .planning import find_mutants, plan, read_labels, show
from .project import Project, snapshot_sources
from .report import OUTCOMES, MergedReport, Report, Result, merge, plan_lines
from .runner import DEFAULT_TEST, bite, default_timeout, run

__all__ = [
    "DEFAULT_TEST",
    "OPERATORS",
    "OUTCOMES",
    "MergedReport",
    "Mutant",
    "Project",
    "Report",
    "Result",
    "bite",
    "decode_source",
    "default_timeout",
    "find_mutants",
    "make_mutants",
    "merge",
    "plan",
    "plan_lines",
    "read_labels",
    "run",
    "show",
    "snapshot_sources",
]
