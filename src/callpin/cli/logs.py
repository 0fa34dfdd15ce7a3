"""The commands that read and rewrite logs: diff, show, stats, verify, normalize."""

from __future__ import annotations

import os
import sys
from collections import Counter

import click

from ..diff import IGNORABLE, ORDERS, diff
from ..errors import LogFormatError, UsageError
from ..folder_diff import diff_folders
from ..logfile import Log, log_bytes, write_log
from ..normalize import DEFAULT_RULES, Rule
from ..render_diff import render_json, render_stat, render_text
from ..render_folder import folder_summary, pair_line, render_folder_html, render_folder_json, render_folder_text
from ..render_html import render_html, render_log_html
from ..render_log import render_log, render_log_json
from ..renormalize import extended, parse_rules
from ..renormalize import frames as renormalized_frames
from ..text import counted, printable
from .app import (
    EXIT_DIFFERENT,
    EXIT_ERROR,
    EXIT_SAME,
    STDIO,
    cli,
    color_option,
    emit,
    fail,
    one_stdin,
    output_option,
    read_log,
    report_format_option,
    use_color,
)

# ---------------------------------------------------------------------------
# Reading and comparing logs.


@cli.command("diff", short_help="Compare two logs, or two folders of logs, by call order and count.")
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
    multiple=True,
    metavar="FIELD|PATH",
    help=f"Leave a field ({', '.join(IGNORABLE)}) or a key path (kwargs.headers.Date, args[1].url) "
    "out of event identity; repeatable.",
)
@click.option(
    "--rule",
    "rules",
    multiple=True,
    metavar="NAME[=REGEX]",
    help="Normalize both sides with a built-in rule or a user rule NAME=REGEX before comparing; repeatable.",
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
    rules: tuple[str, ...],
    order: str,
    color: bool | None,
    destination: str | None,
) -> int:
    """Compare log NEW against log OLD: exit 0 identical, 1 different, 2 cannot compare.

    Either log may be `-`, standard input. Given two folders, the logs (*.cpin) under
    them are paired by relative path: one line per pair, then the differences of
    each pair that differs; exit 0 when every pair is identical.
    """
    if output == "html" and stat:
        raise UsageError("--stat has no HTML form; use --format text or json")
    one_stdin((old, new))
    added = parse_rules(rules)
    folders = [os.path.isdir(path) for path in (old, new)]
    if any(folders):
        if not all(folders):
            raise UsageError(f"{old if folders[0] else new} is a directory: give two folders or two logs")
        return _diff_folders(old, new, output, stat, context, ignore, added, order, color, destination)
    result = diff(read_log(old), read_log(new), ignore=ignore, order=order, rules=added)
    if output == "json":
        emit(render_json(result, stat=stat), destination)
    elif output == "html":
        emit(render_html(result, context=context), destination)
    else:
        painted = use_color(color, destination)
        text = render_stat(result, color=painted) if stat else render_text(result, context=context, color=painted)
        emit(text + "\n", destination, color=painted)
    return EXIT_SAME if result.same else EXIT_DIFFERENT


def _diff_folders(
    old: str,
    new: str,
    output: str,
    stat: bool,
    context: int,
    ignore: tuple[str, ...],
    rules: list[Rule],
    order: str,
    color: bool | None,
    destination: str | None,
) -> int:
    result = diff_folders(old, new, ignore=ignore, order=order, rules=rules)
    if output == "json":
        emit(render_folder_json(result), destination)
    elif output == "html":
        emit(render_folder_html(result, context=context), destination)
    elif stat:
        emit("\n".join([*map(pair_line, result.pairs), folder_summary(result)]) + "\n", destination)
    else:
        painted = use_color(color, destination)
        emit(render_folder_text(result, context=context, color=painted) + "\n", destination, color=painted)
    for pair in result.pairs:
        if pair.error is not None:
            fail(f"callpin: {pair.path}: {pair.error}")
    if result.failed:
        return EXIT_ERROR
    return EXIT_SAME if result.same else EXIT_DIFFERENT


@cli.command("show", short_help="Print every event of a log, one per line.")
@click.argument("log", type=click.Path())
@report_format_option
@output_option
def show_command(log: str, output: str, destination: str | None) -> int:
    """Print every event of LOG (`-`: standard input), one per line; stable, for git textconv."""
    loaded = read_log(log)
    renderers = {"text": render_log, "json": render_log_json, "html": render_log_html}
    emit(renderers[output](loaded), destination)
    return EXIT_SAME


@cli.command("stats", short_help="Count a log's events per label, kind and thread.")
@click.argument("log", type=click.Path())
def stats_command(log: str) -> int:
    """Print the number of events of LOG (`-`: standard input) per label, kind and thread, and its fingerprint."""
    loaded = read_log(log)
    labels: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    threads: Counter[int] = Counter()
    for event in loaded:
        labels[event.label] += 1
        kinds[event.kind] += 1
        threads[event.thread] += 1
    lines = [
        f"log: {log}",
        f"events: {len(loaded)}",
        f"fingerprint: {loaded.fingerprint}",
        f"rules: {', '.join(one.name for one in loaded.rules.rules) or 'none'}",
    ]
    if loaded.rules.rules:
        lines.append("rule patterns:")
        width = max(len(one.name) for one in loaded.rules.rules)
        for one in loaded.rules.patterns():
            kind = "keys" if one["kind"] == "keys" else "text"
            lines.append(printable(f"  {one['name']:<{width}}  {kind}: {one['pattern']}"))
            if "keys" in one:
                lines.append(printable(f"  {'':<{width}}  keys: {one['keys']}"))
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
    one_stdin(logs)
    failed = 0
    for path in logs:
        try:
            loaded = read_log(path)
            loaded.verify()
        except LogFormatError as exc:
            fail(f"callpin: {exc}")
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
    help="A built-in rule (uuid, timestamp, address, redact, tmp) or a user rule NAME=REGEX; "
    "repeatable. Default: the built-in rules.",
)
def normalize_command(source: str, target: str, rules: tuple[str, ...]) -> int:
    """Re-normalize log IN into OUT; the bytes are those normalizing at record time gives.

    The rules IN was recorded with stay; the given ones are added. OUT may be IN
    itself only when given as the same path: it is then replaced atomically. IN `-`
    reads standard input, OUT `-` writes the log to standard output.
    """
    if target == STDIO and sys.stdout.isatty():
        raise UsageError("a log is binary: not writing it to a terminal (redirect stdout, or give OUT a file name)")
    loaded = read_log(source)
    ruleset = extended(loaded.rules, parse_rules(rules or tuple(one.name for one in DEFAULT_RULES.rules)))
    destination = target if STDIO in (source, target) else _destination(source, target)
    frames = renormalized_frames(loaded, ruleset)
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


def _destination(source: str, target: str) -> str:
    if os.path.abspath(source) == os.path.abspath(target):
        # In place: write through a symbolic link rather than replacing the link.
        return os.path.realpath(target)
    if os.path.exists(target) and os.path.samefile(source, target):
        raise UsageError(f"{target} is {source} under another name; give the same path twice to rewrite it in place")
    return target
