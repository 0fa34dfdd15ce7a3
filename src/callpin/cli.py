"""The `callpin` command line: parse arguments, call the library, map errors to exit codes.

Every command is a function registered on `cli` that returns its exit code:
0 identical / fine, 1 different, 2 could not compare. Errors are raised, not
printed: `CallpinGroup.main` is the one place that turns a `CallpinError`, a
click usage error or an `OSError` into one line on stderr and exit code 2.
"""

from __future__ import annotations

import errno
import json
import os
import platform
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import click

from . import __version__
from ._impl import IMPLEMENTATION, Encoder
from .atomic import replace_file
from .diff import IGNORABLE, ORDERS, diff
from .errors import CallpinError, LogFormatError, UsageError
from .event import KIND_CODES
from .logfile import Log, load, log_bytes, read_piped, write_log
from .normalize import DEFAULT_RULES, Rule, RuleSet, rule
from .render_diff import render_json, render_stat, render_text
from .render_html import render_html, render_log_html
from .render_log import render_log, render_log_json
from .text import counted, printable

EXIT_SAME = 0
EXIT_DIFFERENT = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130

# `-` in place of a log's path: standard input where a log is read, standard output where
# one is written (a file named `-` is `./-`).
STDIO = "-"
STDIN_NAME = "<stdin>"


class CallpinGroup(click.Group):
    """The command group; its `main` is the error boundary of every command."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> int:
        # click's own standalone mode prints usage errors over several lines and
        # lets our errors through as tracebacks; run it non-standalone and report
        # every failure the same way: one line on stderr, exit code 2.
        try:
            result = super().main(args, prog_name or self.name, complete_var, standalone_mode=False, **extra)
            code = result if isinstance(result, int) else EXIT_SAME
        except click.ClickException as exc:
            code = _fail(_usage_message(exc))
        except click.Abort:
            code = _fail("interrupted", EXIT_INTERRUPTED)
        except CallpinError as exc:
            code = _fail(f"callpin: {exc}")
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                code = EXIT_ERROR
            else:
                code = _fail(f"callpin: {_os_message(exc)}")
        if standalone_mode:
            sys.exit(code)
        return code


def _fail(message: str, code: int = EXIT_ERROR) -> int:
    # A message may quote bytes of a damaged log (a header's rule pattern): escaped,
    # it stays one line a terminal only prints.
    click.echo(printable(" ".join(message.split())), err=True)
    return code


def _usage_message(exc: click.ClickException) -> str:
    context = getattr(exc, "ctx", None)
    where = context.command_path if context is not None else "callpin"
    hint = f" (see '{where} --help')" if isinstance(exc, click.UsageError) else ""
    return f"{where}: {exc.format_message()}{hint}"


def _os_message(exc: OSError) -> str:
    reason = exc.strerror or os.strerror(exc.errno or errno.EIO)
    # A failed os.replace names the temporary file first and the target second.
    where = exc.filename2 or exc.filename
    return f"{where}: {reason}" if where else reason


def _use_color(flag: bool | None, destination: str | None) -> bool:
    """--color / --no-color when given; otherwise colour on a terminal's stdout only.

    NO_COLOR set to anything but the empty string turns the default off (no-color.org),
    and so does TERM=dumb; an explicit --color still wins over both.
    """
    if flag is not None:
        return flag
    if destination not in (None, STDIO) or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty()


# Which implementation is live is what a bug report needs first: an install without a
# C compiler falls back to the Python one, and pip says so only when asked (-v).
VERSION_MESSAGE = f"%(prog)s %(version)s (implementation: {IMPLEMENTATION}; Python {platform.python_version()})"


@click.group(
    "callpin",
    cls=CallpinGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(
    __version__,
    "--version",
    prog_name="callpin",
    message=VERSION_MESSAGE,
    help="Show the version, the live implementation (c or python) and Python's version.",
)
@click.pass_context
def cli(context: click.Context) -> int:
    """Pin the calls legacy code makes to its collaborators, and diff them by order and count.

    Exit codes: 0 identical (or fine), 1 different, 2 could not compare.
    """
    if context.invoked_subcommand is None:
        click.echo(context.get_help())
    return EXIT_SAME


def main(argv: Sequence[str] | None = None) -> None:
    """The `callpin` console script."""
    cli.main(args=argv, prog_name="callpin")


format_option = click.option(
    "--format",
    "output",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Text for people, JSON for machines.",
)

report_format_option = click.option(
    "--format",
    "output",
    type=click.Choice(["text", "json", "html"]),
    default="text",
    show_default=True,
    help="Text for people, JSON for machines, HTML: one self-contained page with a sequence diagram.",
)
output_option = click.option(
    "-o",
    "--output",
    "destination",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="Write the report to FILE (atomically) instead of stdout; `-` is stdout.",
)
color_option = click.option(
    "--color/--no-color",
    default=None,
    help="Colour the text, also into -o FILE  [default: on a terminal, unless NO_COLOR or TERM=dumb]",
)


class Report(Protocol):
    """What gate, probe and bite return: text lines for people, a JSON document for machines."""

    def lines(self) -> Iterable[str]: ...

    def as_json(self) -> dict[str, Any]: ...


def _print_report(report: Report, output: str, destination: str | None) -> None:
    """A report in the chosen format (`text` or `json`), to stdout or to `destination`."""
    if output == "json":
        text = json.dumps(report.as_json(), indent=2, ensure_ascii=False) + "\n"
    else:
        text = "".join(line + "\n" for line in report.lines())
    _emit(text, destination)


def _emit(text: str, destination: str | None, *, color: bool = False) -> None:
    """Print a report, or write it to `destination` through a temporary file and a rename,
    so a reader never sees half a report and a failed write leaves the old file whole."""
    if destination in (None, STDIO):
        click.echo(text, nl=False, color=color)
        return
    folder = os.path.dirname(os.path.abspath(destination))
    try:
        if not os.path.isdir(folder):  # a report never creates folders: a typo is an error
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
        replace_file(destination, text.encode("utf-8"))
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, destination) from None


def _read_log(path: str) -> Log:
    """The log at `path`, or on standard input for `-` (read whole: it cannot be read twice)."""
    if path != STDIO:
        return load(path)
    return load(STDIN_NAME, data=read_piped(sys.stdin.buffer, STDIN_NAME))


def _one_stdin(paths: Iterable[str]) -> None:
    if list(paths).count(STDIO) > 1:
        raise UsageError("standard input (`-`) can be read once: give it for one log only")


# ---------------------------------------------------------------------------
# Reading and comparing logs.


@cli.command("diff", short_help="Compare two logs by call order and count.")
@click.argument("old", type=click.Path())
@click.argument("new", type=click.Path())
@report_format_option
@output_option
@click.option("--stat", is_flag=True, help="Only the count table and the summary.")
@click.option(
    "--context",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    metavar="N",
    help="Equal events shown around each difference.",
)
@click.option(
    "--ignore",
    type=click.Choice(IGNORABLE),
    multiple=True,
    metavar="FIELD",
    help=f"Leave a field out of event identity ({', '.join(IGNORABLE)}); repeatable.",
)
@click.option(
    "--order",
    type=click.Choice(ORDERS),
    default="strict",
    show_default=True,
    help="strict: one sequence; thread: each thread on its own; none: counts only.",
)
@color_option
def diff_command(
    old: str,
    new: str,
    output: str,
    stat: bool,
    context: int,
    ignore: tuple[str, ...],
    order: str,
    color: bool | None,
    destination: str | None,
) -> int:
    """Compare log NEW against log OLD: exit 0 identical, 1 different, 2 cannot compare.

    Either log may be `-`, standard input.
    """
    if output == "html" and stat:
        raise UsageError("--stat has no HTML form; use --format text or json")
    _one_stdin((old, new))
    result = diff(_read_log(old), _read_log(new), ignore=ignore, order=order)
    if output == "json":
        _emit(render_json(result, stat=stat), destination)
    elif output == "html":
        _emit(render_html(result, context=context), destination)
    else:
        painted = _use_color(color, destination)
        text = render_stat(result, color=painted) if stat else render_text(result, context=context, color=painted)
        _emit(text + "\n", destination, color=painted)
    return EXIT_SAME if result.same else EXIT_DIFFERENT


@cli.command("show", short_help="Print every event of a log, one per line.")
@click.argument("log", type=click.Path())
@report_format_option
@output_option
def show_command(log: str, output: str, destination: str | None) -> int:
    """Print every event of LOG (`-`: standard input), one per line; stable, for git textconv."""
    loaded = _read_log(log)
    renderers = {"text": render_log, "json": render_log_json, "html": render_log_html}
    _emit(renderers[output](loaded), destination)
    return EXIT_SAME


@cli.command("stats", short_help="Count a log's events per label, kind and thread.")
@click.argument("log", type=click.Path())
def stats_command(log: str) -> int:
    """Print the number of events of LOG (`-`: standard input) per label, kind and thread, and its fingerprint."""
    loaded = _read_log(log)
    labels: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    threads: Counter[int] = Counter()
    for event in loaded:
        labels[event.label] += 1
        kinds[event.kind] += 1
        threads[event.thread] += 1
    rules = ", ".join(one.name for one in loaded.rules.rules) or "none"
    lines = [
        f"log: {log}",
        f"events: {len(loaded)}",
        f"fingerprint: {loaded.fingerprint}",
        f"rules: {rules}",
    ]
    for title, table in (
        ("kinds", sorted(kinds.items())),
        ("threads", [(str(thread), n) for thread, n in sorted(threads.items())]),
        ("labels", sorted(labels.items())),
    ):
        lines.append(f"{title}:")
        width = max((len(name) for name, _ in table), default=0)
        lines.extend(f"  {name:<{width}}  {n}" for name, n in table)
    click.echo("\n".join(lines))
    return EXIT_SAME


@cli.command("verify", short_help="Check that logs are intact and every event decodes.")
@click.argument("logs", nargs=-1, required=True, type=click.Path(), metavar="LOG...")
def verify_command(logs: tuple[str, ...]) -> int:
    """Check each LOG's integrity and that every event decodes: exit 0 all good, 2 otherwise.

    One LOG may be `-`, standard input.
    """
    _one_stdin(logs)
    failed = 0
    for path in logs:
        try:
            loaded = _read_log(path)
            loaded.verify()
        except LogFormatError as exc:
            _fail(f"callpin: {exc}")
            failed += 1
            continue
        click.echo(f"ok: {path}: {counted(len(loaded), 'event')}, fingerprint {loaded.fingerprint}")
    return EXIT_ERROR if failed else EXIT_SAME


# ---------------------------------------------------------------------------
# Rewriting logs.


@cli.command("normalize", short_help="Re-normalize a log, adding rules, into another.")
@click.argument("source", metavar="IN", type=click.Path())
@click.argument("target", metavar="OUT", type=click.Path())
@click.option(
    "--rule",
    "rules",
    multiple=True,
    metavar="NAME[=REGEX]",
    help="A built-in rule (uuid, timestamp, address) or a user rule NAME=REGEX; "
    "repeatable. Default: uuid, timestamp and address.",
)
def normalize_command(source: str, target: str, rules: tuple[str, ...]) -> int:
    """Re-normalize log IN into OUT; the bytes are those normalizing at record time gives.

    The rules IN was recorded with stay; the given ones are added. OUT may be IN
    itself only when given as the same path: it is then replaced atomically. IN `-`
    reads standard input, OUT `-` writes the log to standard output.
    """
    if target == STDIO and sys.stdout.isatty():
        raise UsageError("a log is binary: not writing it to a terminal (redirect stdout, or give OUT a file name)")
    loaded = _read_log(source)
    ruleset = _extended_rules(loaded.rules, rules or tuple(one.name for one in DEFAULT_RULES.rules))
    destination = target if STDIO in (source, target) else _destination(source, target)
    encoder = Encoder(ruleset)
    frames = (
        encoder.encode_event(
            KIND_CODES[event.kind],
            event.label,
            event.args,
            event.kwargs,
            event.value,
            event.error,
            event.thread,
            event.depth,
        )
        for event in loaded
    )
    if destination == STDIO:
        written = list(frames)
        sys.stdout.flush()
        sys.stdout.buffer.write(log_bytes(written, rules=ruleset, meta=loaded.meta))
        sys.stdout.buffer.flush()
        fingerprint = Log.from_frames(written, rules=ruleset).fingerprint
    else:
        fingerprint = write_log(destination, frames, rules=ruleset, meta=loaded.meta)
    names = ", ".join(one.name for one in ruleset.rules)
    # With the log on stdout, what was written is said on stderr.
    click.echo(
        f"wrote {target}: {counted(len(loaded), 'event')}, rules: {names}, fingerprint {fingerprint}",
        err=destination == STDIO,
    )
    return EXIT_SAME


def _extended_rules(existing: RuleSet, specs: Sequence[str]) -> RuleSet:
    added: list[Rule] = []
    for spec in specs:
        name, has_pattern, pattern = spec.partition("=")
        made = rule(pattern, name) if has_pattern else RuleSet.named([name]).rules[0]
        present = next((one for one in existing.rules if one.name == made.name), None)
        if present is None:
            added.append(made)
        elif present != made:
            raise UsageError(f"rule {made.name!r} is already in the log with another pattern")
    return existing.with_rules(added)


def _destination(source: str, target: str) -> str:
    if os.path.abspath(source) == os.path.abspath(target):
        # In place: write through a symbolic link rather than replacing the link.
        return os.path.realpath(target)
    if os.path.exists(target) and os.path.samefile(source, target):
        raise UsageError(f"{target} is {source} under another name; give the same path twice to rewrite it in place")
    return target


# ---------------------------------------------------------------------------
# Repository set-up.


@cli.command("git-setup", short_help="Make git diff show .cpin logs as calls.")
def git_setup_command() -> int:
    """Make `git diff` show .cpin logs as calls (a textconv driver and .gitattributes).

    The driver is this Python's absolute path with `-m callpin show`, so it works
    whether or not the environment callpin is installed in is active.
    """
    from .git_setup import git_setup

    done = git_setup()
    for line in done.lines:
        click.echo(line)
    if done.warning is not None:
        click.echo(done.warning, err=True)
    return EXIT_SAME


# ---------------------------------------------------------------------------
# The harness checks: bless and gate.


@cli.command("bless", short_help="Accept refreshed baselines, with a reason.")
@click.argument("paths", nargs=-1, type=click.Path(), metavar="PATH...")
@click.option("--reason", required=True, help="Why this change of interactions is accepted (one line).")
@click.option(
    "--all-changed", is_flag=True, help="Bless every baseline whose fingerprint differs from its manifest line."
)
@click.option("--baselines", "folder", default="baselines", show_default=True, help="The baselines folder.")
def bless_command(paths: tuple[str, ...], reason: str, all_changed: bool, folder: str) -> int:
    """Accept refreshed baselines: record their fingerprints in baselines/MANIFEST with a reason."""
    from .gate import bless

    blessings = bless(list(paths), reason=reason, folder=folder, all_changed=all_changed)
    for blessing in blessings:
        click.echo(blessing.describe())
    if not blessings:
        click.echo("bless: every baseline matches its manifest line; nothing to bless")
    return EXIT_SAME


@cli.command("gate", short_help="Block baseline changes that are not blessed.")
@click.option(
    "--base",
    default=None,
    help="Compare with this revision (default: the merge base with the default branch, or the previous commit).",
)
@click.option("--baselines", "folder", default="baselines", show_default=True, help="The baselines folder.")
@click.option("--committed", "tree", flag_value="committed", help="Check HEAD instead of the working tree.")
@click.option("--staged", "tree", flag_value="staged", help="Check the index (what a commit would record).")
@click.option("--install-hook", is_flag=True, help="Write a pre-commit hook that runs `callpin gate --staged`.")
@click.option("--force", is_flag=True, help="With --install-hook: replace an existing hook.")
@format_option
@output_option
def gate_command(
    base: str | None,
    folder: str,
    tree: str | None,
    install_hook: bool,
    force: bool,
    output: str,
    destination: str | None,
) -> int:
    """Block baseline changes that were refreshed but not blessed; show each change as calls.

    Exit codes: 0 clean, 1 blocked, 2 could not run.
    """
    from . import gate

    if install_hook:
        hook = gate.install_hook(folder=folder, force=force)
        click.echo(f"installed {hook}")
        return EXIT_SAME
    report = gate.gate(base=base, folder=folder, tree=tree or "worktree")  # type: ignore[arg-type]
    _print_report(report, output, destination)
    return EXIT_DIFFERENT if report.blocked else EXIT_SAME


# ---------------------------------------------------------------------------
# review


@cli.command("review", short_help="Accept or reject the received logs of drifted or new pins, one at a time.")
@click.option("--baselines", "folder", default="baselines", show_default=True, help="The baselines folder.")
@click.option("--list", "listing", is_flag=True, help="List the received logs waiting for review; change nothing.")
@click.option("--accept", "accepted", multiple=True, metavar="PATH", help="Accept this received log (or baseline).")
@click.option("--accept-all", is_flag=True, help="Accept every received log.")
@click.option("--reject", "rejected", multiple=True, metavar="PATH", help="Reject this received log (or baseline).")
@click.option("--reject-all", is_flag=True, help="Reject every received log.")
@click.option("--reason", default=None, help="Why the accepted changes of interactions are right (one line).")
@format_option
def review_command(
    folder: str,
    listing: bool,
    accepted: tuple[str, ...],
    accept_all: bool,
    rejected: tuple[str, ...],
    reject_all: bool,
    reason: str | None,
    output: str,
) -> int:
    """Walk the received logs beside the baselines: accept one (it replaces its baseline and is
    blessed), reject it (it is deleted), or skip it. Without options, one at a time on a
    terminal; --list, --accept, --reject and their --all forms do the same without asking.

    Exit codes: 0 nothing left pending, 1 received logs left pending, 2 could not review.
    """
    from . import review

    acting = bool(accepted or accept_all or rejected or reject_all)
    if listing and acting:
        raise UsageError("--list changes nothing: give it alone")
    if listing:
        waiting = review.pending(folder)
        if output == "json":
            items = [
                {
                    "baseline": str(item.baseline),
                    "received": str(item.received),
                    "new": item.new,
                    "summary": item.summary(),
                }
                for item in waiting
            ]
            click.echo(json.dumps({"pending": items}, indent=2, ensure_ascii=False))
        else:
            for item in waiting:
                click.echo(f"{item.received}: {item.summary()}")
            click.echo(f"review: {counted(len(waiting), 'received log')} pending under {folder}")
        return EXIT_DIFFERENT if waiting else EXIT_SAME
    if acting:
        to_accept = review.pending(folder) if accept_all else review.select(folder, accepted)
        to_reject = review.pending(folder) if reject_all else review.select(folder, rejected)
        if set(item.received for item in to_accept) & set(item.received for item in to_reject):
            raise UsageError("a received log cannot be both accepted and rejected")
        if to_accept:
            if reason is None:
                raise UsageError("accepting needs --reason: why this change of interactions is right")
            for blessing in review.accept(to_accept, reason=reason, folder=folder):
                click.echo(blessing.describe())
        review.reject(to_reject)
        for item in to_reject:
            click.echo(f"rejected: deleted {item.received}")
        left = review.pending(folder)
        click.echo(f"review: {counted(len(left), 'received log')} left pending under {folder}")
        return EXIT_DIFFERENT if left else EXIT_SAME
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            "review asks on a terminal; here use --list, --accept PATH --reason TEXT, --reject PATH "
            "or their --accept-all / --reject-all forms"
        )
    still_pending = review.Walk(folder, reason=reason, color=_use_color(None, None)).run()
    return EXIT_DIFFERENT if still_pending else EXIT_SAME


# ---------------------------------------------------------------------------
# probe


@cli.command(
    "probe",
    short_help="Re-run a capture in other environments; name what varies.",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.option(
    "--cells",
    default=",".join(("tz", "locale", "hashseed", "cwd")),
    show_default=True,
    help="Which perturbations to run, comma-separated: tz, locale, hashseed, cwd.",
)
@click.option("--runs", default=2, show_default=True, type=click.IntRange(min=2), help="Runs per cell.")
@click.option("--jobs", default=1, show_default=True, type=click.IntRange(min=1), help="Cells run in parallel.")
@click.option(
    "--timeout",
    default=600.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds one run may take.",
)
@format_option
@output_option
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def probe_command(
    cells: str,
    runs: int,
    jobs: int,
    timeout: float,
    output: str,
    destination: str | None,
    command: tuple[str, ...],
) -> int:
    """Run COMMAND over timezone, locale, hash seed and working-directory cells and name what is volatile.

    Put the command after `--`: `callpin probe -- python -m pytest tests/characterization`.
    Exit codes: 0 nothing volatile, 1 something is, 2 the probe could not run.
    """
    from .probe import probe, progress_printer

    groups = tuple(part.strip() for part in cells.split(",") if part.strip())
    report = probe(list(command), groups=groups, runs=runs, jobs=jobs, timeout=timeout, progress=progress_printer())
    _print_report(report, output, destination)
    click.echo(report.verdict_line(), err=True)
    return EXIT_DIFFERENT if report.volatile else EXIT_SAME


# ---------------------------------------------------------------------------
# bite


@cli.command("bite", short_help="Check that the tests catch mutated collaborator calls.")
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--test",
    "test_command",
    default=None,
    help="The test command, run through the shell from the repository root  [default: python -m pytest -x -q]",
)
@click.option(
    "--baselines",
    default="baselines",
    show_default=True,
    type=click.Path(),
    help="Folder whose *.cpin logs name the collaborators (their call labels).",
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    help="A collaborator label such as billing.charge_card (instead of the baselines).",
)
@click.option(
    "--operators", default="swap,delete,duplicate", show_default=True, help="Comma-separated mutation operators."
)
@click.option(
    "--jobs", type=click.IntRange(min=1), default=None, help="Mutants run in parallel  [default: number of CPUs]"
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Seconds per mutant; a mutant stopped by it counts as caught  "
    "[default: 5 times the unmutated run, at least 10]",
)
@format_option
@output_option
@click.option("--show", "show_id", default=None, metavar="ID", help="Print one mutant's source diff and run nothing.")
def bite_command(
    sources: tuple[str, ...],
    test_command: str | None,
    baselines: str,
    labels: tuple[str, ...],
    operators: str,
    jobs: int | None,
    timeout: float | None,
    output: str,
    destination: str | None,
    show_id: str | None,
) -> int:
    """Prove the harness can fail: mutate the calls to the pinned collaborators in SOURCE
    (swap, delete, duplicate) and check that the test command catches every mutant.

    Exit 0 when every mutant is caught, 1 when one survived, 2 when bite could not run.
    """
    from . import bite as bite_module
    from .errors import BiteError

    chosen = tuple(name.strip() for name in operators.split(",") if name.strip())
    try:
        if show_id is not None:
            mutant = bite_module.show(sources, show_id, baselines=baselines, labels=labels, operators=chosen)
            click.echo(mutant.diff(), nl=False)
            return EXIT_SAME
        report = bite_module.bite(
            sources,
            test=test_command or bite_module.DEFAULT_TEST,
            baselines=baselines,
            labels=labels,
            operators=chosen,
            jobs=jobs,
            timeout=timeout,
            progress=sys.stderr,
        )
    except KeyboardInterrupt:
        return _fail("callpin bite: interrupted; scratch copies removed", EXIT_INTERRUPTED)
    except BiteError as exc:
        if exc.output:
            click.echo(exc.output, err=True)
        raise
    _print_report(report, output, destination)
    return int(report.exit_code)


# ---------------------------------------------------------------------------
# demo


@cli.command("demo", short_help="The whole story on the bundled renewals example.")
@click.option(
    "--workdir",
    default=None,
    type=click.Path(file_okay=False),
    help="Run in this (empty or new) folder and keep it; default: a temporary folder.",
)
@click.option("--keep", is_flag=True, help="Keep the temporary folder and say where it is.")
def demo_command(workdir: str | None, keep: bool) -> int:
    """The whole story on the bundled renewals example: record, refactor, diff, bite, probe, report."""
    from .demo import run_demo

    path = run_demo(workdir, keep=keep, echo=click.echo)
    if keep or workdir:
        click.echo(f"kept {path}")
    return EXIT_SAME
