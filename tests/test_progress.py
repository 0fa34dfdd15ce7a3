"""progress.py: one line redrawn on a terminal, nothing on anything else; the live status line."""

from __future__ import annotations

import io

from callpin.progress import LiveStatus, Progress, clock_text


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def count(done: int, total: int) -> str:
    return f"{done} of {total}"


def test_each_call_redraws_the_line_and_the_last_one_ends_it() -> None:
    terminal = FakeTerminal()
    progress = Progress(terminal, count)
    progress(1, 3)
    progress(2, 3)
    assert terminal.getvalue() == "\r1 of 3\r2 of 3"
    progress(3, 3)
    assert terminal.getvalue() == "\r1 of 3\r2 of 3\r3 of 3\n"


def test_nothing_is_drawn_on_a_pipe_a_stream_without_isatty_or_none() -> None:
    pipe = io.StringIO()
    for stream in (pipe, object(), None):
        progress = Progress(stream, count)  # type: ignore[arg-type]
        progress(1, 1)
        assert not progress.shown
    assert pipe.getvalue() == ""


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def status(stream: object, clock: FakeClock, total: int = 4) -> LiveStatus:
    # An interval no test waits for: every redraw here comes from start(), finished(), stop().
    return LiveStatus(stream, "probe", "runs", total, clock=clock, interval=3600)  # type: ignore[arg-type]


def test_the_status_line_is_drawn_at_start_before_any_work_ends():
    terminal, clock = FakeTerminal(), FakeClock()
    line = status(terminal, clock).start()
    try:
        assert terminal.getvalue().strip() == "probe: 0/4 runs  elapsed 0:00  ETA --:--"
    finally:
        line.stop()


def test_the_status_line_counts_outcomes_and_estimates_from_the_work_finished():
    terminal, clock = FakeTerminal(), FakeClock()
    line = status(terminal, clock).start()
    clock.now += 10
    line.finished("ok")
    clock.now += 10
    line.finished("failed")
    assert line.text() == "probe: 2/4 runs  ok 1, failed 1  elapsed 0:20  ETA 0:20"
    line.stop()
    assert terminal.getvalue().endswith("\n")
    assert "\rprobe: 1/4 runs  ok 1  elapsed 0:10  ETA 0:30" in terminal.getvalue()


def test_the_status_line_takes_more_work_than_its_total_said():
    terminal, clock = FakeTerminal(), FakeClock()
    line = status(terminal, clock).start()
    clock.now += 10
    line.finished("ok")
    line.more(4)
    assert line.text() == "probe: 1/8 runs  ok 1  elapsed 0:10  ETA 1:10"
    line.stop()


def test_the_status_line_draws_nothing_off_a_terminal():
    pipe, clock = io.StringIO(), FakeClock()
    line = status(pipe, clock).start()
    line.finished("ok")
    line.stop()
    assert pipe.getvalue() == ""
    assert not line.shown


def test_durations_read_as_minutes_and_seconds_then_hours():
    assert clock_text(0) == "0:00"
    assert clock_text(75.9) == "1:15"
    assert clock_text(3 * 3600 + 62) == "3:01:02"
