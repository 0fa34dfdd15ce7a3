"""baselines/MANIFEST: strict reading, sorted writing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from callpin import manifest
from callpin.errors import ManifestError, UsageError
from callpin.manifest import Entry

GOOD = manifest.HEADER + "a/one.cpin\t0123456789abcdef\t3\tfirst pin\nb.cpin\tfedcba9876543210\t0\twhy not\n"


def test_a_written_manifest_reads_back(tmp_path):
    entries = [
        Entry("b.cpin", "fedcba9876543210", 0, "why not"),
        Entry("a/one.cpin", "0123456789abcdef", 3, "first pin"),
    ]
    manifest.write(tmp_path, entries)
    assert (tmp_path / "MANIFEST").read_text() == GOOD
    assert list(manifest.read(tmp_path).values()) == sorted(entries, key=lambda e: e.path)


def test_no_manifest_reads_as_empty(tmp_path):
    assert manifest.read(tmp_path) == {}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("a.cpin 0123456789abcdef 3 reason", "4 TAB-separated fields"),
        ("a.cpin\t0123456789ABCDEF\t3\treason", "16 lower-case hex"),
        ("a.cpin\t0123456789abcdef\tthree\treason", "not a number"),
        ("a.cpin\t0123456789abcdef\t3\t ", "empty reason"),
        ("../a.cpin\t0123456789abcdef\t3\treason", "relative"),
        ("/abs.cpin\t0123456789abcdef\t3\treason", "relative"),
    ],
)
def test_malformed_lines_name_their_line_number(line, message):
    with pytest.raises(ManifestError, match=message) as raised:
        manifest.parse("# comment\n\n" + line + "\n")
    assert raised.value.line == 3
    assert "MANIFEST:3:" in str(raised.value)


def test_duplicates_and_disorder_are_errors():
    line = "b.cpin\t0123456789abcdef\t3\tr\n"
    with pytest.raises(ManifestError, match="listed twice"):
        manifest.parse(line + line)
    with pytest.raises(ManifestError, match="out of order"):
        manifest.parse(line + "a.cpin\t0123456789abcdef\t3\tr\n")


@pytest.mark.parametrize("reason", ["", "   ", "two\nlines", "tab\there"])
def test_bad_reasons_are_refused(reason):
    with pytest.raises(UsageError):
        manifest.check_reason(reason)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def test_a_write_removes_the_temporary_files_of_dead_writers(tmp_path):
    # What a `callpin bless` killed in the middle of its write leaves behind.
    stale = tmp_path / f".MANIFEST.{_dead_pid()}-0badf00d.callpin-tmp"
    stale.write_text("half a manif")
    manifest.write(tmp_path, [Entry("a.cpin", "0123456789abcdef", 1, "first")])
    assert sorted(os.listdir(tmp_path)) == ["MANIFEST"]


def test_a_write_is_durable_before_it_replaces_the_manifest(tmp_path, monkeypatch):
    steps = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        steps.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(source, destination):
        steps.append(("replace", os.fspath(destination)))
        real_replace(source, destination)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    manifest.write(tmp_path, [Entry("a.cpin", "0123456789abcdef", 1, "first")])
    assert steps[0][0] == "fsync" and steps[0][1].endswith(".callpin-tmp")
    assert steps[1] == ("replace", str(tmp_path / "MANIFEST"))


def test_a_failed_write_leaves_the_previous_manifest_and_no_temporary_file(tmp_path, monkeypatch):
    manifest.write(tmp_path, [Entry("a.cpin", "0123456789abcdef", 1, "first")])
    before = (tmp_path / "MANIFEST").read_bytes()

    def refuse(source, destination):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        manifest.write(tmp_path, [Entry("a.cpin", "fedcba9876543210", 2, "second")])
    assert (tmp_path / "MANIFEST").read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["MANIFEST"]
