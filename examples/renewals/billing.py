"""The billing collaborators of the renewals code: a card gateway and a receipt mailer.

Stand-ins for services a test must not reach: charges and receipts land in the
in-memory LEDGER and OUTBOX instead of a payment provider and a mail server.
"""

from __future__ import annotations

from typing import Any

LEDGER: list[dict[str, Any]] = []
OUTBOX: list[dict[str, Any]] = []


class CardDeclined(Exception):
    """The gateway refused a charge."""


def charge_card(
    card: str, amount: int, currency: str = "usd", idempotency_key: str | None = None
) -> dict[str, Any]:
    """Charge `amount` (in cents) to `card`; the gateway's charge record."""
    if amount < 0:
        raise CardDeclined(f"negative amount {amount}")
    if card.startswith("card_declined"):
        raise CardDeclined(f"card {card} declined")
    charge = {
        "ok": True,
        "card": card,
        "amount": amount,
        "currency": currency,
        "key": idempotency_key,
    }
    LEDGER.append(charge)
    return charge


def send_receipt(
    email: str,
    amount: int,
    currency: str = "usd",
    *,
    reference: str | None = None,
    renewed_at: str | None = None,
) -> str:
    """Queue a receipt email for a renewal; the message's id."""
    message = {
        "to": email,
        "amount": amount,
        "currency": currency,
        "reference": reference,
        "renewed_at": renewed_at,
    }
    OUTBOX.append(message)
    return f"msg-{len(OUTBOX)}"
