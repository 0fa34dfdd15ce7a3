"""Values that mean something, on cookiecutter: a capture of 63 events from a hand test.

`capture.py` records the seven cases of the seams-cookiecutter hand test. Checks: probe
over it prints `VOLATILE: none` (callpin at BEFORE finds it unstable: a temporary folder
of cookiecutter's own reaches `generate_context`); the C and pure-Python recorders write
the same bytes; the median encoded event stays within 2x of the same capture recorded by
callpin at BEFORE, run from its own source with the pure-Python codec.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from event_sizes import BEFORE, callpin_before, frame_sizes  # noqa: E402

CAPTURE = [sys.executable, str(HERE / "capture.py")]
CASES = ("hooked", "nested", "plain", "prompted", "refused", "replayed", "zipped")


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CALLPIN_PURE_PYTHON"}
    env.pop("CI", None)
    env.update(extra)
    return env


def probe(folder: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "callpin", "probe", "--jobs", "2", "--", *CAPTURE, "logs"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stderr.strip().splitlines()[-1]


def main() -> int:
    checks: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="callpin-realworld-values-") as name:
        folder = Path(name)
        now, pure, then = folder / "now", folder / "pure", folder / "then"
        source = callpin_before(folder)
        made = [
            subprocess.run([*CAPTURE, str(now)], env=environment(), check=False).returncode,
            subprocess.run([*CAPTURE, str(pure)], env=environment(CALLPIN_PURE_PYTHON="1"), check=False).returncode,
            subprocess.run(
                [*CAPTURE, str(then)], env=environment(CALLPIN_PURE_PYTHON="1", PYTHONPATH=str(source)), check=False
            ).returncode,
        ]
        written = sorted(path.stem for path in now.glob("*.cpin"))
        checks.append(
            (f"the capture runs now, pure and at {BEFORE[:7]}", made == [0, 0, 0] and tuple(written) == CASES)
        )

        same = all((now / f"{case}.cpin").read_bytes() == (pure / f"{case}.cpin").read_bytes() for case in CASES)
        checks.append(("the C and pure-Python recorders write the same bytes", same))

        verdict = probe(folder, environment())
        before = probe(folder, environment(CALLPIN_PURE_PYTHON="1", PYTHONPATH=str(source)))
        print(f"probe: {verdict} (at {BEFORE[:7]}: {before})")
        checks.append(("probe is volatile nowhere", verdict == "VOLATILE: none"))

        sizes_now = [size for case in CASES for size in frame_sizes(now / f"{case}.cpin")]
        sizes_then = [size for case in CASES for size in frame_sizes(then / f"{case}.cpin")]
        median_now, median_then = statistics.median(sizes_now), statistics.median(sizes_then)
        ratio = median_now / median_then
        print(f"{len(sizes_now)} events; median event: {median_then:g} -> {median_now:g} bytes, {ratio:.2f}x")
        print(f"total: {sum(sizes_then)} -> {sum(sizes_now)} bytes; largest: {max(sizes_then)} -> {max(sizes_now)}")
        checks.append((f"the median event stays within 2x ({ratio:.2f}x)", ratio <= 2.0))
    for label, held in checks:
        print(f"{'held' if held else 'FAILED'}: {label}")
    return 0 if all(held for _, held in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
