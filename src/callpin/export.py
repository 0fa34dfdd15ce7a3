"""CALLPIN_OUTPUT_DIR: a copy of every recording's log, for a probe or a CI artifact to collect."""

from __future__ import annotations

import os
from typing import Any

from .atomic import private_copy
from .logfile import log_bytes
from .names import output_name
from .normalize import RuleSet

OUTPUT_DIR_VARIABLE = "CALLPIN_OUTPUT_DIR"


def export_log(
    source: str | os.PathLike[str] | None,
    label: str | None,
    frames: list[bytes],
    rules: RuleSet,
    meta: dict[str, Any],
) -> str | None:
    """Copy a log into CALLPIN_OUTPUT_DIR when it is set; the path written, else None.

    The name comes from `source` (a log path) when given, else from `label` (the first
    spied label); see `names.output_name`. A name already taken in the folder gets
    `-2`, `-3`... before `.cpin`, so no log is ever overwritten there.
    """
    folder = os.environ.get(OUTPUT_DIR_VARIABLE)
    if not folder:
        return None
    return write_unique(os.path.join(folder, output_name(source, label)), frames, rules, meta)


def write_unique(path: str, frames: list[bytes], rules: RuleSet, meta: dict[str, Any]) -> str:
    """Write a log at `path`, or at `stem-2.cpin`, `stem-3.cpin`... if taken; the path used.

    The log is written completely to a private name first and then hard-linked to
    the first free name, which fails rather than replaces when the name exists: two
    processes sharing the folder never overwrite each other and no reader ever sees a
    half-written file.
    """
    stem = path[: -len(".cpin")]
    with private_copy(path, log_bytes(frames, rules=rules, meta=meta)) as private:
        number = 1
        while True:
            candidate = path if number == 1 else f"{stem}-{number}.cpin"
            try:
                os.link(private, candidate)
            except FileExistsError:
                number += 1
                continue
            return candidate
