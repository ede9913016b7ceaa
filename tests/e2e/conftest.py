"""Fixtures for the end-to-end tests: a code-server with the extension, and headless Chromium looking at it.

Run them with `make e2e` (it builds the .vsix and installs code-server first). A screenshot of every state a
person would look at goes to test-results/e2e/.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# --import-mode=importlib does not put test directories on sys.path; the harness module sits next to this file.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from codeserver import CodeServer, running
from launcher import product_settings
from playwright.sync_api import BrowserContext, expect, sync_playwright
from workbench import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS, Workbench

# Conditions are awaited, never slept on: `expect` polls until this deadline (its own default is only 5 s, less
# than a cold extension host needs on a busy machine).
expect.set_options(timeout=TIMEOUT_MS)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.when == "call":
        item.stash[FAILED] = report.failed


FAILED = pytest.StashKey[bool]()


@pytest.fixture(scope="session")
def code_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodeServer]:
    root = tmp_path_factory.mktemp("code-server")
    # The editor `make run` starts (the demo workspace, the project's Python), without a person's API keys.
    with running(root, settings=product_settings()) as server:
        yield server
    # Every process code-server started must be gone: extension hosts, the sidecar, its children.
    assert server.leaked == [], f"processes outlived code-server's process group: {server.leaked}"


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1360, "height": 860},
        )
        context.set_default_timeout(TIMEOUT_MS)
        try:
            yield context
        finally:
            context.close()


@pytest.fixture(scope="session")
def workbench(code_server: CodeServer, browser: BrowserContext) -> Iterator[Workbench]:
    page = browser.new_page()
    bench = Workbench(page, code_server)
    bench.open()
    yield bench
    page.close()


@pytest.fixture(autouse=True)
def screenshot_on_failure(request: pytest.FixtureRequest) -> Iterator[None]:
    """A failing test leaves a picture of what the browser showed, and code-server's log tail in the report."""
    yield
    if not request.node.stash.get(FAILED, False) or "workbench" not in request.fixturenames:
        return
    bench: Workbench = request.getfixturevalue("workbench")
    with contextlib.suppress(Exception):
        bench.shot(f"FAILED-{slug(request.node.name)}")
    # What the panel said comes first: it is what a reader of a CI log needs to tell a bug from a slow machine.
    with contextlib.suppress(Exception):
        print(f"chat panel text:\n{bench.chat.locator('body').inner_text(timeout=5_000)[-4000:]}")
    if isinstance(bench.server, CodeServer):
        with contextlib.suppress(Exception):
            print("toolgate output (last lines):\n" + "\n".join(bench.server.output_log("toolgate").splitlines()[-40:]))
    print(f"code-server log (last lines):\n{bench.server.log_tail()}")
    close_leftovers(bench)


def close_leftovers(bench: Workbench) -> None:
    """A failed test can leave a quick input (the API key box ignores focus loss) or a modal dialog open, and
    the window is shared: close them so the next test starts from the window it expects."""
    for selector in (".quick-input-widget input.input", ".monaco-dialog-box"):
        with contextlib.suppress(Exception):
            leftover = bench.page.locator(selector).first
            if leftover.is_visible():
                leftover.press("Escape", timeout=5_000)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
