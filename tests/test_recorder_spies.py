"""The two per-call paths of a recording: the C spy against the Python reference (journal.Spy).

Both write the same bytes for the same calls: the scenario below is recorded through
each (the C spy, the Python spy with the same encoder, and a child process running
everything in pure Python) and the logs compared byte for byte. The rest checks what
only the C spy can get wrong: the shared per-thread flag, the lock, reference counts,
memory, and its error paths.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import types
from collections.abc import Callable
from typing import Any

import pytest

import callpin
from callpin import _impl, journal, recorder

C_LIVE = _impl.IMPLEMENTATION == "c"
needs_c = pytest.mark.skipif(not C_LIVE, reason="the C speedups are not live (not built, or CALLPIN_PURE_PYTHON=1)")

SCENARIO = '''
import asyncio
import dataclasses
import datetime
import threading
import uuid


class Declined(Exception):
    pass


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no message")


class Name(str):
    pass


@dataclasses.dataclass
class Card:
    number: str
    expiry: datetime.date


class Opaque:
    def __repr__(self):
        return "<Opaque at 0x7f00deadbeef>"


def charge(card, amount, **options):
    return {"ok": True, "amount": amount, "options": sorted(options)}


def refund(charge_id):
    raise Declined(f"refund of {charge_id} declined")


def broken():
    raise Unprintable()


def outer(n):
    return inner(n) + 1


def inner(n):
    return n * 2


def items(n):
    yield from range(n)


def quote(amount):
    return amount


def decline(amount):
    return amount


async def fetch(key):
    return {"key": key}


class Gateway:
    def ping(self, value=None):
        return "pong"

    @classmethod
    def build(cls, name):
        return name

    @staticmethod
    def version():
        return 3


class Device:
    def __call__(self, n):
        return n


# Callables of every binding wrapt tells apart: a bound method, a callable object, a
# builtin bound to an object (whose __self__ is no receiver).
pinger = Gateway().ping
device = Device()
lookup = {"k": 1}.get


def run(callpin, name, outcomes):
    """The calls of the scenario, recorded; the log's frames."""
    billing = __import__(name)
    key = uuid.UUID(int=7)
    spied = [f"{name}.{attr}" for attr in
             ("charge", "refund", "broken", "outer", "inner", "items", "quote", "decline",
              "fetch", "Gateway", "pinger", "device", "lookup")]
    stubs = {f"{name}.quote": callpin.returns({"quoted": True}),
             f"{name}.decline": callpin.raises(Declined("stubbed at 2024-05-01T10:00:00Z"))}
    with callpin.record(spy=spied, stub=stubs, outcomes=outcomes) as rec:
        billing.charge(Card("4242", datetime.date(2030, 1, 1)), 1500, currency="usd",
                       idempotency_key=key, amount_minor=1)
        billing.charge("card_B", 1, zeta=1, alpha=2, mid={"k": [1, (2, 3)], "s": {3, 1}})
        billing.charge("card_C", 2, **{Name("beta"): 1, Name("alpha"): 2})
        billing.charge("card_D", 3, only=str(key), at=datetime.datetime(2024, 1, 1, 9, 30))
        billing.charge(Opaque(), [Opaque(), key])
        for call in (lambda: billing.refund(f"ch_{key}"), billing.broken,
                     lambda: billing.decline(5)):
            try:
                call()
            except Exception:
                pass
        billing.quote(10)
        billing.outer(3)
        list(billing.items(2))
        first, second = billing.Gateway(), billing.Gateway()
        first.ping()
        second.ping(1)
        first.ping(value=second)
        billing.Gateway.build("x")
        billing.Gateway.version()
        billing.Gateway.ping(first, 2)
        billing.Gateway.ping("not a gateway")
        first.build("y")
        second.version()
        billing.pinger(value=3)
        billing.device(4)
        billing.lookup("k")
        rec.mark("between", [key, "at 2024-01-01 00:00:00"])
        for n in range(3):
            thread = threading.Thread(target=billing.charge, args=(f"t{n}", n), kwargs={"n": n})
            thread.start()
            thread.join()
        asyncio.run(billing.fetch(key))
        billing.charge("card_E", 4)
    return rec.frames
'''

CHILD = """
import json, sys, types
import callpin
name, outcomes, source = sys.argv[1], sys.argv[2], sys.stdin.read()
module = types.ModuleType(name)
sys.modules[name] = module
exec(compile(source, name, "exec"), module.__dict__)
frames = module.run(callpin, name, outcomes)
print(json.dumps({"implementation": callpin.IMPLEMENTATION, "frames": [f.hex() for f in frames]}))
"""

OUTCOMES = ["raise", "all", "none"]


@pytest.fixture
def scenario(make_module: Callable[..., types.ModuleType]) -> types.ModuleType:
    return make_module("cp_scenario", SCENARIO)


def python_spies(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wire the Python reference spy even where the C one is live."""
    monkeypatch.setattr(_impl, "Spy", journal.Spy)


def wired_handler(function: Any) -> Any:
    """The handler wrapt calls for a patched function (its wrapper)."""
    return function._self_wrapper


# ---------------------------------------------------------------------------------------
# One behaviour, two implementations.


@needs_c
def test_the_c_spy_is_wired_when_the_speedups_are_live(scenario):
    with callpin.record(spy="cp_scenario.charge"):
        assert type(wired_handler(scenario.charge)) is _impl.Spy


def test_the_python_spy_is_wired_without_the_c_one(scenario, monkeypatch):
    python_spies(monkeypatch)
    with callpin.record(spy="cp_scenario.charge"):
        assert type(wired_handler(scenario.charge)) is journal.Spy


@needs_c
@pytest.mark.parametrize("outcomes", OUTCOMES)
def test_the_c_and_python_spies_write_the_same_bytes(scenario, monkeypatch, outcomes):
    through_c = scenario.run(callpin, "cp_scenario", outcomes)
    with monkeypatch.context() as patched:
        python_spies(patched)
        through_python = scenario.run(callpin, "cp_scenario", outcomes)
    assert len(through_c) > 20
    assert through_c == through_python


@needs_c
@pytest.mark.parametrize("outcomes", OUTCOMES)
def test_the_c_path_writes_what_pure_python_writes(scenario, outcomes):
    pure = subprocess.run(
        [sys.executable, "-c", CHILD, "cp_scenario", outcomes],
        input=SCENARIO,
        env={**os.environ, "CALLPIN_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    written = json.loads(pure.stdout)
    assert written["implementation"] == "python"
    frames = [frame.hex() for frame in scenario.run(callpin, "cp_scenario", outcomes)]
    assert frames == written["frames"]


def test_the_scenario_records_every_kind_of_call(scenario):
    """What the byte comparisons above cover, so that they cannot pass on an empty log."""
    frames = scenario.run(callpin, "cp_scenario", "all")
    events = list(callpin.Log.from_frames(frames, rules=callpin.DEFAULT_RULES, meta={}))
    labels = {event.label.rsplit(".", 1)[-1] for event in events}
    assert {"charge", "refund", "broken", "outer", "inner", "items", "quote", "decline"} <= labels
    assert {"fetch", "ping", "build", "version", "between"} <= labels
    assert {event.thread for event in events} == {1, 2, 3, 4}
    assert max(event.depth for event in events) == 1
    kwargs_orders = [list(e.kwargs) for e in events if e.kind == "call" and len(e.kwargs) > 1]
    assert all(names == sorted(names) for names in kwargs_orders)
    assert ["alpha", "mid", "zeta"] in kwargs_orders
    errors = [event.error for event in events if event.kind == "raise"]
    assert ("Unprintable" in errors[1][0], errors[1][1]) == (True, "<unprintable>")
    receivers = [e.args[0] for e in events if e.kind == "call" and e.label.endswith((".ping", ".pinger"))]
    assert [(r.type.rsplit(".", 1)[-1], r.number) if isinstance(r, callpin.Instance) else r for r in receivers] == [
        ("Gateway", 1),
        ("Gateway", 2),
        ("Gateway", 1),
        ("Gateway", 1),  # through the class, the receiver first
        "not a gateway",  # through the class, no receiver
        ("Gateway", 3),  # a bound method spied as it is
    ]
    calls = {e.label.rsplit(".", 1)[-1]: e.args for e in events if e.kind == "call"}
    # A classmethod's receiver is its class and a staticmethod has none, read through
    # an instance too; a callable object and a builtin are called with no receiver.
    assert (calls["build"], calls["version"], calls["device"], calls["lookup"]) == (("y",), (), (4,), ("k",))
    assert [e.kind for e in events if e.label.endswith(".items")] == ["call"]


# ---------------------------------------------------------------------------------------
# The per-thread flag: one for both paths.


@pytest.mark.parametrize("spies", ["live", "python"])
def test_a_spied_call_made_while_the_flag_is_set_passes_through_unrecorded(scenario, monkeypatch, spies):
    if spies == "python":
        python_spies(monkeypatch)
    with callpin.record(spy="cp_scenario.inner") as rec:
        recorder._thread_state.inside = True
        try:
            assert scenario.inner(2) == 4
        finally:
            recorder._thread_state.inside = False
        scenario.inner(3)
    assert [event.args for event in rec.events] == [(3,)]


@needs_c
def test_the_flag_is_the_c_one_and_per_thread():
    state = _impl.ThreadState()
    assert recorder._thread_state.inside is False
    seen: list[bool] = []
    state.inside = True
    try:
        assert recorder._thread_state.inside is True
        thread = threading.Thread(target=lambda: seen.append(recorder._thread_state.inside))
        thread.start()
        thread.join()
    finally:
        state.inside = False
    assert seen == [False]
    assert recorder._thread_state.inside is False


def test_a_mark_whose_value_calls_a_spied_function_records_only_the_mark(scenario):
    class Chatty:
        def __repr__(self) -> str:
            return f"Chatty({scenario.inner(5)})"

    with callpin.record(spy="cp_scenario.inner") as rec:
        rec.mark("value", Chatty())
        scenario.inner(1)
    assert [(e.kind, e.args) for e in rec.events] == [("mark", ()), ("call", (1,))]
    assert rec.events[0].value.repr == "Chatty(10)"


def test_a_mark_made_while_encoding_a_call_is_ignored(scenario):
    class Marking:
        def __repr__(self) -> str:
            rec.mark("inside", 1)
            return "Marking()"

    with callpin.record(spy="cp_scenario.quote") as rec:
        scenario.quote(Marking())
    assert [e.kind for e in rec.events] == ["call"]


# ---------------------------------------------------------------------------------------
# Threads and the lock.


@needs_c
def test_sixteen_threads_of_10000_calls_record_exactly_160000_events(scenario):
    threads, per_thread = 16, 10_000
    start = threading.Barrier(threads)

    def worker(number: int) -> None:
        start.wait()
        for index in range(per_thread):
            scenario.inner((number, index))

    with callpin.record(spy="cp_scenario.inner", outcomes="none") as rec:
        assert type(wired_handler(scenario.inner)) is _impl.Spy
        workers = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
        for thread in workers:
            thread.start()
        for thread in workers:
            thread.join()
    events = rec.events
    assert len(events) == threads * per_thread
    by_thread: dict[int, list[tuple[int, int]]] = {}
    for event in events:
        by_thread.setdefault(event.thread, []).append(event.args[0])
    assert sorted(by_thread) == list(range(2, threads + 2))
    # Each thread's calls appear once each, in the order that thread made them.
    for calls in by_thread.values():
        assert len({number for number, _ in calls}) == 1
        assert [index for _, index in calls] == list(range(per_thread))


def test_a_call_waits_for_the_lock_without_holding_the_gil(scenario):
    holding, release, done = threading.Event(), threading.Event(), []

    with callpin.record(spy="cp_scenario.inner") as rec:

        def holder() -> None:
            with rec._journal.lock:
                holding.set()
                release.wait(60)

        def caller() -> None:
            done.append(scenario.inner(4))

        first = threading.Thread(target=holder, daemon=True)
        first.start()
        holding.wait(60)
        second = threading.Thread(target=caller, daemon=True)
        second.start()
        # The caller is blocked on the lock; this thread still runs Python code, which
        # it could not if the caller waited with the GIL held.
        assert sum(range(1000)) == 499500
        release.set()
        first.join(60)
        second.join(60)
    assert done == [8], "a spied call blocked on the recording's lock never finished"
    assert [(e.args, e.thread) for e in rec.events] == [((4,), 2)]


@needs_c
def test_the_lock_is_a_context_manager_like_threading_lock():
    lock = _impl.Lock()
    assert lock.locked() is False
    with lock as entered:
        assert entered is True
        assert lock.locked() is True
    assert lock.locked() is False
    with pytest.raises(RuntimeError, match="release unlocked lock"):
        lock.__exit__(None, None, None)
    with pytest.raises(TypeError):
        _impl.Lock(1)


@needs_c
def test_the_lock_is_taken_and_released_by_its_methods_like_threading_lock():
    # The pure-Python spy's emit takes the lock so, whichever lock the journal holds.
    lock = _impl.Lock()
    assert lock.acquire() is True
    assert lock.locked() is True
    assert lock.release() is None
    assert lock.locked() is False
    with pytest.raises(RuntimeError, match="release unlocked lock"):
        lock.release()
    with pytest.raises(TypeError):
        lock.acquire(False)  # type: ignore[call-arg]


@needs_c
@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs signal.pthread_kill")
def test_a_signal_handler_that_raises_ends_a_wait_for_the_lock():
    lock = _impl.Lock()
    held, stop = threading.Event(), threading.Event()

    class Interrupted(Exception):
        pass

    def interrupt(signum: int, frame: Any) -> None:
        raise Interrupted

    def holder() -> None:
        with lock:
            held.set()
            stop.wait(60)

    def poke() -> None:
        # Signals until the main thread stops waiting (it may not be waiting yet).
        while not stop.wait(0.05):
            signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1)

    previous = signal.signal(signal.SIGUSR1, interrupt)
    threads = [threading.Thread(target=holder), threading.Thread(target=poke)]
    try:
        threads[0].start()
        held.wait(60)
        threads[1].start()
        with pytest.raises(Interrupted):
            with lock:
                pass
    finally:
        stop.set()
        for thread in threads:
            thread.join(60)
        signal.signal(signal.SIGUSR1, previous)
    assert lock.locked() is False
    with lock:
        assert lock.locked() is True


# ---------------------------------------------------------------------------------------
# Errors: the caller sees exactly what the collaborator did.


def raise_from(scenario: types.ModuleType, call: Callable[[], Any]) -> BaseException:
    try:
        call()
    except BaseException as exc:
        return exc
    raise AssertionError("the call did not raise")


@pytest.mark.parametrize("spies", ["live", "python"])
def test_an_exception_reaches_the_caller_unchanged(scenario, monkeypatch, spies):
    if spies == "python":
        python_spies(monkeypatch)
    with callpin.record(spy="cp_scenario.refund") as rec:
        raised = raise_from(scenario, lambda: scenario.refund("ch_1"))
    assert type(raised).__name__ == "Declined"
    assert str(raised) == "refund of ch_1 declined"
    # The traceback still reaches the collaborator's own frame.
    frames = []
    tb = raised.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert frames[-1] == "refund"
    assert raised.__context__ is None
    assert [(e.kind, e.error) for e in rec.events] == [
        ("call", None),
        ("raise", ("cp_scenario.Declined", "refund of ch_1 declined")),
    ]


@pytest.mark.parametrize("spies", ["live", "python"])
def test_a_keyboard_interrupt_inside_the_call_is_recorded_and_reraised(scenario, monkeypatch, spies):
    if spies == "python":
        python_spies(monkeypatch)

    def interrupted(n: int) -> int:
        raise KeyboardInterrupt

    with callpin.record(spy="cp_scenario.inner", stub={"cp_scenario.inner": interrupted}) as rec:
        with pytest.raises(KeyboardInterrupt):
            scenario.inner(1)
        after_call = (recorder._thread_state.inside, rec._journal.depth.get(), rec._journal.lock.locked())
        with pytest.raises(KeyboardInterrupt):
            scenario.outer(2)  # inner raises again, one level down
    assert [(e.kind, e.label.rsplit(".", 1)[1], e.error, e.depth) for e in rec.events] == [
        ("call", "inner", None, 0),
        ("raise", "inner", ("KeyboardInterrupt", ""), 0),
        ("call", "inner", None, 0),
        ("raise", "inner", ("KeyboardInterrupt", ""), 0),
    ]
    assert after_call == (False, 0, False)


@pytest.mark.parametrize("spies", ["live", "python"])
def test_an_exception_whose_str_raises_a_base_exception_replaces_it_chained(scenario, monkeypatch, spies):
    if spies == "python":
        python_spies(monkeypatch)

    class Hostile(Exception):
        def __str__(self) -> str:
            raise SystemExit("from __str__")

    original = Hostile()

    def raising() -> None:
        raise original

    with callpin.record(spy="cp_scenario.broken", stub={"cp_scenario.broken": raising}) as rec:
        raised = raise_from(scenario, scenario.broken)
        scenario.inner(1)
    assert type(raised) is SystemExit
    assert raised.__context__ is original
    assert [e.kind for e in rec.events] == ["call"]
    assert recorder._thread_state.inside is False
    assert rec._journal.depth.get() == 0


@pytest.mark.parametrize("spies", ["live", "python"])
def test_a_base_exception_while_encoding_the_call_stops_it_before_it_runs(scenario, monkeypatch, spies):
    if spies == "python":
        python_spies(monkeypatch)
    ran = []

    class Interrupting:
        def __repr__(self) -> str:
            raise KeyboardInterrupt

    with callpin.record(spy="cp_scenario.inner", stub={"cp_scenario.inner": lambda value: ran.append(value)}) as rec:
        with pytest.raises(KeyboardInterrupt):
            scenario.inner(Interrupting())
        scenario.inner(2)
    assert ran == [2]
    assert [e.args for e in rec.events] == [(2,)]
    assert recorder._thread_state.inside is False


@needs_c
def test_a_spy_is_called_as_wrapt_calls_it(scenario):
    with callpin.record(spy="cp_scenario.inner") as rec:
        spy = wired_handler(scenario.inner)
        assert spy(scenario.inner.__wrapped__, None, (3,), {}) == 6
        with pytest.raises(TypeError):
            spy(scenario.inner.__wrapped__, None, [3], {})
        with pytest.raises(TypeError):
            spy(scenario.inner.__wrapped__, None, (3,))
        with pytest.raises(TypeError):
            spy(scenario.inner.__wrapped__, None, (3,), {}, extra=1)
    assert [e.args for e in rec.events] == [(3,)]
    assert (spy.label, spy.stub, spy.record_raise, spy.record_return) == (
        "cp_scenario.inner",
        None,
        True,
        False,
    )


# ---------------------------------------------------------------------------------------
# Reference counts and memory.


@needs_c
def test_recorded_calls_leave_the_reference_counts_of_their_values_as_they_were(scenario):
    argument, keyword, result = ["arg"], {"k": "v"}, ("result",)
    receiver = scenario.Gateway()

    def returning(*args: Any, **kwargs: Any) -> Any:
        return result

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise ValueError(args)

    objects = [argument, keyword, result, receiver, ValueError, returning, failing]

    def calls(count: int) -> None:
        with callpin.record(
            spy=["cp_scenario.charge", "cp_scenario.refund", "cp_scenario.Gateway"],
            stub={"cp_scenario.charge": returning, "cp_scenario.refund": failing},
            outcomes="all",
        ):
            for _ in range(count):
                scenario.charge(argument, 1, b=keyword, a=argument)
                try:
                    scenario.refund(argument)
                except ValueError:
                    pass
                receiver.ping(keyword)

    calls(10)
    gc.collect()
    before = [sys.getrefcount(obj) for obj in objects]
    calls(500)
    gc.collect()
    assert [sys.getrefcount(obj) for obj in objects] == before


@needs_c
def test_memory_errors_at_every_allocation_of_a_recorded_call_leave_a_working_recording():
    pytest.importorskip("_testcapi", reason="needs CPython's _testcapi to fail allocations")
    # Fail the n-th allocation of one recorded call for every n: each ends with the call's
    # result or a MemoryError, never a crash, and the recording works afterwards (flag
    # cleared, lock free, depth back to 0, later calls recorded). Twice over: first while
    # the keyword names are new to the rules (their checks allocate first, and a failure
    # there is a marker in the event), then once those checks are cached, so that the
    # call's own allocations (its frames, the depth) come first.
    script = textwrap.dedent(
        """
        import _testcapi, sys, types, uuid
        import callpin
        from callpin import recorder
        module = types.ModuleType("cp_nomem")
        exec("def charge(card, amount, **options):\\n    return {'ok': amount}", module.__dict__)
        sys.modules["cp_nomem"] = module
        key = uuid.UUID(int=5)
        outcomes = set()
        for start in [*range(1, 400), *range(1, 400)]:
            with callpin.record(spy="cp_nomem.charge", outcomes="all") as rec:
                module.charge("warm", 0)
                _testcapi.set_nomemory(start, start + 1)
                failed = False
                try:
                    result = module.charge("card", 1500, b=key, a=[1, "x"])
                    outcomes.add("called" if result == {"ok": 1500} else "wrong")
                except MemoryError:
                    failed = True
                    outcomes.add("MemoryError")
                finally:
                    _testcapi.remove_mem_hooks()
                assert not recorder._thread_state.inside
                assert not rec._journal.lock.locked()
                # Restoring the depth allocates too; only a call that failed may leave
                # it deeper (as the Python spy's `finally: reset()` would).
                assert rec._journal.depth.get() == 0 or failed
                assert module.charge("after", 2) == {"ok": 2}
            kinds = [(e.kind, e.args[:1]) for e in rec.events]
            assert kinds[:2] == [("call", ("warm",)), ("return", ())], kinds
            assert kinds[-2:] == [("call", ("after",)), ("return", ())], kinds
        print(" ".join(sorted(outcomes)))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["MemoryError", "called"]


class Comparing(str):
    """A keyword name whose own ordering raises (binding a call only asks its equality)."""

    def __lt__(self, other: object) -> bool:
        raise ValueError("ordered")

    def __gt__(self, other: object) -> bool:
        raise ValueError("ordered")


@pytest.mark.parametrize("spies", ["live", "python"])
@pytest.mark.parametrize("count", [3, 40])
def test_keyword_names_are_ordered_by_their_text_never_by_their_own_comparisons(scenario, monkeypatch, spies, count):
    if spies == "python":
        python_spies(monkeypatch)
    names = [f"k{n}" for n in range(count)]
    shuffled = names[1::2] + names[::2]
    # The stub takes the names as they come (the scenario's charge sorts them itself).
    stub = {"cp_scenario.charge": lambda *args, **kwargs: "charged"}
    with callpin.record(spy="cp_scenario.charge", stub=stub) as rec:
        result = scenario.charge("card", 1, **{Comparing(name): 0 for name in shuffled})
    assert result == "charged"
    assert [list(e.kwargs) for e in rec.events] == [sorted(names)]


@pytest.mark.parametrize("spies", ["live", "python"])
def test_a_receiver_whose_class_attribute_raises_is_numbered_by_its_type(scenario, monkeypatch, spies):
    if spies == "python":
        python_spies(monkeypatch)

    class Hidden(scenario.Gateway):  # type: ignore[name-defined,misc]
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            raise ValueError("no class")

    with callpin.record(spy="cp_scenario.Gateway") as rec:
        assert Hidden().ping(1) == "pong"
    built, event = rec.events
    assert (built.label, built.args) == ("cp_scenario.Gateway", (event.args[0],))
    assert (event.args[0].type.rsplit(".", 1)[1], event.args[0].number, event.args[1:]) == ("Hidden", 1, (1,))
