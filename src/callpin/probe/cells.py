"""The matrix probe runs: the baseline cell and each cell that changes one piece of ambient state."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field

from ..errors import UsageError

GROUPS = ("tz", "locale", "hashseed", "cwd", "env", "order", "clock")

# Variables a cell controls. All of them are removed from the inherited environment,
# then the cell sets its own, so the parent's values cannot leak into any cell.
LOCALE_VARIABLES = (
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_NUMERIC",
    "LC_TIME",
    "LC_COLLATE",
    "LC_MONETARY",
    "LC_MESSAGES",
)
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
CA_VARIABLES = ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE")
# Read by the hook probe puts on the children's PYTHONPATH (see `child_site`).
ORDER_VARIABLE = "CALLPIN_PROBE_ORDER"
CLOCK_VARIABLE = "CALLPIN_PROBE_CLOCK"
CONTROLLED = (
    "TZ",
    "PYTHONHASHSEED",
    *LOCALE_VARIABLES,
    *PROXY_VARIABLES,
    "NO_PROXY",
    "no_proxy",
    *CA_VARIABLES,
    "SSL_CERT_DIR",
    ORDER_VARIABLE,
    CLOCK_VARIABLE,
)

BASELINE_ENV = {"TZ": "UTC", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
# A proxy nothing listens on: a capture that sends traffic through the proxy fails at
# once instead of waiting, and one that only passes the setting on shows it changed.
PROXY = "http://127.0.0.1:9"
# The clock cell's shift: days, hours and minutes all move, so a date, a weekday or a
# time of day computed from "now" each changes.
CLOCK_OFFSET = 400 * 86400 + 5 * 3600 + 17 * 60
CLOCK_NAME = "+400d5h17m"
_PREFERRED_LOCALES = ("en_US.UTF-8", "de_DE.UTF-8", "fr_FR.UTF-8", "ja_JP.UTF-8", "en_GB.UTF-8")
_SHORT = {"tz": "tz", "locale": "loc", "hashseed": "hs", "cwd": "cwd", "env": "env", "order": "ord", "clock": "clk"}


@dataclass(frozen=True)
class Cell:
    """One environment of the matrix: the baseline, or the baseline with one setting changed.

    `env` is the cell's own variables; the `env` cell also gets a fresh HOME and a CA
    bundle at a new path, made in its run's scratch folder (`fresh_home`).
    """

    group: str  # baseline or one of GROUPS
    value: str
    env: dict[str, str]
    fresh_cwd: bool = False
    fresh_home: bool = False
    short: str = field(default="", compare=False)

    @property
    def name(self) -> str:
        return "baseline" if self.group == "baseline" else f"{self.group}={self.value}"


def available_locales() -> list[str]:
    """The locales this machine has, as `locale -a` lists them."""
    try:
        listed = subprocess.run(["locale", "-a"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return ["C"]
    return [line.strip() for line in listed.splitlines() if line.strip()]


def _utf8_locale(found: list[str]) -> str | None:
    canonical = {name.lower().replace("utf8", "utf-8"): name for name in found}
    for wanted in _PREFERRED_LOCALES:
        if wanted.lower() in canonical:
            return canonical[wanted.lower()]
    return None


def parse_env(assignments: tuple[str, ...] | list[str]) -> dict[str, str]:
    """`NAME=VALUE` words as a dict; a word without `=` or without a name is a usage error."""
    parsed: dict[str, str] = {}
    for word in assignments:
        name, equals, value = word.partition("=")
        if not equals or not name or "\0" in word:
            raise UsageError(f"--env takes NAME=VALUE, got {word!r}")
        parsed[name] = value
    return parsed


def _variations(group: str, base: dict[str, str], reference: str, extra_env: dict[str, str]) -> list[Cell]:
    if group == "tz":
        return [Cell("tz", zone, {**base, "TZ": zone}) for zone in ("Asia/Tokyo", "America/Los_Angeles")]
    if group == "locale":
        names = [name for name in dict.fromkeys(("C", "C.UTF-8", reference)) if name != reference]
        return [Cell("locale", name, {**base, "LC_ALL": name, "LANG": name}) for name in names]
    if group == "hashseed":
        return [Cell("hashseed", seed, {**base, "PYTHONHASHSEED": seed}) for seed in ("1", "2")]
    if group == "cwd":
        return [Cell("cwd", "fresh", dict(base), fresh_cwd=True)]
    if group == "env":
        proxies = {name: PROXY for name in PROXY_VARIABLES}
        return [Cell("env", "set", {**base, **proxies, **extra_env}, fresh_home=True)]
    if group == "order":
        return [Cell("order", "reversed", {**base, ORDER_VARIABLE: "reverse"})]
    return [Cell("clock", CLOCK_NAME, {**base, CLOCK_VARIABLE: str(CLOCK_OFFSET)})]


def build_cells(
    groups: tuple[str, ...] = GROUPS,
    locales: list[str] | None = None,
    extra_env: dict[str, str] | None = None,
) -> list[Cell]:
    """The baseline cell, then every variation of the chosen groups, each with a short name.

    The baseline runs in UTC, hash seed 0, the project's folder, and a real UTF-8
    locale when the machine has one (else C.UTF-8); the locale cells run under the
    other locales of that list, C always among them. `extra_env` (`--env`) goes to the
    `env` cell.
    """
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        raise UsageError(f"unknown cell {unknown[0]!r} (choose from {', '.join(GROUPS)})")
    if extra_env and "env" not in groups:
        raise UsageError("--env sets variables of the env cell; add env to --cells")
    found = available_locales() if locales is None and "locale" in groups else (locales or [])
    reference = _utf8_locale(found) or "C.UTF-8"
    base = {**BASELINE_ENV, "LC_ALL": reference, "LANG": reference}
    cells = [Cell("baseline", "", base, short="base")]
    for group in dict.fromkeys(groups):
        variations = _variations(group, base, reference, extra_env or {})
        for number, cell in enumerate(variations, start=1):
            short = _SHORT[group] + (str(number) if len(variations) > 1 else "")
            cells.append(Cell(cell.group, cell.value, cell.env, cell.fresh_cwd, cell.fresh_home, short))
    return cells
