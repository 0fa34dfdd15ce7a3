"""The commands that check the harness or show it: probe, bite, demo."""

from __future__ import annotations

import json
import signal
import sys
from typing import Any

import click

from .app import (
    EXIT_DIFFERENT,
    EXIT_INTERRUPTED,
    EXIT_SAME,
    baselines_option,
    cli,
    fail,
    format_option,
    output_option,
    print_report,
)

# ---------------------------------------------------------------------------
# probe


@cli.command(
    "probe",
    short_help="Re-run a capture in other environments; name what varies.",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.option(
    "--cells",
    default=",".join(("tz", "locale", "hashseed", "cwd", "env", "order", "clock")),
    show_default=True,
    help="Which perturbations to run, comma-separated: tz, locale, hashseed, cwd, env, order, clock.",
)
@click.option("--runs", default=2, show_default=True, type=click.IntRange(min=2), help="Runs per cell.")
@click.option("--jobs", default=1, show_default=True, type=click.IntRange(min=1), help="Runs in parallel.")
@click.option(
    "--timeout",
    default=600.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds one run may take.",
)
@click.option(
    "--env",
    "assignments",
    multiple=True,
    metavar="NAME=VALUE",
    help="A variable the env cell also sets (repeatable).",
)
@format_option
@output_option
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def probe_command(
    cells: str,
    runs: int,
    jobs: int,
    timeout: float,
    assignments: tuple[str, ...],
    output: str,
    destination: str | None,
    command: tuple[str, ...],
) -> int:
    """Run COMMAND over timezone, locale, hash seed, working-directory, environment, listing-order
    and clock cells and name what is volatile.

    Put the command after `--`: `callpin probe -- python -m pytest tests/characterization`.
    Exit codes: 0 nothing volatile, 1 something is, 2 the probe could not run or the
    command fails in the baseline cell, 130 interrupted (143 on SIGTERM).
    """
    from ..probe import Terminated, parse_env, probe

    groups = tuple(part.strip() for part in cells.split(",") if part.strip())
    try:
        report = probe(
            list(command),
            groups=groups,
            runs=runs,
            jobs=jobs,
            timeout=timeout,
            env=parse_env(assignments),
            progress=sys.stderr,
        )
    except KeyboardInterrupt as stop:
        code = 128 + signal.SIGTERM if isinstance(stop, Terminated) else EXIT_INTERRUPTED
        return fail("callpin probe: interrupted; its children stopped and scratch folders removed", code)
    print_report(report, output, destination)
    click.echo(report.verdict_line(), err=True)
    if report.volatile:
        return EXIT_DIFFERENT
    if report.failed:
        return fail("callpin probe: the capture fails in the baseline cell; fix that first (see the errors above)")
    return EXIT_SAME


# ---------------------------------------------------------------------------
# bite


@cli.command("bite", short_help="Check that the tests catch mutated collaborator calls.")
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True), metavar="SOURCE...")
@click.option(
    "--test",
    "test_command",
    default=None,
    help="The test command, run through the shell from the repository root  [default: python -m pytest -x -q]",
)
@baselines_option("Folder whose *.cpin logs name the collaborators (their call labels).")
@click.option(
    "--label",
    "labels",
    multiple=True,
    help="A collaborator label such as billing.charge_card (instead of the baselines).",
)
@click.option(
    "--loose",
    is_flag=True,
    help="Also mutate calls whose binding the code does not show, matched by their last name (marked 'by name').",
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
@click.option(
    "--list", "list_only", is_flag=True, help="Print the planned mutants (id, operator, place, calls); run nothing."
)
@click.option("--shard", default=None, metavar="K/N", help="Run only shard K of N of the mutants, chosen by their ids.")
@click.option(
    "--merge",
    is_flag=True,
    help="SOURCE... are JSON reports of shards (--format json); print them as one report with its exit code.",
)
def bite_command(
    sources: tuple[str, ...],
    test_command: str | None,
    baselines: str,
    labels: tuple[str, ...],
    loose: bool,
    operators: str,
    jobs: int | None,
    timeout: float | None,
    output: str,
    destination: str | None,
    show_id: str | None,
    list_only: bool,
    shard: str | None,
    merge: bool,
) -> int:
    """Prove the harness can fail: mutate the calls to the pinned collaborators in SOURCE
    (swap, delete, duplicate) and check that the test command catches every mutant.

    Exit 0 when every mutant is caught, 1 when one survived, 2 when bite could not run.
    `--shard K/N` on each machine of a CI matrix, then `callpin bite --merge *.json`.
    """
    from .. import bite as bite_module
    from ..bite.planning import parse_shard
    from ..errors import BiteError

    if merge:
        merged = bite_module.merge([_read_report(path) for path in sources], sources)
        print_report(merged, output, destination)
        return merged.exit_code
    chosen = tuple(name.strip() for name in operators.split(",") if name.strip())
    part = None if shard is None else parse_shard(shard)
    try:
        if list_only:
            _, _, planned = bite_module.plan(
                sources, baselines=baselines, labels=labels, operators=chosen, shard=part, loose=loose
            )
            for line in bite_module.plan_lines(planned):
                click.echo(line)
            return EXIT_SAME
        if show_id is not None:
            mutant = bite_module.show(
                sources, show_id, baselines=baselines, labels=labels, operators=chosen, loose=loose
            )
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
            shard=part,
            loose=loose,
        )
    except KeyboardInterrupt:
        return fail("callpin bite: interrupted; scratch copies removed", EXIT_INTERRUPTED)
    except BiteError as exc:
        if exc.output:
            click.echo(exc.output, err=True)
        raise
    print_report(report, output, destination)
    return int(report.exit_code)


def _read_report(path: str) -> dict[str, Any]:
    """A shard's JSON report; anything else is a usage error naming the file."""
    from ..errors import UsageError

    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read bite report {path}: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} is not a bite JSON report")
    return data


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
    from ..demo import run_demo

    path = run_demo(workdir, keep=keep, echo=click.echo)
    if keep or workdir:
        click.echo(f"kept {path}")
    return EXIT_SAME
