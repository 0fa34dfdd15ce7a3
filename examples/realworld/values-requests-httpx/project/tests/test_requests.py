"""requests: the PreparedRequest that reaches HTTPAdapter.send is recorded by its state."""

import client

from callpin import DEFAULT_RULES, RuleSet, rule

# The server's port changes on every run; the pin keeps the host and numbers the port.
RULES = RuleSet([*DEFAULT_RULES.rules, rule(r"127\.0\.0\.1:\d+", "local")])


def test_fetch_stock_pins_the_adapter_call(callpin, base_url, clean_environment):
    with callpin.pin(spy=["requests.adapters.HTTPAdapter.send"], normalize=RULES) as rec:
        rec.mark("returned", client.fetch_stock(base_url, "A-17"))
