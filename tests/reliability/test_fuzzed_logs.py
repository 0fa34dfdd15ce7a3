"""Fuzzed logs: mutated and generated logs fed to the reader, `show`, `diff` and `verify`.

Every input must be read or rejected cleanly: the library raises a `LogFormatError`,
the command line exits 2 with one `callpin:` line on stderr. A crash (any other
exception, exit code or output, a traceback, a control character printed raw), a hang
(one consumer over 2 s of CPU on one input, or a child stuck past its watchdog) or a
peak RSS over 200 MB fails the check. The inputs are made and run by
`fuzz_logs_driver.py` in two child processes (one per core), so that a segfault or a
MemoryError is counted as a crash of one input instead of ending pytest; the driver's
docstring says how to rebuild any input from the seed. Decoding is pure Python on
msgpack's unpacker (`codec.Decoder`): `_speedups.c` only encodes, so there is no C
decoder to fuzz with atheris.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import msgpack
import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import callpin
from callpin import codec
from callpin.errors import LogFormatError
from callpin.logfile import encode_header
from callpin.normalize import DEFAULT_RULES

from .conftest import Figures, Scale

DRIVER = Path(__file__).with_name("fuzz_logs_driver.py")
WORKERS = 2
BATCH = 5_000
SEED = int(os.environ.get("CALLPIN_FUZZ_SEED", "11"))
CHECK = f"fuzzed logs ({callpin.IMPLEMENTATION})"


def _scratch() -> str:
    # The children rewrite their input file for every input: on tmpfs that costs
    # microseconds, on this machine's /tmp milliseconds.
    shm = "/dev/shm"
    return tempfile.mkdtemp(prefix="callpin-fuzz-", dir=shm if os.path.isdir(shm) else None)


def _died(folder: str, child: subprocess.Popen[str], stderr: str) -> dict[str, Any]:
    """The summary of a child that did not finish: its last input is the culprit."""
    index = Path(folder, "index").read_text() if Path(folder, "index").exists() else "?"
    data = Path(folder, "input.cpin").read_bytes() if Path(folder, "input.cpin").exists() else b""
    hung = "Timeout (" in stderr
    return {
        "tried": 0,
        "runs": 0,
        "accepted": 0,
        "rejected": 0,
        "crashes": 0 if hung else 1,
        "hangs": 1 if hung else 0,
        "memory": 0,
        "slowest": [0.0, None, ""],
        "peak_rss_mb": 0.0,
        "signatures": {},
        "first_failure": {
            "index": index,
            "target": "child process",
            "verdict": "hang" if hung else "crash",
            "detail": f"exit status {child.returncode}\n{stderr[-4000:]}",
            "hex": data.hex(),
        },
    }


def _run_batch(start: int, stop: int, timeout: float) -> list[dict[str, Any]]:
    """Inputs start..stop-1, split over WORKERS fresh children: one summary each."""
    folders = [_scratch() for _ in range(WORKERS)]
    try:
        children = [
            subprocess.Popen(
                [
                    sys.executable,
                    str(DRIVER),
                    str(SEED),
                    str(worker),
                    str(WORKERS),
                    str(start),
                    str(stop),
                    folder,
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for worker, folder in enumerate(folders)
        ]
        summaries = []
        for folder, child in zip(folders, children, strict=True):
            try:
                stdout, stderr = child.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                child.kill()
                stdout, stderr = child.communicate()
                stderr += f"\nTimeout (the child ran over {timeout:.0f} s)"
            if child.returncode == 0 and stdout.strip():
                summaries.append(json.loads(stdout))
            else:
                summaries.append(_died(folder, child, stderr))
        return summaries
    finally:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


def _run_children(count: int) -> list[dict[str, Any]]:
    # A command runs in a fresh process, and so does each batch: a child's peak RSS
    # is that of its worst input, not of the heap fragments left by 50,000 before it.
    summaries = []
    for start in range(0, count, BATCH):
        summaries += _run_batch(start, min(start + BATCH, count), timeout=BATCH * 0.5 + 120)
    return summaries


def _failure_report(summaries: list[dict[str, Any]]) -> str:
    lines = []
    for summary in summaries:
        failure = summary["first_failure"]
        if failure is None:
            continue
        lines.append(
            f"first failing input: seed {SEED}, input {failure['index']}, "
            f"{failure['target']} {failure['verdict']} "
            f"(rebuild: python {DRIVER.name} --show {SEED} {failure['index']} DIR)"
        )
        hexed = failure["hex"]
        lines.append(f"input ({len(hexed) // 2} bytes): {hexed[:400]}{'...' if len(hexed) > 400 else ''}")
        lines.append(failure["detail"])
        lines.extend(
            f"  {n} x {signature} (first: input {first})" for signature, (n, first) in summary["signatures"].items()
        )
    return "\n".join(lines)


def test_fuzzed_logs_are_read_or_rejected_cleanly(scale: Scale, figures: Figures) -> None:
    count = scale.pick(400, 100_000)
    summaries = _run_children(count)

    def total(key: str) -> int:
        return sum(int(summary[key]) for summary in summaries)

    slowest = max(summary["slowest"][0] for summary in summaries)
    figures.add(CHECK, "inputs tried", total("tried"))
    figures.add(CHECK, "runs (reader, show, diff both ways, verify)", total("runs"))
    figures.add(CHECK, "accepted", total("accepted"))
    figures.add(CHECK, "rejected cleanly", total("rejected"))
    figures.add(CHECK, "crashes", total("crashes"), zero=True)
    figures.add(CHECK, "hangs > 2 s (CPU)", total("hangs"), zero=True)
    figures.add(CHECK, "memory over 200 MB", total("memory"), zero=True)
    figures.add(CHECK, "peak RSS MB", max(summary["peak_rss_mb"] for summary in summaries))
    figures.add(CHECK, "slowest consumer of one input, CPU s", round(slowest, 3))
    figures.add(CHECK, "seed", SEED)

    report = _failure_report(summaries)
    assert (total("crashes"), total("hangs"), total("memory")) == (0, 0, 0), report
    assert total("tried") == count, report
    assert total("accepted") + total("rejected") == count
    # Both outcomes happen: the inputs reach past the integrity check into the decoder.
    assert total("accepted") > count // 20
    assert total("rejected") > count // 2


# ---------------------------------------------------------------------------
# Generated bytes straight into the reader.

_HEAD = encode_header(DEFAULT_RULES, None)


def _sealed(frames: list[bytes]) -> bytes:
    body = b"".join(frames)
    trailer = b"\xd8\x7f" + len(frames).to_bytes(8, "big") + xxhash.xxh3_64_intdigest(body).to_bytes(8, "big")
    return _HEAD + body + trailer


_msgpack_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats() | st.text() | st.binary(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)
_ext_values = st.builds(
    lambda code, payload: msgpack.packb(msgpack.ExtType(code, payload)),
    st.integers(0, 127),
    st.one_of(st.binary(max_size=30), _msgpack_values.map(msgpack.packb)),
)
_frame_fields = st.lists(
    st.one_of(_msgpack_values.map(msgpack.packb), _ext_values, st.binary(max_size=12)),
    min_size=8,
    max_size=8,
)
_frames = st.one_of(
    _frame_fields.map(lambda fields: b"\x98" + b"".join(fields)),
    st.binary(max_size=60).map(lambda raw: b"\x98" + raw),
)
_log_bytes = st.one_of(
    st.binary(max_size=200),
    st.binary(max_size=200).map(lambda raw: b"CPIN\x01\x00" + raw),
    st.lists(_frames, max_size=4).map(_sealed),
)


def test_generated_bytes_are_read_or_rejected_as_log_format_errors(scale: Scale) -> None:
    @settings(
        max_examples=scale.pick(200, 5_000),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(_log_bytes)
    def check(data: bytes) -> None:
        try:
            log = callpin.load("generated.cpin", data=data)
            log.verify()
        except LogFormatError:
            return
        for event in log:
            event.render().encode("utf-8")

    check()


def test_generated_values_decode_or_raise_corrupt_log(scale: Scale) -> None:
    @settings(max_examples=scale.pick(200, 5_000), deadline=None, database=None)
    @given(st.one_of(_ext_values, st.binary(max_size=60), _msgpack_values.map(msgpack.packb)))
    def check(data: bytes) -> None:
        try:
            codec.decode(data)
        except LogFormatError:
            pass

    check()
