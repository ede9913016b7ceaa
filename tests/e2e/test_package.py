"""The .vsix as a user gets it: what it holds, that its bundled sidecar package installs with pip, and the
wheelhouse a platform package carries (pythonEnvSetup.ts installs from it offline)."""

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


def test_the_platform_vsix_carries_a_wheelhouse_for_every_supported_python() -> None:
    with zipfile.ZipFile(vsix_path()) as archive:
        names = archive.namelist()
        manifest = json.loads(archive.read("extension/python/wheelhouse/manifest.json"))
        identity = archive.read("extension.vsixmanifest").decode()
    wheels = {name.rsplit("/", 1)[1] for name in names if name.startswith("extension/python/wheelhouse/")}
    assert f'TargetPlatform="{manifest["target"]}"' in identity  # the package is marked for its wheels' platform
    assert sorted(manifest["wheels"]) == sorted(wheels - {"manifest.json"})
    assert any(wheel.startswith("toolgate-0.1.0-py3-none-any") for wheel in wheels)
    assert any(wheel.startswith("pip-") for wheel in wheels)  # the environment is made --without-pip
    # Compiled extensions come once per Python version (no abi3 wheels); the rest once.
    for package in ("pydantic_core", "pillow", "jiter"):
        for python in manifest["pythons"]:
            tag = "cp" + python.replace(".", "")
            assert any(w.startswith(f"{package}-") and f"-{tag}-{tag}-" in w for w in wheels), (package, python)
    for package in ("ripgrep", "pypdfium2"):  # binaries without a Python ABI: one wheel serves every version
        assert sum(w.startswith(f"{package}-") for w in wheels) == 1, package
