"""The pydantic models the service takes and sends."""

from datetime import datetime
from decimal import Decimal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr


class Address(BaseModel):
    street: str
    city: str
    country: str = "FR"


class LineIn(BaseModel):
    sku: str
    quantity: int = Field(gt=0)
    unit_price: Decimal


class OrderRequest(BaseModel):
    email: str
    name: str
    shipping: Address
    lines: list[LineIn]
    card_token: SecretStr
    coupon: str | None = None


class ChargePayload(BaseModel):
    model_config = ConfigDict(frozen=True)

    idempotency_key: UUID
    amount: Decimal
    currency: str
    card: SecretStr
    description: str
    requested_at: datetime
    billing: Address


class ChargeResult(BaseModel):
    charge_id: str
    approved: bool


class AuditEvent(BaseModel):
    model_config = ConfigDict(extra="allow")

    action: str
    order_id: int
    at: datetime
    actor: str
    password: str
    database_url: str
    _trace: str = PrivateAttr(default="")
