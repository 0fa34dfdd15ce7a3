"""The log file: atomic writes, streaming reads, and a precise error for every kind of damage."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import threading
import time

import msgpack
import pytest
import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callpin.codec import MAX_ITEMS, MAX_STR, Encoder
from callpin.errors import (
    CorruptLog,
    LimitExceeded,
    LogFormatError,
    NotALog,
    TruncatedLog,
    UnsupportedVersion,
)
from callpin.logfile import Log, LogReader, LogWriter, load, log_bytes, write_log
from callpin.normalize import DEFAULT_RULES, NO_RULES

VECTORS = pathlib.Path(__file__).parent / "vectors"


def frames(count: int = 3) -> list[bytes]:
    encoder = Encoder(DEFAULT_RULES)
    return [
        encoder.encode_event(0, "billing.charge_card", [f"card_{i}", 100 * i], {}, None, None, 1, 0)
        for i in range(count)
    ]


def test_write_then_read_gives_the_events_back(tmp_path):
    path = tmp_path / "a.cpin"
    fingerprint = write_log(path, frames(), meta={"scenario": "renew"})
    log = load(path)
    assert log.fingerprint == fingerprint
    assert log.meta == {"scenario": "renew"}
    assert log.rules == DEFAULT_RULES
    assert [e.args for e in log] == [("card_0", 0), ("card_1", 100), ("card_2", 200)]
    assert [e.index for e in log] == [0, 1, 2]


def test_fingerprint_depends_on_the_body_only(tmp_path):
    one = write_log(tmp_path / "one.cpin", frames(), meta={"a": 1})
    two = write_log(tmp_path / "sub" / "two.cpin", frames(), meta={"b": 2})
    assert one == two


@settings(max_examples=100, deadline=None)
@given(frames=st.lists(st.binary(max_size=700), max_size=12))
def test_a_log_made_from_frames_has_the_fingerprint_of_its_whole_body(frames):
    # Frames of every size around xxh3's stripes and blocks, digested one by one, give
    # the digest of the body's bytes, however they are cut.
    one_by_one = Log.from_frames(frames, rules=DEFAULT_RULES).fingerprint
    assert one_by_one == xxhash.xxh3_64_hexdigest(b"".join(frames))


def test_header_has_no_timestamps_hosts_or_paths(tmp_path):
    path = tmp_path / "a.cpin"
    write_log(path, frames())
    data = path.read_bytes()
    assert str(tmp_path).encode() not in data
    assert os.uname().nodename.encode() not in data
    assert data == log_bytes(frames())


def test_streaming_read_matches_load(tmp_path):
    path = tmp_path / "a.cpin"
    write_log(path, frames(2000))
    with LogReader(path) as reader:
        streamed = list(reader)
        assert reader.count == 2000
    assert streamed == list(load(path))


def test_empty_log_is_valid(tmp_path):
    write_log(tmp_path / "e.cpin", [])
    assert len(load(tmp_path / "e.cpin")) == 0


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (b"", NotALog),
        (b"PK\x03\x04zipfile", NotALog),
        (b"CPIN\x02\x00\x80", UnsupportedVersion),
        (b"CPIN\x01", TruncatedLog),
        (b"CPIN\x01\x00\x81", TruncatedLog),
        (b"CPIN\x01\x00\x01", CorruptLog),
    ],
    ids=["empty", "other-format", "newer-major", "short-magic", "short-header", "header-not-map"],
)
def test_bad_headers(tmp_path, content, error):
    path = tmp_path / "bad.cpin"
    path.write_bytes(content)
    with pytest.raises(error) as raised:
        load(path)
    assert str(path) in str(raised.value)


def test_a_header_map_with_keys_sharing_one_hash_is_rejected_without_building_it(tmp_path):
    # Built as a dict, 50,000 keys sharing one hash take minutes (n² comparisons); kept
    # as pairs, the meta is not a map, which is what the error says.
    keys = [(2**61 - 1) * (k + 1) for k in range(50_000)]  # all hash to 0
    meta = msgpack.Packer().pack_map_header(len(keys)) + b"".join(
        Encoder(NO_RULES).encode(key) + b"\xc0" for key in keys
    )
    header = b"\x83\xa8producer\xa7callpin\xa5rules\x90\xa4meta" + meta
    path = tmp_path / "crowded.cpin"
    path.write_bytes(b"CPIN\x01\x00" + header + log_bytes([])[len(log_bytes([])) - 18 :])
    with pytest.raises(CorruptLog, match="meta is not a map"):
        load(path)


def test_unsupported_version_names_the_version(tmp_path):
    path = tmp_path / "v.cpin"
    path.write_bytes(b"CPIN\x07\x03" + log_bytes([])[6:])
    with pytest.raises(UnsupportedVersion, match=r"7\.3") as raised:
        load(path)
    assert raised.value.version == (7, 3)


def test_newer_minor_version_is_read(tmp_path):
    path = tmp_path / "v.cpin"
    path.write_bytes(b"CPIN\x01\x09" + log_bytes(frames())[6:])
    assert len(load(path)) == 3


def test_every_truncation_point_is_a_clear_error(tmp_path):
    data = log_bytes(frames(4))
    path = tmp_path / "t.cpin"
    for cut in range(len(data)):
        path.write_bytes(data[:cut])
        with pytest.raises(LogFormatError) as raised:
            load(path)
        assert isinstance(raised.value, (NotALog, TruncatedLog, CorruptLog)), cut


def test_truncation_reports_the_intact_events(tmp_path):
    parts = frames(4)
    data = log_bytes(parts)
    header_size = len(data) - sum(map(len, parts)) - 18
    path = tmp_path / "t.cpin"
    path.write_bytes(data[: header_size + len(parts[0]) + len(parts[1]) + 3])
    with pytest.raises(TruncatedLog, match="2 intact events") as raised:
        load(path)
    assert raised.value.intact == 2


def test_flipped_byte_in_the_body_is_corrupt(tmp_path):
    data = bytearray(log_bytes(frames(4)))
    data[data.index(b"card_3") + 5] ^= 0x01
    path = tmp_path / "f.cpin"
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptLog, match="fingerprint"):
        load(path)


def test_flipped_structure_byte_is_corrupt(tmp_path):
    data = bytearray(log_bytes(frames(4)))
    data[len(data) - 18 - 3] = 0xC1  # the reserved msgpack byte
    path = tmp_path / "f.cpin"
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptLog, match="3 events intact"):
        load(path)


def test_wrong_count_is_corrupt(tmp_path):
    data = bytearray(log_bytes(frames(2)))
    data[-16:-8] = (5).to_bytes(8, "big")
    path = tmp_path / "c.cpin"
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptLog, match="trailer says 5 events, body has 2"):
        load(path)


def test_huge_length_claim_in_a_small_file_is_bounded(tmp_path):
    header = log_bytes([])[:-18]
    claim = b"\x98\x00\xdb" + (10 * 1024 * 1024).to_bytes(4, "big") + b"x" * 60
    path = tmp_path / "h.cpin"
    path.write_bytes(header + claim)
    assert path.stat().st_size < 200
    with pytest.raises(TruncatedLog):
        load(path)


@pytest.mark.parametrize(
    ("claim", "limit"),
    [
        (b"\xdd" + (MAX_ITEMS + 1).to_bytes(4, "big") + b"\x00" * (MAX_ITEMS + 1), MAX_ITEMS),
        (b"\xdf" + (MAX_ITEMS + 1).to_bytes(4, "big") + b"\x00" * 2 * (MAX_ITEMS + 1), MAX_ITEMS),
        (b"\xdb" + (MAX_STR + 1).to_bytes(4, "big") + b"x" * (MAX_STR + 1), MAX_STR),
        (b"\xc6" + (MAX_STR + 1).to_bytes(4, "big") + b"x" * (MAX_STR + 1), MAX_STR),
    ],
    ids=["array", "map", "str", "bin"],
)
def test_a_limit_error_names_the_limit_that_was_hit(tmp_path, claim, limit):
    path = tmp_path / "l.cpin"
    path.write_bytes(log_bytes([b"\x98\x00\xa1x" + claim + b"\x80\xc0\xc0\x01\x00"]))
    with pytest.raises(LimitExceeded) as raised:
        list(LogReader(path))
    assert raised.value.limit == limit


def test_deep_nesting_is_a_limit_error(tmp_path):
    header = log_bytes([])[:-18]
    body = b"\x98\x00\xa1x" + b"\x91" * 10_000 + b"\xc0" + b"\x80\xc0\xc0\x01\x00"
    path = tmp_path / "d.cpin"
    path.write_bytes(header + body + b"\xd8\x7f" + (1).to_bytes(8, "big") + (0).to_bytes(8, "big"))
    with pytest.raises(LimitExceeded, match="1024"):
        load(path)


def test_deep_ext_nesting_is_a_limit_error(tmp_path):
    from callpin.codec import MAX_EXT_DEPTH, _pack_ext

    value = b"\x90"
    for _ in range(10_000):
        out = bytearray()
        _pack_ext(1, b"\x91" + value, out)
        value = bytes(out)
    frame = b"\x98\x00\xa1x\x91" + value + b"\x80\xc0\xc0\x01\x00"
    path = tmp_path / "d.cpin"
    path.write_bytes(log_bytes([frame]))
    with pytest.raises(LimitExceeded, match=str(MAX_EXT_DEPTH)):
        load(path).verify()


def test_a_frame_that_is_not_an_event_is_corrupt(tmp_path):
    path = tmp_path / "n.cpin"
    path.write_bytes(log_bytes([b"\x93\x01\x02\x03"]))
    with pytest.raises(CorruptLog, match="not an event frame"):
        load(path)


def test_malformed_event_fields_are_corrupt(tmp_path):
    path = tmp_path / "m.cpin"
    path.write_bytes(log_bytes([b"\x98\x09\xa1x\x90\x80\xc0\xc0\x01\x00"]))
    with pytest.raises(CorruptLog, match="event 0 is malformed"):
        load(path).verify()


@pytest.mark.parametrize(
    ("thread", "depth"),
    [(b"\xc7\x09\x04\x01" + bytes(8), b"\x00"), (b"\x01", b"\xc7\x09\x04\x01" + bytes(8))],
    ids=["big-int-thread", "big-int-depth"],
)
def test_a_thread_or_depth_past_64_bits_is_corrupt(tmp_path, thread, depth):
    # A big int (ext 4) there decoded, then `show` died indenting by 2**64 or printing it.
    path = tmp_path / "deep.cpin"
    path.write_bytes(log_bytes([b"\x98\x00\xa1x\x90\x80\xc0\xc0" + thread + depth]))
    with pytest.raises(CorruptLog, match="event 0 is malformed"):
        load(path).verify()


@pytest.mark.parametrize("make", ["directory", "missing"])
def test_paths_that_are_not_files(tmp_path, make):
    path = tmp_path / "x.cpin"
    if make == "directory":
        path.mkdir()
    with pytest.raises(LogFormatError, match=r"directory|no such file"):
        load(path)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=400))
def test_random_bytes_are_rejected_cleanly(tmp_path, data):
    path = tmp_path / "r.cpin"
    path.write_bytes(data)
    with pytest.raises(LogFormatError):
        load(path).verify()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_mutated_logs_are_rejected_or_read_cleanly(tmp_path, data):
    original = bytearray(log_bytes(frames(3)))
    position = data.draw(st.integers(0, len(original) - 1))
    original[position] = data.draw(st.integers(0, 255))
    path = tmp_path / "m.cpin"
    path.write_bytes(bytes(original))
    try:
        load(path).verify()
    except LogFormatError:
        pass


def test_writer_abort_keeps_the_previous_file(tmp_path):
    path = tmp_path / "b.cpin"
    write_log(path, frames(1))
    before = path.read_bytes()
    with pytest.raises(RuntimeError), LogWriter(path) as writer:
        writer.write(frames(2)[1])
        raise RuntimeError("boom")
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["b.cpin"]


KILLED_WRITER = textwrap.dedent(
    """
    import sys
    from callpin.codec import Encoder
    from callpin.logfile import LogWriter
    encoder = Encoder()
    with LogWriter(sys.argv[1]) as writer:
        frame = encoder.encode_event(0, "slow.call", ["x" * 100], {}, None, None, 1, 0)
        print("writing", flush=True)
        while True:
            writer.write(frame)
    """
)


def test_a_killed_writer_leaves_the_previous_file_intact(tmp_path):
    path = tmp_path / "baseline.cpin"
    write_log(path, frames(3))
    before = path.read_bytes()
    for _ in range(3):
        child = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(path)], stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "writing"
        time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert path.read_bytes() == before
        assert len(load(path)) == 3
    # Each new writer removes the temporary files of dead ones: they never pile up.
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "baseline.cpin"]
    assert len(leftovers) == 1
    write_log(path, frames(1))
    assert [p.name for p in tmp_path.iterdir()] == ["baseline.cpin"]


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def test_a_name_as_long_as_the_filesystem_allows_is_written(tmp_path):
    # The temporary name clips the target's (with a hash): a 250-byte name used to
    # make a temporary name over the 255-byte limit, and the write failed.
    path = tmp_path / ("n" * 245 + ".cpin")
    write_log(path, frames(2))
    assert len(load(path)) == 2
    assert os.listdir(tmp_path) == [path.name]


def _piped(data: bytes) -> str:
    """A /dev/fd path of a pipe that a thread fills with `data` (as `<(...)` in bash)."""
    read_end, write_end = os.pipe()

    def feed() -> None:
        with os.fdopen(write_end, "wb") as pipe:
            try:
                pipe.write(data)
            except BrokenPipeError:
                pass

    threading.Thread(target=feed, daemon=True).start()
    return f"/dev/fd/{read_end}"


def test_a_log_read_from_a_pipe_is_read_whole(tmp_path):
    path = tmp_path / "renew.cpin"
    write_log(path, frames(3))
    piped = load(_piped(path.read_bytes()))
    assert list(piped) == list(load(path))
    assert piped.fingerprint == load(path).fingerprint


def test_a_piped_log_over_the_bound_is_a_limit_not_a_memory_blow_up(tmp_path, monkeypatch):
    monkeypatch.setattr("callpin.logfile.MAX_PIPED", 64)
    with pytest.raises(LimitExceeded, match="pipe"):
        load(_piped(log_bytes(frames(20))))


def test_logs_written_without_rules_say_so(tmp_path):
    write_log(tmp_path / "raw.cpin", frames(1), rules=NO_RULES)
    assert load(tmp_path / "raw.cpin").rules == NO_RULES
