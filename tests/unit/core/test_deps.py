from __future__ import annotations

from pathlib import Path

from toolgate.core.context import CLOCK, HOME_DIR
from toolgate.core.deps import Dep, Dependencies
from toolgate.core.permission import NonInteractiveApprover
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.testing import run1


def test_session_scoped_values_are_created_once_on_first_use() -> None:
    made: list[int] = []
    dep: Dep[int] = Dep("n", lambda _r: made.append(1) or len(made))
    deps = Dependencies()
    assert made == []
    assert deps.get(dep) == 1 and deps.for_call().get(dep) == 1
    assert made == [1]


def test_call_scoped_values_are_fresh_per_call_and_cached_within_it() -> None:
    counter = iter(range(100))
    dep: Dep[int] = Dep("per-call", lambda _r: next(counter), scope="call")
    deps = Dependencies()
    first, second = deps.for_call(), deps.for_call()
    assert first.get(dep) == first.get(dep) == 0
    assert second.get(dep) == 1


def test_a_dependency_can_use_another() -> None:
    base: Dep[int] = Dep("base", lambda _r: 20)
    derived: Dep[int] = Dep("derived", lambda r: r.get(base) + 1, scope="call")
    deps = Dependencies()
    deps.override(base, 41)
    assert deps.for_call().get(derived) == 42


def test_override_replaces_a_value_already_created() -> None:
    dep: Dep[str] = Dep("s", lambda _r: "real")
    deps = Dependencies()
    assert deps.get(dep) == "real"
    deps.override(dep, "fake")
    assert deps.get(dep) == "fake"


async def test_close_runs_in_reverse_creation_order_for_both_scopes() -> None:
    closed: list[str] = []
    a: Dep[str] = Dep("a", lambda _r: "a", close=closed.append)
    b: Dep[str] = Dep("b", lambda r: r.get(a) + "b", close=closed.append)

    async def aclose(value: str) -> None:
        closed.append(value)

    c: Dep[str] = Dep("c", lambda _r: "c", scope="call", close=aclose)
    deps = Dependencies()
    call = deps.for_call()
    call.get(b)
    call.get(c)
    await call.aclose()
    assert closed == ["c"]
    await deps.aclose()
    assert closed == ["c", "ab", "a"]


async def test_tests_can_replace_the_home_directory_and_clock(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("from a fake home\n")

    class FrozenClock:
        def now(self) -> float:
            return 1_000_000.0

        def monotonic(self) -> float:
            return 5.0

    rt = build_runtime(workspace, NonInteractiveApprover(), RuntimeOptions(additional_dirs=[home]))
    rt.session.deps.override(HOME_DIR, home)
    rt.session.deps.override(CLOCK, FrozenClock())
    assert (await run1(rt, "Read", file_path="~/notes.txt")).content == "1\tfrom a fake home"
    assert rt.session.deps.get(CLOCK).now() == 1_000_000.0
