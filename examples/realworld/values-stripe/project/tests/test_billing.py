"""Pins of the billing module: the Stripe transport stubbed with a canned API, the
ledger's calls pinned with the Stripe objects they are given."""

from shop import billing

from tests.fake_stripe import fake_request

ORDER = {"id": 8, "email": "bob@example.com", "name": "Bob", "amount": 2500}
TRANSPORT = "stripe._http_client.RequestsClient.request"


def test_an_order_is_charged_and_recorded(callpin):
    with callpin.pin(
        spy={"http.request": TRANSPORT, "ledger.record": "shop.ledger.record"},
        stub={TRANSPORT: callpin.with_receiver(fake_request)},
    ) as rec:
        rec.mark("returned", billing.charge_order(ORDER))


def test_a_refund_is_audited_with_its_client(callpin):
    with callpin.pin(
        spy={"http.request": TRANSPORT, "ledger.audit": "shop.ledger.audit"},
        stub={TRANSPORT: callpin.with_receiver(fake_request)},
    ) as rec:
        rec.mark("returned", billing.refund_order(ORDER, "pi_test1"))
