"""seams on cookiecutter 2.6.0: its collaborator lists against a hand-written characterization.

characterize.py pins `cookiecutter.main.cookiecutter` (seven cases) and
`cookiecutter.hooks.run_hook` with spy lists chosen by reading the code. This script runs
that test twice (in two folders: the logs must be byte-identical), then `callpin seams`
on main.py and hooks.py (text, `--format json`, `--spy`), and counts, per function, the
hand targets seams found and missed and the collaborators it listed that the hand test
did not need, each judged in EXTRAS. `run_hook` reaches the outside world only through
its module's own helpers, so it is compared twice: its own seams, and the seams of the
internal functions it reaches (what a reader of the table follows).

Checks: the hand test records every hand target and is deterministic; for `cookiecutter`
seams misses nothing and lists nothing wrongly; its `--spy` list, pasted into
`callpin.record`, records what the hand list records; for `run_hook`, every target seams
misses is a standard-library call (seams lists those only when ambient), and the
temporary file whose path the hand test had to number is listed as ambient; no
unresolved call hides a hand target, and none is the module's logger; every extra is
judged.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import characterize
import cookiecutter

import callpin

SOURCE = Path(cookiecutter.__file__).resolve().parent
MAIN, HOOKS = SOURCE / "main.py", SOURCE / "hooks.py"
CALLPIN = [sys.executable, "-m", "callpin"]

# Collaborators seams may list that the hand test did not spy, judged one by one.
EXTRAS = {
    "cookiecutter.exceptions.InvalidModeException": (
        "wrong",
        "an exception built only to be raised: the test pins the raise, and spy= cannot take the class",
    ),
    "cookiecutter.exceptions.FailedHookException": (
        "wrong",
        "an exception built only to be raised: the test pins the raise, and spy= cannot take the class",
    ),
    "cookiecutter.utils.create_env_with_context": (
        "arguably right",
        "a real call into another module (the Jinja environment of the hook); the hand test sees its "
        "effect in the hook's output instead",
    ),
}


def seams(*args: str | Path) -> str:
    done = subprocess.run([*CALLPIN, "seams", *map(str, args)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"callpin seams {' '.join(map(str, args))}: exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def reached(functions: dict[str, dict[str, Any]], start: str, *, deep: bool) -> list[dict[str, Any]]:
    """The seams of `start`, and with `deep` those of every internal function it reaches."""
    order, todo, seen = [], [start], set()
    while todo:
        name = todo.pop(0)
        if name in seen or name not in functions:
            continue
        seen.add(name)
        order.extend(functions[name]["seams"])
        if deep:
            todo.extend(seam["target"] for seam in functions[name]["seams"] if seam["kind"] == "internal")
    return order


def covered(target: str, hand: dict[str, str]) -> str | None:
    """The hand target a recorded label or a listed target stands for (`subprocess.Popen.wait`: `subprocess.Popen`)."""
    for name in hand:
        if target == name or target.startswith(name + "."):
            return name
    return None


def compare(title: str, listed: list[dict[str, Any]], hand: dict[str, str]) -> dict[str, Any]:
    collaborators = sorted({seam["target"] for seam in listed if seam["kind"] == "collaborator"})
    found = sorted(name for name in hand if any(covered(target, {name: ""}) for target in collaborators))
    missed = sorted(set(hand) - set(found))
    extra = sorted(target for target in collaborators if covered(target, hand) is None)
    wrong = [target for target in extra if EXTRAS.get(target, ("unjudged",))[0] == "wrong"]
    arguable = [target for target in extra if EXTRAS.get(target, ("unjudged",))[0] == "arguably right"]
    unjudged = [target for target in extra if target not in EXTRAS]
    ambient = sorted({seam["target"] for seam in listed if seam["kind"] == "ambient"})
    unresolved = sorted({seam["text"] for seam in listed if seam["kind"] == "unresolved"})
    # An unresolved call whose name is a hand target's name would be a collaborator seams could not bind.
    hiding = [text for text in unresolved if any(text.rsplit(".", 1)[-1] == name.rsplit(".", 1)[-1] for name in hand)]
    print(
        f"{title}: hand {len(hand)}, seams collaborators {len(collaborators)}: found {len(found)}, "
        f"missed {len(missed)}, listed beyond the hand list {len(extra)} "
        f"(wrongly {len(wrong)}, arguably right {len(arguable)}, unjudged {len(unjudged)})"
    )
    for name in missed:
        print(f"  missed: {name} ({hand[name]})")
    for name in extra:
        verdict, why = EXTRAS.get(name, ("unjudged", "no verdict recorded"))
        print(f"  listed beyond the hand list, {verdict}: {name}: {why}")
    print(f"  ambient: {', '.join(ambient) or 'none'}")
    print(f"  unresolved: {', '.join(unresolved) or 'none'}")
    return {
        "found": found,
        "missed": missed,
        "wrong": wrong,
        "unjudged": unjudged,
        "ambient": ambient,
        "hiding": hiding,
    }


def spy_list(function: str, source: Path) -> list[str]:
    printed = seams("--spy", function, source).strip()
    assert printed.startswith("spy="), printed
    return list(ast.literal_eval(printed[len("spy=") :]))


def pasted(spy: list[str]) -> tuple[list[str] | str, list[str]]:
    """The plain case recorded with seams' spy list and with the hand list: the labels each records."""
    labels: list[list[str] | str] = []
    for targets in (spy, list(characterize.MAIN_TARGETS)):
        with tempfile.TemporaryDirectory(prefix="callpin-seams-") as folder:
            try:
                with callpin.record(spy=targets) as recording:
                    characterize.plain(Path(folder))
            except callpin.CallpinError as exc:
                labels.append(f"{type(exc).__name__}: {exc}")
                continue
            labels.append([event.label for event in recording.events if event.kind == "call"])
    return labels[0], labels[1]  # type: ignore[return-value]


def main() -> int:
    checks: list[tuple[str, bool]] = []

    runs = []
    for _ in range(2):
        with tempfile.TemporaryDirectory(prefix="callpin-seams-") as folder:
            recorded = characterize.run(Path(folder) / "run", Path(folder) / "logs")
            logs = {path.name: path.read_bytes() for path in sorted((Path(folder) / "logs").glob("*.cpin"))}
            runs.append((recorded, logs))
    recorded, logs = runs[0]
    calls = sum(len(labels) for labels in recorded.values())
    same = sorted(name for name in logs if logs[name] == runs[1][1].get(name))
    differ = sorted(name.removesuffix(".cpin") for name in set(logs) - set(same))
    print(
        f"hand test: {len(recorded)} cases, {calls} calls recorded; byte-identical logs in two folders: "
        f"{len(same)} of {len(logs)} (differ: {', '.join(differ) or 'none'})"
    )
    main_seen = {
        covered(label, characterize.MAIN_TARGETS) for case in characterize.MAIN_CASES for label in recorded[case]
    }
    hook_seen = {
        covered(label, characterize.HOOK_TARGETS) for case in characterize.HOOK_CASES for label in recorded[case]
    }
    checks.append(
        (
            "the hand test records each of its targets in some case",
            set(characterize.MAIN_TARGETS) <= main_seen and set(characterize.HOOK_TARGETS) <= hook_seen,
        )
    )
    checks.append(
        (
            "the hand test's logs are byte-identical in two folders, but for the known path case",
            set(differ) <= characterize.UNSTABLE and len(logs) == len(recorded),
        )
    )

    print(seams(MAIN, HOOKS), end="")
    document = json.loads(seams("--format", "json", MAIN, HOOKS))
    functions = {f"{item['module']}.{item['function']}": item for item in document["functions"]}

    main_figures = compare(
        "cookiecutter.main.cookiecutter",
        reached(functions, "cookiecutter.main.cookiecutter", deep=False),
        characterize.MAIN_TARGETS,
    )
    hook_own = compare(
        "cookiecutter.hooks.run_hook, its own seams",
        reached(functions, "cookiecutter.hooks.run_hook", deep=False),
        characterize.HOOK_TARGETS,
    )
    hook_deep = compare(
        "cookiecutter.hooks.run_hook with the internal functions it reaches",
        reached(functions, "cookiecutter.hooks.run_hook", deep=True),
        characterize.HOOK_TARGETS,
    )
    checks.append(("cookiecutter: seams misses no hand target", not main_figures["missed"]))
    checks.append(("cookiecutter: seams lists nothing wrongly", not main_figures["wrong"]))
    stdlib = sys.stdlib_module_names
    checks.append(
        (
            "run_hook: every hand target seams misses is a standard-library call",
            all(name.split(".", 1)[0] in stdlib for name in hook_deep["missed"]),
        )
    )
    checks.append(
        (
            "run_hook: the temporary script the hand test numbers is listed as ambient",
            "tempfile.NamedTemporaryFile" in hook_deep["ambient"],
        )
    )
    checks.append(
        (
            "no unresolved call hides a hand target",
            not (main_figures["hiding"] or hook_own["hiding"] or hook_deep["hiding"]),
        )
    )
    loggers = [
        seam
        for item in document["functions"]
        for seam in item["seams"]
        if seam["kind"] == "unresolved" and seam["text"].startswith("logger.")
    ]
    print(
        f"unresolved entries in main.py and hooks.py: {document['summary']['unresolved']}, "
        f"of them on the module's logger: {len(loggers)}"
    )
    checks.append(("the module's logger (logging.getLogger) is no unresolved call", not loggers))
    checks.append(
        (
            "every collaborator listed beyond the hand lists is judged",
            not (main_figures["unjudged"] or hook_own["unjudged"] or hook_deep["unjudged"]),
        )
    )

    table = seams(SOURCE).splitlines()
    rows = [line for line in table if line.startswith(" ")]  # the others name a file or sum up
    print(f"seams on the whole package: {table[-1].removeprefix('seams: ')}; widest row {max(map(len, rows))} columns")
    checks.append(("the text table of the whole package keeps to 120 columns", max(map(len, rows)) <= 120))

    spy = spy_list("cookiecutter", MAIN)
    print(f"seams --spy cookiecutter: {len(spy)} targets; run_hook: {spy_list('run_hook', HOOKS)}")
    with_seams, with_hand = pasted(spy)
    print(f"plain case under the --spy list: {with_seams}")
    checks.append(
        ("the --spy list pasted into callpin.record records what the hand list records", with_seams == with_hand)
    )

    for name, held in checks:
        print(f"{'held' if held else 'FAILED'}: {name}")
    return 0 if all(held for _, held in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
