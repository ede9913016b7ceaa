"""Fixtures for the end-to-end tests: a code-server with the extension, and headless Chromium looking at it.

Run them with `make e2e` (it builds the .vsix and installs code-server first). A screenshot of every state a
person would look at goes to test-results/e2e/.
"""

from __future__ import annotations

import contextlib
import os
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
def editors_closed(request: pytest.FixtureRequest) -> None:
    """Each test that looks at the editor starts with no editor open. Tests share one window; an editor an earlier
    test left (a preview tab the problems check opened, a settings.json) took the focus or the cursor a later test
    expected (three whole-suite flakes came from that)."""
    if "workbench" not in request.fixturenames:
        return
    bench: Workbench = request.getfixturevalue("workbench")
    close_leftovers(bench)
    if bench.page.locator(".tabs-container .tab").count() == 0:
        return
    bench.run_command("View: Close All Editors")
    # An unsaved editor asks first (an earlier test's typing is not this test's to keep): wait for either.
    tabs, dialog = bench.page.locator(".tabs-container .tab"), bench.page.locator(".monaco-dialog-box")
    bench.page.wait_for_function(
        "() => !document.querySelector('.tabs-container .tab') || !!document.querySelector('.monaco-dialog-box')",
        timeout=TIMEOUT_MS,
    )
    if dialog.count():
        dialog.get_by_role("button", name="Don't Save").click()
    expect(tabs).to_have_count(0)


@pytest.fixture(autouse=True)
def workspace_as_found(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test leaves the shared editor's workspace as it found it: files it changed or removed are put back, files
    it added are removed. Tests share one editor (starting one costs most of a minute), and a test that leaned on what
    an earlier one left was a flake in waiting; what a test left is printed, so the test can be mended."""
    if "code_server" not in request.fixturenames:
        yield
        return
    root = request.getfixturevalue("code_server").workspace
    before = _tree(root)
    yield
    put_back = _restore(root, before)
    if put_back:
        print(f"{request.node.nodeid} left the workspace changed; put back: {', '.join(put_back)}")


def _tree(root: Path) -> dict[str, bytes | str]:
    """Every file under `root` by relative path: a file's bytes, a symbolic link's target (as text)."""
    tree: dict[str, bytes | str] = {}
    for folder, dirs, files in os.walk(root):
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(folder, d)))]:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            tree[relative] = os.readlink(path) if os.path.islink(path) else Path(path).read_bytes()
    return tree


def _restore(root: Path, before: dict[str, bytes | str]) -> list[str]:
    now = _tree(root)
    touched: list[str] = []
    for relative in sorted(now.keys() - before.keys()):
        (root / relative).unlink()
        touched.append(f"{relative} (removed)")
    for relative, content in sorted(before.items()):
        if now.get(relative) == content:
            continue
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or (isinstance(content, str) and path.exists()):
            path.unlink()
        if isinstance(content, str):
            path.symlink_to(content)
        else:
            path.write_bytes(content)
        touched.append(relative)
    # Folders the test made and left empty go too (deepest first).
    for folder, _dirs, _files in sorted(os.walk(root, topdown=False), key=lambda walked: -len(walked[0])):
        if Path(folder) != root and not os.listdir(folder) and os.path.relpath(folder, root) not in _folders(before):
            os.rmdir(folder)
    return touched


def _folders(tree: dict[str, bytes | str]) -> set[str]:
    return {str(parent) for relative in tree for parent in Path(relative).parents if str(parent) != "."}


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
