"""The same approved order, with the ORM models given a form (their mapped columns), as docs/api.md advises."""

import pytest
from shop import service
from shop.models import Base, Customer
from shop.schemas import ChargeResult
from sqlalchemy import inspect
from test_service import SPY, request, stubs


def mapped_columns(obj):
    """An ORM instance as its column values, read from its loaded state (no SQL runs)."""
    loaded = inspect(obj).dict
    return {key: loaded.get(key) for key in inspect(type(obj)).column_attrs.keys()}


@pytest.fixture
def orm_form(callpin):
    callpin.register(Base, mapped_columns)
    yield
    callpin.unregister(Base)


def test_the_receipt_pins_the_order_columns(callpin, session, orm_form):
    approved = callpin.returns(ChargeResult(charge_id="ch_1", approved=True))
    with callpin.pin(spy=SPY, stub=stubs(approved)) as rec:
        rec.mark("returned", service.place_order(session, request()))


def test_a_returning_customer_pins_the_customer_columns(callpin, session, orm_form):
    session.add(Customer(email="ada@example.com", name="Ada Lovelace"))
    session.commit()
    approved = callpin.returns(ChargeResult(charge_id="ch_3", approved=True))
    with callpin.pin(spy=SPY, stub=stubs(approved)) as rec:
        rec.mark("returned", service.place_order(session, request()))
