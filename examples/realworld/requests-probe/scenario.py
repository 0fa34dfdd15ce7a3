"""probe on requests: a pin of HTTPAdapter.send against a local server, under every cell.

The pinned call carries what requests merged from the environment (`proxies=`,
`verify=`). Checks: probe names `env` for the naive pin and nothing else, the same
VOLATILE line on five runs; the pin fixed at the edge is volatile nowhere; the text
table fits 120 columns; SIGINT ends probe with exit 130 and no child left.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
CALLPIN = [sys.executable, "-m", "callpin"]


def probe(project: Path, tests: str, *options: str) -> tuple[int, str, str, float]:
    started = time.monotonic()
    done = subprocess.run(
        [*CALLPIN, "probe", "--jobs", "2", *options, "--", *PYTEST, tests],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def leftovers(project: Path) -> list[str]:
    found = []
    for status in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = status.read_bytes().split(b"\0")
        except OSError:
            continue
        if any(str(project).encode() in word for word in words) and b"pytest" in b" ".join(words):
            found.append(status.parent.name)
    return found


def interrupt(project: Path) -> tuple[int, float, list[str]]:
    process = subprocess.Popen(
        [*CALLPIN, "probe", "--jobs", "2", "--", *PYTEST, str(project / "tests" / "test_naive.py")],
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(3.0)  # runs are under way
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    process.wait(timeout=60)
    return process.returncode, time.monotonic() - sent, leftovers(project)


def main() -> int:
    checks: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="callpin-realworld-probe-") as folder:
        project = Path(folder) / "project"
        shutil.copytree(HERE / "project", project)
        env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
        made = subprocess.run([*PYTEST, "tests", "--callpin-mode=new"], cwd=project, env=env, check=False)
        checks.append(("the pinned tests pass and write their baselines", made.returncode == 0))

        verdicts, seconds = [], []
        report: dict[str, object] = {}
        for _ in range(5):
            code, out, err, took = probe(project, "tests/test_naive.py", "--format", "json")
            verdicts.append(err.strip().splitlines()[-1])
            seconds.append(took)
            report = json.loads(out)
        print(f"naive pin, 5 probes: {verdicts[0]!r} each time: {len(set(verdicts)) == 1}; "
              f"wall time {min(seconds):.1f}-{max(seconds):.1f} s (--jobs 2, {len(report['cells'])} cells x 2 runs)")
        details = [finding["detail"] for finding in report["findings"]]
        for finding in report["findings"]:
            print(f"  {finding['signal']} under {finding['cell']}: {finding['detail'][:400]}")
        checks.append(("the naive pin is volatile under env and nothing else", report["volatile"] == ["env"]))
        checks.append(
            (
                "the finding shows the proxies= and verify= requests merged from the environment",
                any("kwargs.proxies" in detail and "kwargs.verify" in detail for detail in details),
            )
        )
        checks.append(("the same VOLATILE line on five runs", len(set(verdicts)) == 1))

        code, out, err, took = probe(project, "tests/test_fixed.py")
        print(f"fixed pin: {err.strip().splitlines()[-1]!r}, exit {code}, {took:.1f} s")
        print(out)
        width = max(len(line) for line in out.split("\n\n")[0].splitlines())
        print(f"table width: {width} columns")
        checks.append(("the fixed pin is volatile nowhere", code == 0 and err.strip().endswith("VOLATILE: none")))
        checks.append(("the table fits 120 columns", width <= 120))

        code, after, left = interrupt(project)
        print(f"SIGINT: exit {code} {after:.2f} s after the signal; children left: {len(left)}")
        checks.append(("SIGINT: exit 130 within 2 s, no child left", code == 130 and after < 2.0 and not left))
    for name, held in checks:
        print(f"{'held' if held else 'FAILED'}: {name}")
    return 0 if all(held for _, held in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
