"""What the sandbox's egress proxy makes of one request head, and what it answers when it refuses. Pure: the
proxy (`proxy.py`) does the I/O; the host checks are the network policy's own (`permissions/network.py`, which
WebFetch uses too), so the sandbox and WebFetch agree on what `Network(domain:...)` covers.

Two request forms reach the proxy: `CONNECT host:port` (a tunnel, for https and anything else), and a plain
request with an absolute `http://` URL, which is passed on in origin form with `Connection: close`, followed by
exactly its body (`body_length`) and nothing else: a client keeping its connection open (or pipelining) sends
its next request through the proxy's checks again, never raw to the host the first one named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from toolgate.permissions.network import (
    IPAddress,
    UrlRefused,
    canonical_host,
    domain_spec,
    egress_refusal,
    parse_target,
)

MAX_HEAD_BYTES = 64 * 1024
_NETWORK_RULE = re.compile(r"Network\(domain:(?P<host>[^()]*)\)")
# Hop-by-hop headers the proxy consumes or replaces; the rest of a plain request goes upstream as it came.
_DROPPED_HEADERS = frozenset({"proxy-connection", "proxy-authorization", "connection", "keep-alive"})
CHUNKED = -1  # `body_length` of a request whose body is sent in chunks (Transfer-Encoding: chunked)


class RuleProblem(ValueError):
    """A `sandbox.network` entry that is not a usable rule; the message says how to write one."""


def network_rule_spec(text: str) -> str:
    """The canonical host spec of a `Network(domain:host)` rule (`*.host` for subdomains)."""
    match = _NETWORK_RULE.fullmatch(text.strip())
    if match is None:
        raise RuleProblem(
            f"{text!r} is not a network rule; write Network(domain:example.com), or Network(domain:*.example.com) "
            "for its subdomains"
        )
    try:
        return domain_spec(match["host"].strip())
    except UrlRefused as exc:
        raise RuleProblem(f"{text!r}: {exc}") from None


def network_rule(host: str) -> str:
    """The rule that names `host` exactly (what a refusal suggests)."""
    return f"Network(domain:{host})"


class Refusal(Exception):
    def __init__(self, status: int, reason: str, target: str, rule: str | None = None) -> None:
        super().__init__(f"{target}: {reason}")
        self.status = status  # 400: not a request the proxy reads; 403: a host or address no rule allows
        self.reason = reason
        self.target = target  # what was asked for, printable
        self.rule = rule  # the rule that would allow it


@dataclass(frozen=True, slots=True)
class ProxyRequest:
    host: str  # canonical
    port: int
    tunnel: bool  # CONNECT: answer 200 and relay bytes; otherwise send `upstream_head` first
    upstream_head: bytes = b""
    body_length: int = 0  # of a plain request: the bytes of body after the head, or CHUNKED

    @property
    def target(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def _printable(text: str) -> str:
    shown = text.encode("unicode_escape").decode("ascii")
    return shown if len(shown) <= 200 else shown[:200] + "..."


def _authority(raw: str) -> tuple[str, int]:
    """`host:port` of a CONNECT line, the host made canonical; `UrlRefused` for anything else."""
    if raw.startswith("["):
        close = raw.find("]")
        host_part, rest = raw[: close + 1], raw[close + 1 :]
        if close < 0 or not rest.startswith(":"):
            raise UrlRefused(f"{raw!r} is not host:port")
        port_text = rest[1:]
    else:
        host_part, _, port_text = raw.rpartition(":")
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise UrlRefused(f"{raw!r} does not end in a valid port (CONNECT names host:port)")
    return canonical_host(host_part), int(port_text)


def parse_request(head: bytes) -> ProxyRequest:
    """The request line and headers up to the blank line; `Refusal` (400) when the proxy does not read it."""
    text = head.decode("latin-1")
    lines = text.split("\r\n")
    line = lines[0]
    parts = line.split(" ")
    shown = _printable(line)
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise Refusal(400, "the request line is not METHOD TARGET HTTP/x.y", shown)
    if re.search(r"[\x00-\x08\x0a-\x1f\x7f]", text.replace("\r\n", "")) or "%00" in parts[1]:
        raise Refusal(400, "the request contains a NUL byte or other control characters", shown)
    method, target, version = parts
    try:
        if method.upper() == "CONNECT":
            host, port = _authority(target)
            return ProxyRequest(host, port, tunnel=True)
        if not target.lower().startswith("http://"):
            raise UrlRefused(
                "the proxy passes on plain requests for absolute http:// URLs only; https goes through CONNECT"
            )
        fetch = parse_target(target)
    except UrlRefused as exc:
        raise Refusal(400, str(exc), _printable(target)) from None
    split = urlsplit(fetch.url)
    path = (split.path or "/") + (f"?{split.query}" if split.query else "")
    # The client's own Host header is replaced by the checked URL's: on a shared server (a CDN) the Host header
    # picks the site, so `GET http://allowed.test/` with `Host: evil.test` would otherwise reach evil.test.
    dropped = _DROPPED_HEADERS | {"host"}
    headers = [h for h in lines[1:] if h and h.split(":", 1)[0].strip().lower() not in dropped]
    headers.insert(0, f"Host: {split.netloc}")
    upstream = "\r\n".join([f"{method} {path} {version}", *headers, "Connection: close", "", ""])
    body = _body_length(headers, shown)
    head_bytes = upstream.encode("latin-1")
    return ProxyRequest(fetch.host, fetch.port, tunnel=False, upstream_head=head_bytes, body_length=body)


def _body_length(headers: list[str], shown: str) -> int:
    """How the body after a plain request's head ends: its Content-Length, or CHUNKED. A head the proxy and the
    server could frame differently (both headers, several lengths, another transfer coding) is refused: bytes the
    proxy took for body could otherwise be read upstream as a second request that no check saw."""
    values: dict[str, list[str]] = {"content-length": [], "transfer-encoding": []}
    for header in headers:
        name, _, value = header.partition(":")
        if name.strip().lower() in values:
            values[name.strip().lower()].append(value.strip())
    lengths, codings = set(values["content-length"]), values["transfer-encoding"]
    if codings and lengths:
        raise Refusal(400, "the request has both Content-Length and Transfer-Encoding", shown)
    if codings:
        if [c.lower() for c in codings] != ["chunked"]:
            raise Refusal(400, "the only transfer coding the proxy passes on is chunked", shown)
        return CHUNKED
    if len(lengths) > 1 or any(not v.isdigit() for v in lengths):
        raise Refusal(400, "the request's Content-Length is not one number", shown)
    return int(lengths.pop()) if lengths else 0


def check_host(request: ProxyRequest, specs: tuple[str, ...]) -> None:
    """`Refusal` (403) unless a rule covers the host (IP literals: only a rule naming the address)."""
    why = egress_refusal(request.host, None, specs)
    if why is not None:
        raise Refusal(403, why, request.target, network_rule(request.host))


def check_addresses(request: ProxyRequest, addresses: list[IPAddress], specs: tuple[str, ...]) -> None:
    """`Refusal` (403) when any address the host resolved to is one the rules do not let it reach."""
    for ip in addresses:
        why = egress_refusal(request.host, ip, specs)
        if why is not None:
            raise Refusal(403, why, request.target, network_rule(request.host))


def refusal_response(refusal: Refusal) -> bytes:
    """The answer a refused client reads (curl shows the body with -v; `HTTPError.read()` in Python)."""
    lines = [f"toolgate's sandbox refused {refusal.target}: {refusal.reason}."]
    if refusal.rule is not None:
        lines.append(
            f"To allow it, the user adds {refusal.rule} to sandbox.network in their user settings "
            "(or the command runs outside the sandbox, with the user's approval)."
        )
    body = ("\n".join(lines) + "\n").encode("utf-8")
    title = "Forbidden" if refusal.status == 403 else "Bad Request"
    head = (
        f"HTTP/1.1 {refusal.status} {title}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\nX-Toolgate-Sandbox: refused\r\n\r\n"
    )
    return head.encode("ascii") + body


def failure_response(target: str, reason: str) -> bytes:
    body = f"toolgate's sandbox proxy could not reach {target}: {reason}.\n".encode()
    head = f"HTTP/1.1 502 Bad Gateway\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    return head.encode("ascii") + body
