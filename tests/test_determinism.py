"""The same interactions give byte-identical logs whatever the ambient environment."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import datetime, decimal, locale, sys, time, uuid
    from callpin._impl import Encoder
    from callpin.logfile import write_log
    try:
        locale.setlocale(locale.LC_ALL, "")
    except locale.Error:
        pass
    encoder = Encoder()
    key = uuid.uuid4()
    frames = [
        encoder.encode_event(0, "billing.charge_card", ["card_A", 1500],
                             {"currency": "usd", "idempotency_key": key}, None, None, 1, 0),
        encoder.encode_event(0, "billing.tag", [{"gold", "silver", "bronze", "platinum"}],
                             {"ids": frozenset({str(uuid.uuid4()) for _ in range(5)})}, None, None, 1, 0),
        encoder.encode_event(0, "billing.send_receipt", [{"b": 1, "a": [2.5, decimal.Decimal("3.10")]}],
                             {"at": datetime.datetime.now(), "local": time.strftime("%Y-%m-%d %H:%M:%S"),
                              "again": str(key)}, None, None, 1, 0),
        encoder.encode_event(3, "returned", [], {}, {"set": {1, "x", (2, None), b"z"}}, None, 1, 0),
    ]
    write_log(sys.argv[1], frames)
    """
)

ENVIRONMENTS = [
    {"PYTHONHASHSEED": "0", "TZ": "UTC", "LANG": "C", "LC_ALL": "C"},
    {"PYTHONHASHSEED": "1", "TZ": "Asia/Tokyo", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"},
    {"PYTHONHASHSEED": "random", "TZ": "America/Los_Angeles", "LANG": "en_US.UTF-8", "LC_ALL": "en_US.UTF-8"},
    {"PYTHONHASHSEED": "random", "TZ": "Asia/Tokyo", "LANG": "C", "LC_ALL": "C"},
]


@pytest.mark.parametrize("pure_python", ["0", "1"], ids=["default-impl", "pure-python"])
def test_logs_are_byte_identical_across_environments(tmp_path, pure_python):
    outputs = []
    for number, extra in enumerate(ENVIRONMENTS):
        workdir = tmp_path / f"cwd{number % 2}"
        workdir.mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k not in ("TZ", "LANG", "LC_ALL", "PYTHONHASHSEED")}
        env.update(extra, CALLPIN_PURE_PYTHON=pure_python)
        out = tmp_path / f"run{number}.cpin"
        subprocess.run([sys.executable, "-c", SCRIPT, str(out)], cwd=workdir, env=env, check=True)
        outputs.append(out.read_bytes())
    assert all(data == outputs[0] for data in outputs[1:])


@pytest.mark.parametrize("form", ["text", "json", "html"])
def test_what_show_prints_of_a_log_with_sets_is_the_same_in_every_environment(tmp_path, form):
    # The log holds sets of strings, uuids and mixed types: a set's repr() follows its
    # elements' hashes, and so PYTHONHASHSEED.
    log = tmp_path / "sets.cpin"
    subprocess.run([sys.executable, "-c", SCRIPT, str(log)], check=True)
    outputs = []
    for extra in ENVIRONMENTS:
        env = {k: v for k, v in os.environ.items() if k not in ("TZ", "LANG", "LC_ALL", "PYTHONHASHSEED")}
        env.update(extra)
        shown = subprocess.run(
            [sys.executable, "-m", "callpin", "show", "--format", form, str(log)],
            env=env,
            check=True,
            capture_output=True,
        )
        outputs.append(shown.stdout)
    assert b"silver" in outputs[0]
    assert all(output == outputs[0] for output in outputs[1:])
