"""WebFetch against a real loopback HTTP server; names resolve through the tool's own resolver seam."""

from __future__ import annotations

import base64
import io
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpcore2
import pytest
from PIL import Image

from toolgate.core.context import ToolContext
from toolgate.core.messages import ImageBlock, TextBlock, ToolResult
from toolgate.core.permission import ApprovalAnswer, ApprovalRequest, PermissionMode, ReviewAnswer, ReviewRequest
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.testing import run1
from toolgate.tools._web_client import PinnedBackend
from toolgate.tools._web_deps import FETCH_LIMITS, RESOLVER, FetchLimits
from toolgate.tools.web_fetch import WEB_ENVIRON

from .web_server import WebServer, serve

NAMES = {"docs.test", "other.test", "api.docs.test"}


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    yield from serve(tmp_path_factory.mktemp("web"))


@dataclass
class RecordingApprover:
    """Answers every question with `answer`, and keeps what was asked."""

    answer: str = "deny"
    asked: list[ApprovalRequest] = field(default_factory=list)

    async def request(self, request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        self.asked.append(request)
        return ApprovalAnswer(decision="allow" if self.answer == "allow" else "deny")

    async def review(self, request: ReviewRequest, ctx: ToolContext) -> ReviewAnswer:
        return ReviewAnswer(decision="reject")


async def _resolve(host: str, port: int) -> list[str]:
    if host in NAMES:
        return ["127.0.0.1"]
    raise OSError(f"no such host {host} (test resolver)")


@asynccontextmanager
async def fetching(
    workspace: Path,
    allow: Sequence[str] = ("WebFetch(domain:docs.test)",),
    *,
    mode: PermissionMode = PermissionMode.DEFAULT,
    approver: RecordingApprover | None = None,
    environ: dict[str, str] | None = None,
    limits: FetchLimits | None = None,
    deny: Sequence[str] = (),
) -> AsyncIterator[Runtime]:
    """A runtime with these rules whose names resolve through the test resolver only; closed on exit."""
    rt = build_runtime(
        workspace,
        approver or RecordingApprover(),
        RuntimeOptions(mode=mode, rules={"allow": list(allow), "deny": list(deny)}, read_settings=False),
    )
    rt.session.deps.override(RESOLVER, _resolve)
    rt.session.deps.override(WEB_ENVIRON, environ or {})
    rt.session.deps.override(FETCH_LIMITS, limits or FetchLimits(total_seconds=20))
    try:
        yield rt
    finally:
        await rt.aclose()


@pytest.fixture
async def rt(workspace: Path) -> AsyncIterator[Runtime]:
    async with fetching(workspace) as runtime:
        yield runtime


def ok(result: ToolResult) -> str:
    assert not result.is_error, result.text()
    return result.text()


# --- content -------------------------------------------------------------------------------------------


async def test_html_with_a_header_charset_becomes_markdown(rt: Runtime, web: WebServer) -> None:
    text = ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/page")))
    assert "Title: Café docs" in text and "# Café" in text and "**crème** brûlée" in text and "- one" in text
    assert "alert(1)" not in text and "p{}" not in text
    assert (f"docs.test:{web.port}", "/page") in web.requests  # Host stays the name, though 127.0.0.1 was dialled


async def test_meta_charset_is_used_when_the_header_has_none(rt: Runtime, web: WebServer) -> None:
    assert "\u201cquoted\u201d" in ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/meta")))


async def test_json_is_pretty_printed(rt: Runtime, web: WebServer) -> None:
    text = ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/json")))
    assert '{\n  "b": [\n    1,\n    2\n  ],\n  "a": "é"\n}' in text


async def test_pdf_goes_through_the_pdf_reader(rt: Runtime, web: WebServer) -> None:
    text = ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/pdf")))
    assert "Text of page 1" in text and "Text of page 2" in text and "2 pages" in text


async def test_png_is_an_image_block_downscaled_like_read(rt: Runtime, web: WebServer) -> None:
    result = await run1(rt, "WebFetch", url=web.url("docs.test", "/png"))
    assert not result.is_error and isinstance(result.content, list)
    [image] = [b for b in result.content if isinstance(b, ImageBlock)]
    assert any("3000×1500" in b.text for b in result.content if isinstance(b, TextBlock))
    with Image.open(io.BytesIO(base64.b64decode(image.source.data))) as decoded:
        assert decoded.size == (2000, 1000)


async def test_other_types_are_refused_by_name(rt: Runtime, web: WebServer) -> None:
    result = await run1(rt, "WebFetch", url=web.url("docs.test", "/zip"))
    assert result.is_error and "application/zip" in result.text()


async def test_an_error_status_is_shown_as_an_error(rt: Runtime, web: WebServer) -> None:
    result = await run1(rt, "WebFetch", url=web.url("docs.test", "/missing"))
    assert result.is_error and "Status: 404" in result.text() and "Not here" in result.text()


async def test_a_long_page_is_windowed_stored_and_pageable(rt: Runtime, web: WebServer) -> None:
    first = ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/long"), max_chars=5000))
    assert "paragraph 0 " in first and "paragraph 2999" not in first
    assert "Characters 0–5,000 of" in first and 'ToolOutputGrep(ref="out-' in first and "offset=5000" in first
    ref = first.split('ToolOutput(ref="', 1)[1].split('"', 1)[0]
    grep = ok(await run1(rt, "ToolOutputGrep", ref=ref, pattern="paragraph 2999 "))
    assert "paragraph 2999" in grep
    later = ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/long"), offset=5000, max_chars=5000))
    assert "Characters 5,000–10,000" in later and "paragraph 0 " not in later


# --- bounds ----------------------------------------------------------------------------------------------


async def test_a_20_mb_text_body_is_cut_at_the_cap_and_says_so(rt: Runtime, web: WebServer) -> None:
    text = ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/big")))
    assert "longer than 10 MiB; only its start was read" in text


async def test_a_20_mb_binary_body_is_refused(rt: Runtime, web: WebServer) -> None:
    result = await run1(rt, "WebFetch", url=web.url("docs.test", "/bigbin"))
    assert result.is_error and "larger than 10 MiB" in result.text()


async def test_a_gzip_bomb_is_cut_at_the_decoded_cap(workspace: Path, web: WebServer) -> None:
    async with fetching(workspace, limits=FetchLimits(max_body_bytes=1024 * 1024, total_seconds=20)) as rt:
        text = ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/bomb")))
        assert "longer than 1 MiB; only its start was read" in text


async def test_a_slow_drip_ends_at_the_total_timeout(workspace: Path, web: WebServer) -> None:
    async with fetching(workspace, limits=FetchLimits(total_seconds=1.0, read_seconds=5)) as rt:
        result = await run1(rt, "WebFetch", url=web.url("docs.test", "/drip"))
        assert result.is_error and "did not finish within 1 seconds" in result.text()


# --- redirects -------------------------------------------------------------------------------------------


async def test_same_host_redirects_are_followed(rt: Runtime, web: WebServer) -> None:
    text = ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/hop1")))
    assert "# Café" in text and "redirected from" in text


async def test_a_cross_domain_redirect_stops_and_names_the_new_url(rt: Runtime, web: WebServer) -> None:
    before = len(web.requests)
    text = ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/cross")))
    assert f'url="http://other.test:{web.port}/page"' in text and "not followed" in text
    assert all(host.startswith("docs.test") for host, _ in web.requests[before:])


async def test_a_cross_domain_redirect_a_rule_allows_is_followed(workspace: Path, web: WebServer) -> None:
    async with fetching(workspace, ["WebFetch(domain:docs.test)", "WebFetch(domain:other.test)"]) as rt:
        assert "# Café" in ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/cross")))


async def test_a_redirect_to_a_denied_host_stops(workspace: Path, web: WebServer) -> None:
    deny = ["WebFetch(domain:other.test)"]
    async with fetching(workspace, ["WebFetch(domain:docs.test)", "WebFetch"], deny=deny) as rt:
        text = ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/cross")))
        assert "denied by WebFetch(domain:other.test)" in text


async def test_redirects_to_loopback_and_file_are_not_followed(rt: Runtime, web: WebServer) -> None:
    text = ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/to-loopback")))
    assert "not followed" in text and f"127.0.0.1:{web.port}" in text
    text = ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/to-file")))
    assert "file: URLs are never fetched" in text


async def test_a_redirect_loop_ends(rt: Runtime, web: WebServer) -> None:
    result = await run1(rt, "WebFetch", url=web.url("docs.test", "/loop"))
    assert result.is_error and "redirects more than 10 times" in result.text()


# --- addresses and rules ---------------------------------------------------------------------------------


async def test_a_wildcard_rule_does_not_open_a_loopback_address(workspace: Path, web: WebServer) -> None:
    async with fetching(workspace, ["WebFetch(domain:*.docs.test)"]) as rt:
        result = await run1(rt, "WebFetch", url=web.url("api.docs.test", "/page"))
        assert result.is_error and "resolves to 127.0.0.1 is a loopback address" in result.text()
        assert "WebFetch(domain:api.docs.test)" in result.text()


@pytest.mark.parametrize("host", ["127.0.0.1", "2130706433", "0177.0.0.1", "0x7f.0.0.1", "[::1]", "[::ffff:127.0.0.1]"])
async def test_loopback_literals_are_refused_unless_named(workspace: Path, web: WebServer, host: str) -> None:
    approver = RecordingApprover(answer="allow")
    async with fetching(workspace, ["WebFetch"], approver=approver, mode=PermissionMode.BYPASS) as rt:
        result = await run1(rt, "WebFetch", url=web.url(host, "/page"))
        assert result.is_error and 'kind="permission"' in result.text() and "loopback" in result.text()


async def test_a_rule_naming_the_address_opens_it(workspace: Path, web: WebServer) -> None:
    async with fetching(workspace, ["WebFetch(domain:127.0.0.1)"]) as rt:
        assert "# Café" in ok(await run1(rt, "WebFetch", url=web.url("2130706433", "/page")))


async def test_metadata_address_is_refused_in_bypass_mode(workspace: Path) -> None:
    async with fetching(workspace, ["WebFetch"], mode=PermissionMode.BYPASS) as rt:
        result = await run1(rt, "WebFetch", url="http://169.254.169.254/latest/meta-data/")
        assert result.is_error and "cloud metadata" in result.text()


async def test_an_unlisted_domain_asks_and_offers_the_domain_rule(workspace: Path, web: WebServer) -> None:
    approver = RecordingApprover()
    async with fetching(workspace, [], approver=approver) as rt:
        before = len(web.requests)
        result = await run1(rt, "WebFetch", url=web.url("Docs.Test.", "/page"))
        assert result.is_error and len(web.requests) == before
        [asked] = approver.asked
        assert [s.rule for s in asked.suggestions] == ["WebFetch(domain:docs.test)"]
        assert "it fetches from docs.test, and no rule allows that host" in asked.reason


async def test_plan_mode_fetches_only_allowed_domains(workspace: Path, web: WebServer) -> None:
    approver = RecordingApprover(answer="allow")
    async with fetching(workspace, ["WebFetch(domain:docs.test)"], approver=approver, mode=PermissionMode.PLAN) as rt:
        assert "# Café" in ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/page")))
        result = await run1(rt, "WebFetch", url=web.url("other.test", "/page"))
        assert result.is_error and "plan mode fetches only" in result.text() and not approver.asked


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://docs.test/x", "data:text/html,hi", "http://u:p@docs.test/"]
)
async def test_refused_urls(rt: Runtime, url: str) -> None:
    result = await run1(rt, "WebFetch", url=url)
    assert result.is_error and 'kind="state"' in result.text()


async def test_it_is_read_only_and_concurrency_safe(rt: Runtime, web: WebServer) -> None:
    tool = rt.registry.get("WebFetch")
    assert tool is not None
    tool_input = tool.input_model.model_validate({"url": web.url("docs.test", "/page")})
    assert tool.is_read_only(tool_input) and tool.is_concurrency_safe(tool_input)


# --- exfiltration ----------------------------------------------------------------------------------------

SECRET = "sk_live_51Hx9QeXAMPLEtoken0123"


async def test_a_value_read_from_env_asks_even_in_bypass_mode(workspace: Path, web: WebServer) -> None:
    (workspace / ".env").write_text(f"STRIPE_KEY={SECRET}\nDEBUG=1\n")
    approver = RecordingApprover()
    allow = ["Read(./.env)", "WebFetch(domain:docs.test)"]
    async with fetching(workspace, allow, approver=approver, mode=PermissionMode.BYPASS) as rt:
        approver.answer = "allow"  # reading .env asks in every mode (issue 13 §3); the user says yes to it
        ok(await run1(rt, "Read", file_path=".env"))
        approver.answer, approver.asked = "deny", []
        before = len(web.requests)
        hidden = f"{SECRET[:10]}%{ord(SECRET[10]):02X}{SECRET[11:]}"  # one character percent-encoded
        result = await run1(rt, "WebFetch", url=web.url("docs.test", f"/page?q=x%20{hidden}"))
        assert result.is_error and len(web.requests) == before
        [asked] = approver.asked
        assert ".env" in asked.reason and "asked in every mode" in asked.reason and SECRET not in asked.reason
        # A URL without it is fetched as usual.
        ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/page?q=DEBUG")))


async def test_a_secret_environment_value_in_the_url_asks(workspace: Path, web: WebServer) -> None:
    approver = RecordingApprover()
    token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    environ = {"GITHUB_TOKEN": token}
    async with fetching(workspace, approver=approver, environ=environ, mode=PermissionMode.BYPASS) as rt:
        result = await run1(rt, "WebFetch", url=web.url("docs.test", f"/page#{token}"))
        assert result.is_error and "GITHUB_TOKEN" in approver.asked[0].reason


# --- proxies ---------------------------------------------------------------------------------------------


async def test_the_proxy_is_used_and_rules_apply_to_the_target(workspace: Path, web: WebServer) -> None:
    """The loopback server doubles as the proxy: a plain-http proxy receives the absolute URL of the target."""
    proxy = f"http://127.0.0.1:{web.port}"
    async with fetching(workspace, ["WebFetch(domain:docs.test)"], environ={"HTTP_PROXY": proxy}) as rt:
        before = len(web.requests)
        ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/page")))
        host, path = web.requests[before]
        assert path == f"http://docs.test:{web.port}/page" and host == f"docs.test:{web.port}"
        result = await run1(rt, "WebFetch", url=web.url("other.test", "/page"))
        assert result.is_error  # the proxy is allowed; the target still needs its rule


async def test_no_proxy_exempts_a_host(workspace: Path, web: WebServer) -> None:
    # A proxy nobody listens on: were it used, the fetch would fail.
    environ = {"HTTP_PROXY": "http://127.0.0.1:1", "NO_PROXY": "localhost,.test"}
    async with fetching(workspace, environ=environ) as rt:
        ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/page")))


# --- pinning ---------------------------------------------------------------------------------------------


async def test_each_hop_resolves_once_and_connects_to_the_checked_address(workspace: Path, web: WebServer) -> None:
    asked: list[str] = []

    async def counting(host: str, port: int) -> list[str]:
        asked.append(host)
        return await _resolve(host, port)

    async with fetching(workspace) as rt:
        rt.session.deps.override(RESOLVER, counting)
        ok(await run1(rt, "WebFetch", url=web.url("docs.test", "/hop1")))
        assert asked == ["docs.test"] * 3  # /hop1, /hop2, /page: one resolution per hop, none by httpx


async def test_the_backend_refuses_a_connection_nobody_checked() -> None:
    backend = PinnedBackend()
    with pytest.raises(httpcore2.ConnectError, match="not checked"):
        await backend.connect_tcp("docs.test", 80)


@pytest.mark.parametrize("url", ["http://2130706433/", "http://0177.0.0.1/x", "http://LOCALHOST./"])
async def test_deny_rules_match_every_spelling_of_a_host(workspace: Path, url: str) -> None:
    deny = ["WebFetch(domain:127.0.0.1)", "WebFetch(domain:localhost)"]
    async with fetching(workspace, ["WebFetch"], deny=deny) as rt:
        assert (await rt.check("WebFetch", {"url": url})).decision == "deny"
