"""Normalization rules and the first-appearance numbering of the values they replace."""

from __future__ import annotations

import os
import re
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import UsageError

# The built-in patterns are ASCII-only and anchored by explicit look-arounds so that
# the C scanner in _speedups.c can implement exactly the same matches without a
# regex engine. Keep the two in step (docs/FORMAT.md states the grammar).
UUID_PATTERN = (
    r"(?<![0-9A-Za-z])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}"
    r"-[0-9A-Fa-f]{12}(?![0-9A-Za-z])"
)
# An ISO 8601 date and time; or an HTTP date (RFC 9110's IMF-fixdate, `Date:` and
# `Last-Modified:` headers), the same with a numeric zone (email.utils.formatdate, RFC
# 5322) or with dashes (a cookie's `expires`).
TIMESTAMP_PATTERN = (
    r"(?<![0-9])[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}"
    r"(?:[.,][0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2}|[+-][0-9]{4})?(?![0-9])"
    r"|(?<![A-Za-z])(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2}[ -]"
    r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[ -][0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} "
    r"(?:GMT|UTC|[+-][0-9]{4})(?![0-9A-Za-z])"
)
ADDRESS_PATTERN = r"(?<![0-9A-Za-z])0x[0-9A-Fa-f]{6,16}(?![0-9A-Za-z])"
# The credentials of a URL (`https://user:password@host`): what lies between "://" and
# an "@" with no '/', '?', '#' or white space in between; and the `user:password` of a
# text that is a whole network location (`urllib.parse.urlsplit(url).netloc`, no "://"
# before it): a ':' before the '@', and only a host after it. A text without the ':'
# (`ada@example.com`, `token@host`) is kept, and so is a URI whose scheme puts an address
# there (`mailto:`, `sip:`, `sips:`, `xmpp:`, `im:`, `pres:`). Scanned by normalize_text
# under both implementations (the C encoder hands it a text with an '@').
URL_CREDENTIALS_PATTERN = (
    r"(?<=://)[^\s/?#@]+(?=@)"
    r"|\A(?!(?i:mailto|sips?|xmpp|im|pres):)[^\s/?#@:]*:[^\s/?#@]*(?=@[^\s/?#@]+\Z)"
)
# Names that say their value is a secret, searched in a name lower-cased after its
# camelCase humps are split with '_' (`accessToken` is `access_token`). `userinfo` is
# RFC 3986's name for a URL's credentials, under which a parsed URL keeps them (httpx),
# out of reach of the URL-credentials pattern, which needs the "://".
SECRET_NAME_PATTERN = (
    r"(?<![a-z0-9])(?:authorization|auth|password|passwd|passphrase|pwd|secret|token|api[-_ ]?key|apikey"
    r"|cookies?|credentials?|userinfo|private[-_ ]?key|access[-_ ]?key|session[-_ ]?id|signature)(?![a-z0-9])"
)
_SECRET_NAME = re.compile(SECRET_NAME_PATTERN)
# The value of a query or form parameter whose name is a secret name (`?access_token=...`,
# `password=...&user=ada`): the name starts the text or follows '?', '&', ';' or white
# space, holds no '/', ':' or '@' (so it never reaches back into a URL's credentials),
# and holds one of the secret words at a boundary as `secret_name` finds them (a
# separator, or a camelCase hump). Only the value, group `secret`, is replaced; one that
# already is a placeholder stays as it is, so normalizing twice changes nothing. The
# secret word is found by a lookahead and the name then read once, without giving any
# of it back: a long name of many secret words and no `=` is one pass, where trying
# each word's place again made it quadratic (48 KB of `token_` took 3.7 s). The
# quotes and closing brackets that end the value are the text around the URL (a repr's
# `')`, a JSON string's `"`): `_scan` leaves them out of the secret (VALUE_AROUND).
# A name that holds one of the secret words at a boundary (a separator, or a camelCase
# hump): the lookahead the secret parameters and secret lines share, then the name read.
_NAME_CHARS = r"[^=&#;\s?/:@]"
_SECRET_NAME_AHEAD = (
    rf"(?=(?:{_NAME_CHARS}*?(?:[^A-Za-z0-9=&#;\s?/:@]|[a-z0-9](?=[A-Z])|(?<=[A-Z])[A-Z](?=[A-Z][a-z])))?"
    r"(?i:authorization|auth|password|passwd|passphrase|pwd|secret|token|api[-_]?key|apikey"
    r"|cookies?|credentials?|userinfo|private[-_]?key|access[-_]?key|session[-_]?id|signature)"
    r"(?:(?![A-Za-z0-9])|(?<=[a-z0-9])(?=[A-Z])))"
)
QUERY_SECRET_PATTERN = (
    r"(?:^|(?<=[?&;\s]))"
    + _SECRET_NAME_AHEAD
    + _NAME_CHARS
    + r"*+=(?!<secret:[0-9]+>['\")\]>}]*(?:[&#;\s]|$))(?P<secret>[^&#;\s]+)"
)
# The value of a `name: value` line whose name is a secret name, as a header of raw HTTP
# (`Authorization: Basic ...`, `X-Api-Key: ...`), a YAML or .env-like text
# (`  db_password: hunter2`) or pretty-printed JSON (`"token": "..."`) writes it: the
# name (letters, digits, '_', '.', '-', in quotes or not) starts its line (after spaces
# or tabs): a line that starts with `{` is no such line. The value, group `line_secret`, is the
# rest of the line less its trailing white space and comma, inside its quotes when it is
# quoted (`_scan`). One that already is a placeholder stays.
SECRET_LINE_PATTERN = (
    r"(?m:^)[ \t]*"
    + _SECRET_NAME_AHEAD
    + r"[\"']?[\w.-]*+[\"']?[ \t]*:[ \t]*+"
    + r"(?![\"']?<secret:[0-9]+>[\"']?,?[ \t]*(?:\r?\n|\Z))(?P<line_secret>[^\r\n]*[^\s,])"
)
# The string value of a quoted secret name in JSON or a Python repr written on one line
# (`{"client_secret": "pi_..._secret_..."}` in a response body, `{'token': 'abc'}` in a
# message): the name in quotes, a ':', and the quoted value, group `json_secret` (double
# quotes) or `repr_secret` (single quotes), escapes included. One that already is a
# placeholder stays.
QUOTED_SECRET_PATTERN = (
    r"(?<=[\"'])"
    + _SECRET_NAME_AHEAD
    + r"[^\"'\s:=&#;?/@]*+[\"'][ \t]*:[ \t]*"
    + r"(?:\"(?!<secret:[0-9]+>\")(?P<json_secret>(?:[^\"\\\r\n]|\\.)+)\""
    + r"|'(?!<secret:[0-9]+>')(?P<repr_secret>(?:[^'\\\r\n]|\\.)+)')"
)
VALUE_AROUND = "'\")]>}"


def _temp_roots() -> tuple[str, ...]:
    """The system temp folder as this process names it, and its real path (/tmp, /private/var/...)."""
    roots: list[str] = []
    for root in (tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir())):
        root = root.replace(os.sep, "/").rstrip("/")
        if root and root not in roots:
            roots.append(root)
    return tuple(sorted(roots, key=len, reverse=True))


# The entries of the system temp folder (`tempfile.mkdtemp()` names), and pytest's
# per-test folders under its basetemp (`pytest-of-USER/pytest-N/test_name0`): the part of
# a path that changes from run to run. Read once, when callpin is imported.
TMP_ROOTS = _temp_roots()
TMP_PATTERN = (
    r"(?<![\w.~/-])(?:"
    + "|".join(re.escape(root) for root in TMP_ROOTS)
    + r")/(?:pytest-of-[^/\s]+/pytest-(?:[0-9]+|current)/)?[^/\s'\"<>:;,|]+"
)
# A camelCase hump (`accessToken`), or the end of an acronym of two capitals or more
# before one (`AWSAccessKeyId` is `AWS_Access_Key_Id`; `OAuthApp` stays `OAuth_App`).
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z]{2})(?=[A-Z][a-z])")

_PLACEHOLDER_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")


@dataclass(frozen=True)
class Rule:
    """One normalization rule: what it matches and the placeholder name it writes."""

    name: str
    placeholder: str
    pattern: str
    builtin: bool = False
    # "text": the pattern is searched in strings; "keys": it is searched (ignoring
    # case) in the names of map keys, keyword arguments, fields and attributes, and
    # the values under the names it matches are redacted.
    kind: str = "text"
    # Texts one of which every match of the pattern holds (given for the built-in rules):
    # a text holding none of them is not searched. Empty: the pattern is searched in
    # every text.
    needles: tuple[str, ...] = field(default=(), repr=False, compare=False)
    # A finer test than the needles, when given: False for a text the rule cannot match.
    needed: Callable[[str], bool] | None = field(default=None, repr=False, compare=False)
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        flags = re.ASCII if self.builtin else re.IGNORECASE if self.kind == "keys" else 0
        try:
            compiled = re.compile(self.pattern, flags)
        except re.error as exc:
            raise UsageError(f"rule {self.name!r}: invalid regular expression: {exc}") from None
        object.__setattr__(self, "compiled", compiled)

    def key(self, text: str) -> str | int:
        """The identity of a matched text: equal keys share a placeholder number.

        A uuid's is its 128-bit value, as for a `uuid.UUID` (`codec.uuid_key`), so the
        same uuid shares its number in text and as an object.
        """
        if self.name == "uuid" and self.builtin:
            return int(text.replace("-", ""), 16)
        if self.name == "uuid" or self.name == "address":
            return text.lower()
        if self.name == "timestamp":
            # An ISO text's date-time separator made 'T'; an HTTP date as it is.
            return text.replace(" ", "T", 1) if text[:1].isdigit() else text
        return text


# The needles: a uuid holds a '-', a timestamp (ISO or HTTP) a ':', an address "0x", URL credentials an '@',
# a secret parameter an '=', a temporary path the temp folder's name.
UUID = Rule("uuid", "uuid", UUID_PATTERN, builtin=True, needles=("-",))
TIMESTAMP = Rule("timestamp", "ts", TIMESTAMP_PATTERN, builtin=True, needles=(":",))
ADDRESS = Rule("address", "addr", ADDRESS_PATTERN, builtin=True, needles=("0x",))
# `redact` is both kinds: URL credentials and secret parameters in strings, and the values
# of secret names.
# The stems of the secret words, one of which each holds (in any case).
_SECRET_STEM = re.compile(r"auth|pass|pwd|secret|token|key|cookie|credential|userinfo|session|signature", re.I | re.A)


def _may_redact(text: str) -> bool:
    """A text `redact` can change: an '@' (URL credentials), an '=' (secret parameters), or
    a ':' and a secret word's stem (secret lines): the test the C encoder makes."""
    return "@" in text or "=" in text or (":" in text and _SECRET_STEM.search(text) is not None)


REDACT = Rule(
    "redact",
    "secret",
    f"{URL_CREDENTIALS_PATTERN}|{QUERY_SECRET_PATTERN}|{SECRET_LINE_PATTERN}|{QUOTED_SECRET_PATTERN}",
    builtin=True,
    needles=("@", "=", ":"),
    needed=_may_redact,
)
TMP = Rule("tmp", "tmp", TMP_PATTERN, builtin=True, needles=TMP_ROOTS)
BUILTIN_RULES = {r.name: r for r in (UUID, TIMESTAMP, ADDRESS, REDACT, TMP)}
_TAKEN = ("ts", "addr", "secret")


def secret_name(name: str) -> bool:
    """True when `name` says its value is a secret (the built-in `redact` rule's names)."""
    return _SECRET_NAME.search(_HUMP.sub("_", name).lower()) is not None


def rule(regex: str, name: str) -> Rule:
    """A user rule: every match of `regex` inside a string becomes `<name:N>`."""
    if not _PLACEHOLDER_NAME.fullmatch(name):
        raise UsageError(f"rule name {name!r} must match [a-z][a-z0-9_]{{0,31}}")
    if name in BUILTIN_RULES or name in _TAKEN:
        raise UsageError(f"rule name {name!r} is taken by a built-in rule")
    made = Rule(name, name, regex)
    if made.compiled.search("") is not None and made.compiled.fullmatch("") is not None:
        raise UsageError(f"rule {name!r}: the pattern matches the empty string")
    return made


def secret_keys(regex: str, name: str = "secret_keys") -> Rule:
    """A user rule redacting, as `<secret:N>`, the values under names `regex` finds (ignoring case).

    It adds to the built-in `redact` rule: `DEFAULT_RULES.with_rules([secret_keys(r"^x-internal-")])`.
    """
    if not _PLACEHOLDER_NAME.fullmatch(name):
        raise UsageError(f"rule name {name!r} must match [a-z][a-z0-9_]{{0,31}}")
    if name in BUILTIN_RULES or name in _TAKEN:
        raise UsageError(f"rule name {name!r} is taken by a built-in rule")
    made = Rule(name, "secret", regex, kind="keys")
    if made.compiled.search("") is not None:
        raise UsageError(f"rule {name!r}: the pattern matches every name")
    return made


class RuleSet:
    """An ordered set of rules; text rules apply to every string, `address` to reprs."""

    def __init__(self, rules: tuple[Rule, ...] | list[Rule] = ()) -> None:
        seen: set[str] = set()
        for one in rules:
            if one.name in seen:
                raise UsageError(f"rule {one.name!r} given twice")
            seen.add(one.name)
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.text_rules = tuple(r for r in self.rules if r.name != "address" and r.kind == "text")
        self.key_rules = tuple(r for r in self.rules if r.kind == "keys" or r is REDACT)
        self.address: Rule | None = BUILTIN_RULES["address"] if "address" in seen else None
        self.uuid = "uuid" in seen
        self.timestamp = "timestamp" in seen
        self.redact = "redact" in seen
        # The texts a `tmp` rule looks for: a string holding none of them skips the scan.
        self.tmp_prefixes: tuple[str, ...] = TMP_ROOTS if "tmp" in seen else ()
        self.user_rules = tuple(r for r in self.rules if not r.builtin)
        # With built-in text rules only, a string holding none of their needles (and, in a
        # repr, none of the address rule's) skips the scan (may_match).
        self._builtin_only = not any(r.kind == "text" for r in self.user_rules)
        self._needles = tuple(dict.fromkeys(needle for r in self.text_rules for needle in r.needles))
        self._repr_needles = self._needles + (self.address.needles if self.address is not None else ())
        self._secret_names: dict[str, bool] = {}

    def __bool__(self) -> bool:
        return bool(self.rules)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RuleSet) and self.describe() == other.describe()

    def __hash__(self) -> int:
        return hash(tuple(map(tuple, self.describe())))

    def __repr__(self) -> str:
        return f"RuleSet({[r.name for r in self.rules]!r})"

    def describe(self) -> list[list[Any]]:
        """The header form: `[name, None]` built-in, `[name, pattern]` text rule, `[name, pattern, "keys"]` key rule."""
        return [
            [r.name, None] if r.builtin else [r.name, r.pattern, "keys"] if r.kind == "keys" else [r.name, r.pattern]
            for r in self.rules
        ]

    def shown(self) -> str:
        """The rules as `callpin show` and `stats` name them: built-ins by name, user rules with their pattern."""
        return (
            ", ".join(
                r.name if r.builtin else f"{r.name}=keys:{r.pattern}" if r.kind == "keys" else f"{r.name}={r.pattern}"
                for r in self.rules
            )
            or "none"
        )

    def patterns(self) -> list[dict[str, Any]]:
        """Each rule's name, kind, whether it is built in, and its patterns (a built-in's as this process has it)."""
        return [
            {
                "name": r.name,
                "kind": "keys" if r.kind == "keys" else "text",
                "builtin": r.builtin,
                "pattern": r.pattern,
                **({"keys": SECRET_NAME_PATTERN} if r is REDACT else {}),
            }
            for r in self.rules
        ]

    def secret_key(self, name: str) -> bool:
        """True when the value under `name` is redacted by this set's `redact` or key rules."""
        known = self._secret_names.get(name)
        if known is None:
            # A loop, not any() over a generator: the C encoder calls this from inside a
            # recorded call, where making a function object on a failed allocation crashes
            # CPython 3.12 and 3.13 (the memory-error test of a recorded call).
            known = False
            for one in self.key_rules:
                if secret_name(name) if one is REDACT else one.compiled.search(name) is not None:
                    known = True
                    break
            if len(self._secret_names) < 4096:
                self._secret_names[name] = known
        return known

    def without(self, *names: str) -> RuleSet:
        """This set without the rules named (`DEFAULT_RULES.without("redact")` records secrets as they are)."""
        unknown = [n for n in names if all(r.name != n for r in self.rules)]
        if unknown:
            raise UsageError(f"no rule {unknown[0]!r} in {self!r}")
        return RuleSet([r for r in self.rules if r.name not in names])

    @classmethod
    def from_description(cls, described: Any) -> RuleSet:
        """Rebuild a rule set from a header's description; raises UsageError when malformed."""
        if not isinstance(described, list):
            raise UsageError("normalization rules must be a list")
        rules: list[Rule] = []
        for item in described:
            if not (isinstance(item, list) and len(item) in (2, 3) and isinstance(item[0], str)):
                raise UsageError(f"malformed normalization rule {item!r}")
            if len(item) == 3:
                if item[2] != "keys" or not isinstance(item[1], str):
                    raise UsageError(f"malformed normalization rule {item!r}")
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    rules.append(secret_keys(item[1], item[0]))
                continue
            name, pattern = item
            if pattern is None:
                if name not in BUILTIN_RULES:
                    raise UsageError(f"unknown built-in rule {name!r}")
                rules.append(BUILTIN_RULES[name])
            elif isinstance(pattern, str):
                # The pattern comes from a log: a warning Python gives about it
                # (FutureWarning: possible nested set) is no reader's to act on, and
                # would add a line to a command's stderr.
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    rules.append(rule(pattern, name))
            else:
                raise UsageError(f"malformed normalization rule {item!r}")
        return cls(rules)

    @classmethod
    def named(cls, names: list[str] | tuple[str, ...]) -> RuleSet:
        """A rule set of built-in rules by name (`uuid`, `timestamp`, `address`)."""
        unknown = [n for n in names if n not in BUILTIN_RULES]
        if unknown:
            known = ", ".join(BUILTIN_RULES)
            raise UsageError(f"unknown rule {unknown[0]!r} (known: {known})")
        return cls([BUILTIN_RULES[n] for n in names])

    def with_rules(self, extra: list[Rule] | tuple[Rule, ...]) -> RuleSet:
        """This set and the rules of `extra` after it: `DEFAULT_RULES.with_rules([rule(r"ord-\\d+", "order")])`."""
        return RuleSet(self.rules + tuple(extra))


DEFAULT_RULES = RuleSet((UUID, TIMESTAMP, ADDRESS, REDACT, TMP))
NO_RULES = RuleSet(())


class Numbering:
    """First-appearance numbers of normalized values, one counter per placeholder name.

    The same key under the same placeholder always gets the same number within one log,
    so "the same id was passed to both calls" stays pinned after normalization.
    """

    __slots__ = ("table",)

    def __init__(self) -> None:
        # placeholder -> key -> number. Keys are only ever added, each with the next
        # number, so a placeholder's last number is the size of its table.
        self.table: dict[str, dict[str | int, int]] = {}

    def number(self, placeholder: str, key: str | int) -> int:
        known = self.table.get(placeholder)
        if known is None:
            known = self.table[placeholder] = {}
        # One lookup: a key new to the table is the next number, one in it keeps its own,
        # and one stored with None (not numbered yet) is the next number too.
        found = known.setdefault(key, len(known) + 1)
        if found is None:
            found = known[key] = len(known) + 1
        return found

    def peek(self, placeholder: str, key: str | int) -> int:
        """The number a key already has, or 0 when it has none (numbering unchanged)."""
        return self.table.get(placeholder, {}).get(key, 0)


def _scan(text: str, rules: tuple[Rule, ...], numbering: Numbering, peek: bool) -> str:
    # Leftmost match wins; at the same position the earlier rule wins. This is what
    # one alternation regex would do, without merging user patterns' groups. Each
    # rule's next match is kept until the scan passes its start: searching every rule
    # again after each match would make a text of many matches of one rule, and none
    # of another, quadratic (a 16 MiB text of uuids took hours).
    pieces: list[str] = []
    pos = 0
    length = len(text)
    ahead: list[re.Match[str] | None] = [None] * len(rules)
    # A rule whose needles the text lacks cannot match it: searched already, nothing found.
    # (The pattern of redact's secret parameters alone takes longer on a short text
    # than all the others together.)
    searched = [
        not one.needed(text) if one.needed is not None else bool(one.needles) and not _holds_any(text, one.needles)
        for one in rules
    ]
    while pos <= length:
        best: re.Match[str] | None = None
        best_rule: Rule | None = None
        for index, one in enumerate(rules):
            found = ahead[index]
            if not searched[index] or (found is not None and found.start() < pos):
                found = _search(one, text, pos, length)
                ahead[index] = found
                searched[index] = True
            if found is not None and (best is None or found.start() < best.start()):
                best, best_rule = found, one
        if best is None or best_rule is None:
            break
        # A rule that names a group `secret` (redact's parameters) replaces that group only,
        # less the quotes and brackets that end it (unless that is all the value holds).
        if best_rule.builtin and best.lastgroup == "secret":
            start, end = best.span("secret")
            end = start + (len(text[start:end].rstrip(VALUE_AROUND)) or end - start)
        elif best_rule.builtin and best.lastgroup in _VALUE_GROUPS:
            start, end = best.span(best.lastgroup)
            if end - start > 2 and text[start] in "'\"" and text[end - 1] == text[start]:
                start, end = start + 1, end - 1  # a secret line's quoted value
        else:
            start, end = best.span()
        pieces.append(text[pos:start])
        key = best_rule.key(text[start:end])
        number = numbering.peek(best_rule.placeholder, key) if peek else numbering.number(best_rule.placeholder, key)
        pieces.append(f"<{best_rule.placeholder}:{number}>")
        pos = end
    if not pieces:
        return text
    pieces.append(text[pos:])
    return "".join(pieces)


# The groups of redact's patterns that hold the value alone (the name stays).
_VALUE_GROUPS = ("line_secret", "json_secret", "repr_secret")


def _holds_any(text: str, needles: tuple[str, ...]) -> bool:
    for needle in needles:
        if needle in text:
            return True
    return False


def _search(one: Rule, text: str, pos: int, length: int) -> re.Match[str] | None:
    """The rule's first non-empty match starting at or after `pos`."""
    found = one.compiled.search(text, pos)
    while found is not None and found.end() == found.start():
        if found.start() >= length:
            return None
        found = one.compiled.search(text, found.start() + 1)
    return found


def may_match(text: str, rules: RuleSet, reprs: bool) -> bool:
    """False when no built-in text rule of `rules` can match `text`: each needs a text it lacks."""
    # A loop over needles chosen once per rule set: this runs for every new text the
    # Python encoder writes, where a generator (or a regex search) cost more than the
    # few substring tests themselves.
    return _holds_any(text, rules._repr_needles if reprs else rules._needles)


def normalize_text(text: str, rules: RuleSet, numbering: Numbering, *, reprs: bool = False, peek: bool = False) -> str:
    """Replace every match of the text rules (and, for reprs, `address`) with placeholders."""
    active = rules.text_rules
    if reprs and rules.address is not None:
        active = (*active, rules.address)
    if not active:
        return text
    if rules._builtin_only and not may_match(text, rules, reprs):
        return text
    return _scan(text, active, numbering, peek)
