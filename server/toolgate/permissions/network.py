"""The network policy: which URLs may be fetched and which addresses may be connected to. Pure: no I/O.

WebFetch uses it before every hop (the first URL and every redirect), and the sandbox's egress proxy is meant
to use the same functions, so nothing here knows about HTTP clients or sockets:

    parse_target(url)            a URL made canonical (http/https only, no userinfo, IDNA host) or `UrlRefused`
    canonical_host(raw)          one spelling per host: lower case, no trailing dot, IDNA (punycode), IP literals
                                 in their standard form (`2130706433` and `0177.0.0.1` are `127.0.0.1`)
    domain_spec(raw)             a domain rule's host, checked and canonical (`*.` allowed in front)
    domain_matches(spec, host)   `example.com` is that host only; `*.example.com` its subdomains only
    egress_refusal(...)          why the sandbox's proxy refuses a host or one of its addresses, or None
    address_problem(ip)          why an address is not a public internet address (loopback, private, ...)
    leaked_secret(url, values)   which secret value a URL carries, in any part and any percent-encoding
    proxy_for(scheme, host, env) the proxy `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY` name, unless `NO_PROXY` exempts
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import SplitResult, unquote, unquote_plus, urlsplit, urlunsplit

import idna

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud metadata endpoints hand out credentials to whatever asks from inside the machine.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200", "168.63.129.16")
)
DEFAULT_PORTS = {"http": 80, "https": 443}
_LABEL = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")
_IPV4_PART = re.compile(r"0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*")
# Characters that never belong in a host name, whatever an URL parser makes of them.
_BAD_HOST_CHARS = re.compile(r"[\x00-\x20\x7f%@/\\?#\[\]]")


class UrlRefused(ValueError):
    """A URL that is never fetched; the message says why, in words the model can act on."""


@dataclass(frozen=True, slots=True)
class FetchTarget:
    url: str  # canonical, without the fragment (which never leaves the client)
    scheme: str
    host: str  # canonical_host: IPv6 without brackets
    port: int
    ip: IPAddress | None  # the host is an IP literal

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)


def _ipv4_number(part: str) -> int:
    if part[:2].lower() == "0x":
        return int(part[2:] or "0", 16)
    return int(part, 8) if len(part) > 1 and part.startswith("0") else int(part)


def _loose_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address `inet_aton` would read from `host` (decimal, octal, hex, 1 to 4 parts), or None."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_IPV4_PART.fullmatch(p) for p in parts):
        return None
    values = [_ipv4_number(p) for p in parts]
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (5 - len(values)):
        return None
    number = 0
    for v in head:
        number = number * 256 + v
    number = number * 256 ** (5 - len(values)) + last
    return ipaddress.IPv4Address(number)


def canonical_host(raw: str) -> str:
    """The one spelling of a host that rules are compared against; `UrlRefused` when it is no host name."""
    host = raw.strip()
    if host.startswith("[") and host.endswith("]"):
        try:
            return str(ipaddress.IPv6Address(host[1:-1]))
        except ValueError:
            raise UrlRefused(f"{raw!r} is not a valid IPv6 address") from None
    if _BAD_HOST_CHARS.search(host):
        raise UrlRefused(f"the host {raw!r} contains characters no host name has (NUL, '%', '@', spaces, ...)")
    if host.endswith("."):
        host = host[:-1]  # `example.com.` is `example.com`; one dot only, `example.com..` stays invalid
    if not host:
        raise UrlRefused("the URL names no host")
    if ":" in host:
        try:
            return str(ipaddress.IPv6Address(host))
        except ValueError:
            raise UrlRefused(f"{raw!r} is not a valid host name") from None
    loose = _loose_ipv4(host)
    if loose is not None:
        return str(loose)
    try:
        ascii_host = idna.encode(host, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError) as exc:
        raise UrlRefused(f"{raw!r} is not a valid host name ({exc})") from None
    labels = ascii_host.split(".")
    if len(ascii_host) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise UrlRefused(f"{raw!r} is not a valid host name")
    if labels[-1].isdigit():
        raise UrlRefused(f"{raw!r} looks like an IP address but is not a valid one")
    return ascii_host


def parse_target(url: str) -> FetchTarget:
    """Check and normalise one URL to fetch. Raises `UrlRefused` saying why it is never fetched."""
    if not isinstance(url, str) or not url.strip():
        raise UrlRefused("the URL is empty")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url) or "%00" in url:
        raise UrlRefused("the URL contains control characters (such as NUL or a line break)")
    try:
        parts = urlsplit(url.strip())
    except ValueError as exc:
        raise UrlRefused(f"the URL cannot be parsed ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        shown = f"{scheme}:" if scheme else "a URL without a scheme"
        raise UrlRefused(f"{shown} URLs are never fetched: WebFetch reads http:// and https:// URLs only")
    if "@" in parts.netloc:
        raise UrlRefused(
            "the URL carries a user name or password (user@host); WebFetch never sends credentials: "
            "ask the user to fetch it"
        )
    netloc = parts.netloc
    host_part, port_text = netloc, ""
    if netloc.startswith("["):
        close = netloc.find("]")
        host_part, rest = netloc[: close + 1], netloc[close + 1 :]
        if rest and not rest.startswith(":"):
            raise UrlRefused(f"{netloc!r} is not a valid host and port")
        port_text = rest[1:]
    elif ":" in netloc:
        host_part, port_text = netloc.rsplit(":", 1)
    host = canonical_host(host_part)
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise UrlRefused(f"{port_text!r} is not a valid port")
        port = int(port_text)
    else:
        port = DEFAULT_PORTS[scheme]
    ip: IPAddress | None = None
    with contextlib.suppress(ValueError):
        ip = ipaddress.ip_address(host)
    shown_host = f"[{host}]" if isinstance(ip, ipaddress.IPv6Address) else host
    netloc_out = shown_host if port == DEFAULT_PORTS[scheme] else f"{shown_host}:{port}"
    canonical = urlunsplit(SplitResult(scheme, netloc_out, parts.path or "/", parts.query, ""))
    return FetchTarget(canonical, scheme, host, port, ip)


def domain_spec(raw: str) -> str:
    """A domain rule's host in the one spelling hosts are compared in (lower case, IDNA, no trailing dot);
    `*.` in front covers subdomains. `UrlRefused` says why `raw` is not usable."""
    wildcard = raw.startswith("*.")
    host = raw[2:] if wildcard else raw
    if not host or "*" in host:
        raise UrlRefused(f"{raw!r} is not a host name (a wildcard is allowed only as a leading '*.')")
    if host.count(":") == 1 and re.fullmatch(r".+:\d+", host):
        raise UrlRefused(f"{raw!r} names a port; domain rules name a host only ({host.rsplit(':', 1)[0]})")
    try:
        canonical = canonical_host(host)
    except UrlRefused as exc:
        raise UrlRefused(f"{raw!r} is not a host name: {exc}") from None
    if wildcard and (":" in canonical or canonical.replace(".", "").isdigit()):
        raise UrlRefused(f"{raw!r}: a '*.' wildcard covers subdomains of a name, not of an IP address")
    return f"*.{canonical}" if wildcard else canonical


def domain_matches(spec: str, host: str) -> bool:
    """Whether a domain rule's host (`example.com`, `*.example.com`) covers `host`. Both are made canonical
    first; `*.` covers subdomains only, never the domain itself or a look-alike such as `evil-example.com`."""
    try:
        wildcard = spec.startswith("*.")
        base = canonical_host(spec[2:] if wildcard else spec)
        target = canonical_host(host)
    except UrlRefused:
        return False
    return target.endswith("." + base) if wildcard else target == base


def names_exactly(spec: str, host: str) -> bool:
    """Whether a rule names this very host or address (no wildcard): what a non-public address needs."""
    return not spec.startswith("*.") and domain_matches(spec, host)


def egress_refusal(host: str, ip: IPAddress | None, specs: Iterable[str]) -> str | None:
    """Why a connection to `host` (canonical), or to `ip` it resolved to, is refused under domain rules
    `specs`; None when allowed. A host needs a rule that covers it; an address that is not a public internet
    address (loopback, private, link-local, metadata) needs a rule naming the host or the address exactly,
    because a wildcard (or a DNS answer someone else controls) must not lead into the local network."""
    specs = tuple(specs)
    if not any(domain_matches(spec, host) for spec in specs):
        return f"no Network rule covers {host}"
    if ip is None:
        return None
    problem = address_problem(ip)
    if problem is None or any(names_exactly(s, host) or names_exactly(s, str(ip)) for s in specs):
        return None
    return f"{host} resolved to {problem}, which only a rule naming {host} exactly (no wildcard) allows"


def address_problem(ip: IPAddress) -> str | None:
    """Why connecting to `ip` is refused by default (it is not a public internet address), or None."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is not None:
            inner = address_problem(embedded)
            if inner is not None:
                return f"{inner} (inside the IPv6 address {ip})"
    if ip in METADATA_ADDRESSES:
        return f"{ip} is a cloud metadata address, which hands out the machine's credentials"
    checks = (
        (ip.is_loopback, "a loopback address (this machine)"),
        (ip.is_unspecified, "the unspecified address (this machine)"),
        (ip.is_link_local, "a link-local address"),
        (ip.is_multicast, "a multicast address"),
        (ip.is_private, "a private network address"),
        (ip.is_reserved, "a reserved address"),
        (not ip.is_global, "not a public internet address"),
    )
    for hit, what in checks:
        if hit:
            return f"{ip} is {what}"
    return None


def _url_forms(url: str) -> list[str]:
    forms = [url]
    for _ in range(3):  # double (and triple) percent-encoding hides a value from one decoding
        decoded = unquote_plus(unquote(forms[-1]))
        if decoded == forms[-1]:
            break
        forms.append(decoded)
    return forms


def leaked_secret(url: str, values: Iterable[tuple[str, str]]) -> str | None:
    """The label of the first secret value that `url` carries anywhere (path, query, fragment, userinfo,
    even the host), percent-encoded or not; None when it carries none. `values` are (label, value) pairs."""
    forms = _url_forms(url)
    for label, value in values:
        if value and any(value in form for form in forms):
            return label
    return None


def _no_proxy_covers(host: str, no_proxy: str) -> bool:
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return True
        entry = entry.removeprefix("*").removeprefix(".").rstrip(".")
        entry = entry.rsplit(":", 1)[0] if entry.count(":") == 1 else entry.strip("[]")
        if host == entry or host.endswith("." + entry):
            return True
        try:
            if ipaddress.ip_address(host) in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


def proxy_for(scheme: str, host: str, environ: Mapping[str, str]) -> str | None:
    """The proxy URL to use for `scheme://host`, as curl and most tools read the environment: the lower-case
    variable first, `ALL_PROXY` as the fallback, `NO_PROXY` (hosts, `.domains`, CIDR ranges, `*`) exempting."""

    def env(name: str) -> str:
        return environ.get(name.lower()) or environ.get(name.upper()) or ""

    proxy = env(f"{scheme}_proxy") or env("all_proxy")
    if not proxy or _no_proxy_covers(host, env("no_proxy")):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"
