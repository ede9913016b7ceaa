"""The sandbox's only way out: an HTTP/HTTPS proxy the session owns, on unix sockets bound into the sandbox.

A sandboxed command has its own network namespace, so this process's 127.0.0.1 is out of its reach; each
command gets its own socket (a `Channel`), which the in-sandbox forwarder (`forwarder.py`) relays 127.0.0.1:PORT
to. The proxy runs its own asyncio loop in one daemon thread, so it serves background commands while the
session's own loop waits on something else, and stops with the session (`close`).

Per request: read its head, check the host against the rules (`egress.py`), resolve it once, check every
address, and connect to a checked address (never resolving again, so a DNS answer cannot change between the
check and the connection). A plain request's connection carries that request alone upstream; the client's next
request on the same connection is read and checked afresh. What it refused is kept on the channel for the
Bash result.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import re
import shutil
import socket
import tempfile
import threading
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from toolgate.permissions.network import IPAddress, names_exactly
from toolgate.sandbox.egress import (
    CHUNKED,
    MAX_HEAD_BYTES,
    ProxyRequest,
    Refusal,
    check_addresses,
    check_host,
    failure_response,
    parse_request,
    refusal_response,
)

_HEAD_TIMEOUT_S = 30.0
_CONNECT_TIMEOUT_S = 15.0
_STOP_TIMEOUT_S = 5.0
_CHUNK = 64 * 1024
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,8})(?:;[^\r\n]*)?\r\n")
T = TypeVar("T")
# Where the in-sandbox forwarder listens (the sandbox's own 127.0.0.1: always free, nothing else runs there).
PROXY_PORT = 3128
_MAX_BLOCKED_SHOWN = 5


@dataclass(frozen=True, slots=True)
class Blocked:
    target: str
    reason: str
    rule: str | None

    def describe(self) -> str:
        allow = f"; {self.rule} would allow it" if self.rule else ""
        return f"{self.target} ({self.reason}{allow})"


@dataclass(eq=False)
class Channel:
    """One command's socket into the proxy; `directory` (holding `socket`) is what the sandbox binds."""

    directory: Path
    blocked: list[Blocked] = field(default_factory=list)
    server: asyncio.AbstractServer | None = None

    @property
    def socket(self) -> Path:
        return self.directory / "proxy.sock"


class EgressProxy:
    def __init__(self, specs: tuple[str, ...]) -> None:
        self.specs = specs
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._directory: Path | None = None
        self._channels: list[Channel] = []
        self._count = 0

    @property
    def directory(self) -> Path:
        """Where every channel's socket lives (what a sandbox binds, once for all its commands)."""
        return self._started()[1]

    def open_channel(self) -> Channel:
        loop, directory = self._started()
        self._count += 1
        channel = Channel(directory / f"c{self._count}")
        channel.directory.mkdir(mode=0o700)
        channel.server = self._run(loop, self._listen(channel))
        self._channels.append(channel)
        return channel

    def close_channel(self, channel: Channel) -> None:
        if self._loop is None or channel not in self._channels:
            return
        self._channels.remove(channel)
        with contextlib.suppress(Exception):
            self._run(self._loop, self._stop_server(channel))
        shutil.rmtree(channel.directory, ignore_errors=True)

    def close(self) -> None:
        """Stop every channel and the loop's thread; remove the sockets."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        for channel in list(self._channels):
            self.close_channel(channel)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_STOP_TIMEOUT_S)
        if not thread.is_alive():
            loop.close()
        self._loop = self._thread = None
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

    # --- the loop's thread -------------------------------------------------------------------------------
    def _started(self) -> tuple[asyncio.AbstractEventLoop, Path]:
        if self._loop is None or self._directory is None:
            self._directory = Path(tempfile.mkdtemp(prefix="toolgate-egress-"))
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="toolgate-egress-proxy", daemon=True)
            thread.start()
            self._loop, self._thread = loop, thread
        return self._loop, self._directory

    @staticmethod
    def _run(loop: asyncio.AbstractEventLoop, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(_STOP_TIMEOUT_S)

    async def _listen(self, channel: Channel) -> asyncio.AbstractServer:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await self._serve(channel, reader, writer)
            except (OSError, asyncio.IncompleteReadError):
                pass  # the client went away
            finally:
                writer.close()

        return await asyncio.start_unix_server(serve, path=str(channel.socket), limit=MAX_HEAD_BYTES)

    @staticmethod
    async def _stop_server(channel: Channel) -> None:
        if channel.server is not None:
            channel.server.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(channel.server.wait_closed(), _STOP_TIMEOUT_S)

    async def _serve(self, channel: Channel, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One client connection: a CONNECT tunnel, or plain requests one after another, each checked (a client
        that keeps the connection open or pipelines gets each request checked, never relayed raw)."""
        while True:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_TIMEOUT_S)
            except (asyncio.LimitOverrunError, asyncio.IncompleteReadError, TimeoutError):
                return
            checked = await self._check(channel, head, writer)
            if checked is None:
                return
            request, addresses = checked
            upstream = await self._connect(request, addresses, writer)
            if upstream is None:
                return
            up_reader, up_writer = upstream
            if request.tunnel:
                try:
                    writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    await writer.drain()
                    await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
                finally:
                    up_writer.close()
                return
            # Exactly this request's head and body go upstream; the response comes back until the server closes
            # (the head asks it to). Whatever the client sends next is read as a new request, and checked.
            sending = asyncio.ensure_future(_send_body(reader, up_writer, request))
            try:
                await _copy(up_reader, writer)
            finally:
                up_writer.close()
            if not sending.done():
                sending.cancel()  # the server answered before the body ended: the connection cannot go on
                return
            if not sending.result():
                return

    async def _check(
        self, channel: Channel, head: bytes, writer: asyncio.StreamWriter
    ) -> tuple[ProxyRequest, list[IPAddress]] | None:
        """The request and the addresses it may reach; None when it was refused (and answered)."""
        try:
            request = parse_request(head)
            check_host(request, self.specs)
            addresses = await self._resolve(request)
            check_addresses(request, addresses, self.specs)
        except Refusal as refusal:
            channel.blocked.append(Blocked(refusal.target, refusal.reason, refusal.rule))
            writer.write(refusal_response(refusal))
            await writer.drain()
            return None
        except OSError as exc:
            writer.write(failure_response(request.target, f"its name does not resolve ({exc})"))
            await writer.drain()
            return None
        return request, addresses

    @staticmethod
    async def _resolve(request: ProxyRequest) -> list[IPAddress]:
        with contextlib.suppress(ValueError):
            return [ipaddress.ip_address(request.host)]
        infos = await asyncio.get_running_loop().getaddrinfo(request.host, request.port, type=socket.SOCK_STREAM)
        found = {ipaddress.ip_address(info[4][0]): None for info in infos}
        if not found:
            raise OSError(f"no address for {request.host}")
        return list(found)

    @staticmethod
    async def _connect(
        request: ProxyRequest, addresses: list[IPAddress], writer: asyncio.StreamWriter
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        problems: list[str] = []
        for ip in addresses:  # the checked addresses themselves: no second lookup
            try:
                return await asyncio.wait_for(asyncio.open_connection(str(ip), request.port), _CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError) as exc:
                problems.append(f"{ip}: {exc or 'timed out'}")
        writer.write(failure_response(request.target, "; ".join(problems)))
        await writer.drain()
        return None


async def _send_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: ProxyRequest) -> bool:
    """The request's head, then its body as framed by its head; False when the client went away before the end
    or sent chunks that are not chunked encoding."""
    try:
        writer.write(request.upstream_head)
        if request.body_length != CHUNKED:
            await _copy_exactly(reader, writer, request.body_length)
        else:
            while True:
                line = await reader.readuntil(b"\r\n")
                size = _CHUNK_SIZE.fullmatch(line)
                if size is None:
                    return False
                writer.write(line)
                if int(size[1], 16) == 0:
                    while (trailer := await reader.readuntil(b"\r\n")) != b"\r\n":
                        writer.write(trailer)
                    writer.write(b"\r\n")
                    break
                await _copy_exactly(reader, writer, int(size[1], 16) + 2)
        await writer.drain()
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return False
    return True


async def _copy_exactly(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, count: int) -> None:
    while count > 0:
        chunk = await reader.read(min(count, _CHUNK))
        if not chunk:
            raise asyncio.IncompleteReadError(b"", count)
        writer.write(chunk)
        await writer.drain()
        count -= len(chunk)


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until end of stream, leaving the writer open (for the answer to the client's next request)."""
    while chunk := await reader.read(_CHUNK):
        writer.write(chunk)
        await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until end of stream, then pass the end on (half-close), so request/response protocols finish."""
    try:
        while chunk := await reader.read(_CHUNK):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        writer.close()


def describe_refusals(blocked: Sequence[Blocked]) -> str | None:
    """What the proxy refused, and what would allow it (None: it refused nothing)."""
    if not blocked:
        return None
    shown = "; ".join(b.describe() for b in blocked[:_MAX_BLOCKED_SHOWN])
    more = f" (and {len(blocked) - _MAX_BLOCKED_SHOWN} more)" if len(blocked) > _MAX_BLOCKED_SHOWN else ""
    return (
        f"The sandbox's network proxy refused {len(blocked)} connection(s): {shown}{more}. Only the user can "
        "add a rule (sandbox.network in their user settings); or call again with outside_sandbox: true and "
        "the user will be asked."
    )


def proxy_env(specs: Sequence[str]) -> dict[str, str]:
    """The variables that send a command's HTTP(S) through the forwarder. Loopback names stay direct (the
    sandbox's own 127.0.0.1: a test server the command starts itself) unless a rule names one exactly, which
    means this machine's."""
    url = f"http://127.0.0.1:{PROXY_PORT}"
    direct = ",".join(n for n in ("localhost", "127.0.0.1", "::1") if not any(names_exactly(s, n) for s in specs))
    names = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
    return {**dict.fromkeys(names, url), "NO_PROXY": direct, "no_proxy": direct}
