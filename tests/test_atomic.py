"""Replacing a file whole or not at all."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from callpin.atomic import TEMP_SUFFIX, private_copy, process_alive, replace_file


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def test_replace_file_puts_the_new_bytes_in_place_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "MANIFEST"
    target.write_bytes(b"old")
    replace_file(target, b"new")
    assert target.read_bytes() == b"new"
    assert os.listdir(tmp_path) == ["MANIFEST"]


def test_a_failed_replacement_keeps_the_previous_file(tmp_path, monkeypatch):
    target = tmp_path / "MANIFEST"
    target.write_bytes(b"old")

    def refuse(source: str, destination: str) -> None:
        raise OSError("refused")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="refused"):
        replace_file(target, b"new")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["MANIFEST"]


def test_a_dead_writers_temporary_is_removed_by_the_next_writer_and_a_live_ones_is_kept(tmp_path):
    target = tmp_path / "renew.cpin"
    dead = tmp_path / f".renew.cpin.{_dead_pid()}-0badf00d{TEMP_SUFFIX}"
    live = tmp_path / f".renew.cpin.{os.getppid()}-0badf00d{TEMP_SUFFIX}"
    dead.write_bytes(b"half")
    live.write_bytes(b"half")
    replace_file(target, b"whole")
    assert sorted(os.listdir(tmp_path)) == sorted(["renew.cpin", live.name])


def test_process_alive_knows_this_process_and_a_finished_one():
    assert process_alive(os.getpid())
    assert not process_alive(_dead_pid())


def test_temporary_names_of_long_targets_differ_and_dead_ones_are_removed(tmp_path):
    first, second = ("n" * 240 + end + ".cpin" for end in ("a", "b"))
    with private_copy(tmp_path / first, b"1") as one, private_copy(tmp_path / second, b"2") as two:
        assert os.path.basename(one) != os.path.basename(two)
        assert all(len(os.path.basename(name).encode()) <= 255 for name in (one, two))
        stale = one.replace(f".{os.getpid()}-", f".{_dead_pid()}-")
        os.link(one, stale)
    assert os.listdir(tmp_path) == [os.path.basename(stale)]
    replace_file(tmp_path / first, b"log")
    assert os.listdir(tmp_path) == [first]


def test_a_private_copy_is_durable_while_held_and_gone_after(tmp_path):
    target = tmp_path / "renew.cpin"
    with private_copy(target, b"whole") as private:
        assert pathlib.Path(private).read_bytes() == b"whole"
        assert os.path.dirname(private) == str(tmp_path)
        assert not target.exists()
    assert os.listdir(tmp_path) == []
