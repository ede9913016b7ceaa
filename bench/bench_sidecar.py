"""The sidecar over real stdio: round trips of tools/run (one Read of 1 KiB) against a no-op request; the time
from spawning `toolgate serve` to its answer to initialize against a bare interpreter start and the floor of a
pygls server with pydantic models (`import pygls.lsp.server, pydantic`), with the five slowest imports on that
path (`-X importtime`); the first session/new, at once and after the sidecar was idle, against a warm one; and the
envelope check every message passes (UTF-8, depth, JSON-RPC shape) against the bare `json.loads` it wraps."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.report import Figure, Report
from toolgate.sidecar.envelope import Message, decode

ROUND_TRIPS = 1000
SPAWNS = 10
SERVER = [sys.executable, "-m", "toolgate", "serve"]


class RawClient:
    """Just enough JSON-RPC over stdio to time the server, not a client library."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.ids = itertools.count(1)

    @classmethod
    async def spawn(cls) -> RawClient:
        process = await asyncio.create_subprocess_exec(
            *SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        return cls(process)

    async def request(self, method: str, params: Any) -> Any:
        msg_id = next(self.ids)
        body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()
        self.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        while True:
            message = await self._read()
            if message.get("id") == msg_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message["result"]

    async def _read(self) -> dict[str, Any]:
        length = 0
        while (line := await self.stdout.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        return dict(json.loads(await self.stdout.readexactly(length)))

    async def initialize(self, storage: Path, workspace: Path) -> None:
        params = {
            "processId": os.getpid(),
            "capabilities": {},
            "initializationOptions": {"storageDir": str(storage)},
            "workspaceFolders": [{"uri": workspace.as_uri(), "name": "ws"}],
        }
        await self.request("initialize", params)

    async def close(self) -> None:
        await self.request("shutdown", None)
        body = b'{"jsonrpc":"2.0","method":"exit"}'
        self.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await self.process.wait()


def percentile(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1] if q < 100 else max(samples)


async def _round_trips(report: Report, workdir: Path) -> None:
    workspace = workdir / "ws"
    workspace.mkdir()
    (workspace / "one-kib.txt").write_text(("x" * 63 + "\n") * 16)
    client = await RawClient.spawn()
    try:
        await client.initialize(workdir / "storage", workspace)
        session = (await client.request("toolgate/session/new", {}))["sessionId"]
        counter = itertools.count()

        async def read() -> None:
            # A different offset each time defeats the "unchanged since last read" shortcut.
            n = next(counter)
            call = {"id": f"t{n}", "name": "Read", "input": {"file_path": "one-kib.txt", "offset": 1 + n % 2}}
            [result] = (await client.request("toolgate/tools/run", {"sessionId": session, "calls": [call]}))["results"]
            assert not result["is_error"], result

        async def ping() -> None:
            await client.request("toolgate/ping", {})

        ping_samples: list[float] = []
        read_samples: list[float] = []
        for _ in range(20):  # warm up both paths
            await ping()
            await read()
        for _ in range(ROUND_TRIPS):  # interleaved, so both see the same machine load
            for fn, samples in ((ping, ping_samples), (read, read_samples)):
                start = time.perf_counter()
                await fn()
                samples.append(time.perf_counter() - start)
    finally:
        await client.close()
    for q in (50, 99):
        report.add(
            Figure(
                "sidecar",
                f"tools/run (1 Read of 1 KiB) round trip p{q}",
                percentile(read_samples, q) * 1e6,
                "µs",
                f"toolgate/ping round trip p{q}",
                percentile(ping_samples, q) * 1e6,
                note=f"{ROUND_TRIPS} requests each, over stdio",
            )
        )


IDLE_SECONDS = 2.0
FLOOR = "import pygls.lsp.server, pydantic"


async def _spawn(report: Report, workdir: Path) -> None:
    # The floor is what any pygls language server with pydantic models at its boundary imports before it can answer
    # (goal: initialize answered within 1.5x of it); `pass` is the bare interpreter.
    baselines: dict[str, list[float]] = {"pass": [], FLOOR: []}
    served: list[float] = []
    ready: list[float] = []  # the first request after initialize answered: the server is up
    # Then a session opened, what the first message waits for before it goes anywhere: at once (every other spawn),
    # or after the sidecar was left idle for a moment (it imports what a session needs meanwhile).
    opened: list[float] = []
    opened_after_idle: list[float] = []
    warm: list[float] = []  # a second session in the same sidecar: nothing left to import
    for n in range(SPAWNS):  # interleaved, so all of them see the same machine load
        for code, samples in baselines.items():
            start = time.perf_counter()
            process = await asyncio.create_subprocess_exec(sys.executable, "-c", code)
            await process.wait()
            samples.append(time.perf_counter() - start)

        workspace = workdir / f"spawn{n}"
        workspace.mkdir()
        start = time.perf_counter()
        client = await RawClient.spawn()
        await client.initialize(workdir / "storage", workspace)
        served.append(time.perf_counter() - start)
        await client.request("toolgate/ping", {})
        ready.append(time.perf_counter() - start)
        if n % 2:
            await asyncio.sleep(IDLE_SECONDS)
        opening = time.perf_counter()
        await client.request("toolgate/session/new", {"workspace": str(workspace)})
        (opened_after_idle if n % 2 else opened).append(time.perf_counter() - opening)
        opening = time.perf_counter()
        await client.request("toolgate/session/new", {"workspace": str(workspace)})
        warm.append(time.perf_counter() - opening)
        await client.close()
    for code, samples in baselines.items():
        report.add(
            Figure(
                "sidecar",
                "spawn `toolgate serve` to initialize answered",
                statistics.median(served) * 1000,
                "ms",
                f"spawn python -c {code!r}",
                statistics.median(samples) * 1000,
                note=f"median of {SPAWNS}",
            )
        )
    report.add(
        Figure(
            "sidecar",
            "spawn `toolgate serve` to its first request served",
            statistics.median(ready) * 1000,
            "ms",
            "spawn python -c 'pass'",
            statistics.median(baselines["pass"]) * 1000,
            note=f"median of {SPAWNS}; what the editor waits for before the first thing works",
        )
    )
    report.add(
        Figure(
            "sidecar",
            "toolgate/session/new, the first in a fresh sidecar",
            statistics.median(opened) * 1000,
            "ms",
            note=f"median of {len(opened)}; imports the runtime, the tools and the permission engine, then builds them",
        )
    )
    report.add(
        Figure(
            "sidecar",
            f"toolgate/session/new, the first, after {IDLE_SECONDS:g} s idle",
            statistics.median(opened_after_idle) * 1000,
            "ms",
            "the same at once",
            statistics.median(opened) * 1000,
            note=f"median of {len(opened_after_idle)}; the sidecar imported what a session needs while idle",
        )
    )
    report.add(
        Figure(
            "sidecar",
            f"toolgate/session/new, the first, after {IDLE_SECONDS:g} s idle (vs a warm sidecar)",
            statistics.median(opened_after_idle) * 1000,
            "ms",
            "a second session/new in the same sidecar",
            statistics.median(warm) * 1000,
            note=f"median of {len(opened_after_idle)} and {len(warm)}; goal: within noise of 1x",
        )
    )


ENVELOPE_RUNS = 5


def _envelope(report: Report) -> None:
    source = Path(__file__).read_text()
    content = (source * (1024 * 1024 // len(source) + 1))[: 1024 * 1024]  # code: brackets, quotes, escapes
    call = {"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "a.py", "content": content}}
    messages = {
        "a tools/run Write of 1 MiB of code": {"sessionId": "abc", "calls": [call]},
        # The worst case per byte: nothing but structure, every bracket counted.
        "8 MiB of nothing but `{}` objects": [{}] * (8 * 1024 * 1024 // 3),
    }
    for name, params in messages.items():
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "toolgate/tools/run", "params": params}).encode()
        checked: list[float] = []
        bare: list[float] = []
        for _ in range(ENVELOPE_RUNS):
            start = time.perf_counter()
            assert isinstance(decode(body), Message)
            checked.append(time.perf_counter() - start)
            start = time.perf_counter()
            json.loads(body)
            bare.append(time.perf_counter() - start)
        report.add(
            Figure(
                "sidecar",
                f"envelope check + parse: {name}",
                statistics.median(checked) * 1000,
                "ms",
                "json.loads of the same body",
                statistics.median(bare) * 1000,
                note=f"median of {ENVELOPE_RUNS}",
            )
        )


IMPORT_PATH = "import toolgate.cli.main, toolgate.cli.serve"  # what `toolgate serve` imports before initialize


def slowest_imports(count: int = 5) -> list[tuple[str, float]]:
    """The modules whose own import time (`python -X importtime`, self time) is largest on the serve path."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", IMPORT_PATH], capture_output=True, text=True)
    own: dict[str, float] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _cumulative, name = line.removeprefix("import time:").split("|")
        own[name.strip()] = int(self_us) / 1000
    return sorted(own.items(), key=lambda item: item[1], reverse=True)[:count]


def _import_time(report: Report) -> None:
    slowest = slowest_imports()
    print("  slowest imports before initialize (self time): " + ", ".join(f"{n} {ms:.0f} ms" for n, ms in slowest))
    for name, ms in slowest:
        report.add(Figure("sidecar", f"import {name} (self, -X importtime)", ms, "ms", note="serve path"))


def run(report: Report, workdir: Path) -> None:
    _import_time(report)
    _envelope(report)
    asyncio.run(_round_trips(report, workdir))
    asyncio.run(_spawn(report, workdir))
