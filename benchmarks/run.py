"""Run every benchmarks/bench_*.py (or those named by an argument), each in its own process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def main(filters: list[str]) -> int:
    scripts = sorted(HERE.glob("bench_*.py"))
    chosen = [s for s in scripts if not filters or any(f in s.stem for f in filters)]
    if not chosen:
        print(
            f"no benchmark matches {filters} (have: {', '.join(s.stem for s in scripts)})",
            file=sys.stderr,
        )
        return 2
    failed = []
    for script in chosen:
        print(f"## {script.stem}", flush=True)
        print(flush=True)
        # One process per file: a benchmark's memory and caches never weigh on the next.
        if subprocess.run([sys.executable, str(script)]).returncode != 0:
            failed.append(script.stem)
        print(flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
