"""The capture: the seven cases of seams-cookiecutter's hand test of `cookiecutter.main.cookiecutter`,
each recorded into `<case>.cpin` in the folder named on the command line.

The hand test's spy list, cases, stub and rules are used as they are, from
`../seams-cookiecutter/characterize.py`. Its `run_hook` case is left out: its spy list names
both `subprocess.Popen` and `subprocess.Popen.__init__`, which `callpin.record` refuses
since a spied class records its construction.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "seams-cookiecutter"))

import characterize

import callpin


def main(logs: Path) -> None:
    logs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="callpin-seams-") as root:
        for name, case in characterize.MAIN_CASES.items():
            folder = Path(root) / name
            folder.mkdir()
            targets = list(characterize.MAIN_TARGETS)
            stub = characterize.STUBS.get(name)
            with callpin.record(logs / f"{name}.cpin", spy=targets, stub=stub, normalize=characterize._rules()) as rec:
                rec.mark("returned", case(folder))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
