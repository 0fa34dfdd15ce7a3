"""progress.py: one line redrawn on a terminal, nothing on anything else; bite's and probe's lines."""

from __future__ import annotations

import io

from callpin.probe import progress_printer
from callpin.progress import Progress


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


def test_probe_counts_its_runs_on_a_terminal_and_has_no_printer_elsewhere() -> None:
    terminal = FakeTerminal()
    printer = progress_printer(terminal)
    assert printer is not None
    printer(1, 2)
    printer(2, 2)
    assert terminal.getvalue() == "\rprobe: 1/2 runs\rprobe: 2/2 runs\n"
    assert progress_printer(io.StringIO()) is None
