"""The file names callpin makes: a test's baseline path and a recording's exported name.

Every name is built from components that every filesystem accepts and that never
escape their folder (`component`), so no test id or log path can name a file outside
the baselines folder or CALLPIN_OUTPUT_DIR.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import xxhash

_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_MAX_COMPONENT = 100
# Device names Windows reserves in every folder, with any extension (`con.cpin` too).
_RESERVED = frozenset(["CON", "PRN", "AUX", "NUL"] + [f"{port}{n}" for port in ("COM", "LPT") for n in range(1, 10)])


def component(text: str) -> str:
    """One path component that every filesystem accepts and that never escapes its folder.

    Anything outside [A-Za-z0-9._-] becomes `_` and leading and trailing dots are
    dropped (`..` is never a component; Windows drops trailing dots). Whenever that
    changed the text, or the text is too long or a name Windows reserves (`CON`,
    `nul`, `COM1`...), a hash of the original keeps it unique and usable.
    """
    cleaned = _SAFE.sub("_", text).strip(".") or "_"
    reserved = cleaned.split(".", 1)[0].upper() in _RESERVED
    if reserved:
        # Windows reserves the name whatever follows its first dot (`nul.txt`).
        cleaned = cleaned.replace(".", "_", 1)
    if cleaned != text or len(cleaned) > _MAX_COMPONENT or reserved:
        digest = xxhash.xxh3_64_hexdigest(text.encode("utf-8", "surrogatepass"))[:8]
        cleaned = f"{cleaned[: _MAX_COMPONENT - 9]}-{digest}"
    return cleaned


def split_nodeid(nodeid: str) -> tuple[list[str], str]:
    """A node id as its test file's folders (without `.py`) and its test name, unsanitized.

    The name joins classes and function with `.` and a parameter id with `-`; it is
    empty for a module's node id. A `..` (a test file outside the rootdir) stays a
    folder of its own, cleaned like any other, so `../x/test_a.py` and `x/test_a.py`
    never share a baseline.
    """
    file_part, _, rest = nodeid.partition("::")
    file_path = file_part[:-3] if file_part.endswith(".py") else file_part
    folders = [part for part in file_path.split("/") if part not in ("", ".")]
    name, bracket, param = rest.partition("[")
    test = name.replace("::", ".")
    if bracket:
        test = f"{test}-{param[:-1] if param.endswith(']') else param}"
    return folders, test


def baseline_stem(nodeid: str) -> tuple[str, ...]:
    """Path components of a test's baseline, without `.cpin`: its file's folders, then its name.

    `tests/test_renewals.py::TestRenew::test_renew[active]` gives
    `("tests", "test_renewals", "TestRenew.test_renew-active")`. Every component is
    sanitized on its own, so no node id can name a path outside the baselines folder.
    """
    folders, test = split_nodeid(nodeid)
    return (*(component(part) for part in folders), component(test or "_"))


def baseline_path(root: Path, nodeid: str, name: str | None = None) -> Path:
    """The baseline of test `nodeid` under `root`: `<stem>.cpin`, or `<stem>-<name>.cpin`."""
    *folders, test = baseline_stem(nodeid)
    file_name = test if name is None else f"{test}-{component(name)}"
    return root.joinpath(*folders, f"{file_name}.cpin")


def owned(nodeid: str, parts: tuple[str, ...], *, collector: bool) -> bool:
    """Whether the baseline at `parts` (relative to the baselines folder) may belong to `nodeid`.

    A test owns `<stem>.cpin` and its named pins `<stem>-*.cpin`; a module owns its
    whole folder; a class owns the names that start with it.
    """
    folders, test = split_nodeid(nodeid)
    if parts[:-1] != tuple(component(part) for part in folders):
        return False
    if collector:
        prefix = _SAFE.sub("_", test).strip(".")
        return not prefix or parts[-1].startswith(f"{prefix}.")
    stem = component(test or "_")
    return parts[-1] == f"{stem}.cpin" or parts[-1].startswith(f"{stem}-")


def output_name(source: str | os.PathLike[str] | None, label: str | None) -> str:
    """The name a recording's copy gets in CALLPIN_OUTPUT_DIR.

    From a log path, as written, so the name never depends on the working folder:
    a relative path keeps all its folders, minus `.` and `..`
    (`baselines/tests/test_renewals/test_renew.cpin` stays that, `../out/renew.cpin`
    becomes `out/renew.cpin`); an absolute path keeps its last folder and file name
    (`/tmp/pytest-7/test_renew0/renew.cpin` becomes `test_renew0/renew.cpin`).
    Without a path: the first spied label, `examples.renewals.billing.charge_card.cpin`
    (`recording.cpin` when nothing is spied). Each part is made safe by `component`,
    as a baseline's is, and the name ends in `.cpin`.
    """
    if source is not None:
        text = os.fspath(source)
        parts = [part for part in re.split(r"[\\/]+", text) if part not in ("", ".", "..")]
        if os.path.isabs(text):
            parts = parts[-2:]
        parts = parts or ["recording"]
    else:
        parts = [label or "recording"]
    parts[-1] = parts[-1].removesuffix(".cpin")
    return "/".join(component(part) for part in parts) + ".cpin"
