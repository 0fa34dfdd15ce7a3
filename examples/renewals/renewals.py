"""Legacy renewals: charge the card, then email the receipt, once per active case."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from .billing import charge_card, send_receipt


def renew(case: dict[str, Any]) -> dict[str, Any]:
    """Renew one subscription case; what happened, as a small status dict."""
    if not case.get("active", True):
        return {"case": case["id"], "status": "skipped"}

    amount = _amount_due(case)
    # Credits are refunded elsewhere: a renewal never charges less than nothing. The
    # floor is a private helper's, free to change in a refactor: pin the billing calls,
    # never _amount_due.
    currency = case.get("currency", "usd")
    key = f"renewal-{case['id']}-{uuid.uuid4()}"
    renewed_at = datetime.now(UTC).isoformat()

    charge = charge_card(case["card"], amount, currency, idempotency_key=key)
    send_receipt(case["email"], amount, currency, reference=key, renewed_at=renewed_at)

    return {"case": case["id"], "status": "renewed", "amount": amount, "charged": charge["ok"]}


def renew_all(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Renew every case in order."""
    return [renew(case) for case in cases]


def _amount_due(case: dict[str, Any]) -> int:
    """The amount to charge: the case's, floored at zero."""
    return max(case["amount"], 0)
