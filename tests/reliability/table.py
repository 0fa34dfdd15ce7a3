"""Print the reliability suite's figures as one table: `python tests/reliability/table.py FILE`.

FILE holds the JSON lines that the `figures` fixture wrote. Exit status 1 when a figure
that must be 0 is not (the tests fail on it too; the table says which one), or when FILE
is missing or empty: a run that reported nothing is not a passing run.
"""

from __future__ import annotations

import json
import sys


def _format(value: object) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: table.py FIGURES_FILE", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle if line.strip()]
    except OSError as exc:
        print(f"table.py: no figures: {exc.strerror}: {argv[0]}", file=sys.stderr)
        return 1
    if not rows:
        print(f"table.py: no figures in {argv[0]}", file=sys.stderr)
        return 1
    rows.sort(key=lambda row: (row["check"], row["figure"]))
    width_check = max(len(row["check"]) for row in rows)
    width_figure = max(len(row["figure"]) for row in rows)
    bad = 0
    print()
    print(f"{'check':<{width_check}}  {'figure':<{width_figure}}  value")
    print(f"{'-' * width_check}  {'-' * width_figure}  {'-' * 12}")
    previous = None
    for row in rows:
        check = row["check"] if row["check"] != previous else ""
        previous = row["check"]
        flag = ""
        if row["zero"] and row["value"] != 0:
            flag = "  <-- must be 0"
            bad += 1
        print(f"{check:<{width_check}}  {row['figure']:<{width_figure}}  {_format(row['value'])}{flag}")
    print()
    print(
        "reliability: every must-be-zero figure is 0"
        if not bad
        else f"reliability: {bad} figure(s) that must be 0 are not"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
