"""site_hook: a child's hook is its sitecustomize, and the sitecustomize it shadows still runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from callpin.site_hook import CHAIN_MODULE, install_hook


def test_a_hook_installed_in_a_folder_runs_first_then_the_one_it_shadows(tmp_path: Path) -> None:
    source = tmp_path / "my_hook.py"
    source.write_text(
        "import builtins\nbuiltins.ORDER = ['hook']\nfrom callpin_site_chain import chain\nchain(__file__)\n"
    )
    hook, other = tmp_path / "hook", tmp_path / "other"
    hook.mkdir()
    other.mkdir()
    install_hook(source, hook)
    assert sorted(path.name for path in hook.iterdir()) == [f"{CHAIN_MODULE}.py", "sitecustomize.py"]
    (other / "sitecustomize.py").write_text("import builtins\nbuiltins.ORDER.append('shadowed')\n")
    done = subprocess.run(
        [sys.executable, "-c", "import builtins; print(builtins.ORDER)"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), str(other)])},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.strip() == "['hook', 'shadowed']"


def test_the_chain_copied_into_a_child_imports_nothing_of_callpin() -> None:
    import callpin.site_hook as module

    source = Path(module.__file__).read_text()
    assert "from callpin" not in source and "from ." not in source and "import callpin" not in source
