"""`make demo`, as a person runs it: the launcher it starts (tests/e2e/launcher.py --demo, in a process of its own)
brings up code-server and the mock model playing examples/demo-chat.json. The person walks the scripted session
(a plan, a Read, a Grep, a command allowed from its card, an edit accepted in its diff, the closing summary), and
Ctrl-C stops every process it started.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from codeserver import ENV_MARKER, REPO, VENV_PYTHON, processes_with_marker, wait_for
from playwright.sync_api import BrowserContext, expect
from workbench import Workbench

pytestmark = pytest.mark.e2e

LAUNCHER = REPO / "tests" / "e2e" / "launcher.py"
GREET_AFTER_THE_DEMO = '''"""A small module for the demo to read, search and edit."""


def greet(name: str = "world") -> str:
    """Say hello to `name` (to the whole world when no name is given)."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    print(greet("world"))
'''


@dataclass
class Demo:
    """`make demo` running in another process, as seen from its output."""

    process: subprocess.Popen[str]
    marker: str
    output: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.output)

    def _field(self, pattern: str) -> str:
        found = re.search(pattern, self.text)
        assert found, f"the launcher did not say {pattern!r}:\n{self.text}"
        return found.group(1)

    @property
    def url(self) -> str:
        return self._field(r"running in code-server: (\S+)")

    @property
    def workspace(self) -> Path:
        return Path(self._field(r"workspace: +(\S+)"))

    @property
    def mock_url(self) -> str:
        return self._field(r"the mock model at (\S+),")

    def log_tail(self, lines: int = 40) -> str:
        with contextlib.suppress(OSError, AssertionError):
            log = self.workspace.parent / "code-server.log"
            return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
        return ""


@pytest.fixture
def demo() -> Iterator[Demo]:
    # Our marker in the launcher's environment reaches every process it starts, so none can go unnoticed.
    marker = uuid.uuid4().hex
    process = subprocess.Popen(
        [str(VENV_PYTHON), str(LAUNCHER), "--demo", "--port", "0"],
        env={**os.environ, ENV_MARKER: marker},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # like a terminal's foreground job: Ctrl-C reaches the launcher alone
    )
    running = Demo(process, marker)

    def collect() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            running.output.append(line)

    reader = threading.Thread(target=collect, daemon=True)
    reader.start()
    try:
        wait_for(
            lambda: "Ctrl-C stops everything." in running.text or process.poll() is not None,
            180,
            "`make demo` to say it is running",
        )
        assert process.poll() is None, f"the launcher exited with {process.returncode}:\n{running.text}"
        yield running
    finally:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        for pid in processes_with_marker(marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        reader.join(timeout=10)


def send(bench: Workbench, text: str) -> None:
    composer = bench.open_chat().locator(".composer-input")
    composer.fill(text)
    composer.press("Enter")


@contextlib.contextmanager
def demo_workbench(browser: BrowserContext, demo: Demo, name: str, init_script: str = "") -> Iterator[Workbench]:
    """A browser page on the demo's code-server; on failure, a screenshot FAILED-`name` and the demo's logs."""
    page = browser.new_page()
    if init_script:
        page.add_init_script(init_script)
    bench = Workbench(page, demo)
    try:
        bench.open()
        yield bench
    except Exception:
        with contextlib.suppress(Exception):
            bench.shot(f"FAILED-{name}")
        print(f"launcher output:\n{demo.text}\ncode-server log (last lines):\n{demo.log_tail()}")
        raise
    finally:
        page.close()


def test_make_demo_plays_its_script_and_ctrl_c_stops_everything(demo: Demo, browser: BrowserContext) -> None:
    greet = demo.workspace / "src" / "greet.py"
    original = greet.read_text()
    with demo_workbench(browser, demo, "demo") as bench:
        page = bench.page
        chat = bench.open_chat()
        expect(chat.locator(".sidecar-status")).to_have_attribute("data-state", "ready", timeout=60_000)
        provider = chat.locator(".provider-status")
        expect(provider).to_contain_text("scripted-demo")
        expect(provider).to_contain_text(demo.mock_url)
        expect(provider).to_contain_text("no key needed")
        bench.shot("50-demo-start")

        send(bench, "Show me what toolgate does.")
        # The plan, then a Read and a Grep that need nobody's approval.
        expect(chat.locator(".todos")).to_contain_text("Read src/greet.py")
        expect(chat.locator("details.tool-done[data-tool=Read]")).to_contain_text("src/greet.py")
        expect(chat.locator("details.tool-done[data-tool=Grep]")).to_contain_text("greet")

        # The command waits on its card; Allow once runs it.
        card = chat.locator(".approval-pending").last
        expect(card).to_contain_text("python3 src/greet.py")
        expect(card.locator(".card-reason")).not_to_be_empty()
        expect(chat.locator(".todos")).to_contain_text("2 of 4 done")
        bench.shot("51-demo-approval")
        card.get_by_role("button", name="Allow once").click()
        expect(chat.locator("details.tool-done[data-tool=Bash]")).to_contain_text("Hello, world!")

        # The edit opens as a diff; nothing is written before Accept.
        review = chat.locator(".review-pending").last
        expect(review).to_contain_text("src/greet.py")
        expect(page.locator(".tabs-container .tab", has_text="greet.py ↔ toolgate proposal")).to_be_visible()
        assert greet.read_text() == original
        bench.shot("52-demo-diff-review")
        review.get_by_role("button", name="Accept", exact=True).click()
        wait_for(lambda: greet.read_text() == GREET_AFTER_THE_DEMO, 30, "the accepted edit on disk")

        # The closing summary, and the plan done.
        expect(chat.locator(".msg-assistant").last).to_contain_text("That is the whole demo.")
        # Finished, the list is no longer pinned under the conversation: its last TodoWrite card says it is done.
        expect(chat.locator(".todos")).to_be_hidden()
        done = chat.locator("details.tool[data-tool=TodoWrite]").last.locator(".tool-summary")
        expect(done).to_have_text("4 of 4 done")
        expect(chat.locator("button.send")).to_be_visible()
        bench.shot("53-demo-done")

        # A message after the script is answered too, in words.
        send(bench, "Anything else?")
        expect(chat.locator(".msg-assistant").last).to_contain_text("The demo's script is over")
        expect(chat.locator(".notice-error")).to_have_count(0)

    # Ctrl-C: the launcher stops code-server (extension host, sidecar, its shells) and the mock model, and cleans up.
    root = demo.workspace.parent
    os.kill(demo.process.pid, signal.SIGINT)
    assert demo.process.wait(timeout=60) == 0, demo.text
    wait_for(lambda: "Stopped." in demo.text, 10, "the launcher to say it stopped")
    assert "escaped" not in demo.text, demo.text
    assert processes_with_marker(demo.marker) == []
    assert not root.exists()
