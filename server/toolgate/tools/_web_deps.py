"""WebFetch's seams (name resolution, limits, trusted certificates), apart from its HTTP client.

The client (`_web_client`, on httpx) is imported by the first fetch: httpx and httpcore take about 0.1 s to import,
which every session paid when it started. Tests and a sidecar that wants other limits set these.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

from toolgate.core.deps import Dep

Resolver = Callable[[str, int], Awaitable[list[str]]]


async def system_resolver(host: str, port: int) -> list[str]:
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True, slots=True)
class FetchLimits:
    connect_seconds: float = 10.0
    read_seconds: float = 30.0  # the longest silence between two pieces of the body
    total_seconds: float = 60.0  # the whole fetch, every redirect included
    max_body_bytes: int = 10 * 1024 * 1024  # after decompression
    max_redirects: int = 10


def system_tls_context() -> ssl.SSLContext:
    """The system's trusted certificates, as httpx loads them."""
    import httpx2

    return httpx2.create_ssl_context()


# Names resolve through RESOLVER only.
RESOLVER: Dep[Resolver] = Dep("web_resolver", lambda _r: system_resolver)
FETCH_LIMITS: Dep[FetchLimits] = Dep("web_fetch_limits", lambda _r: FetchLimits())
# The certificates TLS trusts. Tests trust their own loopback certificate.
TLS_CONTEXT: Dep[Callable[[], ssl.SSLContext]] = Dep("web_tls_context", lambda _r: system_tls_context)
