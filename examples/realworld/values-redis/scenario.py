"""A redis client as an argument, on redis-py 8.2.0.

`project/sessions.py` makes a redis client for a region (host, port, db, a password, a
timeout) and hands it to `store.save` with each session; `tests/test_sessions.py` pins
that call, the store stubbed (no server is needed: a client connects on its first
command). A client is recorded by its connection class and the connection options that
differ from redis' defaults. The checks: the pin passes; the C and pure-Python recorders
write the same bytes; probe prints `VOLATILE: none` (by its state the client was over
the budget, and the digest held its pool's process id and random token); the password
never reaches the log; a db or a host edited fails the pin, named by its path. Printed:
the log's call event against the same test recorded by callpin at `BEFORE`, when a
client was its repr.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from event_sizes import BEFORE, callpin_before, frame_sizes  # noqa: E402
from scenario_copies import callpin_in, copy_project, edit_checks, probe_verdict, pytest_in, verdict  # noqa: E402

PIN = "tests/test_sessions.py"
LOG = "baselines/tests/test_sessions/test_a_session_is_saved_with_the_regions_client.cpin"
PASSWORD = b"s3ss10n-cache-pw"
REDIS = ("REDIS_URL", "REDIS_HOST")
# (what, old text of sessions.py, new text, the log, what its diff must say)
CASES = (
    ("the db", "db=2", "db=3", LOG, "args[0].db: 2 → 3"),
    (
        "the region's host",
        '"eu": "cache-eu.internal"',
        '"eu": "cache-eu2.internal"',
        LOG,
        "args[0].host: 'cache-eu.internal' → 'cache-eu2.internal'",
    ),
)


def main() -> int:
    checks: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="callpin-realworld-redis-") as name:
        folder = Path(name)
        project = copy_project(HERE / "project", folder, "project")
        written = pytest_in(project, PIN, "--callpin-mode=new", leave_out=REDIS)
        checks.append(("the pin passes and writes its baseline", written.returncode == 0))
        shown = callpin_in(project, "show", LOG).splitlines()
        call = next((line for line in shown if line.startswith("store.save(")), "")
        print(f"  {call}")
        checks.append(("the client is its connection options", call.startswith("store.save(Redis#1(connection_class=")))

        pure = copy_project(HERE / "project", folder, "pure")
        pytest_in(pure, PIN, "--callpin-mode=new", leave_out=REDIS, CALLPIN_PURE_PYTHON="1")
        checks.append(
            (
                "the C and pure-Python recorders write the same bytes",
                (project / LOG).read_bytes() == (pure / LOG).read_bytes(),
            )
        )

        found_verdict = probe_verdict(project, PIN, leave_out=REDIS)
        print(f"probe {PIN}: {found_verdict}")
        checks.append(("probe is volatile nowhere", found_verdict == "VOLATILE: none"))
        checks.append(("the password never reaches the log", PASSWORD not in (project / LOG).read_bytes()))

        before = copy_project(HERE / "project", folder, "before")
        source = callpin_before(folder)
        made = pytest_in(
            before, PIN, "--callpin-mode=new", leave_out=REDIS, CALLPIN_PURE_PYTHON="1", PYTHONPATH=str(source)
        )
        then = frame_sizes(before / LOG) if made.returncode == 0 else []
        print(f"event sizes, bytes: {then} at {BEFORE[:7]}, {frame_sizes(project / LOG)} now")

        checks += edit_checks(HERE / "project", folder, "sessions.py", CASES, PIN, leave_out=REDIS)
    return verdict(checks)


if __name__ == "__main__":
    sys.exit(main())
