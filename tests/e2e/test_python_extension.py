"""toolgate follows the Python extension's interpreter when toolgate.python.path is not set. A stand-in for
ms-python.python (fake-python-extension/: the API toolgate reads, and a command to select an interpreter) starts
with an interpreter that does not exist, so the chat says what is wrong; selecting the project's Python restarts the
sidecar on it, and the chat says why it restarted. This editor has its own code-server: no python.path setting."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from codeserver import DEMO_WORKSPACE, REPO, VENV_PYTHON, CodeServer, vsix_path
from playwright.sync_api import BrowserContext, expect
from workbench import Workbench

pytestmark = pytest.mark.e2e

FAKE_EXTENSION = Path(__file__).resolve().parent / "fake-python-extension"
VSCE = REPO / "node_modules" / "@vscode" / "vsce" / "vsce"


def package_fake_extension(root: Path) -> Path:
    source = root / "fake-python-extension"
    shutil.copytree(FAKE_EXTENSION, source)
    vsix = root / "fake-python.vsix"
    options = ["--no-dependencies", "--allow-missing-repository", "--skip-license", "--out", str(vsix)]
    subprocess.run(
        ["node", str(VSCE), "package", *options],
        cwd=source,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=True,
        start_new_session=True,
    )
    return vsix


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodeServer]:
    root = tmp_path_factory.mktemp("code-server-python-extension")
    fake = package_fake_extension(root)
    server = CodeServer(root)  # the user settings name no Python: toolgate asks the Python extension
    server.copy_workspace(DEMO_WORKSPACE)
    server.install_extension(vsix_path())
    server.install_extension(fake)
    assert (server.extensions / "ms-python.python-0.0.1").is_dir()
    try:
        server.start()
        yield server
    finally:
        server.stop()
    assert server.leaked == [], f"processes outlived code-server's process group: {server.leaked}"


def test_selecting_another_interpreter_restarts_the_sidecar_on_it(editor: CodeServer, browser: BrowserContext) -> None:
    page = browser.new_page()
    bench = Workbench(page, editor)
    try:
        bench.open()
        chat = bench.open_chat()
        status = chat.locator(".sidecar-status")
        expect(status).to_have_attribute("data-state", "unavailable", timeout=60_000)
        expect(status).to_contain_text(
            "could not find the Python selected in the Python extension (/nonexistent/fake-python/bin/python)"
        )
        bench.shot("12-python-extension-interpreter-missing")

        bench.run_command("Fake Python: Select Interpreter")
        box = page.locator(".quick-input-widget input.input")
        box.fill(str(VENV_PYTHON))
        box.press("Enter")
        expect(status).to_have_attribute("data-state", "ready", timeout=60_000)
        expect(chat.locator(".notice").last).to_contain_text(
            f"The Python extension's interpreter changed to {VENV_PYTHON}: restarting the sidecar with it"
        )
        assert f"starting the sidecar: {VENV_PYTHON} -P -m toolgate serve" in editor.output_log("toolgate")
        bench.shot("13-python-extension-interpreter-selected")
    except Exception:
        print(f"code-server log (last lines):\n{editor.log_tail()}")
        raise
    finally:
        page.close()
