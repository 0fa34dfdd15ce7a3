"""`make realworld`: run each real-world scenario under examples/realworld/ in its own environment.

A scenario is a folder with `requirements.txt` (exact pins of the third-party library it
tries callpin on) and `scenario.py`, a script that exits 0 when every check it makes
holds and prints the figures it measured. Each gets a venv in `.venv-realworld/<name>`
(callpin installed from this checkout, editable, plus its pins), made once and reused
while its requirements are unchanged. Names on the command line pick scenarios.

Only the standard library: it runs before anything is installed.
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
VENVS = ROOT / ".venv-realworld"


def _environment(name: str, requirements: Path) -> Path:
    """The scenario's python, with callpin and its pins installed (remade when they change)."""
    folder = VENVS / name
    python = folder / "bin" / "python"
    stamp = folder / ".requirements"
    wanted = requirements.read_text(encoding="utf-8")
    if python.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
        return python
    venv.EnvBuilder(clear=True, with_pip=True).create(folder)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "-e", str(ROOT)], check=True)
    subprocess.run([*pip, "-r", str(requirements)], check=True)
    stamp.write_text(wanted, encoding="utf-8")
    return python


def main(argv: list[str]) -> int:
    chosen = set(argv)
    scenarios = sorted(path.parent for path in HERE.glob("*/scenario.py"))
    if chosen:
        scenarios = [folder for folder in scenarios if folder.name in chosen]
        missing = chosen - {folder.name for folder in scenarios}
        if missing:
            print(f"realworld: no scenario named {', '.join(sorted(missing))}", file=sys.stderr)
            return 2
    failed: list[str] = []
    for folder in scenarios:
        print(f"== {folder.name}", flush=True)
        python = _environment(folder.name, folder / "requirements.txt")
        done = subprocess.run([str(python), str(folder / "scenario.py")], cwd=folder, check=False)
        if done.returncode != 0:
            failed.append(folder.name)
    print(f"realworld: {len(scenarios) - len(failed)} of {len(scenarios)} scenarios held", end="")
    print(f"; failed: {', '.join(failed)}" if failed else "")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
