"""Pins what `report.daily_report` loads: a day of four lines and a busy day (5,000)."""

import report

LINES = [
    ("A-17", 2, 4.5, "2024-03-01 09:00"),
    ("B-02", 1, 12.0, "2024-03-01 09:30"),
    ("A-17", 3, 4.5, "2024-03-01 11:15"),
    ("C-40", 5, 0.99, "2024-03-01 16:45"),
]
BUSY = [(f"S-{i % 50:02d}", i % 7 + 1, 1.25, "2024-03-02 08:00") for i in range(5000)]


def test_a_day_is_loaded(callpin):
    with callpin.pin(spy=["warehouse.load", "warehouse.totals"]) as rec:
        rec.mark("total", report.daily_report(LINES))


def test_a_busy_day_is_loaded(callpin):
    with callpin.pin(spy=["warehouse.load", "warehouse.totals"]) as rec:
        rec.mark("total", report.daily_report(BUSY))
