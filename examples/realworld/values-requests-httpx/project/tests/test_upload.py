"""requests: a PreparedRequest whose body (a stock count per SKU, about 9 KB) puts it over
callpin's 4,096-byte state budget. The pin still passes, and its note names the object it
does not pin in full."""

import client

from callpin import DEFAULT_RULES, RuleSet, rule

RULES = RuleSet([*DEFAULT_RULES.rules, rule(r"127\.0\.0\.1:\d+", "local")])
COUNTS = {f"SKU-{number:04d}": number % 97 for number in range(500)}


def test_upload_counts_pins_the_adapter_call(callpin, base_url, clean_environment):
    with callpin.pin(spy=["requests.adapters.HTTPAdapter.send"], normalize=RULES) as rec:
        rec.mark("returned", client.upload_counts(base_url, COUNTS))
