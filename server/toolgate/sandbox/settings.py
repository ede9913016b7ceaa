"""The `sandbox` object of the settings files, merged: the user's file sets it; a workspace's files (project,
local) may only tighten it, the way they may only add ask and deny rules until the workspace is trusted:

    enabled     a workspace may raise it (auto → on), never lower it (to off)
    autoAllow   a workspace may turn it off, never on
    hidden      a workspace may add paths
    writable    the user's file only (more writable places would loosen the sandbox)
    network     the user's file only (`Network(domain:host)` rules: hosts reachable through the proxy)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolgate.permissions.settings import SettingsError, read_settings
from toolgate.permissions.sources import SourceName
from toolgate.sandbox.egress import RuleProblem, network_rule_spec
from toolgate.sandbox.runtime import Enabled, SandboxSettings

_STRENGTH: dict[Enabled, int] = {"off": 0, "auto": 1, "on": 2}
WORKSPACE_SOURCES = ("project", "local")


class SandboxFileSettings(BaseModel):
    """What one settings file says; unset fields leave the value from elsewhere."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)

    enabled: Enabled | None = None
    auto_allow: bool | None = Field(default=None, alias="autoAllow")
    writable: list[str] = Field(default_factory=list)
    hidden: list[str] = Field(default_factory=list)
    network: list[str] = Field(default_factory=list)


def _usable_rules(name: str, rules: list[str], ignored: list[str]) -> list[str]:
    usable = []
    for rule in rules:
        try:
            network_rule_spec(rule)
        except RuleProblem as exc:
            ignored.append(f"the {name} settings' sandbox.network entry {exc}; it is ignored")
            continue
        usable.append(rule)
    return usable


def _file_settings(path: Path) -> tuple[SandboxFileSettings | None, str | None]:
    try:
        settings = read_settings(path)
    except SettingsError:
        return None, None  # the permission engine reports a broken file (and fails closed for it)
    raw: Any = (settings.model_extra or {}).get("sandbox") if settings is not None else None
    if raw is None:
        return None, None
    try:
        return SandboxFileSettings.model_validate(raw), None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "sandbox"
        return (
            None,
            f"{path}: sandbox.{where}: {first['msg']}; the file's sandbox settings are ignored until it is fixed",
        )


def merge(layers: Mapping[str, SandboxFileSettings], default: Enabled = "auto") -> tuple[SandboxSettings, list[str]]:
    """`layers` by source name ("user", "project", "local", "flag"); returns the settings and what was ignored."""
    result = SandboxSettings(enabled=default)
    ignored: list[str] = []
    for name in ("user", "flag"):  # files the user chose: they set anything
        layer = layers.get(name)
        if layer is None:
            continue
        result.enabled = layer.enabled or result.enabled
        result.auto_allow = result.auto_allow if layer.auto_allow is None else layer.auto_allow
        result.writable = [*result.writable, *layer.writable]
        result.hidden = [*result.hidden, *layer.hidden]
        result.network = [*result.network, *_usable_rules(name, layer.network, ignored)]
    for name in WORKSPACE_SOURCES:
        layer = layers.get(name)
        if layer is None:
            continue
        if layer.enabled is not None:
            if _STRENGTH[layer.enabled] >= _STRENGTH[result.enabled]:
                result.enabled = layer.enabled
            else:
                ignored.append(f"the {name} settings' sandbox.enabled {layer.enabled} would loosen the sandbox")
        if layer.auto_allow is False:
            result.auto_allow = False
        elif layer.auto_allow and not result.auto_allow:
            ignored.append(f"the {name} settings' sandbox.autoAllow true would loosen the sandbox")
        if layer.writable:
            ignored.append(f"the {name} settings' sandbox.writable is read from the user's settings file only")
        if layer.network:
            ignored.append(f"the {name} settings' sandbox.network is read from the user's settings file only")
        result.hidden = [*result.hidden, *layer.hidden]
    return result, ignored


@dataclass(frozen=True, slots=True)
class SandboxRequest:
    """What a session's builder asks for: `enabled` from the command line (`--sandbox`) over every file;
    `default` when no file says (auto: on wherever it can run, in the editor as on the command line)."""

    enabled: Enabled | None = None
    default: Enabled = "auto"


def load_sandbox_settings(
    files: Mapping[SourceName, Path], flag_files: tuple[Path, ...] = (), request: SandboxRequest | None = None
) -> tuple[SandboxSettings, list[str]]:
    """The merged settings of the files toolgate reads (`RuleBook.files`) under `request`; and the problems
    and ignored entries, to report."""
    request = request or SandboxRequest()
    layers: dict[str, SandboxFileSettings] = {}
    problems: list[str] = []
    named: list[tuple[str, Path]] = [*files.items(), *(("flag", p) for p in flag_files)]
    for name, path in named:
        layer, problem = _file_settings(path)
        if problem is not None:
            problems.append(problem)
        if layer is not None and name == "flag" and "flag" in layers:
            previous = layers["flag"]
            layer = SandboxFileSettings(
                enabled=layer.enabled or previous.enabled,
                auto_allow=previous.auto_allow if layer.auto_allow is None else layer.auto_allow,
                writable=[*previous.writable, *layer.writable],
                hidden=[*previous.hidden, *layer.hidden],
                network=[*previous.network, *layer.network],
            )
        if layer is not None:
            layers[name] = layer
    settings, ignored = merge(layers, request.default)
    if request.enabled is not None:
        settings.enabled = request.enabled
    return settings, [*problems, *ignored]
