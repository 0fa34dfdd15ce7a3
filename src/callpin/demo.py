"""callpin demo: the whole story on the bundled renewals example, in a scratch copy.

A driver: every step runs the real command a user would type (pytest with the
plugin, `callpin diff`, `callpin bite`, `callpin probe`) in child processes and shows
its real output. Nothing here re-implements what those commands do.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

from .errors import DemoError, UsageError
from .received import PATTERN as RECEIVED_PATTERN

EXAMPLE = ("examples", "renewals")
# Where an installed callpin keeps the example (setup.py copies it there): beside this module.
PACKAGED_EXAMPLE = ("_example", "renewals")
# The demo project's commits are the demo's own, whatever the user's git configuration.
GIT_IDENTITY = ("-c", "user.name=callpin demo", "-c", "user.email=demo@callpin.invalid")
BASELINE = "baselines/examples/renewals/test_renewals/test_renew_charges_then_sends_the_receipt.cpin"

SAFE_REFACTOR = (
    # Pass the billing module as a default argument: the same calls, reached differently.
    ("from .billing import charge_card, send_receipt\n", "from . import billing as billing_module\n"),
    (
        "def renew(case: dict[str, Any]) -> dict[str, Any]:\n",
        "def renew(case: dict[str, Any], billing: Any = billing_module) -> dict[str, Any]:\n",
    ),
    ("    charge = charge_card(", "    charge = billing.charge_card("),
    ("    send_receipt(case", "    billing.send_receipt(case"),
)
UNSAFE_REFACTOR = (
    # Send the receipt before charging: the same return value, a different contract.
    (
        '    charge = charge_card(case["card"], amount, currency, idempotency_key=key)\n'
        '    send_receipt(case["email"], amount, currency, reference=key, renewed_at=renewed_at)\n',
        '    send_receipt(case["email"], amount, currency, reference=key, renewed_at=renewed_at)\n'
        '    charge = charge_card(case["card"], amount, currency, idempotency_key=key)\n',
    ),
)


def example_source() -> Path:
    """The bundled example folder: the installed package's copy, or a source checkout's."""
    # A wheel carries examples/renewals as package data (setup.py copies it there); an
    # editable install or a bare checkout has only the repository's own folder.
    packaged = Path(__file__).resolve().parent.joinpath(*PACKAGED_EXAMPLE)
    candidates = [packaged, *(parent.joinpath(*EXAMPLE) for parent in Path(__file__).resolve().parents)]
    for candidate in candidates:
        if (candidate / "renewals.py").is_file():
            return candidate
    raise UsageError(f"callpin demo cannot find its bundled example (looked in {packaged}); reinstall callpin")


@dataclass
class Step:
    """One command run in the demo project, with the output the user sees."""

    shown: str
    returncode: int
    output: str


class Demo:
    """Runs the steps in `workdir` and writes what a user would see to `echo`."""

    def __init__(self, workdir: Path, echo: Callable[[str], None]) -> None:
        self.workdir = workdir
        self.echo = echo
        self.output_dir = workdir / "actual"

    # -- running ---------------------------------------------------------------------------

    def _env(self, **extra: str) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("PYTEST_", "CALLPIN_")) and key not in ("CI", "PYTHONHASHSEED")
        }
        # The scratch project is the demo's own: writing its baselines is the point, so the
        # CI refusal of writing modes does not apply to it.
        env["PYTHONPATH"] = os.pathsep.join([str(self.workdir), *filter(None, [os.environ.get("PYTHONPATH")])])
        # `python` in the commands a user would type means the interpreter running callpin.
        env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
        env["NO_COLOR"] = "1"
        env.update(extra)
        return env

    def run(self, shown: str, argv: list[str], *, expect: tuple[int, ...] = (0,), **env: str) -> Step:
        self.echo(f"$ {shown}")
        done = subprocess.run(
            argv,
            cwd=self.workdir,
            env=self._env(**env),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        output = (done.stdout + done.stderr).rstrip("\n")
        if output:
            self.echo(output)
        self.echo(f"(exit {done.returncode})")
        if done.returncode not in expect:
            raise DemoError(f"`{shown}` exited {done.returncode}, expected {' or '.join(map(str, expect))}")
        return Step(shown, done.returncode, output)

    def pytest(self, args: str, *, expect: tuple[int, ...] = (0,), **env: str) -> Step:
        argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *shlex.split(args)]
        shown = " ".join(
            [*(f"{key}={os.path.relpath(value, self.workdir)}" for key, value in env.items()), "pytest", args]
        ).strip()
        return self.run(shown, argv, expect=expect, **env)

    def callpin(self, args: str, *, expect: tuple[int, ...] = (0,)) -> Step:
        return self.run(f"callpin {args}", [sys.executable, "-m", "callpin", *shlex.split(args)], expect=expect)

    def heading(self, number: int, title: str) -> None:
        self.echo("")
        self.echo(f"== {number}. {title}")

    # -- the story ---------------------------------------------------------------------------

    def prepare(self) -> None:
        source = example_source()
        target = self.workdir.joinpath(*EXAMPLE)
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (self.workdir / EXAMPLE[0] / "__init__.py").write_text("")
        (self.workdir / "pytest.ini").write_text("[pytest]\ntestpaths = examples\n")
        (self.workdir / ".gitignore").write_text(f"__pycache__/\nactual/\n*.html\n{RECEIVED_PATTERN}\n")
        # The scratch project is a git repository of its own, so bite isolates its mutants
        # in scratch worktrees of it (and never mistakes an enclosing checkout for it).
        if shutil.which("git"):
            for args in (
                ["init", "-q", "-b", "main"],
                ["add", "-A"],
                [*GIT_IDENTITY, "commit", "-q", "-m", "the legacy renewals, before the refactor"],
            ):
                subprocess.run(
                    ["git", *args],
                    cwd=self.workdir,
                    check=True,
                    capture_output=True,
                    env=self._env(GIT_CEILING_DIRECTORIES=str(self.workdir.parent)),
                )

    def edit(self, replacements: tuple[tuple[str, str], ...]) -> None:
        path = self.workdir.joinpath(*EXAMPLE, "renewals.py")
        text = path.read_text()
        for old, new in replacements:
            if old not in text:
                raise DemoError(f"the bundled renewals.py has changed; cannot find {old.strip()!r}")
            text = text.replace(old, new, 1)
        path.write_text(text)

    def story(self) -> None:
        self.prepare()
        original = self.workdir.joinpath(*EXAMPLE, "renewals.py").read_text()

        self.heading(1, "Pin the legacy code: record, review and accept the baselines")
        first = self.pytest("-q --tb=no", expect=(1,))
        if "received" not in first.output:
            raise DemoError("a pin without a baseline did not leave its received log")
        self.callpin("review --list", expect=(1,))
        self.callpin('review --accept-all --reason "characterized before the refactor"')
        self.callpin(f"show {BASELINE}")
        if (self.workdir / ".git").is_dir():
            self.run("git add baselines", ["git", "add", "baselines"])
            self.run(
                'git commit -q -m "pin the billing calls of renew()"',
                ["git", *GIT_IDENTITY, "commit", "-q", "-m", "pin the billing calls of renew()"],
            )

        self.heading(2, "A safe refactor (billing module passed as a default argument): same calls")
        self.edit(SAFE_REFACTOR)
        self.pytest("-q", CALLPIN_OUTPUT_DIR=str(self.output_dir / "safe"))
        self.callpin(f"diff {BASELINE} actual/safe/{BASELINE}")

        self.heading(3, "An unsafe refactor (receipt sent before the charge): the drift as moved calls, rejected")
        self.workdir.joinpath(*EXAMPLE, "renewals.py").write_text(original)
        self.edit(UNSAFE_REFACTOR)
        failed = self.pytest("-q", expect=(1,), CALLPIN_OUTPUT_DIR=str(self.output_dir / "unsafe"))
        if "moved" not in failed.output:
            raise DemoError("the unsafe refactor's failure does not show moved calls")
        self.callpin(f"diff {BASELINE} actual/unsafe/{BASELINE}", expect=(1,))
        self.callpin("review --list", expect=(1,))
        self.callpin("review --reject-all")
        self.workdir.joinpath(*EXAMPLE, "renewals.py").write_text(original)

        self.heading(4, "Does the harness bite? Mutate every billing call and run the pinned tests")
        self.callpin("bite examples/renewals/renewals.py --jobs 2 --test 'python -m pytest -x -q -p no:cacheprovider'")

        self.heading(
            5,
            "Is the capture deterministic? Re-run it under other timezones, locales, hash seeds, folders, "
            "environments, listing orders and clocks",
        )
        self.callpin("probe --jobs 2 -- python -m pytest -q -p no:cacheprovider examples")

        self.heading(6, "A report to look at: the unsafe refactor's drift as HTML")
        self.callpin(f"diff {BASELINE} actual/unsafe/{BASELINE} --format html -o drift.html", expect=(1,))
        report = self.workdir / "drift.html"
        if not report.is_file():
            raise DemoError("the HTML report was not written")
        self.echo(f"wrote {report} ({report.stat().st_size:,} bytes); open it in a browser")


@contextmanager
def _workdir(given: str | None, keep: bool) -> Iterator[Path]:
    if given is not None:
        path = Path(given).resolve()
        if path.exists() and any(path.iterdir()):
            raise UsageError(f"--workdir {path} is not empty")
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    scratch = Path(tempfile.mkdtemp(prefix="callpin-demo-"))
    try:
        yield scratch
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)


def run_demo(workdir: str | None = None, *, keep: bool = False, echo: Callable[[str], None] = print) -> Path:
    """Run the six steps; the folder used (removed afterwards unless kept or given)."""
    # The example's pins are pytest tests; pytest is a test dependency of callpin, not a
    # runtime one, so `pip install callpin` alone does not bring it.
    if find_spec("pytest") is None:
        raise UsageError(
            "callpin demo runs the example's tests with pytest, which is not installed: pip install pytest"
        )
    example_source()
    with _workdir(workdir, keep) as path:
        echo(f"callpin demo in {path}")
        Demo(path, echo).story()
        echo("")
        echo("The refactor that kept the calls passed; the one that reordered them failed with both")
        echo("calls moved; every billing-call mutant was caught; nothing ambient leaked in.")
        if workdir is None and not keep:
            echo("(this scratch folder is removed now; keep it, and the report, with --keep or --workdir DIR)")
        return path
