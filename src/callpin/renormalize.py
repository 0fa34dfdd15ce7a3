"""Re-normalize logs with more rules, so logs recorded with different rule sets compare.

Applying rules to a recorded log gives the bytes recording with them gives (the
promise `callpin normalize` keeps); two logs whose rule sets differ only by rules
one of them lacks are both brought to the union of their rules before comparing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ._impl import Encoder
from .errors import RulesMismatch, UsageError
from .event import KIND_CODES
from .logfile import Log
from .normalize import Rule, RuleSet, rule


def parse_rules(specs: Sequence[str]) -> list[Rule]:
    """Rules from `NAME` (a built-in rule) or `NAME=REGEX` (a user rule) specifications."""
    return [
        rule(pattern, name) if has_pattern else RuleSet.named([name]).rules[0]
        for spec in specs
        for name, has_pattern, pattern in [spec.partition("=")]
    ]


def extended(existing: RuleSet, added: Sequence[Rule]) -> RuleSet:
    """`existing` with the rules of `added` it lacks; a rule it has under another pattern is refused."""
    extra: list[Rule] = []
    for made in added:
        present = next((one for one in existing.rules if one.name == made.name), None)
        if present is None:
            if all(one.name != made.name for one in extra):
                extra.append(made)
        elif present != made:
            raise UsageError(f"rule {made.name!r} is already in the log with another pattern")
    return existing.with_rules(extra)


def frames(log: Log, rules: RuleSet) -> Iterator[bytes]:
    """Every event of `log` encoded again with `rules`."""
    encoder = Encoder(rules)
    for event in log:
        yield encoder.encode_event(
            KIND_CODES[event.kind],
            event.label,
            event.args,
            event.kwargs,
            event.value,
            event.error,
            event.thread,
            event.depth,
        )


def renormalized(log: Log, rules: RuleSet) -> Log:
    """`log` as recording with `rules` would have written it (itself when it has them already)."""
    if log.rules == rules:
        return log
    return Log.from_frames(list(frames(log, rules)), rules=rules, meta=log.meta, path=log.path)


def conflicts(old: RuleSet, new: RuleSet) -> list[str]:
    """The rules both sets name with different patterns, each described once."""
    patterns = {one.name: one for one in new.rules}
    out = []
    for one in old.rules:
        other = patterns.get(one.name)
        if other is not None and other != one:
            out.append(f"{one.name!r} is {_pattern(one)} in one and {_pattern(other)} in the other")
    return out


def _pattern(one: Rule) -> str:
    return "built-in" if one.builtin else repr(one.pattern)


def reconcile(
    old: Log, new: Log, extra: Sequence[Rule] = (), *, names: tuple[str, str] = ("old", "new")
) -> tuple[Log, Log]:
    """Both logs normalized alike: with the union of their rules and `extra`.

    Raises RulesMismatch when a rule has one pattern in one log and another in the
    other: no rewriting makes their values comparable.
    """
    clashing = conflicts(old.rules, new.rules)
    if clashing:
        raise RulesMismatch(
            f"{names[0]} and {names[1]} were normalized with rules that cannot be reconciled: "
            + "; ".join(clashing)
            + f" (rules of {names[0]}: {describe(old.rules)}; of {names[1]}: {describe(new.rules)})",
            old=old.rules,
            new=new.rules,
        )
    union = extended(extended(old.rules, new.rules.rules), extra)
    return renormalized(old, union), renormalized(new, union)


def describe(rules: RuleSet) -> str:
    """A rule set as a reader checks it: built-in names, user rules with their patterns."""
    if not rules:
        return "none"
    return ", ".join(one.name if one.builtin else f"{one.name}={one.pattern}" for one in rules.rules)
