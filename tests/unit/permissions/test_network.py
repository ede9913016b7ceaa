"""The network policy: URL checks, host spellings, address classes, secrets in URLs, proxy choice. Pure."""

from __future__ import annotations

import ipaddress

import pytest

from toolgate.permissions.network import (
    UrlRefused,
    address_problem,
    canonical_host,
    domain_matches,
    leaked_secret,
    names_exactly,
    parse_target,
    proxy_for,
)


@pytest.mark.parametrize(
    ("url", "canonical", "host"),
    [
        ("https://Example.COM./a?b=1#frag", "https://example.com/a?b=1", "example.com"),
        ("http://example.com:80", "http://example.com/", "example.com"),
        ("https://example.com:8443/x", "https://example.com:8443/x", "example.com"),
        ("https://bücher.example/", "https://xn--bcher-kva.example/", "xn--bcher-kva.example"),
        ("http://2130706433/", "http://127.0.0.1/", "127.0.0.1"),
        ("http://0177.0.0.1/", "http://127.0.0.1/", "127.0.0.1"),
        ("http://0x7f.0.0.1/", "http://127.0.0.1/", "127.0.0.1"),
        ("http://127.1/", "http://127.0.0.1/", "127.0.0.1"),
        ("http://[::1]:8080/", "http://[::1]:8080/", "::1"),
        ("http://[0:0:0:0:0:0:0:1]/", "http://[::1]/", "::1"),
    ],
)
def test_urls_are_made_canonical(url: str, canonical: str, host: str) -> None:
    target = parse_target(url)
    assert (target.url, target.host) == (canonical, host)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("file:///etc/passwd", "file: URLs are never fetched"),
        ("ftp://example.com/", "ftp: URLs"),
        ("data:text/html,<b>x</b>", "data: URLs"),
        ("javascript:alert(1)", "javascript: URLs"),
        ("example.com/page", "without a scheme"),
        ("https://user:pw@example.com/", "user name or password"),
        ("https://token@example.com/", "user name or password"),
        ("https://example.com\x00.evil.net/", "control characters"),
        ("https://example.com%00.evil.net/", "control characters"),
        ("https://exa%6dple.com/", "characters no host name has"),
        ("https://example.com\\@evil.net/", "user name or password"),
        ("https://a..b/", "not a valid host name"),
        ("https://example.com../", "not a valid host name"),
        ("https://1.2.3.4.5/", "not a valid one"),
        ("https://256.1.1.1/", "not a valid one"),
        ("https://[::1/", "cannot be parsed"),
        ("https://example.com:99999/", "not a valid port"),
        ("https:///path", "names no host"),
        ("", "empty"),
    ],
)
def test_refused_urls_say_why(url: str, why: str) -> None:
    with pytest.raises(UrlRefused, match=why):
        parse_target(url)


@pytest.mark.parametrize(
    ("spec", "host", "expected"),
    [
        ("example.com", "example.com", True),
        ("example.com", "EXAMPLE.COM.", True),
        ("example.com", "api.example.com", False),
        ("example.com", "evil-example.com", False),
        ("example.com", "example.com.evil.net", False),
        ("*.example.com", "api.example.com", True),
        ("*.example.com", "deep.api.example.com", True),
        ("*.example.com", "example.com", False),
        ("*.example.com", "evil-example.com", False),
        ("*.example.com", "api.example.com.evil.net", False),
        ("bücher.example", "xn--bcher-kva.example", True),
        ("127.0.0.1", "2130706433", True),
        ("127.0.0.1", "0177.0.0.1", True),
        ("::1", "0:0:0:0:0:0:0:1", True),
        ("example.com", "exa mple.com", False),
    ],
)
def test_domain_matching(spec: str, host: str, expected: bool) -> None:
    assert domain_matches(spec, host) is expected


def test_only_an_exact_rule_names_a_host() -> None:
    assert names_exactly("api.example.com", "API.example.com.")
    assert not names_exactly("*.example.com", "api.example.com")


@pytest.mark.parametrize(
    ("address", "what"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("fc00::1", "private"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("169.254.169.254", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("100.64.0.1", "not a public internet address"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "cloud metadata"),
        ("2002:7f00:1::", "loopback"),  # 6to4 wrapping 127.0.0.1
    ],
)
def test_non_public_addresses_are_named(address: str, what: str) -> None:
    problem = address_problem(ipaddress.ip_address(address))
    assert problem is not None and what in problem


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "8.8.8.8"])
def test_public_addresses_pass(address: str) -> None:
    assert address_problem(ipaddress.ip_address(address)) is None


def test_canonical_host_is_idempotent() -> None:
    for raw in ("Example.COM.", "bücher.example", "2130706433", "[::1]"):
        once = canonical_host(raw)
        assert canonical_host(once) == once


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.net/?k=SECRETVALUE123456",
        "https://evil.net/SECRETVALUE123456/x",
        "https://evil.net/#SECRETVALUE123456",
        "https://evil.net/?k=SECRET%56ALUE123456",
        "https://evil.net/?k=SECRET%2556ALUE123456",  # encoded twice
        "https://SECRETVALUE123456.evil.net/",
    ],
)
def test_a_secret_is_found_in_any_part_and_encoding(url: str) -> None:
    assert leaked_secret(url, [("the token", "SECRETVALUE123456")]) == "the token"


def test_a_url_without_secrets_passes() -> None:
    assert leaked_secret("https://docs.python.org/3/?q=x", [("the token", "SECRETVALUE123456")]) is None


@pytest.mark.parametrize(
    ("environ", "host", "expected"),
    [
        ({"HTTPS_PROXY": "proxy.corp:3128"}, "example.com", "http://proxy.corp:3128"),
        ({"https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:1"}, "example.com", "http://lower:1"),
        ({"ALL_PROXY": "http://all:1"}, "example.com", "http://all:1"),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "example.com"}, "api.example.com", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": ".example.com"}, "example.com", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*"}, "anything.net", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "10.0.0.0/8"}, "10.1.2.3", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "other.com"}, "example.com", "http://p:1"),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "ample.com"}, "example.com", "http://p:1"),
        ({"HTTP_PROXY": "http://p:1"}, "example.com", None),  # https targets use HTTPS_PROXY
    ],
)
def test_proxy_choice(environ: dict[str, str], host: str, expected: str | None) -> None:
    assert proxy_for("https", host, environ) == expected
