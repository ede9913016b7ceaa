"""The idle warm-up imports what the first session needs, and gets out of the way as soon as anything happens."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolgate.sidecar.warm_up import SESSION_MODELS, SESSION_MODULES, importing, warm_up


@pytest.fixture
def modules(tmp_path: Path) -> Iterator[list[str]]:
    names = [f"warm_probe_{n}" for n in range(3)]
    for name in names:
        (tmp_path / f"{name}.py").write_text("LOADED = True\n")
    sys.path.insert(0, str(tmp_path))
    try:
        yield names
    finally:
        sys.path.remove(str(tmp_path))
        for name in names:
            sys.modules.pop(name, None)


async def test_it_imports_every_module_while_idle(modules: list[str]) -> None:
    assert await warm_up(lambda: True, importing(modules), after=0) == 3
    assert all(name in sys.modules for name in modules)


async def test_it_stops_as_soon_as_the_sidecar_is_busy(modules: list[str]) -> None:
    answers = iter([True, False, True])
    assert await warm_up(lambda: next(answers), importing(modules), after=0) == 1
    assert modules[0] in sys.modules and modules[1] not in sys.modules and modules[2] not in sys.modules


async def test_a_module_that_fails_to_import_ends_the_warm_up_quietly(
    modules: list[str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "warm_probe_broken.py").write_text("raise RuntimeError('broken install')\n")
    try:
        assert await warm_up(lambda: True, importing([modules[0], "warm_probe_broken", modules[1]]), after=0) == 1
    finally:
        sys.modules.pop("warm_probe_broken", None)
    assert modules[1] not in sys.modules and "warming up failed" in caplog.text and "warm_probe_broken" in caplog.text


def test_every_module_it_warms_exists() -> None:
    import importlib.util

    assert [name for name in SESSION_MODULES if importlib.util.find_spec(name) is None] == []


def test_every_model_named_is_built_by_its_step() -> None:
    # A renamed model would make its step fail (which stops the warm-up) without any test noticing.
    code = (
        "from toolgate.sidecar.warm_up import SESSION_MODELS, building; import importlib\n"
        "models = [getattr(importlib.import_module(m), c) for m, _, c in (n.partition(':') for n in SESSION_MODELS)]\n"
        "before = [m.__pydantic_complete__ for m in models]\n"
        "[step() for step in building(SESSION_MODELS)]\n"
        "print(before, [m.__pydantic_complete__ for m in models])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = done.stdout.strip().split("] [")
    assert before.count("False") == len(SESSION_MODELS) and after.count("True") == len(SESSION_MODELS), done.stdout
