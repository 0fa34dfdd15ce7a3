"""A characterization test of requests' HTTP adapter: a GET and a chunked POST, the adapter's calls pinned."""

import callpin
import requests
from callpin import DEFAULT_RULES, RuleSet, rule
from urllib3.connectionpool import HTTPConnectionPool
from urllib3.response import HTTPResponse

RULES = RuleSet([*DEFAULT_RULES.rules, rule(r"127\.0\.0\.1:\d+", "local")])
# urllib3's pool and raw response hold the local server's port and the response's Date
# header, which change on every run: pinned by identity, not by their state.
callpin.register(HTTPConnectionPool, callpin.opaque)
callpin.register(HTTPResponse, callpin.opaque)
SPY = ["requests.adapters.HTTPAdapter", "requests.sessions.Session.send", "requests.sessions.Session.close"]


def test_a_get_and_a_chunked_post_pin_the_adapter(callpin, base_url):
    with callpin.pin(spy=SPY, normalize=RULES) as rec:
        with requests.Session() as session:
            got = session.get(base_url + "/status", timeout=5)
            rec.mark("get", [got.status_code, got.json()])
            posted = session.post(base_url + "/upload", data=iter([b"ab", b"cd"]), timeout=5)
            rec.mark("post", [posted.status_code, posted.json()])
