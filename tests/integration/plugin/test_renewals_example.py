"""End to end: the bundled renewals example pinned with the fixture, then refactored two ways."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from .project import baselines, run

pytest_plugins = ["pytester"]

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "renewals"
CHARGE = '    charge = charge_card(case["card"], amount, currency, idempotency_key=key)\n'
RECEIPT = '    send_receipt(case["email"], amount, currency, reference=key, renewed_at=renewed_at)\n'
# The same calls, reached differently: the billing module passed as a default argument.
SAFE = [
    (
        "from .billing import charge_card, send_receipt\n",
        "from . import billing as billing_module\n",
    ),
    (
        "def renew(case: dict[str, Any]) -> dict[str, Any]:\n",
        "def renew(case: dict[str, Any], billing: Any = billing_module) -> dict[str, Any]:\n",
    ),
    ("    charge = charge_card(", "    charge = billing.charge_card("),
    ("    send_receipt(case", "    billing.send_receipt(case"),
]


@pytest.fixture
def example(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A project holding a copy of examples/renewals, its baselines written by the plugin."""
    shutil.copytree(
        EXAMPLE,
        pytester.path / "examples" / "renewals",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (pytester.path / "examples" / "__init__.py").write_text("")
    pytester.makeini("[pytest]\ntestpaths = examples\n")
    # This process has imported the repository's own `examples`; the child run must
    # import the copy, which the refactors below edit.
    for name in [name for name in sys.modules if name.split(".")[0] == "examples"]:
        monkeypatch.delitem(sys.modules, name)
    pytester.syspathinsert()
    result = run(pytester, "--callpin-mode=new")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["new mode: 3 written, 0 updated, 0 drifted, 0 missing, 0 unchanged"])
    return pytester


def edit(project: pytest.Pytester, replacements: list[tuple[str, str]]) -> None:
    path = project.path / "examples" / "renewals" / "renewals.py"
    text = path.read_text()
    for old, new in replacements:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path.write_text(text)


def test_the_example_pins_one_baseline_per_test(example):
    assert baselines(example) == [
        "baselines/examples/renewals/test_renewals/test_renew_charges_a_credit_as_zero.cpin",
        "baselines/examples/renewals/test_renewals/test_renew_charges_then_sends_the_receipt.cpin",
        "baselines/examples/renewals/test_renewals/test_renew_leaves_an_inactive_case_alone.cpin",
    ]
    run(example).assert_outcomes(passed=3)


def test_sending_the_receipt_before_the_charge_fails_with_both_calls_moved(example):
    edit(example, [(CHARGE + RECEIPT, RECEIPT + CHARGE)])
    result = run(example)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=2, passed=1)
    result.stdout.re_match_lines(
        [
            r"^_+ test_renew_charges_then_sends_the_receipt _+$",
            r"^E\s+callpin\.errors\.Drift: interactions differ from "
            r"baselines/examples/renewals/test_renewals/test_renew_charges_then_sends_the_receipt\.cpin$",
            r"^E\s+moved\s+1\s+0\s+billing\.send_receipt\('ada@example\.com', 1500, 'usd', "
            r"reference='renewal-42-<uuid:1>', renewed_at='<ts:1>'\)$",
            r"^E\s+moved\s+0\s+1\s+billing\.charge_card\('card_A', 1500, 'usd', "
            r"idempotency_key='renewal-42-<uuid:1>'\)$",
            r"^E\s+2 differences: 2 moved, 0 missing, 0 extra, 0 changed$",
        ]
    )
    result.stdout.fnmatch_lines(["check mode: 0 written, 0 updated, 2 drifted, 0 missing, 1 unchanged"])


def test_passing_the_billing_module_in_keeps_every_call_and_passes(example):
    edit(example, SAFE)
    result = run(example)
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["check mode: 0 written, 0 updated, 0 drifted, 0 missing, 3 unchanged"])
