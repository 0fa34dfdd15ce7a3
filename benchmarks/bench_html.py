"""Size and load time of the HTML report: a 50,000-event diff with 14 differences, `show` of
50,000 events, and a 1,000,000-event diff, written by callpin and opened in headless Chromium.

The log is calls to nine collaborators with distinct arguments; its copy has two swapped
pairs, four changed calls, three inserted and three deleted (14 differences). Chromium
(Debian's `chromium`, or $CALLPIN_CHROMIUM) is driven over the DevTools pipe
(tests/chromium.py) at 1,280 x 800; each load is a fresh tab, median of ROUNDS. "first
difference" is DOMContentLoaded, by when the first difference row (near the top) is parsed
and laid out; "every fold drawn" opens every folded
run and waits until each has drawn all of its rows. `diff` and `render_html` are timed
in this process (CPU seconds by time.process_time, and wall); the 1,000,000-event row
also times the whole write as a user runs it, `callpin diff old.cpin new.cpin --format
html -o page.html` in a child process (wall, and the child's CPU seconds), reading both
logs from disk and writing the page.

    python benchmarks/bench_html.py            # the whole table
    python benchmarks/bench_html.py 50000      # chosen sizes of diff
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgpack
from targets import check

from callpin import diff
from callpin.logfile import Log, write_log
from callpin.normalize import DEFAULT_RULES
from callpin.render_html import render_html, render_log_html

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from chromium import Browser, find_chromium

SIZES = (50_000, 1_000_000)
BROWSER_MAX = 50_000
ROUNDS = 3
EDITS = (
    "swap",
    "change",
    "insert",
    "delete",
    "change",
    "insert",
    "swap",
    "delete",
    "change",
    "insert",
    "delete",
    "change",
)

FIRST_DIFFERENCE = """(() => {
  const row = document.querySelector('.op');
  const nav = performance.getEntriesByType('navigation')[0];
  return {first: row ? row.getBoundingClientRect().height > 0 : false,
          domcontentloaded: nav.domContentLoadedEventEnd, load: nav.loadEventEnd};
})()"""

EVERY_FOLD = """(async () => {
  const start = performance.now();
  const blocks = [...document.querySelectorAll('.lazy')];
  blocks.forEach(b => { if (b.tagName === 'DETAILS') b.open = true; });
  while (document.querySelector(".lazy script[type^='text/x-callpin-']")) {
    document.querySelectorAll('.lazy .more').forEach(b => b.click());
    await new Promise(r => setTimeout(r, 0));
  }
  document.body.offsetHeight;
  return [performance.now() - start, document.querySelectorAll('.row').length];
})()"""


def frame(label: str, args: list[object]) -> bytes:
    return msgpack.packb([0, label, args, {}, None, None, 1, 0], use_bin_type=True)


def make_pair(size: int) -> tuple[Log, Log]:
    old = [frame(f"svc{k % 9}.collaborator.step", [f"customer-{k}", k % 1000]) for k in range(size)]
    new = list(old)
    gap = size // (len(EDITS) + 1)
    for n in reversed(range(len(EDITS))):
        spot, edit = gap * (n + 1), EDITS[n]
        if edit == "swap":
            new[spot], new[spot + 1] = new[spot + 1], new[spot]
        elif edit == "change":
            new[spot] = frame(f"svc{spot % 9}.collaborator.step", [f"customer-{spot}", -1])
        elif edit == "insert":
            new.insert(spot, frame("audit.extra", [spot]))
        else:
            del new[spot]
    return (
        Log.from_frames(old, rules=DEFAULT_RULES, path="old.cpin"),
        Log.from_frames(new, rules=DEFAULT_RULES, path="new.cpin"),
    )


def timed(run):  # type: ignore[no-untyped-def]
    """The result of run(), its wall seconds and its CPU seconds."""
    start, cpu = time.perf_counter(), time.process_time()
    result = run()
    return result, time.perf_counter() - start, time.process_time() - cpu


def whole_write(old: Log, new: Log, folder: Path) -> tuple[float, float, float]:
    """Wall and CPU seconds of `callpin diff --format html` on the two logs written to
    disk, in a child process, and the page's size in MB."""
    paths = [folder / "old.cpin", folder / "new.cpin"]
    for path, log in zip(paths, (old, new), strict=True):
        write_log(path, log.frames, rules=DEFAULT_RULES)
    page = folder / "whole.html"
    argv = [sys.executable, "-m", "callpin", "diff", *map(str, paths), "--format", "html", "-o", str(page)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 1:
        raise SystemExit(f"callpin diff exited {done.returncode}: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, page.stat().st_size / 1e6


def in_browser(browser: Browser | None, page: Path) -> tuple[str, float | None]:
    """What a browser saw, and the median seconds to the first screen (None without one)."""
    if browser is None:
        return "no chromium: not loaded", None
    firsts, loads, folds = [], [], []
    rows = 0
    for _ in range(ROUNDS):
        browser.open(page.as_uri(), 1280, 800)
        seen = browser.evaluate(FIRST_DIFFERENCE)
        firsts.append(seen["domcontentloaded"] / 1000)
        loads.append(seen["load"] / 1000)
        spent, rows = browser.evaluate(EVERY_FOLD)
        folds.append(spent / 1000)
    first = statistics.median(firsts)
    return (
        f"first screen {first:.3f} s, load {statistics.median(loads):.3f} s, "
        f"every fold drawn {statistics.median(folds):.2f} s ({rows:,} rows)"
    ), first


def main(sizes: tuple[int, ...]) -> int:
    path = find_chromium()
    print(f"chromium: {path or 'not found'}; 1,280 x 800, median of {ROUNDS} loads")
    with tempfile.TemporaryDirectory() as folder:
        browser = Browser(path, str(Path(folder) / "profile")) if path else None
        try:
            for size in sizes:
                old, new = make_pair(size)
                result, diffing, diff_cpu = timed(lambda: diff(old, new))  # noqa: B023
                page, rendering, render_cpu = timed(lambda: render_html(result))  # noqa: B023
                written = Path(folder) / f"diff-{size}.html"
                written.write_text(page, encoding="utf-8")
                megabytes = written.stat().st_size / 1e6
                print(
                    f"diff of {size:,} events ({result!r}): diff {diffing:.2f} s ({diff_cpu:.2f} s CPU), "
                    f"render_html {rendering:.2f} s ({render_cpu:.2f} s CPU), {megabytes:.2f} MB"
                )
                if size == 1_000_000:
                    del page, result
                    wall, cpu, whole_megabytes = whole_write(old, new, Path(folder))
                    print(
                        f"  callpin diff --format html (child process): {wall:.2f} s ({cpu:.2f} s CPU), "
                        f"{whole_megabytes:.2f} MB"
                    )
                    check(
                        "HTML diff of 1,000,000 events: the whole write, `callpin diff --format html`",
                        wall,
                        10,
                        at_most=True,
                        unit=" s",
                    )
                    check("HTML diff of 1,000,000 events: page size", megabytes, 40, at_most=True, unit=" MB")
                if size <= BROWSER_MAX:
                    seen, first = in_browser(browser, written)
                    print(f"  {seen}")
                    if size == 50_000:
                        check("HTML diff of 50,000 events: page size", megabytes, 2, at_most=True, unit=" MB")
                        if first is not None:
                            check("HTML diff of 50,000 events: first screen", first, 1, at_most=True, unit=" s")
                    shown, showing, _ = timed(lambda: render_log_html(old))  # noqa: B023
                    log_page = Path(folder) / f"show-{size}.html"
                    log_page.write_text(shown, encoding="utf-8")
                    print(
                        f"show of {size:,} events: render_log_html {showing:.2f} s, "
                        f"{log_page.stat().st_size / 1e6:.2f} MB"
                    )
                    print(f"  {in_browser(browser, log_page)[0]}")
        finally:
            if browser is not None:
                browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(tuple(int(arg) for arg in sys.argv[1:]) or SIZES))
