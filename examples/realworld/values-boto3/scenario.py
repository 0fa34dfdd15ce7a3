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

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from scenario_copies import callpin_in, copy_project, edit_checks, probe_verdict, pytest_in, verdict  # noqa: E402

PIN = "tests/test_archive.py"
OTHERS = "tests/test_other_clients.py"
LOG = "baselines/tests/test_archive/test_an_invoice_is_archived_in_its_region.cpin"
KEYS = (b"AKIAIOSFODNN7EXAMPLE", b"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
AWS = ("AWS_PROFILE", "AWS_DEFAULT_REGION", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
# (what, old text of archive.py, new text, the log, what its diff must say)
CASES = (
    (
        "the customer's region",
        '"fr": "eu-west-3"',
        '"fr": "eu-west-1"',
        LOG,
        "args[0].region: 'eu-west-3' → 'eu-west-1'",
    ),
    (
        "the retry option",
        '"max_attempts": 5',
        '"max_attempts": 3',
        LOG,
        "args[0].config.retries.total_max_attempts: 6 → 4",
    ),
)


def main() -> int:
    checks: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="callpin-realworld-boto3-") as name:
        folder = Path(name)
        project = copy_project(HERE / "project", folder, "project")
        written = pytest_in(project, PIN, "--callpin-mode=new", leave_out=AWS)
        checks.append(("the pin passes alone and writes its baseline", written.returncode == 0))
        print(f"  {callpin_in(project, 'show', LOG).splitlines()[1][:240]}")
        print(f"  log: {(project / LOG).stat().st_size} bytes")
        # pytest runs the files in the order given: the other clients first.
        after = pytest_in(project, OTHERS, PIN, leave_out=AWS)
        checks.append(("the pin passes after a test made clients of other services", after.returncode == 0))

        pure = copy_project(HERE / "project", folder, "pure")
        pytest_in(pure, PIN, "--callpin-mode=new", leave_out=AWS, CALLPIN_PURE_PYTHON="1")
        same = (project / LOG).read_bytes() == (pure / LOG).read_bytes()
        checks.append(("the C and pure-Python recorders write the same bytes", same))

        found_verdict = probe_verdict(project, PIN, leave_out=AWS)
        print(f"probe {PIN}: {found_verdict}")
        checks.append(("probe is volatile nowhere", found_verdict == "VOLATILE: none"))
        checks.append(("neither key reaches the log", not any(key in (project / LOG).read_bytes() for key in KEYS)))

        checks += edit_checks(HERE / "project", folder, "archive.py", CASES, PIN, leave_out=AWS)
    return verdict(checks)


if __name__ == "__main__":
    sys.exit(main())
