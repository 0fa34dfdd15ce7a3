"""place_order's three collaborators, pinned with ORM instances and pydantic models as arguments."""

from decimal import Decimal

from shop import service
from shop.models import Customer
from shop.schemas import Address, ChargeResult, LineIn, OrderRequest

SPY = {
    "gateway.charge": "shop.gateway.charge",
    "notify.send_receipt": "shop.notify.send_receipt",
    "audit.log": "shop.audit.log",
    "crm.returning_customer": "shop.crm.returning_customer",
}


def stubs(charge):
    """The gateway answers `charge`; the mailer and the audit queue are stubbed out."""
    return {
        "shop.gateway.charge": charge,
        "shop.notify.send_receipt": callpin_returns_none,
        "shop.audit.log": callpin_returns_none,
        "shop.crm.returning_customer": callpin_returns_none,
    }


def callpin_returns_none(*args, **kwargs):
    return None


def request(**changes):
    fields = dict(
        email="ada@example.com",
        name="Ada Lovelace",
        shipping=Address(street="12 rue des Lilas", city="Lyon"),
        lines=[
            LineIn(sku="A-17", quantity=2, unit_price=Decimal("19.90")),
            LineIn(sku="B-02", quantity=1, unit_price=Decimal("5.00")),
        ],
        card_token="tok_live_9f8e7d6c5b4a",
    )
    fields.update(changes)
    return OrderRequest(**fields)


def test_an_approved_order_is_charged_receipted_and_audited(callpin, session):
    approved = callpin.returns(ChargeResult(charge_id="ch_1", approved=True))
    with callpin.pin(spy=SPY, stub=stubs(approved)) as rec:
        rec.mark("returned", service.place_order(session, request()))


def test_a_declined_order_is_audited_without_a_receipt(callpin, session):
    declined = callpin.returns(ChargeResult(charge_id="ch_2", approved=False))
    with callpin.pin(spy=SPY, stub=stubs(declined)) as rec:
        rec.mark("returned", service.place_order(session, request(coupon="TENOFF")))


def test_a_returning_customer_is_announced_to_the_crm(callpin, session):
    session.add(Customer(email="ada@example.com", name="Ada Lovelace"))
    session.commit()
    approved = callpin.returns(ChargeResult(charge_id="ch_3", approved=True))
    with callpin.pin(spy=SPY, stub=stubs(approved)) as rec:
        rec.mark("returned", service.place_order(session, request()))
