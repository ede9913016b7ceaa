"""`toolgate serve` answers initialize without importing what only later requests need.

Every editor window waits for initialize, so the agent, the model providers, the tools (bashlex, PDF and
image libraries, httpx, markdownify) and the permission engine are imported on first use instead. This
runs the real command line in a fresh interpreter, answers a real initialize request, and names every
module that was imported by then: a top-level import added anywhere on that path fails here.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

# The probe replaces only the stdio loop: the parser, `serve_command`, the server and its initialize
# handler are the real ones.
PROBE = r"""
import json, sys
import toolgate.cli.serve as serve

class Collect:
    def __init__(self):
        self.data = b""
    def write(self, data):
        self.data += data

def answer_initialize(server):
    out = Collect()
    server.protocol.set_writer(out)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "capabilities": {}, "rootUri": None,
        "initializationOptions": {"storageDir": sys.argv[1]}}}).encode()
    server.protocol.receive(body)
    answer = json.loads(out.data.partition(b"\r\n\r\n")[2])
    from pydantic import BaseModel
    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)
    built = sorted({c.__qualname__ for c in subclasses(BaseModel) if c.__dict__.get("__pydantic_complete__")})
    report = {"answer": answer, "modules": sorted(sys.modules), "built": built}
    if len(sys.argv) > 2:  # then one more request, served on an event loop as the real server serves it
        import asyncio
        method, params = {
            "ping": ("toolgate/ping", {}),
            "session": ("toolgate/session/new", {"workspace": sys.argv[1]}),
        }[sys.argv[2]]
        async def request():
            message = {"jsonrpc": "2.0", "id": 2, "method": method, "params": params}
            server.protocol.receive(json.dumps(message).encode())
            while b'"id": 2' not in out.data and b'"id":2' not in out.data:
                await asyncio.sleep(0.01)
        asyncio.run(asyncio.wait_for(request(), 60))
        report["after"] = sorted(sys.modules)
        report["answer2"] = out.data.decode(errors="replace")[-300:]
    print(json.dumps(report))
    sys.stdout.flush()
    raise SystemExit(0)

serve.run_server = answer_initialize
from toolgate.cli.main import main
main(["serve"])
"""

# Imported by later requests only; each is slow to import or pulls in something that is.
LATER = (
    "anthropic",
    "openai",
    "httpx2",
    "pypdf",
    "pypdfium2",
    "PIL",
    "markdownify",
    "bs4",
    "bashlex",
    "toolgate.agent.loop",
    "toolgate.agent.providers",
    "toolgate.runtime",
    "toolgate.permissions.decide",
    "toolgate.permissions.ladder",
    "toolgate.sidecar.editor_sessions",
    "toolgate.sidecar.chat",
    "toolgate.bash.classify",
    "toolgate.tools.bash",
    "toolgate.tools.read",
    "toolgate.tools.web_fetch",
)


def test_initialize_is_answered_before_the_heavy_modules_are_imported(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "storage")], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["answer"]["id"] == 1 and "capabilities" in report["answer"]["result"], report["answer"]
    imported = set(report["modules"])
    assert "toolgate.sidecar.server" in imported  # the probe did reach the real server
    early = sorted(name for name in LATER if name in imported)
    assert early == [], f"imported before initialize was answered: {early}"
    # The server the editor talks to is pygls's, with lsprotocol's types (`import lsprotocol.types` is most of the
    # floor `make bench` measures start-up against).
    assert {"pygls.lsp.server", "lsprotocol.types", "toolgate.sidecar.lsp_protocol"} <= imported


def test_initialize_builds_only_the_models_it_validates(tmp_path: Path) -> None:
    # Building a pydantic model's validator costs about a millisecond; the serve path defines about a hundred.
    # Each is built on first use (`defer_build`), so initialize pays only for its own options (lsprotocol's
    # attrs classes carry the LSP params).
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "storage")], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    built = json.loads(done.stdout)["built"]
    assert set(built) <= {"InitializationOptions"}, built


def test_every_module_named_as_later_exists() -> None:
    # A renamed module would make the check above pass without checking anything.
    assert [name for name in LATER if importlib.util.find_spec(name) is None] == []


def test_a_ping_is_answered_without_importing_the_session_machinery(tmp_path: Path) -> None:
    # Every request catches SessionError; defined with the heavy sessions module, catching it imported that module
    # (the agent loop, the permission engine) on the first request of any kind.
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "storage"), "ping"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    after = set(json.loads(done.stdout)["after"])
    assert "toolgate.sidecar.server" in after
    assert sorted(name for name in LATER if name in after) == []


# Imported by the first call that needs them, not when a session opens (a session opens on the first message).
FIRST_USE = ("pypdf", "pypdfium2", "PIL", "bs4", "markdownify", "httpx2", "httpcore2")


def test_opening_a_session_leaves_the_pdf_image_html_and_http_libraries_for_their_first_use(tmp_path: Path) -> None:
    storage = tmp_path / "storage"
    storage.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(storage), "session"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    after = set(report["after"])
    assert "toolgate.sidecar.editor_sessions" in after and "toolgate.tools.read" in after, report["answer2"]
    assert sorted(name for name in FIRST_USE if name in after) == []
