"""The renewals code's interactions with billing, pinned with the callpin pytest plugin.

Run from a folder that holds `examples/` (the demo copies it into a scratch project):
`pytest --callpin-mode=new` writes the baselines under `baselines/examples/renewals/`,
and a plain `pytest` then fails any change to which billing calls are made, in what
order, how often, or with which arguments.
"""

from __future__ import annotations

import pytest

from examples.renewals import billing, renewals

CHARGE_CARD = "examples.renewals.billing.charge_card"
SEND_RECEIPT = "examples.renewals.billing.send_receipt"
SPY = {"billing.charge_card": CHARGE_CARD, "billing.send_receipt": SEND_RECEIPT}
ACTIVE = {"id": 42, "card": "card_A", "email": "ada@example.com", "amount": 1500}


@pytest.fixture(autouse=True)
def _empty_outbox():
    yield
    billing.LEDGER.clear()
    billing.OUTBOX.clear()


def test_renew_charges_then_sends_the_receipt(callpin):
    with callpin.pin(spy=SPY, stub={CHARGE_CARD: callpin.returns({"ok": True})}) as rec:
        rec.mark("returned", renewals.renew(ACTIVE))


def test_renew_charges_a_credit_as_zero(callpin):
    with callpin.pin(spy=SPY, stub={CHARGE_CARD: callpin.returns({"ok": True})}) as rec:
        rec.mark("returned", renewals.renew({**ACTIVE, "amount": -300}))


def test_renew_leaves_an_inactive_case_alone(callpin):
    with callpin.pin(spy=SPY) as rec:
        rec.mark("returned", renewals.renew({**ACTIVE, "active": False}))
