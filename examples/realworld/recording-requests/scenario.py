"""Recording requests as a new user would: every item of "recording on real code" on a real HTTP client.

Against a local server on 127.0.0.1, with the C spies and then with CALLPIN_PURE_PYTHON=1:

- a stub that delegates to the original the script saved (`real = requests.api.request`)
  answers, is recorded once, and recurses nowhere; requests' own alias is patched;
- a stub that asks for the receiver (`callpin.with_receiver`) gets the very session and
  delegates to the real `Session.send` on it;
- HTTPDigestAuth puts its bound `handle_401` into the request's hooks: the
  `register_hook` event is the same whether or not HTTPDigestAuth is spied, and no
  proxy of callpin's appears in any log;
- spying `requests.Session` records its construction, the new session numbered like a
  receiver and carrying that number in its method calls;
- nested recorders: an inner recorder's stub answers `HTTPAdapter.send` and the outer
  recorder still records the call; the server sees no request;
- a spied call made from deep recursion, from 40 depths up to the limit: every log
  written reads back (`callpin verify`);
- the pytest project: fixture pins, a plain `callpin.pin(path)` and nested recorders
  pass; a full run with `--callpin-prune` removes only a stale baseline, never a used
  one, and the next run passes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "project"
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
AMBIENT = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")


def clean_environment(pure: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.upper() not in AMBIENT and k != "CALLPIN_PURE_PYTHON"}
    env.pop("CI", None)
    if pure:
        env["CALLPIN_PURE_PYTHON"] = "1"
    return env


# ---------------------------------------------------------------------------------------
# In-process checks (run in a child, once per implementation).


def recording_checks(checks: list[tuple[str, bool]], folder: Path) -> None:
    sys.dont_write_bytecode = True  # the project is imported from the checkout
    sys.path[:0] = [str(PROJECT), str(PROJECT / "tests")]
    import callpin
    import requests
    import requests.api
    import requests.auth
    import requests.models

    import client
    import server

    rules = callpin.RuleSet([*callpin.DEFAULT_RULES.rules, callpin.rule(r"127\.0\.0\.1:\d+", "local")])
    http, url = server.serve()
    print(f"implementation: {callpin.IMPLEMENTATION}")

    # 1. A stub that delegates to the original this script saved.
    real_request = requests.api.request
    stub = {"requests.api.request": lambda *args, **kwargs: real_request(*args, **kwargs)}
    try:
        with callpin.record(spy=["requests.api.request"], stub=stub, normalize=rules) as rec:
            returned = client.fetch_status(url)
        recursed = False
    except RecursionError:
        recursed, returned = True, None
    aliases = sorted(patch.place for patch in rec.targets if patch.alias)
    print(f"delegating stub: returned {returned}, {len(rec.events)} event(s), recursion: {recursed}, "
          f"aliases patched: {aliases}; the saved original untouched: {real_request is requests.api.request}")
    checks.append(("a stub delegating to the saved original answers, recorded once, no recursion",
                   returned == {"ok": True, "path": "/status"} and len(rec.events) == 1 and not recursed))
    checks.append(("requests' own alias requests.request is patched, the script's reference is not",
                   "requests.request" in aliases and "__main__.real_request" not in aliases))

    # 2. A stub given the receiver delegates to the real method on the same session.
    real_send = requests.Session.send
    seen: list[object] = []

    def send(session: requests.Session, request: requests.PreparedRequest, **kwargs: object) -> object:
        seen.append(session)
        return real_send(session, request, **kwargs)

    status = client.StatusClient(url)
    with callpin.record(spy=["requests.Session.send"], stub={"requests.Session.send": callpin.with_receiver(send)},
                        normalize=rules) as rec:
        returned = status.status()
    receivers = [event.args[0] for event in rec.events]
    print(f"with_receiver stub: got the client's session {len(seen)} time(s): {seen == [status.session]}; "
          f"recorded receiver {receivers}; returned {returned}")
    checks.append(("a with_receiver stub of Session.send gets the very session and delegates on it",
                   seen == [status.session] and returned["ok"] is True
                   and receivers == [callpin.Instance("requests.sessions.Session", 1)]))

    # 3. A spied bound method passed as a value: HTTPDigestAuth's hooks.
    hook = "requests.models.PreparedRequest.register_hook"

    def private(spied: list[str]) -> tuple[list[object], list[str]]:
        with callpin.record(spy=[hook, *spied], normalize=rules) as rec:
            assert client.StatusClient(url, "ada", "secret").private()["ok"] is True
        shown = [repr(event) for event in rec.events]
        return [event.args for event in rec.events if event.label == hook], shown

    alone, shown_alone = private([])
    beside, shown_beside = private(["requests.auth.HTTPDigestAuth"])
    leaked = [text for text in shown_alone + shown_beside if "Wrapper" in text or "SpyProxy" in text]
    handled = sum("HTTPDigestAuth.handle_401" in text for text in shown_beside)
    print(f"hooks: register_hook args alone {alone}")
    print(f"       with HTTPDigestAuth spied {beside} (identical: {alone == beside}); "
          f"handle_401 calls recorded: {handled}; callpin proxies in the logs: {len(leaked)}")
    checks.append(("the register_hook event is the same whether or not HTTPDigestAuth is spied",
                   bool(alone) and alone == beside))
    checks.append(("no callpin proxy is encoded in any log; the spied handle_401 ran",
                   not leaked and handled >= 1))

    # 4. Class construction.
    with callpin.record(spy=["requests.Session"], normalize=rules) as rec:
        client.StatusClient(url).status()
        client.StatusClient(url)
    built = [event for event in rec.events if event.label == "requests.Session"]
    first = callpin.Instance("requests.sessions.Session", 1)
    gets = [event.args[0] for event in rec.events if event.label == "requests.Session.get"]
    print(f"construction: {len(built)} 'requests.Session' call(s), new instances {[e.args[0] for e in built]}; "
          f"Session.get receivers {gets}")
    checks.append(("spying requests.Session records each construction with the new instance numbered",
                   [event.args for event in built] == [(first,), (callpin.Instance("requests.sessions.Session", 2),)]
                   and gets == [first] and built[0].index == 0))

    # 5. Nested recorders: the inner one stubs, the outer one still records.
    adapter_send = "requests.adapters.HTTPAdapter.send"

    def offline(adapter: object, request: requests.PreparedRequest, **kwargs: object) -> requests.Response:
        response = requests.Response()
        response.status_code, response._content, response.url = 200, b'{"ok": true, "offline": true}', request.url
        return response

    hits = server.Handler.hits
    with callpin.record(spy=[adapter_send], normalize=rules, outcomes="all") as outer:
        with callpin.record(spy=[adapter_send], stub={adapter_send: callpin.with_receiver(offline)},
                            normalize=rules) as inner:
            answered = client.StatusClient(url).status()
        with callpin.record(spy=[], stub={adapter_send: callpin.with_receiver(offline)}) as stub_only:
            client.StatusClient(url).status()
    kinds = [(event.kind, event.label) for event in outer.events]
    print(f"nested: answered {answered}; outer events {kinds}; inner events {len(inner.events)}, "
          f"stub-only inner events {len(stub_only.events)}; server requests {server.Handler.hits - hits}")
    checks.append(("nested recorders: the inner stub answers and the outer recorder records both calls",
                   answered == {"ok": True, "offline": True} and kinds == [("call", adapter_send), ("return", adapter_send)] * 2
                   and len(inner.events) == 1 and stub_only.events == [] and server.Handler.hits == hits))

    # 6. Logs written from deep recursion read back.
    limit = sys.getrecursionlimit()
    paths = []

    def at_depth(levels: int) -> None:
        if levels:
            at_depth(levels - 1)
        else:
            try:
                client.crawl(url)
            except RecursionError:
                pass

    for outcomes in ("raise", "all"):
        for start in range(0, limit, limit // 20):
            path = folder / f"crawl-{outcomes}-{start}.cpin"
            with callpin.record(path, spy=["requests.utils.to_key_val_list"], outcomes=outcomes,  # type: ignore[arg-type]
                                normalize=rules):
                at_depth(start)
            paths.append(path)
    unreadable, events = 0, 0
    for path in paths:
        try:
            log = callpin.load(path)
            log.verify()
            events += len(list(log))
        except callpin.LogFormatError:
            unreadable += 1
    verified = subprocess.run([sys.executable, "-m", "callpin", "verify", *map(str, paths)], capture_output=True,
                              text=True, check=False)
    print(f"deep recursion: {len(paths)} logs, {events} events, unreadable {unreadable}; "
          f"callpin verify exit {verified.returncode}")
    checks.append(("every log written from deep recursion reads back (0 unreadable, verify exit 0)",
                   len(paths) >= 40 and unreadable == 0 and verified.returncode == 0 and events > 0))
    http.shutdown()


# ---------------------------------------------------------------------------------------
# The pytest project: fixture pins, a plain pin, prune.


def prune_checks(checks: list[tuple[str, bool]], folder: Path, pure: bool) -> None:
    project = folder / "project"
    shutil.copytree(PROJECT, project)
    env = clean_environment(pure)
    made = subprocess.run([*PYTEST, "--callpin-mode=new"], cwd=project, env=env, capture_output=True, text=True,
                          check=False)
    baselines = project / "baselines"
    used = sorted(str(path.relative_to(baselines)) for path in baselines.rglob("*.cpin"))
    stale = baselines / "tests" / "test_pins" / "test_a_test_since_renamed.cpin"
    shutil.copy(baselines / used[0], stale)
    pruned = subprocess.run([*PYTEST, "--callpin-prune", "--callpin-report=report.json"], cwd=project, env=env,
                            capture_output=True, text=True, check=False)
    report = json.loads((project / "report.json").read_text())
    left = sorted(str(path.relative_to(baselines)) for path in baselines.rglob("*.cpin"))
    again = subprocess.run(PYTEST, cwd=project, env=env, capture_output=True, text=True, check=False)
    print(f"pytest project: --callpin-mode=new exit {made.returncode}, {len(used)} baselines written "
          f"(plain pin included: {'plain/status.cpin' in used})")
    print(f"  --callpin-prune exit {pruned.returncode}, pruned {report['pruned']}, {len(left)} left; "
          f"next run exit {again.returncode}: {again.stdout.strip().splitlines()[-1]}")
    checks.append(("the project's pins pass and the new-mode run writes every baseline, the plain pin's included",
                   made.returncode == 0 and len(used) == 4 and "plain/status.cpin" in used))
    checks.append(("--callpin-prune removes only the stale baseline and keeps every used one",
                   pruned.returncode == 0 and report["pruned"] == ["baselines/tests/test_pins/test_a_test_since_renamed.cpin"]
                   and left == used))
    checks.append(("the run after pruning passes (no baseline missing)", again.returncode == 0))


def child(pure: bool) -> int:
    checks: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="callpin-realworld-recording-") as name:
        folder = Path(name)
        recording_checks(checks, folder)
        prune_checks(checks, folder, pure)
    for name, held in checks:
        print(f"{'held' if held else 'FAILED'}: {name}")
    return 0 if all(held for _, held in checks) else 1


def main() -> int:
    if sys.argv[1:] == ["--child"]:
        return child(os.environ.get("CALLPIN_PURE_PYTHON") == "1")
    failed = 0
    for pure in (False, True):
        print(f"-- {'CALLPIN_PURE_PYTHON=1' if pure else 'the C speedups'}", flush=True)
        done = subprocess.run([sys.executable, __file__, "--child"], env=clean_environment(pure), check=False)
        failed += done.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
