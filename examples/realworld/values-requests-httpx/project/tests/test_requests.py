"""requests: the PreparedRequest that reaches HTTPAdapter.send is recorded by its state."""

import client
import pytest

from callpin import DEFAULT_RULES, RuleSet, rule

# The server's port changes on every run; the pin keeps the host and numbers the port.
RULES = RuleSet([*DEFAULT_RULES.rules, rule(r"127\.0\.0\.1:\d+", "local")])
AMBIENT = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")


@pytest.fixture
def clean_environment(monkeypatch):
    for name in AMBIENT:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def test_fetch_stock_pins_the_adapter_call(callpin, base_url, clean_environment):
    with callpin.pin(spy=["requests.adapters.HTTPAdapter.send"], normalize=RULES) as rec:
        rec.mark("returned", client.fetch_stock(base_url, "A-17"))
