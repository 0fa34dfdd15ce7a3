"""Pins of the status client: the fixture's pins, a plain callpin.pin() and nested recorders."""

from pathlib import Path

import callpin
import requests
from callpin import DEFAULT_RULES, RuleSet, rule

import client

# The server's port changes on every run: the pins keep the host and number the port.
RULES = RuleSet([*DEFAULT_RULES.rules, rule(r"127\.0\.0\.1:\d+", "local")])
BASELINES = Path(__file__).resolve().parents[1] / "baselines"

# The test's own reference to the original: callpin never rebinds it.
real_request = requests.api.request


def test_fetch_status_through_a_stub_that_delegates_to_the_saved_original(callpin, base_url):
    stub = {"requests.api.request": lambda *args, **kwargs: real_request(*args, **kwargs)}
    with callpin.pin(spy=["requests.api.request"], stub=stub, normalize=RULES) as rec:
        rec.mark("returned", client.fetch_status(base_url))


def test_a_client_records_its_session_construction_and_calls(callpin, base_url):
    with callpin.pin(spy=["requests.Session"], normalize=RULES) as rec:
        rec.mark("returned", client.StatusClient(base_url).status())


def test_a_plain_pin_inside_pytest(base_url):
    with callpin.pin(BASELINES / "plain" / "status.cpin", spy=["requests.api.request"], normalize=RULES) as rec:
        rec.mark("returned", client.fetch_status(base_url))


def test_an_inner_stub_is_recorded_by_the_outer_pin(callpin, base_url):
    def offline(adapter, request, **kwargs):
        response = requests.Response()
        response.status_code, response._content, response.url = 200, b'{"ok": true, "offline": true}', request.url
        return response

    send = "requests.adapters.HTTPAdapter.send"
    with callpin.pin(spy=[send], normalize=RULES, outcomes="none") as outer:
        with callpin.record(spy=[send], stub={send: callpin.with_receiver(offline)}, normalize=RULES) as inner:
            outer.mark("returned", client.StatusClient(base_url).status())
    assert [event.label for event in inner.events] == [send]
