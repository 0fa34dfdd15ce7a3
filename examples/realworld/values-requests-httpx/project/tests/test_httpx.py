"""httpx: the Request that reaches the transport is recorded by its state."""

import json

import client
import httpx


def answer(request):
    asked = json.loads(request.content)
    return httpx.Response(200, json={"sku": asked["sku"], "total": 4.5 * asked["quantity"]})


def test_quote_pins_the_transport_call(callpin):
    with callpin.pin(spy=["httpx.MockTransport.handle_request"]) as rec:
        rec.mark("returned", client.quote(httpx.MockTransport(answer), "A-17", 3))
