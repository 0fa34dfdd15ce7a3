"""requests: a whole Response marked. Its state holds what changes on every run (the
server's port as an int, `elapsed`); callpin's form of a requests Response leaves those
out (the `Date` header is numbered by the `timestamp` rule). A registered form still
comes first."""

import client
import pytest
import requests

import callpin
from callpin import DEFAULT_RULES, RuleSet, rule

RULES = RuleSet([*DEFAULT_RULES.rules, rule(r"127\.0\.0\.1:\d+", "local")])


@pytest.fixture
def response_form():
    callpin.register(requests.Response, lambda r: {"status": r.status_code, "url": r.url, "body": r.json()})
    yield
    callpin.unregister(requests.Response)


def test_the_whole_response_is_pinned(callpin, base_url, clean_environment):
    with callpin.pin(spy=["requests.adapters.HTTPAdapter.send"], normalize=RULES) as rec:
        rec.mark("response", client.stock_response(base_url, "A-17"))


def test_the_response_is_pinned_through_a_form(callpin, base_url, clean_environment, response_form):
    with callpin.pin(spy=["requests.adapters.HTTPAdapter.send"], normalize=RULES) as rec:
        rec.mark("response", client.stock_response(base_url, "A-17"))
