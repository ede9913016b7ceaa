"""The sidecar: serves the toolgate protocol to the editor over stdio (JSON-RPC 2.0, LSP framing and lifecycle).

Every custom handler is `async def` and runs on the event loop; a handler that needs the editor (an
approval, a diff review) awaits its answer there. Nothing blocks a worker thread on the client.

Params of custom methods reach the handlers as raw JSON (see `wire_converter`) and are validated into the
protocol models; results leave as plain JSON objects. A handler that raises becomes a JSON-RPC error and
the server keeps serving.

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

from pydantic import ValidationError

from toolgate import __version__
from toolgate.core.permission import PermissionMode
from toolgate.session_files import SessionError, default_data_root
from toolgate.sidecar import protocol as p
from toolgate.sidecar import protocol_lsp as lsp
from toolgate.sidecar.approvals import EditorApprover
from toolgate.sidecar.checkpoints import checkpoint_handlers, forget_checkpoints
from toolgate.sidecar.documents import EditorDocuments
from toolgate.sidecar.endpoint import Endpoint
from toolgate.sidecar.mcp_handlers import mcp_handlers
from toolgate.sidecar.protocol_documents import DOCUMENT_NOTIFICATIONS
from toolgate.sidecar.rpc import EditorChannel
from toolgate.sidecar.rpc_errors import (
    InvalidParamsError,
    InvalidRequestError,
    NotInitializedError,
)
from toolgate.sidecar.transport import LockedWriter, open_reader, read_messages
from toolgate.sidecar.warm_up import SESSION_MODULES, importing, warm_up
from toolgate.text.uris import file_uri_to_path
from toolgate.tools import builtin_tools

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


class ToolgateServer:
    def __init__(
        self,
        tools: Callable[[], Sequence[AnyTool]] = builtin_tools,
        data_root: Path | None = None,
        trust_workspaces: bool = False,
    ) -> None:
        self.endpoint = Endpoint()
        self.tools_factory = tools
        self.data_root = data_root
        # True when the editor vouches for every workspace it opens (VS Code's Workspace Trust); otherwise each
        # is trusted only as the user settings' trustedWorkspaces say.
        self.trust_workspaces = trust_workspaces
        self.documents = EditorDocuments()
        self.channel = EditorChannel(self.endpoint)
        self.approver = EditorApprover(self.channel)
        self.workspace_folders: list[Path] = []
        # Set by initialize; the session manager over it is built (and its imports paid) on first use.
        self._storage_root: Path | None = None
        self._sessions: SessionManager | None = None
        self._turns: set[asyncio.Future[Any]] = set()
        self._initialized = asyncio.Event()
        # Set by the `exit` notification: the status the process ends with (LSP: 0 after shutdown, else 1).
        self.exit_status: int | None = None
        self._register_lifecycle()
        self._register_documents()
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
                raise NotInitializedError(f"{name} needs the initialize request first")
            try:
                params = p.parse_params(name, params_model, raw)
                return (await handler(params)).wire()
            except p.InvalidParams as exc:
                raise InvalidParamsError(str(exc), data={"errors": exc.errors}) from None
            except SessionError as exc:
                raise InvalidParamsError(str(exc)) from None
            # Anything else is a bug of ours: the endpoint logs it and answers it as an internal error.

        self.endpoint.on_request(name, serve)

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
            p.SETTINGS_ADD_RULE: self._settings_add_rule,
            p.SETTINGS_REMOVE_RULE: self._settings_remove_rule,
            p.PERMISSIONS_CHECK: self._permissions_check,
            p.PROVIDER_CONFIGURE: self._provider_configure,
            p.PROVIDER_STATUS: self._provider_status,
            p.CHAT_SEND: self._chat_send,
            p.CHAT_INTERRUPT: self._chat_interrupt,
            p.CHAT_HISTORY: self._chat_history,
            p.CHAT_COMPACT: self._chat_compact,
            **checkpoint_handlers(lambda session_id: self.sessions.get(session_id), self.documents.is_dirty),
            **mcp_handlers(lambda session_id: self.sessions.get(session_id).runtime, self.endpoint.notify),
        }

    def _register_lifecycle(self) -> None:
        self.endpoint.on_request(lsp.INITIALIZE, self._initialize)
        self.endpoint.on_request(lsp.SHUTDOWN, self._shutdown)
        self.endpoint.on_notification(lsp.INITIALIZED, lambda _params: None)
        self.endpoint.on_notification(lsp.EXIT, self._exit)

    def _initialize(self, raw: Any) -> dict[str, Any]:
        answer = {"capabilities": lsp.server_capabilities(), "serverInfo": {"name": "toolgate", "version": __version__}}
        if self._storage_root is not None:
            logger.warning("a second initialize request was ignored; the first one's settings stay")
            return answer
        try:
            params = lsp.InitializeParams.from_wire(raw if raw is not None else {})
            options = p.InitializationOptions.from_wire(params.initialization_options or {})
        except ValidationError as exc:
            raise InvalidParamsError(f"Invalid initialize params: {exc}") from None
        self.channel.answer_timeout = options.editor_answer_timeout_seconds
        root = Path(options.storage_dir) if options.storage_dir else (self.data_root or default_data_root())
        self.workspace_folders = [Path(path) for uri in params.folder_uris() if (path := file_uri_to_path(uri))]
        self._storage_root = root
        self._initialized.set()
        logger.info("serving sessions under %s; workspace folders: %s", root, self.workspace_folders)
        return answer

    def _shutdown(self, _params: Any) -> None:
        self.endpoint.refusing = "The server is shutting down."

    def _exit(self, _params: Any) -> None:
        self.exit_status = 0 if self.endpoint.refusing is not None else 1

    def _register_documents(self) -> None:
        for method in DOCUMENT_NOTIFICATIONS:
            self.endpoint.on_notification(method, functools.partial(self.documents.handle, method))

    # --- sessions ---------------------------------------------------------------------------------------------
    @property
    def sessions(self) -> SessionManager:
        if self._sessions is None:
            if self._storage_root is None:
                raise NotInitializedError("the server has not been initialized")
            from toolgate.session_files import SessionFiles
            from toolgate.sidecar.editor_sessions import SessionManager

            self._sessions = SessionManager(SessionFiles(self._storage_root), self._build_runtime)
        return self._sessions

    @functools.cached_property
    def chats(self) -> ChatHost:
        from toolgate.sidecar.chat import ChatHost

        return ChatHost(lambda: self.sessions, self.endpoint.notify)

    def _build_runtime(self, meta: SessionMeta, directory: Path) -> Runtime:
        from toolgate.core.documents import OPEN_DOCUMENTS
        from toolgate.mcp.session import McpOptions
        from toolgate.runtime import RuntimeOptions, build_runtime
        from toolgate.sandbox.settings import SandboxRequest

        return build_runtime(
            Path(meta.workspace),
            self.approver,
            RuntimeOptions(
                mode=meta.mode,
                tools=list(self.tools_factory()),
                session_id=meta.id,
                data_dir=directory,
                trust_workspace=True if self.trust_workspaces else None,
                review_edits=meta.review_edits,
                progress=[self._send_progress],
                dependencies={OPEN_DOCUMENTS: self.documents},
                # Opt-in in the editor: the stand-ins for absent protected directories (.vscode, .toolgate, .git, …) are
                # empty directories in the workspace while the session lives, which the explorer shows.
                sandbox=SandboxRequest(default="off"),
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
        self.endpoint.notify(p.TOOLS_PROGRESS, progress.wire())

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
        # The turn runs as its own task, so that cancelling this request interrupts the tools through the
        # token instead of tearing the turn down: the orchestrator still answers every call.
        results = await self._finish_despite_cancel(live.run_tools(params.calls, token), token.cancel, "tools/run")
        return p.ToolsRunResult(results=results)

    async def _finish_despite_cancel(self, work: Awaitable[T], interrupt: Callable[[], object], what: str) -> T:
        """Await `work` in its own task. Cancelling this request (`$/cancelRequest`) calls `interrupt` instead of
        tearing the work down, so it still answers in full (every tool call gets its result)."""
        task = asyncio.ensure_future(work)
        self._turns.add(task)
        task.add_done_callback(self._turns.discard)
        while True:
            try:
                return await asyncio.shield(task)
            except asyncio.CancelledError:
                logger.info("%s cancelled by the client; interrupting it", what)
                interrupt()
                current = asyncio.current_task()
                if current is not None:
                    current.uncancel()

    async def _settings_add_rule(self, params: p.RuleChangeParams) -> p.RuleChangeResult:
        return await self._change_rule(params, add=True)

    async def _settings_remove_rule(self, params: p.RuleChangeParams) -> p.RuleChangeResult:
        return await self._change_rule(params, add=False)

    async def _change_rule(self, params: p.RuleChangeParams, *, add: bool) -> p.RuleChangeResult:
        from toolgate.agent.decisions import RecordingApprover, SavedRule
        from toolgate.permissions.edit_rules import add_rule, remove_rule
        from toolgate.permissions.rules import RuleError
        from toolgate.permissions.settings import SettingsError

        live = self.sessions.get(params.session_id)
        change_rule = add_rule if add else remove_rule
        try:
            change = change_rule(live.runtime.permissions, params.rule, params.scope, params.behavior)
        except (RuleError, SettingsError) as exc:
            raise InvalidParamsError(f"The rule {params.rule!r} was not changed: {exc}") from None
        # An edited "always allow" rule may not match the call it was written for; the person should know.
        covers = None if params.call is None else await live.runtime.check(params.call.tool, params.call.input)
        covered = None if covers is None else covers.decision == "allow"
        if add and params.call is not None and isinstance(approver := live.runtime.session.approver, RecordingApprover):
            saved = SavedRule(rule=params.rule, scope=params.scope, covers_call=covered)
            approver.rule_saved(params.call.tool, params.call.input, saved)  # for the session's record
        return p.RuleChangeResult(
            changed=change.changed,
            file=change.file,
            warnings=change.warnings,
            covers_call=covered,
            settings=live.settings(),
        )

    async def _permissions_check(self, params: p.PermissionCheckParams) -> p.PermissionCheckResult:
        from toolgate.permissions.rules import RuleError

        live = self.sessions.get(params.session_id)
        try:
            result = await live.runtime.check(params.tool, params.input, with_allow=params.with_allow)
        except RuleError as exc:
            raise InvalidParamsError(f"The rule {params.with_allow!r} cannot be used: {exc}") from None
        return p.PermissionCheckResult.model_validate(result.model_dump())

    # --- chat ------------------------------------------------------------------------------------------------
    async def _provider_configure(self, params: p.ProviderConfigureParams) -> p.ProviderStatus:
        return self.chats.configure(params)

    async def _provider_status(self, params: p.Empty) -> p.ProviderStatus:
        return self.chats.status()

    async def _chat_send(self, params: p.ChatSendParams) -> p.ChatSendResult:
        from toolgate.agent.loop import ChatBusy

        live = self.sessions.get(params.session_id)
        chat = self.chats.chat_for(live)
        try:
            stop = await self._finish_despite_cancel(live.chat_send(chat, params.text), chat.interrupt, "chat/send")
        except ChatBusy as exc:
            raise InvalidRequestError(str(exc)) from None
        return p.ChatSendResult(stop_reason=stop)

    async def _chat_compact(self, params: p.ChatCompactParams) -> p.ChatCompactResult:
        live = self.sessions.get(params.session_id)
        chat = self.chats.chat_for(live)
        async with live.between_turns():  # refused while a turn runs, like a rewind
            return p.ChatCompactResult(compacted=await chat.compact(params.focus))

    async def _chat_interrupt(self, params: p.SessionRef) -> p.ChatInterruptResult:
        live = self.sessions.get(params.session_id)
        return p.ChatInterruptResult(interrupted=live.chat.interrupt() if live.chat is not None else False)

    async def _chat_history(self, params: p.SessionRef) -> p.ChatHistoryResult:
        return self.chats.history(self.sessions.get(params.session_id))

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
        from toolgate.agent.decisions import RecordingApprover

        live = self.sessions.get(params.session_id)
        live.set_mode(params.mode)
        approver = live.runtime.session.approver
        if params.tool_use_id is not None and params.mode == "acceptEdits" and isinstance(approver, RecordingApprover):
            approver.accepting_edits(params.tool_use_id)  # for the session's record
        return live.settings()

    async def _settings_set_review_edits(self, params: p.SetReviewEditsParams) -> p.Settings:
        live = self.sessions.get(params.session_id)
        live.set_review_edits(params.review_edits)
        return live.settings()

    # --- serving --------------------------------------------------------------------------------------------------
    async def serve_stdio(self, stdin: BinaryIO, stdout: BinaryIO) -> int:
        """Serve until end of input, `exit`, SIGTERM or SIGINT; then close every session. Returns the exit status."""
        self.endpoint.set_writer(LockedWriter(stdout))
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
        steps = [*importing(SESSION_MODULES), self.tools_factory]
        await warm_up(lambda: self._sessions is None and not self.endpoint.busy, steps)

    async def _serve_messages(self, reader: asyncio.StreamReader) -> int:
        async for body in read_messages(reader):
            self.endpoint.receive(body)
            if self.exit_status is not None:
                logger.info("exit received; shutting down")
                return self.exit_status
        logger.warning("the client closed the connection without `exit`; shutting down")
        return 0

    async def aclose(self) -> None:
        """The client is gone: pending questions are answered "no", turns are interrupted, sessions closed."""
        self.channel.close()
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
