"""A canned Stripe API: the posted parameters echoed back as the created object, with a
client secret and a request id as Stripe's own responses carry them."""

import json
from urllib.parse import parse_qsl


def _parse(post_data):
    made = {}
    for key, value in parse_qsl(post_data or ""):
        if key.startswith("metadata["):
            made.setdefault("metadata", {})[key[9:-1]] = value
        elif key == "amount":
            made[key] = int(value)
        else:
            made[key] = value
    return made


def fake_request(client, method, url, headers, post_data=None, **kwargs):
    body = _parse(post_data)
    path = url.split("/v1/")[1]
    prefix, kind = {
        "customers": ("cus", "customer"),
        "payment_intents": ("pi", "payment_intent"),
        "refunds": ("re", "refund"),
    }[path]
    body.update(id=f"{prefix}_test1", object=kind)
    if kind == "payment_intent":
        body.update(status="requires_confirmation", client_secret="pi_test1_secret_Zq81xKd0")
    if kind == "refund":
        body["status"] = "succeeded"
    return json.dumps(body), 200, {"Request-Id": "req_9Fh2kQ", "Content-Type": "application/json"}
