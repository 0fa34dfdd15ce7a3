"""A boto3 client as an argument, on boto3 / botocore 1.44.18.

`project/archive.py` makes an S3 client for the customer's region and hands it to
`store.put`; `tests/test_archive.py` pins that call, and `tests/test_other_clients.py`
makes clients of other services in the same process, as a suite does. A client is
recorded by its service, region, endpoint URL and the options of its config that differ
from botocore's defaults. The checks: its log is the same run alone and after the other
test (by its state it held the caches the session shares between clients); probe prints
`VOLATILE: none`; the C and pure-Python recorders write the same bytes; a region or a
retry option edited is a changed op naming it; neither key reaches the log.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from scenario_copies import child_environment  # noqa: E402
from scenario_copies import copy_project as copy_into  # noqa: E402

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
CALLPIN = [sys.executable, "-m", "callpin"]
PIN = "tests/test_archive.py"
OTHERS = "tests/test_other_clients.py"
LOG = "baselines/tests/test_archive/test_an_invoice_is_archived_in_its_region.cpin"
KEYS = (b"AKIAIOSFODNN7EXAMPLE", b"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
AWS = ("AWS_PROFILE", "AWS_DEFAULT_REGION", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")


def run(project: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = child_environment(AWS, **extra)
    return subprocess.run([*PYTEST, *args], cwd=project, env=env, capture_output=True, text=True, check=False)


def main() -> int:
    checks: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="callpin-realworld-boto3-") as name:
        folder = Path(name)
        project = copy_into(HERE / "project", folder, "project")
        written = run(project, PIN, "--callpin-mode=new")
        checks.append(("the pin passes alone and writes its baseline", written.returncode == 0))
        shown = subprocess.run([*CALLPIN, "show", LOG], cwd=project, capture_output=True, text=True, check=False)
        print(f"  {shown.stdout.splitlines()[1][:240]}")
        print(f"  log: {(project / LOG).stat().st_size} bytes")
        # pytest runs the files in the order given: the other clients first.
        after = run(project, OTHERS, PIN)
        checks.append(("the pin passes after a test made clients of other services", after.returncode == 0))

        pure = copy_into(HERE / "project", folder, "pure")
        run(pure, PIN, "--callpin-mode=new", CALLPIN_PURE_PYTHON="1")
        same = (project / LOG).read_bytes() == (pure / LOG).read_bytes()
        checks.append(("the C and pure-Python recorders write the same bytes", same))

        probed = subprocess.run(
            [*CALLPIN, "probe", "--jobs", "2", "--", *PYTEST, PIN],
            cwd=project,
            env=child_environment(AWS),
            capture_output=True,
            text=True,
            check=False,
        )
        verdict = probed.stderr.strip().splitlines()[-1] if probed.stderr.strip() else probed.stdout[-200:]
        print(f"probe {PIN}: {verdict}")
        checks.append(("probe is volatile nowhere", verdict == "VOLATILE: none"))
        checks.append(("neither key reaches the log", not any(key in (project / LOG).read_bytes() for key in KEYS)))

        cases = (
            ("the customer's region", '"fr": "eu-west-3"', '"fr": "eu-west-1"',
             "args[0].region: 'eu-west-3' → 'eu-west-1'"),
            ("the retry option", '"max_attempts": 5', '"max_attempts": 3',
             "args[0].config.retries.total_max_attempts: 6 → 4"),
        )  # fmt: skip
        for index, (what, old, new, expected) in enumerate(cases):
            copy = copy_into(HERE / "project", folder, f"edit-{index}")
            run(copy, PIN, "--callpin-mode=new")
            source = copy / "archive.py"
            text = source.read_text(encoding="utf-8")
            assert text.count(old) == 1, old
            source.write_text(text.replace(old, new), encoding="utf-8")
            drift = run(copy, PIN)
            diffed = subprocess.run(
                [*CALLPIN, "diff", LOG, LOG + ".received"], cwd=copy, capture_output=True, text=True, check=False
            ).stdout
            found = [line.strip() for line in diffed.splitlines() if "→" in line and "args[0]" in line]
            print(f"{what}: pytest exit {drift.returncode}; {'; '.join(found)[:240] if found else diffed[-200:]}")
            named = any(expected in line for line in found)
            checks.append((f"{what} edited fails its pin, named by its path", drift.returncode == 1 and named))

    failed = [name for name, held in checks if not held]
    for name, held in checks:
        print(f"{'held' if held else 'FAILED'}: {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
