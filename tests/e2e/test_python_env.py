"""toolgate's own Python environment, in a real VS Code: from Debian's externally managed /usr/bin/python3 as the
only Python the extension sees, offline (no index reachable, PIP_NO_INDEX=1), the platform .vsix's wheelhouse makes
a private environment in the extension's global storage and the sidecar runs from it; the user's Python is
untouched. A base Python whose `-m venv` fails gets the fix in the panel and leaves nothing half-built behind; an
extension upgrade (a second .vsix with a bumped version) builds a new environment and the sidecar restarts on it.

The tests share one code-server and run in order (failure, then the fix, then the upgrade)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from codeserver import EXTENSION_ID, CodeServer, running, vsix_path
from playwright.sync_api import BrowserContext, FrameLocator, Page, expect
from workbench import Workbench

pytestmark = pytest.mark.e2e

DEBIAN_PYTHON = Path("/usr/bin/python3")
UNREACHABLE_INDEX = "http://127.0.0.1:9/"  # the discard port: nothing listens, so any download fails at once
SETUP_TIMEOUT_MS = 300_000  # a cold pip install of ~40 wheels on a busy 2-core machine


class OfflineCodeServer(CodeServer):
    """code-server whose extension host sees no Python but Debian's (no pyenv, no project .venv on PATH) and no
    package index (pip's own settings and files are left out, and the index points at a closed port)."""

    @property
    def env(self) -> dict[str, str]:
        env = {name: value for name, value in super().env.items() if not name.startswith("PIP_")}
        env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
        env.update(PIP_NO_INDEX="1", PIP_INDEX_URL=UNREACHABLE_INDEX, PIP_CONFIG_FILE=os.devnull)
        return env

    @property
    def env_root(self) -> Path:
        return self.user_data / "User" / "globalStorage" / EXTENSION_ID / "python-env"


def user_packages() -> str:
    result = subprocess.run(
        [str(DEBIAN_PYTHON), "-m", "pip", "list", "--format=freeze"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PIP_CONFIG_FILE": os.devnull},
    )
    return result.stdout


def stand_in_without_venv(root: Path) -> Path:
    """Debian's Python as seen without python3-venv: the probe runs (and names this script as the interpreter),
    `-m venv` fails with Debian's own message."""
    script = root / "python-without-venv"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = -m ] && [ "$2" = venv ]; then\n'
        "  echo 'The virtual environment was not created successfully because ensurepip is not' >&2\n"
        "  echo 'available.  On Debian/Ubuntu systems, you need to install the python3-venv' >&2\n"
        "  echo 'package using the following command.' >&2\n"
        "  echo '    apt install python3.11-venv' >&2\n"
        "  exit 1\n"
        "fi\n"
        f'exec {DEBIAN_PYTHON} -c \'import sys; sys.executable = "{script}"; exec(sys.argv[1])\' "$2"\n'
    )
    script.chmod(0o755)
    return script


def bumped_vsix(source: Path, target: Path, version: str) -> Path:
    """The same package under another version: what the next release looks like to the editor."""
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as bumped:
        for item in original.infolist():
            data = original.read(item)
            if item.filename == "extension/package.json":
                manifest = json.loads(data)
                manifest["version"] = version
                data = json.dumps(manifest, indent=2).encode()
            elif item.filename == "extension.vsixmanifest":
                data = re.sub(rb'(<Identity [^>]*Version=")[^"]+"', rb"\g<1>" + version.encode() + b'"', data)
            bumped.writestr(item, data)
    return target


def environments(server: OfflineCodeServer) -> list[str]:
    if not server.env_root.is_dir():
        return []
    return sorted(entry.name for entry in server.env_root.iterdir() if entry.name.startswith("env-"))


def current_environment(server: OfflineCodeServer) -> str:
    pointer = server.env_root / "current.json"
    return str(json.loads(pointer.read_text())["dir"]) if pointer.exists() else ""


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OfflineCodeServer]:
    if not (DEBIAN_PYTHON.exists() and "EXTERNALLY-MANAGED" in " ".join(os.listdir("/usr/lib/python3.11"))):
        pytest.skip("needs Debian's externally managed /usr/bin/python3 (scripts/setup-e2e.sh installs it)")
    with zipfile.ZipFile(vsix_path()) as archive:
        if "extension/python/wheelhouse/manifest.json" not in archive.namelist():
            pytest.fail(f"{vsix_path()} has no wheelhouse: build the platform package with `make vsix`")
    root = tmp_path_factory.mktemp("code-server-python-env")
    settings = {
        # Not the project's .venv: toolgate builds its own environment, first from a Python without venv.
        "toolgate.python.useInterpreterDirectly": False,
        "toolgate.python.path": str(stand_in_without_venv(root)),
    }
    with running(root, settings=settings, server_type=OfflineCodeServer) as server:
        assert isinstance(server, OfflineCodeServer)
        yield server
    assert server.leaked == [], f"processes outlived code-server's process group: {server.leaked}"


@pytest.fixture(scope="module")
def page(editor: OfflineCodeServer, browser: BrowserContext) -> Iterator[Page]:
    page = browser.new_page()
    yield page
    page.close()


def open_chat(page: Page, editor: OfflineCodeServer) -> tuple[Workbench, FrameLocator]:
    bench = Workbench(page, editor)
    bench.open()
    return bench, bench.open_chat()


def test_a_base_python_without_venv_gets_the_fix_and_nothing_half_built(editor: OfflineCodeServer, page: Page) -> None:
    bench, chat = open_chat(page, editor)
    status = chat.locator(".sidecar-status")
    expect(status).to_have_attribute("data-state", "unavailable", timeout=SETUP_TIMEOUT_MS)
    expect(status).to_contain_text(
        "Setting up toolgate's Python environment failed while creating the virtual environment"
    )
    expect(status).to_contain_text("because ensurepip is not available. The sidecar log has the full output.")
    expect(status).to_contain_text("sudo apt install python3.11-venv")
    bench.shot("20-python-env-no-venv")
    log = editor.output_log("toolgate")
    assert "ensurepip is not" in log  # the step's full output is in the sidecar log
    assert environments(editor) == []
    assert current_environment(editor) == ""
    assert "starting the sidecar" not in log


def test_debian_python_offline_builds_the_private_environment(editor: OfflineCodeServer, page: Page) -> None:
    before = user_packages()
    bench, chat = open_chat(page, editor)
    status = chat.locator(".sidecar-status")
    bench.run_command("Notifications: Clear All Notifications")  # the previous test's error
    started = time.monotonic()
    # No python.path: python3 on PATH, that is /usr/bin/python3, the only Python here.
    editor.write_workspace_settings({"toolgate.python.path": ""})
    expect(status).to_contain_text("Setting up toolgate's Python environment…", timeout=60_000)
    # The progress notification, looked for in the notification center: VS Code may hold back the toast itself
    # (it drops toasts beyond three in 800 ms, and draws them only on an animation frame), which made a toast
    # check fail in the full suite only, while the notification was there (its screen-reader alert was).
    bench.run_command("Notifications: Show Notifications")
    center = page.locator(".notifications-center")
    row = center.locator(".notification-list-item", has_text="Setting up toolgate's Python environment").first
    expect(row).to_be_visible()
    bench.shot("21-python-env-setting-up")
    page.keyboard.press("Escape")  # closes the notification center
    expect(center).to_be_hidden()
    expect(status).to_have_attribute("data-state", "ready", timeout=SETUP_TIMEOUT_MS)
    print(f"first-start environment setup: {time.monotonic() - started:.1f} s")
    expect(status).to_contain_text("toolgate 0.1.0 · Python 3.11")
    bench.shot("22-python-env-ready")

    (env_dir,) = environments(editor)
    assert current_environment(editor) == env_dir
    log = editor.output_log("toolgate")
    assert f"building {editor.env_root / env_dir} from {DEBIAN_PYTHON} (Python 3.11" in log
    assert "-m venv --without-pip" in log  # pip comes from the wheelhouse: Debian's python3-venv is not needed
    assert "--no-index --find-links" in log
    assert f"starting the sidecar: {editor.env_root / env_dir}/bin/python -P -m toolgate serve" in log
    assert user_packages() == before  # Debian's Python is as it was


def test_an_upgrade_builds_a_new_environment_and_restarts_the_sidecar_on_it(
    editor: OfflineCodeServer, page: Page, tmp_path: Path
) -> None:
    old = current_environment(editor)
    assert old, "the previous test builds the first environment"
    editor.stop()
    editor.install_extension(bumped_vsix(vsix_path(), tmp_path / "toolgate-0.1.1.vsix", "0.1.1"))
    editor.start()
    bench, chat = open_chat(page, editor)
    status = chat.locator(".sidecar-status")
    expect(status).to_have_attribute("data-state", "ready", timeout=SETUP_TIMEOUT_MS)
    new = current_environment(editor)
    assert new.startswith("env-0.1.1-")
    assert environments(editor) == sorted([old, new])  # the previous one stays for windows still running on it
    log = editor.output_log("toolgate")
    assert f"starting the sidecar: {editor.env_root / new}/bin/python -P -m toolgate serve" in log
    bench.shot("23-python-env-upgraded")
