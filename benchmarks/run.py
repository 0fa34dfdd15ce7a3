"""Run every benchmarks/bench_*.py (or those named by an argument), each in its own process.

The targets every benchmark checked are printed together at the end (targets.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from targets import ENV, table

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
    with tempfile.TemporaryDirectory(prefix="callpin-bench-") as folder:
        collected = Path(folder) / "targets.jsonl"
        collected.touch()
        env = {**os.environ, ENV: str(collected)}
        for script in chosen:
            print(f"## {script.stem}", flush=True)
            print(flush=True)
            # One process per file: a benchmark's memory and caches never weigh on the next.
            if subprocess.run([sys.executable, str(script)], env=env).returncode != 0:
                failed.append(script.stem)
            print(flush=True)
        print("## targets", flush=True)
        print()
        for line in table(collected):
            print(line)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
