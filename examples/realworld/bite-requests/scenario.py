"""bite on requests: its HTTP adapter module mutated under a pinned characterization test.

A throw-away git project holds a copy of the installed `requests` package and one test
that pins what `requests.adapters.HTTPAdapter` and `Session.send` / `Session.close` do for
a GET and a chunked POST against a local server. bite mutates `requests/adapters.py`.

Checks and figures: the mutants with name matching (`--loose`) and with the default
binding matching, how many were calls to unrelated objects (`low_conn.send(...)`, a
socket connection, matched by the name `send`; the target is none by default), what
caught each mutant (drift / assert / error / exit, and the weak ones), the wall time with
`--jobs 2` and with two shards run side by side and merged (the merge must equal the one
run), the status line on a terminal from the start and nowhere else, and Ctrl-C: exit 130
within 2 s with no scratch worktree, branch, folder or child left.
"""

from __future__ import annotations

import ast
import json
import os
import pty
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

HERE = Path(__file__).resolve().parent
PYTEST = f"{sys.executable} -m pytest -x -q -p no:cacheprovider tests"
BITE = [sys.executable, "-m", "callpin", "bite", "--test", PYTEST]
SOURCE = "requests/adapters.py"
IDENTITY = {
    "GIT_AUTHOR_NAME": "callpin",
    "GIT_AUTHOR_EMAIL": "callpin@example.invalid",
    "GIT_COMMITTER_NAME": "callpin",
    "GIT_COMMITTER_EMAIL": "callpin@example.invalid",
}


def environment() -> dict[str, str]:
    # No proxy or CA-bundle variable reaches the pinned calls (the tests also clear them).
    return {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")} | IDENTITY


def make_project(root: Path) -> Path:
    shutil.copytree(HERE / "project", root)
    shutil.copytree(Path(requests.__file__).parent, root / "requests", ignore=shutil.ignore_patterns("__pycache__"))
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "requests, pinned"]):
        if args[0] == "add":
            written = subprocess.run(
                [*PYTEST.split(), "--callpin-mode=new"], cwd=root, env=environment(), capture_output=True, text=True
            )
            if written.returncode != 0:
                raise SystemExit(f"the pinned test does not pass:\n{written.stdout}{written.stderr}")
        subprocess.run(["git", *args], cwd=root, env=environment(), check=True)
    return root


def run_bite(project: Path, *options: str) -> tuple[dict[str, Any], float, str]:
    started = time.monotonic()
    done = subprocess.run(
        [*BITE, *options, "--format", "json", SOURCE], cwd=project, env=environment(), capture_output=True, text=True
    )
    took = time.monotonic() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"bite {' '.join(options)} exited {done.returncode}:\n{done.stderr}")
    return json.loads(done.stdout), took, done.stderr


def unrelated(project: Path, mutants: list[dict[str, Any]]) -> list[str]:
    """The mutants made for a call on an object that is not a pinned one.

    In adapters.py the pinned labels are methods of HTTPAdapter and Session; the code there
    reaches an HTTPAdapter only as `self` and never holds a Session. A mutated statement
    with no `self.<pinned method>(...)` call in it was matched by a method name on another
    object (`low_conn.send`, `low_conn.close`).
    """
    tree = ast.parse((project / SOURCE).read_text(encoding="utf-8"))
    pinned = {str(call).rsplit(".", 1)[-1] for m in mutants for call in m["calls"]}
    statements = [node for node in ast.walk(tree) if isinstance(node, ast.stmt)]
    found = []
    for mutant in mutants:
        first, last = int(mutant["line"]), int(mutant["end_line"])
        inside = [s for s in statements if s.lineno >= first and (s.end_lineno or s.lineno) <= last]
        mutated = [
            s
            for s in inside
            if not any(
                o is not s and o.lineno <= s.lineno and (o.end_lineno or 0) >= (s.end_lineno or 0) for o in inside
            )
        ]
        for statement in mutated:
            calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call)]
            bound = any(
                isinstance(c.func, ast.Attribute)
                and isinstance(c.func.value, ast.Name)
                and c.func.value.id == "self"
                and c.func.attr in pinned
                for c in calls
            )
            if not bound:
                found.append(str(mutant["id"]))
                break
    return found


def outcomes(report: dict[str, Any]) -> str:
    summary = report["summary"]
    kinds = ", ".join(f"{kind} {n}" for kind, n in report["caught_by"].items())
    counts = ", ".join(f"{summary[outcome]} {outcome}" for outcome in ("timeout", "survived", "error"))
    return f"{summary['caught']} caught ({kinds}), {counts}; {len(report['weak'])} weak"


def shards_side_by_side(project: Path, folder: Path) -> tuple[dict[str, Any], float, list[float]]:
    started = time.monotonic()
    processes = []
    for index in (1, 2):
        out = open(folder / f"shard-{index}.json", "w")
        processes.append(
            (
                subprocess.Popen(
                    [*BITE, "--jobs", "1", "--shard", f"{index}/2", "--format", "json", SOURCE],
                    cwd=project,
                    env=environment(),
                    stdout=out,
                    stderr=subprocess.DEVNULL,
                ),
                out,
                time.monotonic(),
            )
        )
    each = []
    for process, out, began in processes:
        process.wait()
        each.append(time.monotonic() - began)
        out.close()
    merged = subprocess.run(
        [
            sys.executable,
            "-m",
            "callpin",
            "bite",
            "--merge",
            "--format",
            "json",
            str(folder / "shard-1.json"),
            str(folder / "shard-2.json"),
        ],
        cwd=project,
        capture_output=True,
        text=True,
    )
    return json.loads(merged.stdout), time.monotonic() - started, each


def on_a_terminal(project: Path) -> tuple[float | None, float | None, str]:
    """Seconds to the first status line and to the first finished mutant, on a pseudo-terminal."""
    master, slave = pty.openpty()
    started = time.monotonic()
    process = subprocess.Popen(
        [*BITE, "--jobs", "2", "--operators", "delete", SOURCE],
        cwd=project,
        env=environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=slave,
    )
    os.close(slave)
    seen = b""
    first_line = first_done = None
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
        now = time.monotonic() - started
        if first_line is None and b"bite: 0/" in seen:
            first_line = now
        if first_done is None and b"bite: 1/" in seen:
            first_done = now
    process.wait()
    os.close(master)
    last = seen.decode(errors="replace").strip().rsplit("\r", 1)[-1].strip()
    return first_line, first_done, last


def interrupt(project: Path) -> tuple[int, float, list[str]]:
    process = subprocess.Popen(
        [*BITE, "--jobs", "2", SOURCE],
        cwd=project,
        env=environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    scratch = Path(tempfile.gettempdir())
    deadline = time.monotonic() + 60
    # Mutants are under way once a mutant's worktree is there beside the unmutated one's.
    while time.monotonic() < deadline:
        copies = list(scratch.glob(f"callpin-bite-{process.pid}-*/copies/*"))
        if any(copy.name != "baseline" for copy in copies):
            break
        time.sleep(0.05)
    time.sleep(0.5)
    folders = list(scratch.glob(f"callpin-bite-{process.pid}-*"))
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    process.wait(timeout=60)
    after = time.monotonic() - sent
    left = [str(path) for path in scratch.glob(f"callpin-bite-{process.pid}-*")]
    worktrees = subprocess.run(["git", "worktree", "list"], cwd=project, capture_output=True, text=True).stdout
    left += [line for line in worktrees.splitlines()[1:]]
    left += subprocess.run(
        ["git", "branch", "--list", "callpin-bite/*"], cwd=project, capture_output=True, text=True
    ).stdout.split()
    for status in Path("/proc").glob("[0-9]*"):
        try:
            cwd = os.readlink(status / "cwd")
        except OSError:
            continue
        if any(cwd.startswith(str(folder)) for folder in folders):
            left.append(f"process {status.name} in {cwd}")
    return process.returncode, after, left


def main() -> int:
    checks: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="callpin-realworld-bite-") as folder:
        project = make_project(Path(folder) / "project")
        print(f"requests {requests.__version__}: bite on {SOURCE}")

        loose, loose_time, _ = run_bite(project, "--jobs", "2", "--loose")
        loose_unrelated = unrelated(project, loose["mutants"])
        print(
            f"--loose (name matching): {len(loose['mutants'])} mutants, {len(loose_unrelated)} on unrelated objects; "
            f"{outcomes(loose)}; {loose_time:.1f} s"
        )
        survivors = [m for m in loose["mutants"] if m["outcome"] == "survived"]
        noise = [m for m in survivors if m["id"] in loose_unrelated]
        print(f"  survivors: {len(survivors)}, on unrelated objects: {len(noise)}")

        whole, whole_time, whole_err = run_bite(project, "--jobs", "2")
        found = unrelated(project, whole["mutants"])
        print(
            f"default (bindings): {len(whole['mutants'])} mutants, {len(found)} on unrelated objects; {outcomes(whole)}"
        )
        print(f"  wall time, one run with --jobs 2: {whole_time:.1f} s")
        for mutant in whole["mutants"]:
            print(
                f"  {mutant['id']:<20} {mutant['operator']:<9} {mutant['file']}:{mutant['line']:<5} "
                f"{mutant['outcome']} {mutant['caught_by'] or ''}"
            )
        checks.append(("name matching mutates calls on unrelated objects (the problem seen)", len(loose_unrelated) > 0))
        checks.append(
            ("default matching mutates no call on an unrelated object", not found and len(whole["mutants"]) > 0)
        )
        checks.append(
            (
                "every caught mutant says what caught it",
                all(m["caught_by"] for m in whole["mutants"] if m["outcome"] == "caught"),
            )
        )
        checks.append(("a pin drift catches some mutants", whole["caught_by"]["drift"] > 0))
        checks.append(("no status line when stderr is not a terminal", whole_err == ""))

        merged, shard_time, each = shards_side_by_side(project, Path(folder))
        print(
            f"  wall time, two shards side by side (--jobs 1 each) and merged: {shard_time:.1f} s "
            f"(shards {each[0]:.1f} s and {each[1]:.1f} s)"
        )
        same = [(m["id"], m["outcome"], m["caught_by"]) for m in merged["mutants"]] == [
            (m["id"], m["outcome"], m["caught_by"]) for m in whole["mutants"]
        ]
        checks.append(("two shards merge into the report of one run", same and merged["summary"] == whole["summary"]))

        first_line, first_done, last = on_a_terminal(project)
        print(
            f"terminal: first status line after {first_line:.2f} s, first mutant done after {first_done:.2f} s; "
            f"last line: {last!r}"
        )
        checks.append(
            (
                "on a terminal the status line is there before the first mutant ends",
                first_line is not None and first_done is not None and first_line < first_done,
            )
        )
        checks.append(("the status line has elapsed time and an ETA", "elapsed" in last and "ETA" in last))

        code, after, left = interrupt(project)
        print(f"Ctrl-C: exit {code} {after:.2f} s after SIGINT; left behind: {left or 'nothing'}")
        checks.append(("Ctrl-C: exit 130 within 2 s, nothing left behind", code == 130 and after < 2.0 and not left))
    for name, held in checks:
        print(f"{'held' if held else 'FAILED'}: {name}")
    return 0 if all(held for _, held in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
