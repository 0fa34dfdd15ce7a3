"""Pinned as a new user would first write it: whatever the environment says reaches the pin."""

from callpin import DEFAULT_RULES, RuleSet, rule

import client

# The server's port changes on every run; the pin keeps the host and numbers the port.
RULES = RuleSet([*DEFAULT_RULES.rules, rule(r"127\.0\.0\.1:\d+", "local")])


def test_fetch_status_pins_the_adapter_call(callpin, base_url):
    with callpin.pin(spy=["requests.adapters.HTTPAdapter.send"], normalize=RULES) as rec:
        rec.mark("returned", client.fetch_status(base_url))
