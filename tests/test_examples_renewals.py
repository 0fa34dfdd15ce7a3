"""The bundled renewals scenario, recorded: the calls it makes and their determinism."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from examples.renewals import billing, renewals

import callpin

ROOT = Path(__file__).resolve().parent.parent
SPY = {
    "billing.charge_card": "examples.renewals.billing.charge_card",
    "billing.send_receipt": "examples.renewals.billing.send_receipt",
}
STUB = {"examples.renewals.billing.charge_card": callpin.returns({"ok": True})}
ACTIVE = {"id": 42, "card": "card_A", "email": "ada@example.com", "amount": 1500}


@pytest.fixture(autouse=True)
def empty_outbox():
    yield
    billing.LEDGER.clear()
    billing.OUTBOX.clear()


def record_renewal(case):
    with callpin.record(spy=SPY, stub=STUB) as rec:
        rec.mark("returned", renewals.renew(case))
    return rec


def test_an_active_case_is_charged_then_sent_a_receipt():
    rec = record_renewal(ACTIVE)
    assert [(e.kind, e.label, e.args, e.kwargs) for e in rec.events] == [
        (
            "call",
            "billing.charge_card",
            ("card_A", 1500, "usd"),
            {"idempotency_key": "renewal-42-<uuid:1>"},
        ),
        (
            "call",
            "billing.send_receipt",
            ("ada@example.com", 1500, "usd"),
            {"reference": "renewal-42-<uuid:1>", "renewed_at": "<ts:1>"},
        ),
        (
            "mark",
            "returned",
            (),
            {},
        ),
    ]
    assert rec.events[-1].value == {
        "case": 42,
        "status": "renewed",
        "amount": 1500,
        "charged": True,
    }
    assert billing.LEDGER == []  # the stub, not the gateway, was charged


def test_an_inactive_case_calls_nothing():
    rec = record_renewal({**ACTIVE, "active": False})
    assert [e.kind for e in rec.events] == ["mark"]


def test_a_negative_amount_is_charged_and_receipted_as_zero():
    rec = record_renewal({**ACTIVE, "amount": -300})
    amounts = [e.args[1] for e in rec.events if e.kind == "call"]
    assert amounts == [0, 0]


def test_the_aliases_in_renewals_are_what_is_spied_and_are_restored():
    original_charge, original_receipt = billing.charge_card, billing.send_receipt
    rec = record_renewal(ACTIVE)
    assert {p.place for p in rec.targets if p.alias} == {
        "examples.renewals.renewals.charge_card",
        "examples.renewals.renewals.send_receipt",
    }
    assert renewals.charge_card is original_charge
    assert renewals.send_receipt is original_receipt


def test_without_alias_patching_the_legacy_calls_go_unrecorded():
    with callpin.record(spy=SPY, stub=STUB, aliases=False) as rec:
        renewals.renew(ACTIVE)
    assert rec.events == []


SCENARIO = """
import sys
import callpin
from examples.renewals import renewals

cases = [
    {"id": 1, "card": "card_A", "email": "a@example.com", "amount": 1500},
    {"id": 2, "card": "card_B", "email": "b@example.com", "amount": -20, "currency": "eur"},
    {"id": 3, "card": "card_C", "email": "c@example.com", "amount": 900, "active": False},
]
spy = {"billing": "examples.renewals.billing"}
with callpin.record(sys.argv[1], spy=spy, outcomes="all") as rec:
    rec.mark("returned", renewals.renew_all(cases))
"""


def test_two_child_process_runs_write_byte_identical_logs(tmp_path):
    outputs = []
    for run, seed in enumerate(("1", "2")):
        path = tmp_path / f"run{run}.cpin"
        path_list = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": path_list}
        env.pop("CALLPIN_OUTPUT_DIR", None)
        subprocess.run(
            [sys.executable, "-c", SCENARIO, str(path)],
            cwd=tmp_path,
            env=env,
            check=True,
            timeout=120,
        )
        outputs.append(path.read_bytes())
    assert outputs[0] == outputs[1]
    log = callpin.load(tmp_path / "run0.cpin")
    assert [e.label for e in log if e.kind == "call"] == [
        "billing.charge_card",
        "billing.send_receipt",
        "billing.charge_card",
        "billing.send_receipt",
    ]
    keys = [e.kwargs["idempotency_key"] for e in log if e.label == "billing.charge_card" and e.kind == "call"]
    assert keys == ["renewal-1-<uuid:1>", "renewal-2-<uuid:2>"]
