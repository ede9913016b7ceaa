"""WebFetch's HTTP side: connections pinned to checked addresses, bounded bodies, timeouts, proxies.

DNS rebinding is closed by resolving a name once, checking every address it gave, and connecting to the
checked address only: the network backend below refuses any connection it was not told about, so httpx can
never resolve the name a second time. TLS (SNI and certificate checks) and the Host header still use the name.
"""

from __future__ import annotations

import ssl
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import httpcore2
import httpx2

from toolgate.core.errors import StateError
from toolgate.permissions.network import FetchTarget, proxy_for
from toolgate.tools._web_deps import FetchLimits, system_tls_context

USER_AGENT = "toolgate-webfetch/0.1 (+a coding agent fetching documentation)"


class PinnedBackend(httpcore2.AsyncNetworkBackend):
    """Connects only to (host, port) pairs it was given an address for; proxies connect by their own name."""

    def __init__(self) -> None:
        self._inner = httpcore2.AnyIOBackend()
        self.pins: dict[tuple[str, int], str] = {}
        self.proxies: set[tuple[str, int]] = set()

    def pin(self, target: FetchTarget, address: str) -> None:
        self.pins[(target.host, target.port)] = address

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        key = (host.lower().strip("[]"), port)
        address = self.pins.get(key) or (host if key in self.proxies else None)
        if address is None:
            raise httpcore2.ConnectError(f"{host}:{port} was not checked before connecting, so it is not connected to")
        return await self._inner.connect_tcp(address, port, timeout, local_address, socket_options)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise httpcore2.ConnectError("WebFetch does not connect to unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class PinnedTransport(httpx2.AsyncHTTPTransport):
    """httpx's own transport (HTTP/1.1 and HTTP/2, proxies) over a `PinnedBackend`."""

    def __init__(self, backend: PinnedBackend, proxy: str | None, ssl_context: ssl.SSLContext) -> None:
        # Built like AsyncHTTPTransport.__init__ builds its pool, with the one thing it cannot take: our backend.
        if proxy is None:
            self._pool = httpcore2.AsyncConnectionPool(
                ssl_context=ssl_context, http1=True, http2=True, retries=0, network_backend=backend
            )
            return
        url = httpx2.URL(proxy)
        if url.scheme not in ("http", "https"):
            raise StateError(f"the proxy {proxy!r} is not an http:// or https:// proxy, which is all WebFetch uses")
        backend.proxies.add((url.host.lower(), url.port or (443 if url.scheme == "https" else 80)))
        auth = httpx2.Proxy(url).raw_auth
        self._pool = httpcore2.AsyncHTTPProxy(
            proxy_url=httpcore2.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            proxy_auth=auth,
            ssl_context=ssl_context,
            http1=True,
            http2=True,
            network_backend=backend,
        )


@dataclass(slots=True)
class FetchSession:
    """One fetch's clients (one per proxy choice) over one pinned backend."""

    environ: Mapping[str, str]
    limits: FetchLimits
    tls: Callable[[], ssl.SSLContext] = system_tls_context
    backend: PinnedBackend = field(default_factory=PinnedBackend)
    _clients: dict[str | None, httpx2.AsyncClient] = field(default_factory=dict)
    _ssl: ssl.SSLContext | None = None

    def proxy(self, target: FetchTarget) -> str | None:
        return proxy_for(target.scheme, target.host, self.environ)

    def client(self, target: FetchTarget) -> httpx2.AsyncClient:
        proxy = self.proxy(target)
        if proxy not in self._clients:
            self._ssl = self._ssl or self.tls()
            timeout = httpx2.Timeout(
                connect=self.limits.connect_seconds, read=self.limits.read_seconds, write=10.0, pool=10.0
            )
            self._clients[proxy] = httpx2.AsyncClient(
                transport=PinnedTransport(self.backend, proxy, self._ssl),
                timeout=timeout,
                follow_redirects=False,  # every hop is checked again by WebFetch, so it follows them by hand
                trust_env=False,  # proxies are chosen above, per target, from the same environment
                headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate"},
            )
        return self._clients[proxy]

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()


@dataclass(frozen=True, slots=True)
class Body:
    data: bytes
    truncated: bool  # the decoded body was longer than the cap; `data` is its start
    raw_bytes: int


class _Decoder:
    """Content-Encoding undone with a bound: never more than `room` bytes come out of one step, so a
    decompression bomb costs at most the cap in memory."""

    def __init__(self, encoding: str) -> None:
        names = [e.strip().lower() for e in encoding.split(",") if e.strip() and e.strip().lower() != "identity"]
        if len(names) > 1 or (names and names[0] not in ("gzip", "x-gzip", "deflate")):
            raise StateError(
                f"the server sent the body encoded as {encoding!r}, which WebFetch does not decode "
                "(it asks for gzip or deflate only)"
            )
        self._name = names[0] if names else None
        self._z = zlib.decompressobj(31 if self._name in ("gzip", "x-gzip") else 15) if self._name else None
        self._started = False

    def feed(self, chunk: bytes, room: int) -> tuple[bytes, bool]:
        """(decoded bytes, whether more would have come than `room` allows)."""
        if self._z is None:
            return chunk[:room], len(chunk) > room
        try:
            out = self._z.decompress(chunk, room)
        except zlib.error:
            if self._name != "deflate" or self._started:
                raise StateError("the server's compressed body is damaged, so it cannot be read") from None
            self._z = zlib.decompressobj(-15)  # some servers send raw deflate without the zlib wrapper
            out = self._z.decompress(chunk, room)
        self._started = True
        return out, bool(self._z.unconsumed_tail)


async def read_body(response: httpx2.Response, max_bytes: int) -> Body:
    decoder = _Decoder(response.headers.get("content-encoding", ""))
    out = bytearray()
    raw = 0
    async for chunk in response.aiter_raw():
        raw += len(chunk)
        # One byte more than the cap tells "exactly the cap" from "longer than the cap".
        data, over = decoder.feed(chunk, max_bytes + 1 - len(out))
        out += data
        if over or len(out) > max_bytes:
            return Body(bytes(out[:max_bytes]), True, raw)
    return Body(bytes(out), False, raw)
