"""Values that mean something, on requests and httpx: real third-party objects as arguments.

The project pins `requests.adapters.HTTPAdapter.send` (a `PreparedRequest` against a local
server) and `httpx.MockTransport.handle_request` (an `httpx.Request`, its `URL` and
`Headers`). For each library: probe prints `VOLATILE: none`; the C and pure-Python
recorders write the same bytes; the median encoded event against the same capture
recorded by callpin before objects were recorded by their state (`BEFORE`, run from its
own source with the pure-Python codec) stays within 2x; a one-field change of the real
argument is one changed op naming that field by its path; and neither the bearer token,
the basic-auth password nor the credentials in httpx's base URL reach a log, in any form.
A whole `requests.Response` marked is volatile nowhere: callpin's form of it leaves out
its pool's port and `elapsed`, which its state held. A `PreparedRequest` whose body puts it over the
state budget is written by identity and the digest of its state (an edited count fails
its pin), and the note of its written baseline says so,
the same under both recorders, and `callpin show` of its log marks it cut by the budget.
"""

from __future__ import annotations

import base64
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from event_sizes import BEFORE, callpin_before, frame_sizes  # noqa: E402
from scenario_copies import child_environment  # noqa: E402
from scenario_copies import copy_project as copy_into  # noqa: E402

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
CALLPIN = [sys.executable, "-m", "callpin"]
AMBIENT = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")

# One per library: its test file, its baseline, the one-field edit made to client.py, the
# path the diff must name, and where `callpin show` must print the credentials' placeholders.
LIBRARIES = {
    "requests": (
        "tests/test_requests.py",
        "baselines/tests/test_requests/test_fetch_stock_pins_the_adapter_call.cpin",
        ('f"{base_url}/stock/{sku}"', 'f"{base_url}/inventory/{sku}"'),
        "args[1].url",
        ("'Authorization': <secret:1>",),
    ),
    "httpx": (
        "tests/test_httpx.py",
        "baselines/tests/test_httpx/test_quote_pins_the_transport_call.cpin",
        ('{"X-Channel": "web"}', '{"X-Channel": "app"}'),
        "args[1].headers['x-channel']",
        ("url=URL('https://<secret:1>@prices.example/quote')", "'authorization': <secret:2>"),
    ),
}
# A PreparedRequest whose body puts it over the state budget, and what its pin's note says.
UPLOAD_TESTS = "tests/test_upload.py"
UPLOAD_BASELINE = "baselines/tests/test_upload/test_upload_counts_pins_the_adapter_call.cpin"
UPLOAD_NOTE = (
    "objects over the 4096-byte state budget: requests.models.PreparedRequest by identity and a digest of"
    " its state alone (a change shows, not where) (1x)"
)
# How `callpin show` writes the request the budget wrote by identity (format 1.3, ext 23).
UPLOAD_CUT = "<PreparedRequest#1, over the state budget, digest "
SECRETS = (b"tok-3f9c2a71d0e84b56", b"hunter2", base64.b64encode(b"shop:hunter2"), b"letmein")


def environment(**extra: str) -> dict[str, str]:
    return child_environment(AMBIENT, **extra)


def copy_project(folder: Path, name: str) -> Path:
    return copy_into(HERE / "project", folder, name)


def record(project: Path, env: dict[str, str], mode: str = "new") -> int:
    done = subprocess.run(
        [*PYTEST, "tests", f"--callpin-mode={mode}"], cwd=project, env=env, capture_output=True, check=False
    )
    return done.returncode


def probe(project: Path, tests: str, *options: str) -> tuple[str, str]:
    """The VOLATILE line and what probe printed on stdout."""
    done = subprocess.run(
        [*CALLPIN, "probe", "--jobs", "2", *options, "--", *PYTEST, tests],
        cwd=project,
        env=environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stderr.strip().splitlines()[-1], done.stdout


def main() -> int:
    checks: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="callpin-realworld-values-") as name:
        folder = Path(name)
        project = copy_project(folder, "project")
        checks.append(("the pinned tests pass and write their baselines", record(project, environment()) == 0))

        pure = copy_project(folder, "pure")
        checks.append(("the pure-Python recorder passes too", record(pure, environment(CALLPIN_PURE_PYTHON="1")) == 0))

        before = copy_project(folder, "before")
        source = callpin_before(folder)
        made = record(before, environment(CALLPIN_PURE_PYTHON="1", PYTHONPATH=str(source)))
        checks.append((f"callpin at {BEFORE[:7]} records the same tests", made == 0))

        changed = copy_project(folder, "changed")
        record(changed, environment())
        client = changed / "client.py"
        text = client.read_text(encoding="utf-8")
        for _, _, (old, new), _, _ in LIBRARIES.values():
            text = text.replace(old, new)
        client.write_text(text, encoding="utf-8")
        drifted = record(changed, environment(), mode="check")
        checks.append(("the edited client drifts", drifted == 1))

        for library, (tests, baseline, (old, new), field, placeholders) in LIBRARIES.items():
            print(f"-- {library}")
            verdict, _ = probe(project, tests)
            print(f"probe {tests}: {verdict}")
            checks.append((f"{library}: probe is volatile nowhere", verdict == "VOLATILE: none"))

            same = (project / baseline).read_bytes() == (pure / baseline).read_bytes()
            checks.append((f"{library}: the C and pure-Python recorders write the same bytes", same))

            now, then = frame_sizes(project / baseline), frame_sizes(before / baseline)
            median_now, median_then = statistics.median(now), statistics.median(then)
            ratio = median_now / median_then
            print(f"event sizes, bytes: {then} at {BEFORE[:7]}, {now} now")
            print(f"median event: {median_then:g} -> {median_now:g} bytes, {ratio:.2f}x")
            checks.append((f"{library}: the median event stays within 2x ({ratio:.2f}x)", ratio <= 2.0))

            shown = subprocess.run(
                [*CALLPIN, "diff", str(changed / baseline), f"{changed / baseline}.received"],
                capture_output=True,
                text=True,
                check=False,
            )
            print(f"{old} -> {new}:")
            print(shown.stdout, end="")
            report = json.loads(
                subprocess.run(
                    [*CALLPIN, "diff", "--format", "json", str(changed / baseline), f"{changed / baseline}.received"],
                    capture_output=True,
                    text=True,
                    check=False,
                ).stdout
            )
            paths = [entry["path"] for op in report["ops"] for entry in op.get("fields", [])]
            one = [op["op"] for op in report["ops"]] == ["changed"] and paths == [field]
            checks.append((f"{library}: a one-field edit is one changed op at {field}", one))

            shown = subprocess.run(
                [*CALLPIN, "show", str(project / baseline)], capture_output=True, text=True, check=False
            )
            shows = all(placeholder in shown.stdout for placeholder in placeholders)
            checks.append((f"{library}: the log shows {' and '.join(placeholders)}", shows))

        print("-- a whole requests.Response marked, by callpin's form of it and through a registered form")
        verdict, _ = probe(project, "tests/test_response.py")
        print(f"probe tests/test_response.py: {verdict}")
        marked = project / "baselines/tests/test_response/test_the_whole_response_is_pinned.cpin"
        shown = subprocess.run([*CALLPIN, "show", str(marked)], capture_output=True, text=True, check=False).stdout
        mark = next((line.strip() for line in shown.splitlines() if "mark response" in line), shown[-300:])
        print(f"callpin show: {mark}")
        checks.append(("the whole Response marked is volatile nowhere", verdict == "VOLATILE: none"))
        checks.append(
            (
                "the Response is its status, reason, URL, headers, body, encoding and history",
                mark.startswith("mark response = Response#1(status_code=200, reason='OK', url='http://<local:1>/stock/")
                and "content=b'" in mark
                and "elapsed" not in mark,
            )
        )

        print("-- a PreparedRequest over the state budget (a 9 KB body)")
        notes = {}
        for recorder, extra in (("C", {}), ("pure-Python", {"CALLPIN_PURE_PYTHON": "1"})):
            budget = copy_project(folder, f"budget-{len(notes)}")
            done = subprocess.run(
                [*PYTEST, UPLOAD_TESTS, "--callpin-mode=new"],
                cwd=budget,
                env=environment(**extra),
                capture_output=True,
                text=True,
                check=False,
            )
            notes[recorder] = [line for line in done.stdout.splitlines() if line.startswith("wrote ")]
            print(f"{recorder} recorder: {' '.join(notes[recorder]) or done.stdout[-300:]}")
            notes[recorder].append((budget / UPLOAD_BASELINE).read_bytes().hex())
        checks.append(
            (
                "the note of the upload's baseline names the request not pinned in full, under both recorders",
                notes["C"] == notes["pure-Python"] and any(UPLOAD_NOTE in line for line in notes["C"]),
            )
        )
        shown = subprocess.run(
            [*CALLPIN, "show", str(budget / UPLOAD_BASELINE)], capture_output=True, text=True, check=False
        ).stdout
        cut = next((line for line in shown.splitlines() if "HTTPAdapter.send(" in line), shown[-300:])
        print(f"callpin show: {cut[:160]}")
        checks.append(("callpin show of the upload's log marks the request cut by the budget", UPLOAD_CUT in cut))
        verdict, _ = probe(project, UPLOAD_TESTS)
        print(f"probe {UPLOAD_TESTS}: {verdict}")
        checks.append(("the upload's log is volatile nowhere", verdict == "VOLATILE: none"))
        # One count of the 500 changed: the request's state is past the budget, its digest is not.
        edited = budget / UPLOAD_TESTS
        edited.write_text(edited.read_text(encoding="utf-8").replace("number % 97", "number % 89"), encoding="utf-8")
        drift = subprocess.run(
            [*PYTEST, UPLOAD_TESTS], cwd=budget, env=environment(), capture_output=True, text=True, check=False
        )
        changed_digest = next((line for line in drift.stdout.splitlines() if "args[1]: <PreparedRequest#1" in line), "")
        print(f"an edited count: pytest exit {drift.returncode}; {changed_digest.strip()[:160]}")
        checks.append(
            (
                "a count edited in the request over the budget fails its pin (its digest changed)",
                drift.returncode == 1 and "over the state budget, digest" in changed_digest,
            )
        )

        written = [path for copy in (project, pure, changed) for path in copy.glob("baselines/**/*.cpin*")]
        leaked = [str(path.relative_to(folder)) for path in written if any(s in path.read_bytes() for s in SECRETS)]
        print(f"secrets looked for in {len(written)} logs; found in: {leaked or 'none'}")
        checks.append(
            ("no token, password, URL credential or basic-auth header reaches a log", len(written) == 19 and not leaked)
        )
    for name, held in checks:
        print(f"{'held' if held else 'FAILED'}: {name}")
    return 0 if all(held for _, held in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
