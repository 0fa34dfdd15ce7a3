"""click commands: parse, call the library, map errors to exit codes."""

from __future__ import annotations

import json
import sys

import click

from . import __version__
from . import bite as bite_module
from .errors import BiteError, CallpinError


@click.group()
@click.version_option(__version__, prog_name="callpin")
def main() -> None:
    """Pin the interactions of legacy code before a refactor."""


@main.command("bite")
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--test",
    "test_command",
    default=bite_module.DEFAULT_TEST,
    show_default=True,
    help="The test command, run through the shell from the repository root.",
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
    "--operators",
    default=",".join(bite_module.OPERATORS),
    show_default=True,
    help="Comma-separated mutation operators.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Mutants run in parallel  [default: number of CPUs]",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Seconds per mutant; a mutant stopped by it counts as caught  "
    "[default: 5 times the unmutated run, at least 10]",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
@click.option(
    "--show",
    "show_id",
    default=None,
    metavar="ID",
    help="Print one mutant's source diff and run nothing.",
)
def bite_command(
    sources: tuple[str, ...],
    test_command: str,
    baselines: str,
    labels: tuple[str, ...],
    operators: str,
    jobs: int | None,
    timeout: float | None,
    output_format: str,
    show_id: str | None,
) -> None:
    """Prove the harness can fail: mutate the calls to the pinned collaborators in SOURCE
    (swap, delete, duplicate) and check that the test command catches every mutant.

    Exit 0 when every mutant is caught, 1 when one survived, 2 when bite could not run.
    """
    chosen = tuple(name.strip() for name in operators.split(",") if name.strip())
    try:
        if show_id is not None:
            mutant = bite_module.show(
                sources, show_id, baselines=baselines, labels=labels, operators=chosen
            )
            click.echo(mutant.diff(), nl=False)
            return
        report = bite_module.bite(
            sources,
            test=test_command,
            baselines=baselines,
            labels=labels,
            operators=chosen,
            jobs=jobs,
            timeout=timeout,
            progress=sys.stderr,
        )
    except KeyboardInterrupt:
        click.echo("callpin bite: interrupted; scratch copies removed", err=True)
        sys.exit(130)
    except CallpinError as exc:
        if isinstance(exc, BiteError) and exc.output:
            click.echo(exc.output, err=True)
        click.echo(f"callpin bite: {exc}", err=True)
        sys.exit(2)
    if output_format == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        for line in report.lines():
            click.echo(line)
    sys.exit(report.exit_code)
