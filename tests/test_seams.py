"""callpin seams: each function's collaborators, internal calls, ambient state and unresolved calls."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from examples.renewals import billing, renewals

import callpin
from callpin import seams
from callpin.render_seams import report
from clirun import run_in

ROOT = Path(__file__).resolve().parent.parent
RENEWALS = "examples/renewals/renewals.py"


def by_name(found: list[seams.FunctionSeams], qualname: str) -> seams.FunctionSeams:
    return next(f for f in found if f.function.qualname == qualname)


@pytest.fixture
def renew(monkeypatch: pytest.MonkeyPatch) -> seams.FunctionSeams:
    monkeypatch.chdir(ROOT)
    return by_name(seams.find([RENEWALS]), "renew")


def test_the_renewals_example_lists_billing_as_collaborators_with_their_lines(renew: seams.FunctionSeams) -> None:
    assert [(s.target, s.lines, s.binding) for s in renew.of("collaborator")] == [
        ("examples.renewals.billing.charge_card", (25,), "from-import"),
        ("examples.renewals.billing.send_receipt", (26,), "from-import"),
    ]
    assert all(s.pinned for s in renew.of("collaborator"))


def test_uuid_and_clock_calls_are_ambient_with_how_to_tame_them(renew: seams.FunctionSeams) -> None:
    ambient = {s.target: s.hint for s in renew.of("ambient")}
    assert set(ambient) == {"uuid.uuid4", "datetime.datetime.now"}
    assert "uuid rule" in (ambient["uuid.uuid4"] or "")
    assert "timestamp rule" in (ambient["datetime.datetime.now"] or "")


def test_a_private_helper_is_internal_and_flagged(renew: seams.FunctionSeams) -> None:
    [helper] = renew.of("internal")
    assert (helper.target, helper.private) == ("examples.renewals.renewals._amount_due", True)
    assert [s.text for s in renew.of("unresolved")] == ["case.get", "datetime.now().isoformat"]


def test_a_baseline_that_does_not_pin_a_collaborator_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    found = by_name(seams.find([RENEWALS], baselines=tmp_path), "renew")
    assert [s.pinned for s in found.of("collaborator")] == [False, False]


SHOP = """\
import os
import random
import billing
import billing as pay
from billing import Gateway
from billing import charge_card as charge

gateway_alias = billing


def checkout(order, gateway=billing, conn=None):
    gateway.charge_card(order)
    pay.send_receipt(order)
    charge(order)
    gateway_alias.refund(order)
    g = Gateway()
    g.authorize(order)
    conn.send(order)
    os.environ["SHOP_MODE"]
    random.random()
    for name in os.listdir("."):
        _log(name)


def _log(name):
    return name
"""


def shop(tmp_path: Path) -> seams.FunctionSeams:
    (tmp_path / "billing.py").write_text("class Gateway:\n    def authorize(self, o):\n        pass\n")
    (tmp_path / "shop.py").write_text(SHOP)
    return by_name(seams.find([str(tmp_path / "shop.py")], baselines=tmp_path / "none"), "checkout")


def test_aliases_and_a_module_default_resolve_to_the_collaborator(tmp_path: Path) -> None:
    found = shop(tmp_path)
    assert {s.target: s.binding for s in found.of("collaborator")} == {
        "billing.charge_card": "default",
        "billing.send_receipt": "import",
        "billing.refund": "alias",
        "billing.Gateway": "from-import",
        "billing.Gateway.authorize": "instance",
    }
    assert {s.target: s.lines for s in found.of("collaborator")}["billing.charge_card"] == (12, 14)
    assert [s.target for s in found.of("collaborator") if s.constructs] == ["billing.Gateway"]
    assert [(s.text, s.hint) for s in found.of("unresolved")] == [("conn.send", "parameter")]
    assert {s.target for s in found.of("ambient")} == {"os.environ", "random.random", "os.listdir"}
    assert [s.target for s in found.of("internal")] == ["shop._log"]


def test_the_spy_list_names_a_constructed_class_once_instead_of_its_methods(tmp_path: Path) -> None:
    assert shop(tmp_path).spy() == ["billing.charge_card", "billing.send_receipt", "billing.refund", "billing.Gateway"]


REFUSING = """\
from errs import Refused
import errs


def check(order, charge):
    if not order:
        raise Refused("empty order")
    if order == "late":
        raise errs.Refused
    problem = errs.Refused("kept")
    charge(order)
    return problem
"""


def test_an_exception_built_to_be_raised_is_no_collaborator(tmp_path: Path) -> None:
    (tmp_path / "errs.py").write_text("class Refused(Exception):\n    pass\n")
    (tmp_path / "refusing.py").write_text(REFUSING)
    found = by_name(seams.find([str(tmp_path / "refusing.py")], baselines=tmp_path / "none"), "check")
    # The raised one is counted with the other calls; the one built and kept stays listed.
    assert [(s.target, s.lines) for s in found.of("collaborator")] == [("errs.Refused", (10,))]
    assert found.others == 1
    assert [s.text for s in found.of("unresolved")] == ["charge"]


def test_the_spy_list_of_a_function_that_raises_is_accepted_by_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "seams_errs.py").write_text(
        "class Refused(Exception):\n    pass\n\n\ndef charge(order):\n    return order\n"
    )
    (tmp_path / "seams_strict.py").write_text(
        "from seams_errs import Refused, charge\n\n\ndef pay(order):\n"
        "    if not order:\n        raise Refused(order)\n    return charge(order)\n"
    )
    code, out, _ = run_in(tmp_path, "seams", "--spy", "pay", "seams_strict.py")
    assert (code, out) == (0, "spy=['seams_errs.charge']\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        strict = importlib.import_module("seams_strict")
        with callpin.record(spy=eval(out.strip().removeprefix("spy="))) as recording:
            strict.pay("o-1")
            with pytest.raises(strict.Refused):
                strict.pay("")
    finally:
        for name in ("seams_errs", "seams_strict"):
            sys.modules.pop(name, None)
    assert [(e.kind, e.label) for e in recording.events] == [("call", "seams_errs.charge")]


def test_the_spy_output_pasted_into_record_records_the_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run_in(ROOT, "seams", "--spy", "renew", RENEWALS)
    assert code == 0
    assert out.startswith("spy=[")
    spy = eval(out.strip().removeprefix("spy="))  # the printed list, as a user pastes it
    with callpin.record(spy=spy, stub={spy[0]: callpin.returns({"ok": True})}) as recording:
        renewals.renew({"id": 1, "card": "c", "email": "e", "amount": 5})
    assert [e.label for e in recording.events if e.kind == "call"] == spy
    assert billing.OUTBOX
    billing.OUTBOX.clear()


def test_the_skeleton_is_a_pytest_module_that_fails_until_its_inputs_are_given(tmp_path: Path) -> None:
    code, out, _ = run_in(ROOT, "seams", "--skeleton", "renew", RENEWALS)
    assert code == 0
    compile(out, "test_skeleton.py", "exec")
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_skeleton.py").write_text(out)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "callpin.pytest_plugin", "-p", "no:cacheprovider"]
    first = subprocess.run([*command, "--callpin-mode=new"], cwd=project, env=env, capture_output=True, text=True)
    assert first.returncode == 1, first.stdout
    assert "fill in CASES with the arguments of renew(case)" in first.stdout
    filled = out.replace(
        "CASES: dict[str, dict[str, object]] = {}",
        'CASES: dict[str, dict[str, object]] = {"active": {"case": {"id": 1, "card": "c", "email": "e", "amount": 5}}}',
    )
    (project / "test_skeleton.py").write_text(filled)
    second = subprocess.run([*command, "--callpin-mode=new"], cwd=project, env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stdout + second.stderr
    [baseline] = (project / "baselines").rglob("*.cpin")
    labels = [e.label for e in callpin.load(baseline) if e.kind == "call"]
    assert labels == ["examples.renewals.billing.charge_card", "examples.renewals.billing.send_receipt"]


def test_json_carries_every_field(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run_in(ROOT, "seams", "--format", "json", f"{RENEWALS}::renew")
    assert code == 0
    document = json.loads(out)
    [function] = document["functions"]
    assert set(function) == {"module", "function", "kind", "file", "line", "private", "seams", "other_calls"}
    assert {seam["kind"] for seam in function["seams"]} == set(seams.KINDS)
    expected = {"kind", "target", "text", "file", "lines", "count", "binding", "constructs", "private", "pinned"}
    expected.add("hint")
    assert all(set(seam) == expected for seam in function["seams"])
    assert document["summary"] == {
        "functions": 1,
        "collaborator": 2,
        "internal": 1,
        "ambient": 2,
        "unresolved": 2,
    }


def test_the_text_table_fits_120_columns_and_ends_with_a_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    lines = list(report(seams.find(["examples/renewals"])).lines())
    assert lines[0] == "examples/renewals/billing.py"
    assert "  renew  line 12" in lines
    assert max(map(len, lines)) <= 120
    assert lines[-1].startswith("seams: ")


def test_a_collaborator_called_on_many_lines_keeps_the_table_within_120_columns(tmp_path: Path) -> None:
    # A long callee, called on 15 lines with three-digit numbers (click.option on every command).
    name = "a_long_collaborator_name_that_fills_its_column"
    calls = "".join(f"    billing.{name}()\n" + "    pass\n" * 6 for _ in range(15))
    (tmp_path / "cli.py").write_text("import billing\n\n\ndef commands():\n" + "    pass\n" * 95 + calls)
    found = seams.find([str(tmp_path / "cli.py")], baselines=tmp_path / "none")
    [seam] = by_name(found, "commands").of("collaborator")
    assert seam.count == 15 and seam.lines[0] == 100
    lines = list(report(found).lines())
    [row] = [line for line in lines if line.startswith("    collaborator")]
    assert max(map(len, lines[1:])) <= 120  # the first is the file's path
    assert f"lines 100,107,114,…,{seam.lines[-1]} (15x)" in row
    assert report(found).as_json()["functions"][-1]["seams"][0]["lines"] == list(seam.lines)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nowhere.py",), "no such file or folder: nowhere.py"),
        ((f"{RENEWALS}::nothing",), f"no function nothing in {RENEWALS}"),
        (("--spy", "nothing", RENEWALS), "no function nothing in SOURCE"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    code, out, err = run_in(ROOT, "seams", *args)
    assert (code, out, err) == (2, "", f"callpin: {message}\n")


def test_a_file_that_does_not_parse_is_named(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def f(:\n")
    code, _, err = run_in(tmp_path, "seams", "broken.py")
    assert code == 2 and err.startswith("callpin: cannot parse broken.py")


def test_reading_never_runs_the_code(tmp_path: Path) -> None:
    (tmp_path / "boom.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w')\ndef f():\n    pass\n")
    code, _, _ = run_in(tmp_path, "seams", "boom.py")
    assert code == 0 and not (tmp_path / "ran").exists()
