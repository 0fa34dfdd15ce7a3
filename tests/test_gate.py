"""gate.judge: the verdict on one baseline from its old and new bytes and its manifest line."""

from __future__ import annotations

from callpin.gate import Snapshot, Verdict, judge
from callpin.logfile import log_bytes
from callpin.manifest import Entry
from sample_logs import frames_of, renewal

BASE = "4df2e50037dc0123456789abcdef012345678901"
PATH = "renew.cpin"


def snapshot(**changes: object) -> Snapshot:
    return Snapshot.of(log_bytes(frames_of(*renewal(**changes))), PATH)  # type: ignore[arg-type]


def blessed(side: Snapshot, reason: str = "characterized") -> Entry:
    assert side.log is not None
    return Entry(PATH, side.log.fingerprint, len(side.log), reason)


def verdict(old: Snapshot | None, new: Snapshot | None, entry: Entry | None) -> Verdict:
    return judge(PATH, old, new, entry, BASE)


def test_an_unchanged_baseline_with_its_line_passes():
    same = snapshot()
    found = verdict(same, snapshot(), blessed(same))
    assert (found.status, found.blocking, found.message, found.diff) == ("unchanged", False, "unchanged", None)


def test_a_change_blessed_in_the_manifest_passes_and_shows_its_diff():
    new = snapshot(swapped=True)
    found = verdict(snapshot(), new, blessed(new, "receipt first on purpose"))
    assert (found.status, found.blocking) == ("changed", False)
    assert found.message == "changed since 4df2e50037dc, blessed: receipt first on purpose"
    assert found.diff is not None and "2 differences: 2 moved" in found.diff


def test_a_change_left_with_the_old_line_is_refreshed_but_not_blessed():
    old, new = snapshot(), snapshot(swapped=True)
    found = verdict(old, new, blessed(old))
    assert (found.status, found.blocking) == ("changed", True)
    assert found.message.startswith("changed since 4df2e50037dc, refreshed but not blessed: the manifest says ")


def test_an_added_baseline_without_a_line_blocks_and_names_bless():
    found = verdict(None, snapshot(), None)
    assert (found.status, found.blocking) == ("added", True)
    assert found.message == "added since 4df2e50037dc without a blessing (run: callpin bless renew.cpin --reason ...)"


def test_an_unchanged_file_whose_line_disagrees_is_a_stale_manifest():
    old = snapshot()
    other = snapshot(amount=0)
    found = verdict(old, snapshot(), blessed(other))
    assert (found.status, found.blocking) == ("unchanged", True)
    assert found.message.startswith("manifest and file disagree (stale manifest or hand-edited log)")


def test_a_removal_without_a_line_is_blessed_and_one_with_a_line_blocks():
    old = snapshot()
    assert (verdict(old, None, None).status, verdict(old, None, None).blocking) == ("removed", False)
    kept = verdict(old, None, blessed(old))
    assert (kept.status, kept.blocking, kept.message) == (
        "removed",
        True,
        "listed in the manifest, but the file is gone",
    )


def test_a_damaged_file_blocks_whatever_its_line_says():
    good = snapshot()
    damaged = Snapshot.of(good.data[:-3], PATH)
    found = verdict(good, damaged, blessed(good))
    assert (found.status, found.blocking) == ("changed", True)
    assert found.message.startswith("the file is damaged: ")
