"""The same pin with the environment fixed at the edge: no proxy or CA-bundle variable reaches requests."""

import pytest
from callpin import DEFAULT_RULES, RuleSet, rule

import client

RULES = RuleSet([*DEFAULT_RULES.rules, rule(r"127\.0\.0\.1:\d+", "local")])
AMBIENT = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")


@pytest.fixture
def clean_environment(monkeypatch):
    for name in AMBIENT:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def test_fetch_status_pins_the_adapter_call(callpin, base_url, clean_environment):
    with callpin.pin(spy=["requests.adapters.HTTPAdapter.send"], normalize=RULES) as rec:
        rec.mark("returned", client.fetch_status(base_url))
