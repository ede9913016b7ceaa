"""The sidecar: a pygls language server that serves the toolgate protocol to the editor over stdio.

Every custom handler is `async def` and runs on the event loop; a handler that needs the editor (an
approval, a diff review) awaits its answer there. Nothing blocks a worker thread on the client.

Each toolgate method is a pygls feature. Its params reach the handler as raw JSON (see `wire_converter`) and are
validated into the protocol models; results leave as plain JSON objects. A handler that raises becomes a JSON-RPC
error and the server keeps serving. `lsp_protocol.ToolgateProtocol` holds what toolgate adds to pygls.

Start-up is on every editor window's critical path, so this module imports only what `initialize` needs:
the sessions, chats, runtime, tools and permission engine (and through them bashlex, PDF and image
libraries, httpx, the model providers) are imported when the first request that uses them arrives.
tests/unit/sidecar/test_lazy_start.py keeps it that way.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import signal
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

from lsprotocol import types
from pydantic import ValidationError
from pygls.exceptions import (
    FeatureRequestError,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcServerNotInitialized,
)
from pygls.lsp.server import LanguageServer

from toolgate import __version__
from toolgate.core.permission import PermissionMode
from toolgate.session_files import SessionError, default_data_root
from toolgate.sidecar import protocol as p
from toolgate.sidecar.approvals import EditorApprover
from toolgate.sidecar.changes_handlers import changes_handlers
from toolgate.sidecar.chat_handlers import chat_handlers
from toolgate.sidecar.checkpoints import checkpoint_handlers, forget_checkpoints
from toolgate.sidecar.composer_handlers import composer_handlers
from toolgate.sidecar.documents import EditorDocuments
from toolgate.sidecar.editor_intel import EditorIntel
from toolgate.sidecar.hooks_handlers import hooks_handlers
from toolgate.sidecar.lsp_protocol import ToolgateProtocol, wire_converter
from toolgate.sidecar.mcp_handlers import mcp_handlers
from toolgate.sidecar.rpc import EditorChannel
from toolgate.sidecar.rules_handlers import rules_handlers
from toolgate.sidecar.sessions_handlers import sessions_handlers
from toolgate.sidecar.stand_ins import watch_stand_ins
from toolgate.sidecar.transport import LockedWriter, open_reader, read_messages
from toolgate.sidecar.warm_up import SESSION_MODELS, SESSION_MODULES, building, importing, warm_up
from toolgate.sidecar.workspace_events import changed_folders, notebook_sources
from toolgate.text.uris import file_uri_to_path
from toolgate.tools import builtin_tools, editor_tools

if TYPE_CHECKING:
    from toolgate.core.tool import AnyTool
    from toolgate.core.tool_session import ProgressEvent
    from toolgate.runtime import Runtime
    from toolgate.session_files import SessionMeta
    from toolgate.sidecar.chat import ChatHost
    from toolgate.sidecar.editor_sessions import SessionManager

logger = logging.getLogger("toolgate.sidecar")
T = TypeVar("T")

Handler = Callable[[Any], Awaitable[p.WireModel]]


class ToolgateServer(LanguageServer):
    """pygls's LanguageServer (not JsonRPCServer plus a lifecycle of our own: initialize, shutdown, capabilities,
    position encodings, workspace folders and notebook sync are what LanguageServer already does right)."""

    protocol: ToolgateProtocol

    def __init__(
        self,
        tools: Callable[[], Sequence[AnyTool]] = builtin_tools,
        data_root: Path | None = None,
        trust_workspaces: bool = False,
    ) -> None:
        super().__init__(
            "toolgate",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            # Jupyter notebooks open in the notebook editor, so that NotebookEdit refuses one with unsaved changes.
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[types.NotebookDocumentFilterWithNotebook(notebook="jupyter-notebook")], save=True
            ),
            protocol_cls=ToolgateProtocol,
            converter_factory=wire_converter,
        )
        self.tools_factory = tools
        self.data_root = data_root
        # True when the editor vouches for every workspace it opens (VS Code's Workspace Trust); otherwise each
        # is trusted only as the user settings' trustedWorkspaces say.
        self.trust_workspaces = trust_workspaces
        self.documents = EditorDocuments()
        self.channel = EditorChannel(self.protocol)
        self.approver = EditorApprover(self.channel)
        self.intel = EditorIntel(self.channel)
        self.workspace_folders: list[Path] = []
        # Set at initialize: whether the editor answers toolgate/editor/problems (sidecar/problems.py).
        self.editor_problems = False
        # Set by initialize; the session manager over it is built (and its imports paid) on first use.
        self._storage_root: Path | None = None
        self._sessions: SessionManager | None = None
        self._turns: set[asyncio.Future[Any]] = set()
        self._unwatch_stand_ins: Callable[[], None] | None = None
        self._initialized = asyncio.Event()
        # Set by the `exit` notification: the status the process ends with (LSP: 0 after shutdown, else 1).
        self.exit_status: int | None = None
        self._register_lsp_features()
        for name, handler in self._handlers().items():
            self.add_method(name, handler)

    # --- registration -------------------------------------------------------------------------------------
    def add_method(self, name: str, handler: Handler, spec: p.Method | None = None) -> None:
        """Serve a method from `protocol.METHODS`: params validated in, result dumped out, errors mapped."""
        spec = spec or p.METHODS_BY_NAME[name]
        if spec.direction != "clientToServer" or spec.result is None:
            raise ValueError(f"{name} is not a request the client sends")

        params_model = spec.params

        async def serve(raw: Any) -> Any:
            if self._storage_root is None:
                raise JsonRpcServerNotInitialized(message=f"{name} needs the initialize request first")
            try:
                params = p.parse_params(name, params_model, raw)
                return (await handler(params)).wire_answer()
            except p.InvalidParams as exc:
                raise JsonRpcInvalidParams(message=str(exc), data={"errors": exc.errors}) from None
            except SessionError as exc:
                raise JsonRpcInvalidParams(message=str(exc)) from None
            except JsonRpcException:
                raise
            except Exception as exc:
                # A bug of ours: the traceback goes to the log, the words to the client.
                logger.exception("%s failed", name)
                raise JsonRpcInternalError(message=f"{name} failed: {type(exc).__name__}: {exc}") from None

        self.feature(name)(serve)

    def _handlers(self) -> dict[str, Handler]:
        return {
            p.PING: self._ping,
            p.TOOLS_LIST: self._tools_list,
            p.TOOLS_RUN: self._tools_run,
            p.SESSION_NEW: self._session_new,
            p.SESSION_LIST: self._session_list,
            p.SESSION_LOAD: self._session_load,
            p.SESSION_DELETE: self._session_delete,
            p.SETTINGS_GET: self._settings_get,
            p.SETTINGS_SET_MODE: self._settings_set_mode,
            p.SETTINGS_SET_REVIEW_EDITS: self._settings_set_review_edits,
            **chat_handlers(lambda: self.sessions, lambda: self.chats, self.documents, self._finish_despite_cancel),
            **checkpoint_handlers(lambda session_id: self.sessions.get(session_id), self.documents.is_dirty),
            **mcp_handlers(lambda session_id: self.sessions.get(session_id).runtime, self.protocol.notify),
            **hooks_handlers(lambda session_id: self.sessions.get(session_id).runtime),
            **rules_handlers(lambda session_id: self.sessions.get(session_id)),
            **sessions_handlers(lambda: self.sessions),
            **composer_handlers(lambda: self.chats),
            **changes_handlers(lambda session_id: self.sessions.get(session_id), self.documents.is_dirty),
        }

    def _register_lsp_features(self) -> None:
        # pygls runs each of these after its own handling of the same message (its workspace already updated). It
        # marks what it registers, which a bound method cannot take: each is registered as a function of its own.
        self.feature(types.INITIALIZE)(lambda params: self._initialize(params))
        self.feature(types.SHUTDOWN)(lambda _params: None)  # pygls's own sets `_shutdown`; the protocol refuses
        self.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))(
            lambda params: self.documents.saved(params.text_document.uri, params.text)
        )
        self.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(lambda params: self._folders_changed(params.event))
        for method, how in ((types.NOTEBOOK_DOCUMENT_DID_OPEN, "opened"), (types.NOTEBOOK_DOCUMENT_DID_SAVE, "saved")):
            self.feature(method)(lambda params, how=how: self._notebook_synced(params, **{how: True}))
        self.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)(lambda params: self._notebook_synced(params))
        self.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)(
            lambda params: self.documents.notebook_closed(params.notebook_document.uri)
        )

    def _notebook_synced(self, params: Any, *, opened: bool = False, saved: bool = False) -> None:
        uri = params.notebook_document.uri
        self.documents.notebook_synced(uri, notebook_sources(self.workspace, uri), opened=opened, saved=saved)

    def _folders_changed(self, event: types.WorkspaceFoldersChangeEvent) -> None:
        """Folders added to the editor's workspace are working directories of sessions opened from now on. An open
        session keeps its own (its permissions do not grow under it): it is told, with the next message."""
        self.workspace_folders, notice = changed_folders(self.workspace_folders, event)
        logger.info("workspace folders: %s", self.workspace_folders)
        if notice is not None and self._sessions is not None:
            for live in self._sessions.open_sessions():
                live.tell(notice)

    def _initialize(self, params: types.InitializeParams) -> None:
        if self._storage_root is not None:
            logger.warning("a second initialize request was ignored; the first one's settings stay")
            return
        try:
            options = p.InitializationOptions.from_wire(params.initialization_options or {})
        except ValidationError as exc:
            raise JsonRpcInvalidParams(message=f"Invalid initialize params: {exc}") from None
        self.channel.answer_timeout = options.editor_answer_timeout_seconds
        self.editor_problems = options.editor_problems
        root = Path(options.storage_dir) if options.storage_dir else (self.data_root or default_data_root())
        folders = [f.uri for f in params.workspace_folders or []] or ([params.root_uri] if params.root_uri else [])
        self.workspace_folders = [Path(path) for uri in folders if (path := file_uri_to_path(uri))]
        self._storage_root = root
        self._unwatch_stand_ins = watch_stand_ins(self.protocol.notify)
        self._initialized.set()
        logger.info("serving sessions under %s; workspace folders: %s", root, self.workspace_folders)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls would show these in the editor as pop-ups (window/showMessage). A request's error is in its
        # answer already; anything else belongs in the log (stderr), which is the editor's output channel.
        if source is not FeatureRequestError:
            logger.error("%s: %s", getattr(source, "__name__", source), error)

    # --- sessions ---------------------------------------------------------------------------------------------
    @property
    def sessions(self) -> SessionManager:
        if self._sessions is None:
            if self._storage_root is None:
                raise JsonRpcServerNotInitialized(message="the server has not been initialized")
            from toolgate.session_files import SessionFiles
            from toolgate.sidecar.editor_sessions import SessionManager

            self._sessions = SessionManager(SessionFiles(self._storage_root), self._build_runtime)
        return self._sessions

    @functools.cached_property
    def chats(self) -> ChatHost:
        from toolgate.sidecar.chat import ChatHost

        return ChatHost(lambda: self.sessions, self.protocol.notify)

    def _build_runtime(self, meta: SessionMeta, directory: Path) -> Runtime:
        from toolgate.core.code_intel import CODE_INTEL
        from toolgate.core.documents import OPEN_DOCUMENTS
        from toolgate.mcp.session import McpOptions
        from toolgate.runtime import RuntimeOptions, build_runtime
        from toolgate.sandbox.settings import SandboxRequest
        from toolgate.sidecar.problems import problems_dependencies

        editor: dict[Any, Any] = problems_dependencies(self.channel) if self.editor_problems else {}
        self.intel.attach()
        return build_runtime(
            Path(meta.workspace),
            self.approver,
            RuntimeOptions(
                mode=meta.mode,
                # The editor's other workspace folders are working directories too (multi-root workspaces).
                additional_dirs=[folder for folder in self.workspace_folders if folder != Path(meta.workspace)],
                # The editor's problems and language features: editor sessions only.
                tools=[*self.tools_factory(), *(editor_tools() if self.editor_problems else ()), *self.intel.tools()],
                session_id=meta.id,
                data_dir=directory,
                trust_workspace=True if self.trust_workspaces else None,
                review_edits=meta.review_edits,
                progress=[self._send_progress],
                dependencies={OPEN_DOCUMENTS: self.documents, CODE_INTEL: self.intel, **editor},
                # On by default, as on the command line: the stand-ins it makes in the workspace while commands run
                # are marked in the Explorer (`toolgate/sandbox/standIns`), and read-only commands need none.
                sandbox=SandboxRequest(),
                checkpoints_root=self._storage_root,
                # The approvals are the CLI's (`toolgate mcp approve`), not kept per editor storage directory.
                mcp=McpOptions(
                    data_dir=self._storage_root,
                    approvals_root=self.data_root or default_data_root(),
                    trust_workspace=True if self.trust_workspaces else None,
                ),
            ),
        )

    def _send_progress(self, event: ProgressEvent) -> None:
        # May be called from a worker thread: the writer is locked, and notify touches no other state.
        progress = p.ToolProgress(
            session_id=event.session_id, tool_use_id=event.tool_use_id, kind=event.kind, text=event.text
        )
        self.protocol.notify(p.TOOLS_PROGRESS, progress.wire())

    # --- handlers -------------------------------------------------------------------------------------------------
    async def _ping(self, params: p.Empty) -> p.Empty:
        return p.Empty()

    async def _tools_list(self, params: p.ToolsListParams) -> p.ToolsListResult:
        if params.session_id is not None:
            runner = self.sessions.get(params.session_id).runtime.runner
            return p.ToolsListResult(tools=runner.registry.definitions(runner.describe_context()))
        from toolgate.core.registry import ToolRegistry
        from toolgate.core.tool import DescribeContext

        registry = ToolRegistry(self.tools_factory())
        workspace = self.workspace_folders[0] if self.workspace_folders else Path.cwd()
        context = DescribeContext(frozenset(registry.names), PermissionMode.DEFAULT, workspace)
        return p.ToolsListResult(tools=registry.definitions(context))

    async def _tools_run(self, params: p.ToolsRunParams) -> p.ToolsRunResult:
        from toolgate.core.orchestrator import CancelToken

        live = self.sessions.get(params.session_id)
        token = CancelToken()
        # Cancelling this request interrupts the tools through the token instead of tearing the turn down: the
        # orchestrator still answers every call.
        results = await self._finish_despite_cancel(live.run_tools(params.calls, token), token.cancel, "tools/run")
        # The orchestrator's results are ToolResult models already: validating the list again only copies it.
        return p.ToolsRunResult.model_construct(results=results)

    async def _finish_despite_cancel(self, work: Awaitable[T], interrupt: Callable[[], object], what: str) -> T:
        """Await `work` in this request's task. Cancelling the request (`$/cancelRequest`, `shutdown`) calls
        `interrupt` instead of tearing the work down, so it still answers in full (every tool call gets its
        result); closing the server waits for it."""
        task = asyncio.current_task()
        assert task is not None
        self._turns.add(task)
        try:
            with self.protocol.interrupting(interrupt, what):
                return await work
        finally:
            self._turns.discard(task)

    async def _session_new(self, params: p.SessionNewParams) -> p.SessionInfo:
        default = self.workspace_folders[0] if self.workspace_folders else None
        return self.sessions.create(params, default).info()

    async def _session_list(self, params: p.Empty) -> p.SessionListResult:
        return p.SessionListResult(sessions=self.sessions.list())

    async def _session_load(self, params: p.SessionRef) -> p.SessionInfo:
        return self.sessions.load(params.session_id).info()

    async def _session_delete(self, params: p.SessionRef) -> p.Empty:
        await self.sessions.delete(params.session_id)
        if self._storage_root is not None:
            forget_checkpoints(self._storage_root, params.session_id)
        return p.Empty()

    async def _settings_get(self, params: p.SessionRef) -> p.Settings:
        return self.sessions.get(params.session_id).settings()

    async def _settings_set_mode(self, params: p.SetModeParams) -> p.Settings:
        live = self.sessions.get(params.session_id)
        live.set_mode(params.mode)
        if params.tool_use_id is not None and params.mode is PermissionMode.ACCEPT_EDITS:
            live.runtime.session.decisions.accepting_edits(params.tool_use_id)  # for the session's record
        return live.settings()

    async def _settings_set_review_edits(self, params: p.SetReviewEditsParams) -> p.Settings:
        live = self.sessions.get(params.session_id)
        live.set_review_edits(params.review_edits)
        return live.settings()

    # --- serving --------------------------------------------------------------------------------------------------
    async def serve_stdio(self, stdin: BinaryIO, stdout: BinaryIO) -> int:
        """Serve until end of input, `exit`, SIGTERM or SIGINT; then close every session. Returns the exit status."""
        # pygls's own io loop (`run_async`) is not used: it cannot resynchronise after input it cannot frame, and
        # has no size cap (`transport` does both); each body goes to the protocol's `receive`.
        self.protocol.set_writer(LockedWriter(stdout))
        reader = await open_reader(stdin)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        handled: list[signal.Signals] = []
        for signum in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(signum, stop.set)
                handled.append(signum)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
                pass
        serving = asyncio.ensure_future(self._serve_messages(reader))
        stopping = asyncio.ensure_future(stop.wait())
        warming = asyncio.ensure_future(self._warm_up())
        try:
            await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if serving.done():
                status = serving.result()
            else:
                logger.warning("stopped by a signal; shutting down")
                serving.cancel()
                status = 0
        finally:
            stopping.cancel()
            warming.cancel()
            for signum in handled:
                loop.remove_signal_handler(signum)
            await self.aclose()
        return status

    async def _warm_up(self) -> None:
        """Once initialized, import what the first session needs while nothing else goes on (`warm_up`)."""
        await self._initialized.wait()
        # Building the tools imports every tool module (tools/__init__ knows which); it is what a session does first.
        steps = [*importing(SESSION_MODULES), self.tools_factory, *building(SESSION_MODELS)]
        await warm_up(lambda: self._sessions is None and not self.protocol.busy, steps)

    async def _serve_messages(self, reader: asyncio.StreamReader) -> int:
        async for body in read_messages(reader):
            self.protocol.receive(body)
            if self.exit_status is not None:
                logger.info("exit received; shutting down")
                return self.exit_status
        logger.warning("the client closed the connection without `exit`; shutting down")
        return 0

    async def aclose(self) -> None:
        """The client is gone: pending questions are answered "no", turns are interrupted, sessions closed."""
        self.channel.close()
        if self._unwatch_stand_ins is not None:
            self._unwatch_stand_ins()
        if self._sessions is None:
            return
        with contextlib.suppress(TimeoutError):  # the questions end as "no" first; then the turns are interrupted
            async with asyncio.timeout(1.0):
                await self.channel.settle()
        from toolgate.sidecar.editor_sessions import CLOSE_GRACE_SECONDS

        self._sessions.cancel_all_turns()
        if self._turns:
            # Running turns get as long to answer after the client went away as a closing session gives them.
            await asyncio.wait(set(self._turns), timeout=CLOSE_GRACE_SECONDS)
        await self._sessions.close_all()
