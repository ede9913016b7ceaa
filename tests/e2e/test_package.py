"""The .vsix as a user gets it: what it holds, and that its bundled sidecar package installs with pip."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest
from codeserver import VENV_PYTHON, vsix_path

pytestmark = pytest.mark.e2e


def test_the_vsix_holds_the_bundles_and_the_sidecar_source_and_nothing_else() -> None:
    with zipfile.ZipFile(vsix_path()) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("extension/package.json"))
    assert manifest["engines"]["vscode"] == "^1.100.0"  # runs in code-server 4.100.3 (VS Code 1.100.3)
    for required in (
        "extension/dist/extension.js",
        "extension/dist/webview.js",
        "extension/dist/webview.css",
        "extension/media/toolgate.svg",
        "extension/python/pyproject.toml",
        "extension/python/server/toolgate/__init__.py",
        "extension/python/server/toolgate/sidecar/server.py",
    ):
        assert required in names, required
    unexpected = [
        name
        for name in names
        if name.endswith((".map", ".ts", ".pyc"))
        or "node_modules/" in name
        or "/tests/" in name
        or "__pycache__" in name
    ]
    assert unexpected == []


def test_the_bundled_sidecar_package_builds_a_wheel(tmp_path: Path) -> None:
    with zipfile.ZipFile(vsix_path()) as archive:
        archive.extractall(tmp_path / "vsix")
    package = tmp_path / "vsix" / "extension" / "python"
    result = subprocess.run(
        [str(VENV_PYTHON), "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path / "wheel"), str(package)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = (tmp_path / "wheel").glob("toolgate-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert "toolgate/sidecar/server.py" in archive.namelist()
