"""Batching, ordering, the concurrency limit and cancellation."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from tests.unit.core.tools_for_tests import EchoTool, Probe, PutTool, SlowInput, SlowTool

from toolgate.core.context import ToolContext
from toolgate.core.deps import Dep
from toolgate.core.messages import ToolUse
from toolgate.core.orchestrator import CancelToken, max_concurrency_from_env, partition
from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.core.runner import PreparedCall
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.testing import use
from toolgate.tools.read import ReadTool


def make(workspace: Path, probe: Probe, limit: int | None = None) -> Runtime:
    tools = [EchoTool(), SlowTool(probe), PutTool(), ReadTool()]
    return build_runtime(
        workspace,
        NonInteractiveApprover(),
        RuntimeOptions(mode=PermissionMode.BYPASS, tools=tools, max_concurrency=limit),
    )


def slow(label: str, **kw: object) -> ToolUse:
    return use("Slow", label=label, **kw)


def test_partition_groups_consecutive_safe_calls_only(workspace: Path) -> None:
    rt = make(workspace, Probe())
    calls = [
        slow("a"),
        slow("b"),
        slow("w", safe=False),
        slow("c"),
        use("Nope"),  # unknown tool: unsafe
        slow("d"),
        use("Slow", label=3),  # bad input: unsafe
        slow("e"),
        slow("f"),
    ]
    prepared = [rt.runner.prepare(c) for c in calls]
    assert partition(prepared) == [[0, 1], [2], [3], [4], [5], [6], [7, 8]]


def test_a_classifier_that_throws_counts_as_unsafe(workspace: Path) -> None:
    class Exploding(EchoTool):
        def is_concurrency_safe(self, tool_input: object) -> bool:
            raise RuntimeError("cannot tell")

    call = PreparedCall(use("Echo"), tool=Exploding(), tool_input=Exploding.input_model())
    assert call.concurrency_safe is False


async def test_read_write_read_is_never_reordered(workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("before\n")
    rt = make(workspace, Probe())
    results = await rt.orchestrator.run_turn(
        [
            use("Read", file_path="a.txt"),
            use("Put", path="a.txt", text="after\n"),
            use("Read", file_path="a.txt", offset=1, limit=5),
        ]
    )
    assert [r.content for r in results] == ["1\tbefore", "wrote a.txt", "1\tafter"]


async def test_results_come_back_in_tool_use_order_whatever_the_completion_order(workspace: Path) -> None:
    probe = Probe()
    rt = make(workspace, probe)
    # The first call takes the longest: it finishes last, yet its result comes first.
    calls = [slow("slowest", delay_steps=50), slow("middle", delay_steps=10), slow("fastest")]
    results = await rt.orchestrator.run_turn(calls)
    assert [r.content for r in results] == ["slowest", "middle", "fastest"]
    assert [r.tool_use_id for r in results] == [c.id for c in calls]
    assert probe.finished == ["fastest", "middle", "slowest"]


@pytest.mark.parametrize("limit", [1, 3, 10])
async def test_concurrency_limit_is_respected_and_reached(workspace: Path, limit: int) -> None:
    probe = Probe()
    rt = make(workspace, probe, limit=limit)
    results = await rt.orchestrator.run_turn([slow(str(i), delay_steps=20) for i in range(12)])
    assert not any(r.is_error for r in results)
    assert probe.max_running == limit


async def test_unsafe_calls_run_alone(workspace: Path) -> None:
    probe = Probe()
    rt = make(workspace, probe)
    await rt.orchestrator.run_turn(
        [slow("a", delay_steps=5), slow("w", safe=False, delay_steps=5), slow("b", delay_steps=5)]
    )
    assert probe.max_running == 1


def test_concurrency_setting_from_the_environment() -> None:
    assert max_concurrency_from_env({}) == 10
    assert max_concurrency_from_env({"TOOLGATE_MAX_TOOL_CONCURRENCY": "4"}) == 4
    for bad in ("0", "-2", "ten", "", "2.5"):
        assert max_concurrency_from_env({"TOOLGATE_MAX_TOOL_CONCURRENCY": bad}) == 10


async def test_context_changes_of_a_batch_are_applied_in_tool_use_order(workspace: Path) -> None:
    applied: list[str] = []
    probe = Probe()
    rt = make(workspace, probe)

    class Recorder:
        def info(self, _fmt: str, label: str) -> None:
            applied.append(label)

    rt.session.logger = Recorder()  # type: ignore[assignment]
    await rt.orchestrator.run_turn([slow("first", delay_steps=30), slow("second", delay_steps=10), slow("third")])
    assert probe.finished == ["third", "second", "first"]
    assert applied == ["first", "second", "third"]


async def test_cancellation_answers_every_call(workspace: Path) -> None:
    probe = Probe(expected=2)
    rt = make(workspace, probe)
    token = CancelToken()
    calls = [
        slow("held-1", hold=True),
        slow("held-2", hold=True, partial="half of the output"),
        slow("later", safe=False),  # never starts
        use("Echo", text="never"),
    ]
    results: list[object] = []

    async def run() -> None:
        results.extend(await rt.orchestrator.run_turn(calls, token))

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        with anyio.fail_after(5):
            await probe.all_started.wait()
        token.cancel()

    assert [r.tool_use_id for r in results] == [c.id for c in calls]  # type: ignore[attr-defined]
    texts = [r.text() for r in results]  # type: ignore[attr-defined]
    assert all(r.is_error for r in results)  # type: ignore[attr-defined]
    assert 'kind="cancelled"' in texts[0] and "may have partly taken effect" in texts[0]
    assert texts[1] == "half of the output"
    assert "before this call started" in texts[2] and "before this call started" in texts[3]
    assert probe.running == 0  # the held calls were really stopped


async def test_a_token_cancelled_before_the_turn_runs_nothing(workspace: Path) -> None:
    probe = Probe()
    rt = make(workspace, probe)
    token = CancelToken()
    token.cancel()
    results = await rt.orchestrator.run_turn([slow("a"), slow("b", safe=False)], token)
    assert len(results) == 2 and all("before this call started" in r.text() for r in results)
    assert probe.started == []


async def test_completed_reads_are_recorded_even_when_the_turn_is_cancelled(workspace: Path) -> None:
    (workspace / "a.txt").write_text("x\n")
    probe = Probe(expected=1)
    rt = make(workspace, probe)
    token = CancelToken()

    async def run() -> None:
        await rt.orchestrator.run_turn([use("Read", file_path="a.txt"), slow("held", hold=True)], token)

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        with anyio.fail_after(5):
            await probe.all_started.wait()
        token.cancel()
    # The Read finished before the cancel, so its record stands: the whole file, as read, at its timestamp.
    record = rt.session.file_state.get(workspace / "a.txt")
    assert record is not None
    assert (record.content, record.full, record.offset, record.limit) == ("x\n", True, 1, None)
    assert record.mtime_ns == (workspace / "a.txt").stat().st_mtime_ns and record.file_size == 2


async def test_each_result_is_reported_as_soon_as_it_exists(workspace: Path) -> None:
    probe = Probe(expected=3)
    rt = make(workspace, probe)
    heard: list[str] = []
    calls = [slow("slowest", delay_steps=50), slow("fastest"), slow("held", hold=True)]
    token = CancelToken()

    async def run() -> None:
        await rt.orchestrator.run_turn(calls, token, on_result=lambda r: heard.append(r.text()))

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        with anyio.fail_after(5):
            while len(heard) < 2:
                await anyio.lowlevel.checkpoint()
        assert heard == ["fastest", "slowest"]  # completion order, while "held" still runs
        token.cancel()
    assert len(heard) == 3 and 'kind="cancelled"' in heard[2]


async def test_a_single_call_is_interrupted_by_its_token(workspace: Path) -> None:
    # A turn of one call runs without a watcher task: the token itself must stop it.
    probe = Probe(expected=1)
    rt = make(workspace, probe)
    token = CancelToken()
    results: list[object] = []

    async def run() -> None:
        results.extend(await rt.orchestrator.run_turn([slow("held", hold=True, safe=False)], token))

    with anyio.fail_after(5):  # a token that failed to stop the call would leave it held for ever
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            await probe.all_started.wait()
            token.cancel()

    [result] = results
    assert result.is_error and 'kind="cancelled"' in result.text()  # type: ignore[attr-defined]
    assert probe.running == 0


def test_each_call_is_classified_at_most_once_and_a_lone_call_not_at_all(workspace: Path) -> None:
    asked: list[str] = []

    class Counted(EchoTool):
        def is_concurrency_safe(self, tool_input: object) -> bool:
            asked.append(str(getattr(tool_input, "text", "")))
            return True

    def call(text: str) -> PreparedCall:
        return PreparedCall(use("Echo", text=text), tool=Counted(), tool_input=Counted.input_model(text=text))

    assert partition([call("alone")]) == [[0]]
    assert asked == []  # nothing to group it with: the classifier (for Bash, a parse) is not asked
    assert partition([call("a"), call("b"), call("c")]) == [[0, 1, 2]]
    assert asked == ["a", "b", "c"]


async def test_a_call_value_with_a_close_is_closed_in_full_when_the_turn_is_cancelled(workspace: Path) -> None:
    # Closing is skipped only for calls that created nothing closable; a value that has a close still gets it,
    # shielded, even though the turn around it was cancelled.
    closed: list[str] = []

    async def close(value: str) -> None:
        await anyio.lowlevel.checkpoint()  # a cancelled scope would stop the close here without its shield
        closed.append(value)

    resource: Dep[str] = Dep("resource", lambda _r: "resource", scope="call", close=close)
    probe = Probe(expected=1)

    class Holding(SlowTool):
        async def call(self, tool_input: SlowInput, ctx: ToolContext) -> str:
            ctx.get(resource)
            return await super().call(tool_input, ctx)

    rt = build_runtime(
        workspace,
        NonInteractiveApprover(),
        RuntimeOptions(mode=PermissionMode.BYPASS, tools=[Holding(probe)]),
    )
    token = CancelToken()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(rt.orchestrator.run_turn, [slow("held", hold=True, safe=False)], token)
            await probe.all_started.wait()
            token.cancel()
    assert closed == ["resource"]


async def test_a_turn_makes_no_event_for_its_token(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Making an anyio Event (it looks its backend up) cost every tools/run microseconds; a turn only watches scopes.
    made: list[anyio.Event] = []
    real = anyio.Event

    def counted() -> anyio.Event:
        made.append(event := real())
        return event

    monkeypatch.setattr(anyio, "Event", counted)
    runtime = make(workspace, Probe())
    token = CancelToken()
    [result] = await runtime.orchestrator.run_turn([use("Echo", text="hi")], token)
    assert not result.is_error and made == []
    token.cancel()
    with anyio.fail_after(5):
        await token.wait()  # the first waiter makes it, already set
    assert len(made) == 1


async def test_a_token_cancelled_before_anyone_waits_releases_whoever_waits_later() -> None:
    token = CancelToken()
    token.cancel()
    assert token.cancelled
    with anyio.fail_after(5):
        await token.wait()
        with anyio.CancelScope() as scope:
            await token.cancel_when_set(scope)
            await anyio.sleep_forever()
    assert scope.cancel_called


async def test_a_waiter_that_came_first_is_released_by_the_cancel() -> None:
    token = CancelToken()
    released = anyio.Event()

    async def wait() -> None:
        await token.wait()
        released.set()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            assert not released.is_set()
            token.cancel()
        assert released.is_set()
