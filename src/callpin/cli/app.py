"""The command group `cli`, its error boundary and what its commands share: exit codes, options, output.

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
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

import click

from .. import __version__
from .._impl import IMPLEMENTATION
from ..atomic import replace_file
from ..errors import CallpinError, UsageError
from ..logfile import Log, load, read_piped
from ..text import printable

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
            code = fail(_usage_message(exc))
        except click.Abort:
            code = fail("interrupted", EXIT_INTERRUPTED)
        except CallpinError as exc:
            code = fail(f"callpin: {exc}")
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                code = EXIT_ERROR
            else:
                code = fail(f"callpin: {_os_message(exc)}")
        if standalone_mode:
            sys.exit(code)
        return code


def fail(message: str, code: int = EXIT_ERROR) -> int:
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


def use_color(flag: bool | None, destination: str | None) -> bool:
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
F = TypeVar("F", bound=Callable[..., Any])


def baselines_option(help_text: str = "The baselines folder.", name: str = "baselines") -> Callable[[F], F]:
    """`--baselines DIR` (default `baselines`), passed to the command as `name`."""
    return click.option("--baselines", name, default="baselines", show_default=True, type=click.Path(), help=help_text)


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


def print_report(report: Report, output: str, destination: str | None) -> None:
    """A report in the chosen format (`text` or `json`), to stdout or to `destination`."""
    if output == "json":
        text = json.dumps(report.as_json(), indent=2, ensure_ascii=False) + "\n"
    else:
        text = "".join(line + "\n" for line in report.lines())
    emit(text, destination)


def emit(text: str, destination: str | None, *, color: bool = False) -> None:
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


def read_log(path: str) -> Log:
    """The log at `path`, or on standard input for `-` (read whole: it cannot be read twice)."""
    if path != STDIO:
        return load(path)
    return load(STDIN_NAME, data=read_piped(sys.stdin.buffer, STDIN_NAME))


def one_stdin(paths: Iterable[str]) -> None:
    if list(paths).count(STDIO) > 1:
        raise UsageError("standard input (`-`) can be read once: give it for one log only")
