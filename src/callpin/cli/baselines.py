"""The commands that look after the baselines of a repository: git-setup, bless, gate, review."""

from __future__ import annotations

import json
import sys

import click

from ..errors import UsageError
from ..text import counted
from .app import (
    EXIT_DIFFERENT,
    EXIT_SAME,
    baselines_option,
    cli,
    format_option,
    output_option,
    print_report,
    use_color,
)

# ---------------------------------------------------------------------------
# Repository set-up.


@cli.command("git-setup", short_help="Make git diff show .cpin logs as calls.")
def git_setup_command() -> int:
    """Make `git diff` show .cpin logs as calls (a textconv driver and .gitattributes).

    The driver is this Python's absolute path with `-m callpin show`, so it works
    whether or not the environment callpin is installed in is active.
    """
    from ..git_setup import git_setup

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
@baselines_option(name="folder")
def bless_command(paths: tuple[str, ...], reason: str, all_changed: bool, folder: str) -> int:
    """Accept refreshed baselines: record their fingerprints in baselines/MANIFEST with a reason."""
    from ..gate import bless

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
@baselines_option(name="folder")
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
    from .. import gate

    if install_hook:
        hook = gate.install_hook(folder=folder, force=force)
        click.echo(f"installed {hook}")
        return EXIT_SAME
    report = gate.gate(base=base, folder=folder, tree=tree or "worktree")  # type: ignore[arg-type]
    print_report(report, output, destination)
    return EXIT_DIFFERENT if report.blocked else EXIT_SAME


# ---------------------------------------------------------------------------
# review


@cli.command("review", short_help="Accept or reject the received logs of drifted pins.")
@baselines_option(name="folder")
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
    from .. import review

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
    still_pending = review.Walk(folder, reason=reason, color=use_color(None, None)).run()
    return EXIT_DIFFERENT if still_pending else EXIT_SAME
