"""The egress proxy's pure half: reading a request head, the host and address checks, the refusal text."""

from __future__ import annotations

import ipaddress

import pytest

from toolgate.sandbox.egress import (
    CHUNKED,
    ProxyRequest,
    Refusal,
    RuleProblem,
    check_addresses,
    check_host,
    network_rule_spec,
    parse_request,
    refusal_response,
)

SPECS = ("allowed.test", "*.pkg.test", "localhost")


def connect(authority: str) -> bytes:
    return f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode("latin-1")


def refused(head: bytes, specs: tuple[str, ...] = SPECS) -> Refusal:
    with pytest.raises(Refusal) as caught:
        check_host(parse_request(head), specs)
    return caught.value


@pytest.mark.parametrize(
    ("rule", "spec"),
    [
        ("Network(domain:pypi.org)", "pypi.org"),
        ("Network(domain:*.Example.COM.)", "*.example.com"),
        ("Network(domain:127.0.0.1)", "127.0.0.1"),
        ("Network(domain:bücher.de)", "xn--bcher-kva.de"),
    ],
)
def test_network_rules_are_read_in_the_one_canonical_spelling(rule: str, spec: str) -> None:
    assert network_rule_spec(rule) == spec


@pytest.mark.parametrize(
    "rule", ["pypi.org", "Network(pypi.org)", "Network(domain:)", "Network(domain:a.*.b)", "Network(domain:x:80)"]
)
def test_unusable_network_rules_say_how_to_write_one(rule: str) -> None:
    with pytest.raises(RuleProblem):
        network_rule_spec(rule)


def test_connect_to_an_allowed_host_passes_with_its_case_and_trailing_dot_folded() -> None:
    for authority in ("allowed.test:443", "ALLOWED.test:443", "allowed.test.:443", "api.pkg.test:8443"):
        request = parse_request(connect(authority))
        check_host(request, SPECS)
        assert request.tunnel and request.host in ("allowed.test", "api.pkg.test")


@pytest.mark.parametrize(
    ("authority", "status"),
    [
        ("evil.test:443", 403),
        ("evil.test.:443", 403),
        ("pkg.test:443", 403),  # `*.` covers subdomains only
        ("evil-allowed.test:443", 403),
        ("127.0.0.1:443", 403),  # an IP literal: only a rule naming it
        ("[::1]:443", 403),
        ("allowed.test@evil.test:443", 400),
        ("allowed.test%00.evil.test:443", 400),
        ("allowed.test:0", 400),
        ("allowed.test", 400),
    ],
)
def test_connect_refusals(authority: str, status: int) -> None:
    assert refused(connect(authority)).status == status


def test_a_nul_byte_anywhere_in_the_head_is_refused() -> None:
    assert refused(b"CONNECT allowed.test\x00.evil.test:443 HTTP/1.1\r\n\r\n").status == 400
    assert refused(b"CONNECT allowed.test:443 HTTP/1.1\r\nX: a\x00b\r\n\r\n").status == 400


def test_a_plain_request_goes_upstream_in_origin_form_and_closes() -> None:
    head = (
        b"GET http://Allowed.test:8080/a/b?c=d HTTP/1.1\r\nHost: allowed.test:8080\r\n"
        b"Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\nAccept: */*\r\n\r\n"
    )
    request = parse_request(head)
    check_host(request, SPECS)
    assert (request.host, request.port, request.tunnel) == ("allowed.test", 8080, False)
    assert request.upstream_head == (
        b"GET /a/b?c=d HTTP/1.1\r\nHost: allowed.test:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    )


def test_a_plain_request_reaches_the_checked_host_whatever_host_header_it_carries() -> None:
    head = b"GET http://allowed.test/x HTTP/1.1\r\nHost: evil.test\r\nhost:evil.test\r\nAccept: */*\r\n\r\n"
    request = parse_request(head)
    check_host(request, SPECS)
    assert request.upstream_head == b"GET /x HTTP/1.1\r\nHost: allowed.test\r\nAccept: */*\r\nConnection: close\r\n\r\n"


@pytest.mark.parametrize(
    "target",
    ["http://allowed.test@evil.test/", "http://allowed.test%00.evil.test/", "https://allowed.test/", "/relative"],
)
def test_plain_requests_that_are_not_plain_http_urls_are_refused(target: str) -> None:
    assert refused(f"GET {target} HTTP/1.1\r\n\r\n".encode()).status == 400


def test_private_addresses_need_a_rule_naming_the_host_exactly() -> None:
    loopback = [ipaddress.ip_address("127.0.0.1")]
    check_addresses(parse_request(connect("localhost:80")), loopback, SPECS)
    wildcard = parse_request(connect("internal.pkg.test:80"))
    check_addresses(wildcard, [ipaddress.ip_address("93.184.216.34")], SPECS)
    for address in ("10.0.0.5", "169.254.169.254", "192.168.1.1", "::ffff:127.0.0.1"):
        with pytest.raises(Refusal) as caught:
            check_addresses(wildcard, [ipaddress.ip_address("93.184.216.34"), ipaddress.ip_address(address)], SPECS)
        assert caught.value.status == 403 and caught.value.rule == "Network(domain:internal.pkg.test)"


def test_a_refusal_names_the_rule_that_would_allow_it() -> None:
    response = refusal_response(refused(connect("evil.test:443")))
    assert response.startswith(b"HTTP/1.1 403 Forbidden\r\n")
    assert b"Network(domain:evil.test)" in response and b"sandbox.network" in response
    assert ProxyRequest("::1", 80, tunnel=True).target == "[::1]:80"


def plain(*headers: str) -> bytes:
    return ("GET http://allowed.test/ HTTP/1.1\r\n" + "".join(f"{h}\r\n" for h in headers) + "\r\n").encode()


def test_a_plain_request_says_how_its_body_ends() -> None:
    assert parse_request(plain()).body_length == 0
    assert parse_request(plain("Content-Length: 12")).body_length == 12
    assert parse_request(plain("content-length: 12", "Content-Length: 12")).body_length == 12
    assert parse_request(plain("Transfer-Encoding: Chunked")).body_length == CHUNKED


@pytest.mark.parametrize(
    "headers",
    [
        ("Content-Length: 5", "Transfer-Encoding: chunked"),
        ("Content-Length: 5", "Content-Length: 6"),
        ("Content-Length: -1",),
        ("Content-Length: 0x10",),
        ("Transfer-Encoding: gzip, chunked",),
        ("Transfer-Encoding: chunked", "Transfer-Encoding: chunked"),
    ],
)
def test_a_body_the_proxy_and_the_server_could_frame_differently_is_refused(headers: tuple[str, ...]) -> None:
    with pytest.raises(Refusal) as caught:
        parse_request(plain(*headers))
    assert caught.value.status == 400
