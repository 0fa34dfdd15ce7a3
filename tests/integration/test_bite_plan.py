"""`callpin bite --list`, `--shard K/N`, `--merge` and a mistyped `--label`, on throw-away projects."""

from __future__ import annotations

import json
from pathlib import Path

from .test_bite import PINNED_TEST, PYTEST, UNPINNED_TEST, bite, make_project, renewals_project


def test_list_prints_the_planned_mutants_and_runs_nothing(tmp_path: Path) -> None:
    project = renewals_project(tmp_path / "repo", "raise SystemExit('the test command ran')\n")
    marker = tmp_path / "ran"
    done = bite(project, "--list", "--test", f"touch {marker}", "renewals.py")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split() for line in done.stdout.splitlines()[1:-1]]
    assert sorted((row[1], row[2]) for row in rows) == [
        ("delete", "renewals.py:7"),
        ("delete", "renewals.py:8"),
        ("duplicate", "renewals.py:7"),
        ("duplicate", "renewals.py:8"),
        ("swap", "renewals.py:7"),
    ]
    assert done.stdout.splitlines()[-1] == "bite: 5 mutants planned; nothing run"
    assert not marker.exists()


def test_shards_split_the_plan_without_overlap_or_gap(tmp_path: Path) -> None:
    project = renewals_project(tmp_path / "repo", PINNED_TEST)
    whole = {line.split()[0] for line in bite(project, "--list", "renewals.py").stdout.splitlines()[1:-1]}
    parts = []
    for shard in ("1/3", "2/3", "3/3"):
        listed = bite(project, "--list", "--shard", shard, "renewals.py").stdout.splitlines()
        parts.append({line.split()[0] for line in listed[1:-1] if not line.startswith("ID")})
    assert set().union(*parts) == whole
    assert sum(len(part) for part in parts) == len(whole)


def test_two_shards_merge_into_the_report_of_one_run(tmp_path: Path) -> None:
    project = renewals_project(tmp_path / "repo", UNPINNED_TEST)
    one = bite(project, "--test", PYTEST, "--jobs", "2", "--format", "json", "renewals.py")
    paths = []
    for index in (1, 2):
        path = tmp_path / f"shard{index}.json"
        options = ("--test", PYTEST, "--shard", f"{index}/2", "--format", "json", "-o", str(path))
        shard = bite(project, *options, "renewals.py")
        assert shard.returncode in (0, 1), shard.stderr
        paths.append(str(path))
    merged = bite(project, "--merge", "--format", "json", *paths)
    assert merged.returncode == one.returncode == 1, merged.stderr
    whole, combined = json.loads(one.stdout), json.loads(merged.stdout)
    assert combined["mutants"] == whole["mutants"]
    assert combined["summary"] == whole["summary"]
    text = bite(project, "--merge", *paths)
    assert text.stdout.splitlines()[-1] == bite(project, "--test", PYTEST, "renewals.py").stdout.splitlines()[-1]


def test_merging_one_shard_twice_or_a_file_that_is_no_report_is_a_usage_error(tmp_path: Path) -> None:
    project = renewals_project(tmp_path / "repo", PINNED_TEST)
    path = tmp_path / "all.json"
    bite(project, "--test", PYTEST, "--format", "json", "-o", str(path), "renewals.py")
    twice = bite(project, "--merge", str(path), str(path))
    assert twice.returncode == 2
    assert "is in two reports" in twice.stderr and "Traceback" not in twice.stderr
    (tmp_path / "junk.json").write_text("[1, 2]")
    junk = bite(project, "--merge", str(tmp_path / "junk.json"))
    assert junk.returncode == 2
    assert "junk.json is not a bite JSON report" in junk.stderr


def test_a_bad_shard_is_a_usage_error(tmp_path: Path) -> None:
    project = renewals_project(tmp_path / "repo", PINNED_TEST)
    done = bite(project, "--list", "--shard", "3/2", "renewals.py")
    assert done.returncode == 2
    assert "--shard takes K/N with 1 <= K <= N, got '3/2'" in done.stderr


def test_a_label_that_matches_nothing_is_named_with_the_closest_pinned_labels(tmp_path: Path) -> None:
    project = renewals_project(tmp_path / "repo", PINNED_TEST)
    done = bite(project, "--list", "--label", "billing.charge_crad", "renewals.py")
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "--label billing.charge_crad matches no call site in SOURCE; "
        "closest pinned labels: billing.charge_card, billing.send_receipt"
    )


ORDERS = """\
def reserve(item):
    return item


def charge(item):
    return item


def checkout(item, conn):
    reserve(item)
    charge(item)
    conn.send(item)
    return item
"""

ORDERS_TEST = """\
import callpin
from shop import orders


class Conn:
    def send(self, item):
        return item


def test_checkout():
    with callpin.record(spy=["shop.orders"]) as recording:
        orders.checkout("book", Conn())
    assert [event.label for event in recording.events if event.kind == "call"] == [
        "shop.orders.checkout",
        "shop.orders.reserve",
        "shop.orders.charge",
    ]
"""


def test_a_whole_module_pin_mutates_the_calls_between_its_functions_and_not_a_same_named_call(
    tmp_path: Path,
) -> None:
    files = {"shop/__init__.py": "", "shop/orders.py": ORDERS, "tests/test_orders.py": ORDERS_TEST}
    project = make_project(tmp_path / "repo", files)
    labels = ("--label", "shop.orders.reserve", "--label", "shop.orders.charge")
    listed = bite(project, "--list", *labels, "shop")
    assert listed.returncode == 0, listed.stderr
    places = sorted((row.split()[1], row.split()[2]) for row in listed.stdout.splitlines()[1:-1])
    assert places == [
        ("delete", "shop/orders.py:10"),
        ("delete", "shop/orders.py:11"),
        ("duplicate", "shop/orders.py:10"),
        ("duplicate", "shop/orders.py:11"),
        ("swap", "shop/orders.py:10"),
    ]
    send = ("--label", "net.Conn.send")
    strict = bite(project, "--list", *labels, *send, "shop")
    assert (strict.returncode, "--label net.Conn.send matches no call site") == (2, strict.stderr[9:51])
    loose = bite(project, "--list", "--loose", *labels, *send, "shop")
    assert next(line for line in loose.stdout.splitlines() if "shop/orders.py:12" in line).endswith("(by name)")
    done = bite(project, "--test", PYTEST, "--jobs", "2", *labels, "shop")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("bite: 5 mutants in ")
