"""Characterization commands: `seams` (the collaborators of each function, from the code)."""

from __future__ import annotations

import click

from .app import EXIT_SAME, baselines_option, cli, emit, format_option, output_option, print_report


@cli.command("seams", short_help="List each function's collaborators, read from the code.")
@click.argument("sources", nargs=-1, required=True, metavar="SOURCE[::FUNCTION]...")
@baselines_option("Folder whose *.cpin logs say which collaborators are pinned already.")
@click.option("--spy", "spy_for", default=None, metavar="FUNCTION", help="Print a ready spy=[...] for one function.")
@click.option(
    "--skeleton",
    "skeleton_for",
    default=None,
    metavar="FUNCTION",
    help="Print a pytest module pinning one function's collaborators (inputs left to fill in).",
)
@format_option
@output_option
def seams_command(
    sources: tuple[str, ...],
    baselines: str,
    spy_for: str | None,
    skeleton_for: str | None,
    output: str,
    destination: str | None,
) -> int:
    """For each function and method in SOURCE (files or folders; `file.py::Class.method` for
    one), every call it makes: collaborators (with the target spy= takes and whether a
    baseline pins it), internal functions, ambient state (with how to tame it) and calls
    whose binding the code does not show. The code is read, never imported or run.

    Exit 0, or 2 when a SOURCE cannot be read.
    """
    from ..render_seams import report, spy_line
    from ..seams import choose, find
    from ..skeleton import skeleton

    found = find(sources, baselines=baselines)
    if spy_for is not None:
        emit(spy_line(choose(found, spy_for)) + "\n", destination)
    elif skeleton_for is not None:
        emit(skeleton(choose(found, skeleton_for)), destination)
    else:
        print_report(report(found), output, destination)
    return EXIT_SAME
