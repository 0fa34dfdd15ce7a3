"""Restore: however a recording block ends, every patched attribute is put back (`is`).

Each scenario builds recordings over random subsets of targets (functions, methods,
a whole class, a whole module, an inherited method; aliases imported into other
modules) and ends them badly: an exception, KeyboardInterrupt, a generator closed or
collected mid-block, a thread leaving by return or by raise, nested recorders ended in
the wrong order, `pin()` among them. After each one, every attribute of every module
and class involved must be the very object it was before, no wrapt proxy of a target
may be left in any module of `sys.modules`, and callpin must hold no patch layer.
"""

from __future__ import annotations

import gc
import random
import sys
import threading
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import wrapt

import callpin
from callpin import spy
from callpin.errors import BaselineMissing

from .conftest import Figures, Scale

COLLABORATORS_A = """
    def f0(x=0):
        return x

    def f1(x=0):
        return x + 1

    def f2(x=0):
        return x + 2

    def gen(n=2):
        yield from range(n)

    class K:
        def m(self, x=0):
            return x

        @classmethod
        def c(cls, x=0):
            return x

        @staticmethod
        def s(x=0):
            return x

    class Base:
        def inherited(self, x=0):
            return x

    class Derived(Base):
        pass
"""

COLLABORATORS_B = """
    def g0(x=0):
        return x

    def g1(x=0):
        return -x
"""

USER = """
    from rl_pkg.coll_a import f0, f1, gen, K
    from rl_pkg.coll_b import *
    from rl_pkg import coll_a, coll_b

    def work(x):
        return f0(x) + f1(x) + coll_a.f2(x) + g0(x) + g1(x) + K().m(x) + K.c(x) + K.s(x)
"""

TARGETS = [
    "rl_pkg.coll_a.f0",
    "rl_pkg.coll_a.f1",
    "rl_pkg.coll_a.f2",
    "rl_pkg.coll_a.gen",
    "rl_pkg.coll_a.K",
    "rl_pkg.coll_a.K.m",
    "rl_pkg.coll_a.Derived.inherited",
    "rl_pkg.coll_b",
    "rl_pkg.coll_b.g1",
]


@dataclass
class Tally:
    """What one scenario family did: how many scenarios, attributes checked, left patched."""

    name: str
    scenarios: int = 0
    checked: int = 0
    left: list[str] = field(default_factory=list)

    def report(self, figures: Figures) -> None:
        figures.add("restore", f"{self.name}: scenarios run", self.scenarios)
        figures.add("restore", f"{self.name}: attributes checked", self.checked)
        figures.add("restore", f"{self.name}: left patched", len(self.left), zero=True)
        assert self.left == []


class World:
    """The modules and classes the scenarios spy on, and their state to compare against."""

    def __init__(self, make_module: Callable[..., types.ModuleType]) -> None:
        make_module("rl_pkg")
        self.coll_a = make_module("rl_pkg.coll_a", COLLABORATORS_A)
        self.coll_b = make_module("rl_pkg.coll_b", COLLABORATORS_B)
        self.users = [make_module(f"rl_user_{n}", USER) for n in range(3)]
        self.namespaces: dict[str, Any] = {
            "rl_pkg.coll_a": self.coll_a,
            "rl_pkg.coll_b": self.coll_b,
            **{user.__name__: user for user in self.users},
            "K": self.coll_a.K,
            "Base": self.coll_a.Base,
            "Derived": self.coll_a.Derived,
        }
        self.originals = {id(value) for value in self.snapshot().values()}

    def snapshot(self) -> dict[tuple[str, str], Any]:
        return {(where, name): value for where, owner in self.namespaces.items() for name, value in vars(owner).items()}

    def check(self, before: dict[tuple[str, str], Any], tally: Tally) -> None:
        """Compare with `before`; every difference and every stray proxy goes into `tally.left`."""
        after = self.snapshot()
        tally.scenarios += 1
        tally.checked += len(before)
        for key, value in before.items():
            if key not in after:
                tally.left.append(f"{key} removed")
            elif after[key] is not value:
                tally.left.append(f"{key} is {after[key]!r}, was {value!r}")
        tally.left.extend(f"{key} added" for key in after.keys() - before.keys())
        tally.left.extend(self.stray_proxies())
        if spy._layers:
            tally.left.append(f"{len(spy._layers)} places still layered")

    def stray_proxies(self) -> Iterator[str]:
        for module_name, module in list(sys.modules.items()):
            namespace = getattr(module, "__dict__", None)
            if not isinstance(namespace, dict):
                continue
            for name, value in list(namespace.items()):
                if isinstance(value, wrapt.ObjectProxy) and id(_unwrap(value)) in self.originals:
                    yield f"proxy left at {module_name}.{name}"

    def call_some(self, rng: random.Random) -> None:
        """Call the collaborators through their aliases, a random number of times."""
        for _ in range(rng.randint(0, 3)):
            rng.choice(self.users).work(rng.randint(0, 9))
        if rng.random() < 0.3:
            list(self.coll_a.gen(2))


def _unwrap(value: Any) -> Any:
    while isinstance(value, wrapt.ObjectProxy):
        value = value.__wrapped__
    return value


def _targets(rng: random.Random) -> list[str]:
    return rng.sample(TARGETS, rng.randint(1, 4))


def _recording(rng: random.Random, tmp_path: Path, number: int) -> Any:
    """A record() or pin() context manager over a random subset of targets, maybe stubbing."""
    chosen = _targets(rng)
    stub = {"rl_pkg.coll_a.f0": callpin.returns(0)} if rng.random() < 0.3 else None
    aliases = rng.random() < 0.85
    if rng.random() < 0.3:
        return callpin.pin(tmp_path / f"pin-{number}.cpin", spy=chosen, stub=stub, aliases=aliases, mode="check")
    return callpin.record(spy=chosen, stub=stub, aliases=aliases)


def _exit(manager: Any, how: str) -> None:
    """End a record() or pin() block the way `how` says, swallowing what it raises."""
    errors = {"return": None, "error": ValueError, "interrupt": KeyboardInterrupt}
    if how == "stop":
        (manager.recording if isinstance(manager, callpin.Pin) else manager).stop()
        return
    kind = errors[how]
    try:
        manager.__exit__(kind, None if kind is None else kind(), None)
    except BaselineMissing:
        pass  # pin() in check mode, no baseline: the restore already happened


@pytest.fixture
def world(make_module: Callable[..., types.ModuleType]) -> Iterator[World]:
    yield World(make_module)
    assert spy._layers == {}


@pytest.mark.parametrize("raised", [ValueError, KeyboardInterrupt, SystemExit])
def test_a_block_that_raises_restores_everything(
    world: World, scale: Scale, figures: Figures, tmp_path: Path, raised: type[BaseException]
) -> None:
    rng = random.Random(f"raise-{raised.__name__}")
    tally = Tally(f"block raises {raised.__name__}")
    for number in range(scale.pick(60, 800)):
        before = world.snapshot()
        late_name = f"rl_late_{number}"
        with pytest.raises(raised):
            with _recording(rng, tmp_path, number):
                world.call_some(rng)
                if rng.random() < 0.3:
                    # A module imported inside the block binds whatever is there now.
                    late = types.ModuleType(late_name)
                    sys.modules[late_name] = late
                    exec("from rl_pkg.coll_a import f0, f1", late.__dict__)
                if rng.random() < 0.5:
                    stubbed = callpin.raises(raised)
                    with callpin.record(spy="rl_pkg.coll_a.f2", stub={"rl_pkg.coll_a.f2": stubbed}):
                        world.coll_a.f2(1)
                raise raised("inside")
        late = sys.modules.pop(late_name, None)
        if late is not None:
            assert late.f0 is before[("rl_pkg.coll_a", "f0")]
            assert late.f1 is before[("rl_pkg.coll_a", "f1")]
        world.check(before, tally)
    tally.report(figures)


def test_a_generator_closed_or_collected_mid_block_restores_everything(
    world: World, scale: Scale, figures: Figures, tmp_path: Path
) -> None:
    rng = random.Random("generator")
    tally = Tally("generator closed mid-block")

    def recorder_generator(number: int) -> Iterator[int]:
        with _recording(rng, tmp_path, number):
            for step in range(10):
                world.call_some(rng)
                yield step

    for number in range(scale.pick(80, 700)):
        before = world.snapshot()
        generators = [recorder_generator(number * 10 + k) for k in range(rng.randint(1, 3))]
        for generator in generators:
            for _ in range(rng.randint(1, 4)):
                next(generator)
        # Recorders of other generators, and one of this frame, overlap the first;
        # they end in whatever order the generators are finished in.
        outer = _recording(rng, tmp_path, number * 10 + 9) if rng.random() < 0.5 else None
        if outer is not None:
            outer.__enter__()
        rng.shuffle(generators)
        while generators:
            generator = generators.pop()
            if rng.random() < 0.5:
                generator.close()
            else:
                del generator
                gc.collect()
        if outer is not None:
            _exit(outer, rng.choice(["return", "error", "interrupt", "stop"]))
        world.check(before, tally)
    tally.report(figures)


def test_threads_leaving_a_block_by_return_or_raise_restore_everything(
    world: World, scale: Scale, figures: Figures, tmp_path: Path
) -> None:
    rng = random.Random("threads")
    tally = Tally("threads exit inside")
    failures: list[BaseException] = []

    def body(manager: Any, seed: int, raising: bool, barrier: threading.Barrier) -> None:
        local = random.Random(seed)
        try:
            with manager:
                barrier.wait()
                world.call_some(local)
                if raising:
                    raise RuntimeError("thread leaves the block")
        except (RuntimeError, BaselineMissing):
            pass  # pin() in check mode, no baseline: the restore already happened
        except BaseException as exc:  # seen by the main thread
            failures.append(exc)

    for number in range(scale.pick(40, 2000)):
        before = world.snapshot()
        count = rng.randint(1, 4)
        barrier = threading.Barrier(count)
        threads = [
            threading.Thread(
                target=body,
                args=(
                    _recording(rng, tmp_path, number * 10 + k),
                    rng.random(),
                    rng.random() < 0.5,
                    barrier,
                ),
            )
            for k in range(count)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        world.check(before, tally)
    tally.report(figures)


def test_nested_recorders_ended_in_any_order_restore_everything(
    world: World, scale: Scale, figures: Figures, tmp_path: Path
) -> None:
    rng = random.Random("nested")
    tally = Tally("nested, ended out of order")
    for number in range(scale.pick(80, 1000)):
        before = world.snapshot()
        same = rng.random() < 0.5
        shared = _targets(rng)
        managers = []
        for k in range(rng.randint(2, 5)):
            if same:
                managers.append(callpin.record(spy=shared, aliases=rng.random() < 0.85))
            else:
                managers.append(_recording(rng, tmp_path, number * 10 + k))
            managers[-1].__enter__()
            world.call_some(rng)
        rng.shuffle(managers)
        for manager in managers:
            _exit(manager, rng.choice(["return", "error", "interrupt", "stop"]))
            world.call_some(rng)
        world.check(before, tally)
    tally.report(figures)
