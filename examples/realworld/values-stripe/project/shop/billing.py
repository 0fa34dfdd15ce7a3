"""Legacy billing: talks to Stripe directly, as real code does."""

import uuid

import stripe

from shop import ledger

stripe.api_key = "sk_test_51LEGACYsecretKEYabcdef0123456789"
STRIPE_SECRET = "sk_test_51LEGACYsecretKEYabcdef0123456789"


def charge_order(order):
    customer = stripe.Customer.create(
        email=order["email"],
        name=order["name"],
        metadata={"order_id": str(order["id"])},
    )
    intent = stripe.PaymentIntent.create(
        amount=order["amount"],
        currency="usd",
        customer=customer.id,
        idempotency_key=f"order-{order['id']}-{uuid.uuid4()}",
        metadata={"order_id": str(order["id"]), "channel": "web"},
    )
    ledger.record(intent)
    return {"customer": customer.id, "intent": intent.id, "status": intent.status}


def refund_order(order, intent_id):
    client = stripe.StripeClient(STRIPE_SECRET, max_network_retries=2)
    refund = client.v1.refunds.create(
        params={"payment_intent": intent_id, "amount": order["amount"], "metadata": {"order_id": str(order["id"])}},
        options={"idempotency_key": f"refund-{order['id']}"},
    )
    ledger.audit(client, "refund", refund)
    return {"refund": refund.id, "status": refund.status}
