"""Which MCP servers are configured: `mcpServers` in the user settings file and in the workspace's `.mcp.json`.

Both use Claude Code's shape:

    {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
                    "docs": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Key": "..."}}}}

`type: "sse"` (with `url` and `headers`) is the legacy HTTP+SSE transport, for servers that do not speak
Streamable HTTP yet.

A workspace's servers come from the repository, so they are commands its author chose: they are listed but
never started until the workspace is trusted (permissions/trust.py) and the server itself is approved.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from toolgate.permissions.settings import SettingsError, read_settings_text
from toolgate.permissions.sources import settings_paths
from toolgate.permissions.trust import is_trusted

WORKSPACE_FILE = ".mcp.json"
Scope = Literal["user", "workspace"]


class StdioServerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    # toolgate's own keys: a person may mark the server (or some of its tools) read-only; never the server.
    readOnly: bool = False
    readOnlyTools: list[str] = Field(default_factory=list)
    timeout: float = Field(default=60.0, gt=0, le=3600, description="seconds a tool call may take")


class HttpServerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    type: Literal["http", "sse"]  # Streamable HTTP, or the legacy HTTP+SSE transport
    url: str = Field(pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict)
    readOnly: bool = False
    readOnlyTools: list[str] = Field(default_factory=list)
    timeout: float = Field(default=60.0, gt=0, le=3600)


ServerConfig = Annotated[StdioServerConfig | HttpServerConfig, Field(discriminator="type")]
_SERVER = TypeAdapter[StdioServerConfig | HttpServerConfig](ServerConfig)


@dataclass(frozen=True, slots=True)
class ConfiguredServer:
    name: str
    scope: Scope
    source: Path
    config: StdioServerConfig | HttpServerConfig

    @property
    def key(self) -> str:
        """What an approval is recorded under: a workspace server is approved for that workspace only."""
        return self.name if self.scope == "user" else f"{self.source.parent}#{self.name}"

    @property
    def config_hash(self) -> str:
        """Changing the command, its arguments, env or URL needs a new approval."""
        canonical = json.dumps(self.config.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(slots=True)
class ServerList:
    servers: list[ConfiguredServer]
    problems: list[str]
    workspace_trusted: bool


def _with_stdio_default(raw: Any) -> Any:
    if isinstance(raw, dict) and "type" not in raw:
        return {**raw, "type": "stdio"}
    return raw


def parse_servers(text: str, path: Path, scope: Scope) -> tuple[list[ConfiguredServer], list[str]]:
    """The servers in one file's `mcpServers`, and a problem (in words) for each entry that cannot be used."""
    try:
        raw = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        return [], [f"{path}:{exc.lineno}:{exc.colno}: this is not valid JSON ({exc.msg}); no server in it is used"]
    table = raw.get("mcpServers", {}) if isinstance(raw, dict) else None
    if not isinstance(table, dict):
        return [], [f"{path}: mcpServers must be an object of server name → server settings"]
    servers, problems = [], []
    for name, entry in table.items():
        try:
            config = _SERVER.validate_python(_with_stdio_default(entry))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            problems.append(f"{path}: server {name!r}: {field}: {first['msg']}; the server is not used until fixed")
            continue
        servers.append(ConfiguredServer(name=name, scope=scope, source=path, config=config))
    return servers, problems


def _read(path: Path, scope: Scope) -> tuple[list[ConfiguredServer], list[str]]:
    try:
        text = read_settings_text(path)
    except SettingsError as exc:
        return [], [str(exc)]
    return ([], []) if text is None else parse_servers(text, path, scope)


def user_settings_file(home: Path, environ: Mapping[str, str]) -> Path:
    return settings_paths(Path("/"), home, environ)["user"]


def configured_servers(
    workspace: Path, home: Path, environ: Mapping[str, str], trust_workspace: bool | None = None
) -> ServerList:
    """Every configured server: the user's first, then the workspace's (a workspace server never replaces a
    user server of the same name). `trust_workspace` None: as the user settings' trustedWorkspaces say."""
    user_file = user_settings_file(home, environ)
    servers, problems = _read(user_file, "user")
    if trust_workspace is None:
        trusted: list[str] = []
        try:
            text = read_settings_text(user_file) or "{}"
            listed = json.loads(text).get("trustedWorkspaces", [])
            trusted = [t for t in listed if isinstance(t, str)] if isinstance(listed, list) else []
        except (SettingsError, json.JSONDecodeError, AttributeError):
            trusted = []
        trust_workspace = is_trusted(workspace, trusted, home)
    taken = {s.name for s in servers}
    found, more = _read(workspace / WORKSPACE_FILE, "workspace")
    problems += more
    for server in found:
        if server.name in taken:
            problems.append(f"{server.source}: server {server.name!r} is also in your user settings; that one is used")
            continue
        servers.append(server)
    return ServerList(servers, problems, trust_workspace)
