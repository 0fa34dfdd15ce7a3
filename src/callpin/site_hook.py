"""A start-up hook for child processes: a hook file as their `sitecustomize`, the one it shadows still run.

bite and probe start the test command with a folder first on its PYTHONPATH holding
their hook as `sitecustomize.py` (`install_hook`), and this file beside it as
`callpin_site_chain.py`. The hook ends with `chain(__file__)`, which runs the
`sitecustomize` further down `sys.path` that it shadows (a distribution's, a
virtualenv's), so the child starts as it would without callpin. In the child this file
stands alone under its copied name and imports nothing of callpin: a child must not pay
for importing callpin at start-up.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from typing import Any

CHAIN_MODULE = "callpin_site_chain"


def install_hook(source: Any, folder: Any) -> None:
    """Copy the hook module `source` into `folder` as its sitecustomize, with this file beside it."""
    import shutil

    shutil.copyfile(source, os.path.join(folder, "sitecustomize.py"))
    shutil.copyfile(__file__, os.path.join(folder, f"{CHAIN_MODULE}.py"))


def chain(hook_file: str) -> None:
    """Run the `sitecustomize` that the hook at `hook_file` shadows, if there is one further on sys.path."""
    here = os.path.dirname(os.path.realpath(hook_file))
    rest = [entry for entry in sys.path if os.path.realpath(entry or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)
