"""place_order: the legacy function whose interactions are pinned before a refactor."""

import uuid
from datetime import UTC, datetime
from decimal import Decimal

from sqlalchemy import select

from shop import audit, crm, gateway, notify
from shop.models import Customer, Order, OrderLine
from shop.schemas import AuditEvent, ChargePayload

DATABASE_URL = "postgresql://shop:s3cr3t-pw@db.internal:5432/shop"
ADMIN_PASSWORD = "adm1n-hunter2"


def place_order(session, request):
    customer = session.scalars(select(Customer).where(Customer.email == request.email)).first()
    if customer is None:
        customer = Customer(email=request.email, name=request.name)
        session.add(customer)
    else:
        crm.returning_customer(customer)
    amount = sum((line.unit_price * line.quantity for line in request.lines), Decimal("0"))
    if request.coupon == "TENOFF":
        amount = amount * Decimal("0.90")
    amount = amount.quantize(Decimal("0.01"))
    key = uuid.uuid4()
    order = Order(
        customer=customer,
        amount=amount,
        currency="EUR",
        created_at=datetime.now(UTC),
        reference=f"ord-{key}",
    )
    for line in request.lines:
        order.lines.append(OrderLine(sku=line.sku, quantity=line.quantity, unit_price=line.unit_price))
    session.add(order)
    session.flush()

    result = gateway.charge(
        ChargePayload(
            idempotency_key=key,
            amount=amount,
            currency="EUR",
            card=request.card_token,
            description=f"order {order.id}",
            requested_at=order.created_at,
            billing=request.shipping,
        )
    )
    order.status = "paid" if result.approved else "declined"
    session.flush()
    if result.approved:
        notify.send_receipt(order)
    audit.log(
        AuditEvent(
            action="order.placed",
            order_id=order.id,
            at=order.created_at,
            actor=request.email,
            password=ADMIN_PASSWORD,
            database_url=DATABASE_URL,
            charge_id=result.charge_id,
        )
    )
    session.commit()
    return {"order": order.id, "status": order.status, "amount": str(amount)}
