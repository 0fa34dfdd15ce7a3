"""Stripe API objects as arguments, on stripe 16.1.0.

`project/shop/billing.py` charges an order with `stripe.Customer.create` and
`stripe.PaymentIntent.create` and hands the intent to `ledger.record`; it refunds one
with a `StripeClient` and hands the client and the refund to `ledger.audit`. The tests
stub stripe's HTTP transport with a canned API (`tests/fake_stripe.py`) and pin the
transport's calls and the ledger's. A Stripe object is recorded by its API fields, a
`StripeClient` by its options. The checks: the pins pass; the C and pure-Python recorders
write the same bytes; probe prints `VOLATILE: none`; neither the API key nor the intent's
client secret reaches a log; the intent is its fields alone (not the HTTP response it
came from, nor its requestor); the median event against the same tests recorded by
callpin before objects were recorded by their state (`BEFORE`: a Stripe object's repr is
its whole JSON) stays within 2x; an edited metadata field and an edited client option
each fail their pin, named by their path.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from event_sizes import BEFORE, callpin_before, frame_sizes  # noqa: E402
from scenario_copies import callpin_in, copy_project, edit_checks, probe_verdict, pytest_in, verdict  # noqa: E402

TESTS = "tests/test_billing.py"
CHARGE = "baselines/tests/test_billing/test_an_order_is_charged_and_recorded.cpin"
REFUND = "baselines/tests/test_billing/test_a_refund_is_audited_with_its_client.cpin"
SECRETS = (b"sk_test_51LEGACYsecretKEYabcdef0123456789", b"pi_test1_secret_Zq81xKd0")
STRIPE = ("STRIPE_API_KEY", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
INTENT = (
    "ledger.record(PaymentIntent#1(amount=2500, currency='usd', customer='cus_test1', metadata=StripeObject#1("
    "order_id='8', channel='web'), id='pi_test1', object='payment_intent', status='requires_confirmation', "
    "client_secret=<secret:"
)
# (what, old text of billing.py, new text, the log, what its diff must say)
CASES = (
    ("the intent's channel", '"channel": "web"', '"channel": "app"', CHARGE, "args[0].metadata.channel: 'web' → 'app'"),
    (
        "the client's retries",
        "max_network_retries=2",
        "max_network_retries=3",
        REFUND,
        "args[0].max_network_retries: 2 → 3",
    ),
)


def main() -> int:
    checks: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="callpin-realworld-stripe-") as name:
        folder = Path(name)
        project = copy_project(HERE / "project", folder, "project")
        written = pytest_in(project, TESTS, "--callpin-mode=new", leave_out=STRIPE)
        checks.append(("the pins pass and write their baselines", written.returncode == 0))
        shown = callpin_in(project, "show", CHARGE)
        recorded = next((line for line in shown.splitlines() if line.startswith("ledger.record(")), shown[-300:])
        print(f"  {recorded}")
        print(f"  {callpin_in(project, 'show', REFUND).splitlines()[2][:300]}")
        checks.append(("the intent is its API fields, its client secret redacted", recorded.startswith(INTENT)))

        pure = copy_project(HERE / "project", folder, "pure")
        pytest_in(pure, TESTS, "--callpin-mode=new", leave_out=STRIPE, CALLPIN_PURE_PYTHON="1")
        same = all((project / log).read_bytes() == (pure / log).read_bytes() for log in (CHARGE, REFUND))
        checks.append(("the C and pure-Python recorders write the same bytes", same))

        found_verdict = probe_verdict(project, TESTS, leave_out=STRIPE)
        print(f"probe {TESTS}: {found_verdict}")
        checks.append(("probe is volatile nowhere", found_verdict == "VOLATILE: none"))

        written_logs = [path for copy in (project, pure) for path in copy.glob("baselines/**/*.cpin")]
        leaked = [
            str(path.relative_to(folder)) for path in written_logs if any(s in path.read_bytes() for s in SECRETS)
        ]
        print(f"secrets looked for in {len(written_logs)} logs; found in: {leaked or 'none'}")
        checks.append(
            ("neither the API key nor the client secret reaches a log", len(written_logs) == 4 and not leaked)
        )

        before = copy_project(HERE / "project", folder, "before")
        source = callpin_before(folder)
        made = pytest_in(
            before, TESTS, "--callpin-mode=new", leave_out=STRIPE, CALLPIN_PURE_PYTHON="1", PYTHONPATH=str(source)
        )
        checks.append((f"callpin at {BEFORE[:7]} records the same tests", made.returncode == 0))
        now = [size for log in (CHARGE, REFUND) for size in frame_sizes(project / log)]
        then = [size for log in (CHARGE, REFUND) for size in frame_sizes(before / log)] if made.returncode == 0 else [1]
        ratio = statistics.median(now) / statistics.median(then)
        print(f"event sizes, bytes: {then} at {BEFORE[:7]}, {now} now")
        print(f"median event: {statistics.median(then):g} -> {statistics.median(now):g} bytes, {ratio:.2f}x")
        checks.append((f"the median event stays within 2x ({ratio:.2f}x)", ratio <= 2.0))

        checks += edit_checks(HERE / "project", folder, "shop/billing.py", CASES, TESTS, leave_out=STRIPE)
    return verdict(checks)


if __name__ == "__main__":
    sys.exit(main())
