"""The session's sandbox: its settings, whether it can run here, and where each Bash command runs.

One per session (a `Dep`). It decides once per session whether the backend works (a probe, cached), and keeps
one resident sandbox (resident.py) per profile (writable working directories, or read-only: for commands allowed
because they only read, and for every command in plan mode) that its commands run in for as long as the policy
holds: the same settings,
working directories and PATH, and the same answers from the file system for every path the plan looked at (what
exists among the protected paths). When any of that changes, the next command gets a new sandbox; the old one
ends when its last command did. An idle one ends after `idle_s`. The empty directories made as mount points for
absent protected paths (placeholders.py) live as long as the sandbox that mounts on them: removing a mount point
in use would lift that mount inside it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from toolgate.core.containment import HookPlace
from toolgate.core.deps import Dep
from toolgate.core.errors import StateError
from toolgate.permissions.safety import git_hooks_dirs
from toolgate.sandbox import ledger, placeholders
from toolgate.sandbox.backend import SandboxBackend, detect_backend, path_kind
from toolgate.sandbox.egress import network_rule_spec
from toolgate.sandbox.hook_place import SandboxHookPlace
from toolgate.sandbox.machine import case_variants_at, forwarder_python, plan_roots, tool_dirs
from toolgate.sandbox.policy import Kind, SandboxPlan, SandboxPolicy
from toolgate.sandbox.proxy import PROXY_PORT, Channel, EgressProxy, describe_refusals, proxy_env
from toolgate.sandbox.resident import (
    AsyncResidentProcess,
    Lease,
    Resident,
    ResidentProcess,
    open_process,
    start_background,
)

Enabled = Literal["auto", "on", "off"]
_FORWARDER = Path(__file__).with_name("forwarder.py")
# A resident sandbox no command used for this long ends, and its stand-ins go a moment later. Starting one costs
# a command about 0.1 s (bwrap, the runner's python), so it outlives the pause between a model's turns; the
# stand-ins stay in the workspace meanwhile.
IDLE_S = 10.0


class SandboxSettings(BaseModel):
    """The `sandbox` object of a settings file (and `--sandbox` on the command line)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)

    enabled: Enabled = "auto"
    auto_allow: bool = Field(default=True, alias="autoAllow")
    writable: list[str] = Field(default_factory=list, description="Extra writable directories.")
    hidden: list[str] = Field(default_factory=list, description="Extra paths the sandbox does not show.")
    network: list[str] = Field(
        default_factory=list,
        description="Network(domain:host) rules: the hosts commands may reach, through the sandbox's proxy.",
    )


@dataclass(frozen=True, slots=True)
class SandboxState:
    active: bool  # commands run inside the sandbox
    auto_allow: bool  # the ladder may allow on its account (active and autoAllow)
    backend: str
    detail: str  # why it is off or unavailable, or which bwrap runs it
    network: tuple[str, ...] = ()  # the Network rules its proxy allows (none: no network at all)
    status: Literal["on", "off", "unavailable"] = "on"  # "off": by the settings; "unavailable": cannot run here

    def describe(self) -> str:
        if self.active:
            allow = "on" if self.auto_allow else "off"
            net = f"network through its proxy to {', '.join(self.network)}" if self.network else "network off"
            return f"on ({self.backend}, {self.detail}); autoAllow {allow}; {net}"
        return f"off: {self.detail}"


@dataclass(frozen=True, slots=True)
class Launch:
    prefix: tuple[str, ...]  # what runs bash (in the sandbox: the network forwarder, with Network rules)
    note: str | None  # for the result when it is not sandboxed although asked to be
    env: dict[str, str] = field(default_factory=dict)  # the proxy variables, with Network rules
    channel: Channel | None = None  # this command's socket into the egress proxy
    lease: Lease | None = None  # its hold on the resident sandbox it runs in (None: it runs without one)
    read_only: bool = False  # it runs where nothing is writable (only with a lease)

    @property
    def sandboxed(self) -> bool:
        return self.lease is not None

    @property
    def spawn(self) -> Callable[[Sequence[str], Path, Mapping[str, str]], Awaitable[AsyncResidentProcess]] | None:
        """How the executor starts it (None: as a plain child process)."""
        lease = self.lease
        if lease is None:
            return None
        return lambda argv, cwd, env: open_process(lease, argv, cwd, env)

    @property
    def spawn_background(self) -> Callable[[Sequence[str], Path, Mapping[str, str], int], ResidentProcess] | None:
        lease = self.lease
        if lease is None:
            return None
        return lambda argv, cwd, env, output: start_background(lease, argv, cwd, env, output)


@dataclass(eq=False)
class _Current:
    """A resident sandbox and what its plan was made of (to tell whether it still holds)."""

    resident: Resident
    policy: SandboxPolicy  # without stand_ins_made
    made: frozenset[Path]  # the stand-ins planned as absent
    probes: dict[Path, Kind]  # every other path the plan looked at, and what it found
    stand_ins: tuple[Path, ...]
    token: int  # its hold on the stand-ins
    idle_since: float | None = None

    @property
    def read_only(self) -> bool:
        return self.policy.read_only

    def holds(self, policy: SandboxPolicy, made: frozenset[Path], existing: Collection[Path]) -> bool:
        """`existing`: the placeholders that exist (`placeholders.in_use`, in the same hold of its LOCK)."""
        if policy != self.policy or self.resident.retired:
            return False
        for path, found in self.probes.items():
            if ("absent" if path in made else path_kind(path)) != found:
                return False
        if any(path_kind(p) != "absent" for p in self.made - made):
            return False
        return placeholders.intact(self.stand_ins, existing)


@dataclass(eq=False)
class Sandbox:
    settings: SandboxSettings = field(default_factory=SandboxSettings)
    path_env: str | None = None  # where to look for bwrap (None: this process's PATH)
    problems: list[str] = field(default_factory=list)  # settings entries that were broken or ignored
    _backend: SandboxBackend | None = None
    _empty: Path | None = None
    _proxy: EgressProxy | None = None
    _current: dict[bool, _Current] = field(default_factory=dict)  # where new commands run, by read_only
    _residents: list[_Current] = field(default_factory=list)  # every resident sandbox not ended yet
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _timer: threading.Timer | None = None
    idle_s: float = IDLE_S

    @property
    def network_specs(self) -> tuple[str, ...]:
        """The host specs of the Network rules (the settings loader dropped the unusable ones)."""
        return tuple(dict.fromkeys(network_rule_spec(rule) for rule in self.settings.network))

    @property
    def backend(self) -> SandboxBackend:
        if self._backend is None:
            self._backend = detect_backend(self.path_env)
        return self._backend

    def auto_allows(self, tool_name: str, tool_input: BaseModel) -> bool:
        """Whether this call will run in this working sandbox with autoAllow on (the ladder's sandbox step,
        through `core.containment`)."""
        if tool_name != "Bash" or getattr(tool_input, "outside_sandbox", False) is not False:
            return False
        return self.state().auto_allow

    def hook_place(self, roots: Sequence[Path], home: Path) -> HookPlace:
        """Where a hook runs (`core.containment`): in this sandbox when it is on, writable as a Bash command is.
        StateError when the sandbox should run but cannot be set up (the hook must not run outside instead)."""
        launch = self.launch(roots, home, (), outside=False)
        return SandboxHookPlace(launch, lambda: self.finish(launch))

    def state(self) -> SandboxState:
        if self.settings.enabled == "off":
            return SandboxState(
                False,
                False,
                "none",
                (
                    "turned off (sandbox.enabled is off in a settings file, or --sandbox off; set it to auto in "
                    "your user settings to turn it on)"
                ),
                status="off",
            )
        status = self.backend.status()
        if not status.available:
            return SandboxState(False, False, status.backend, status.detail, status="unavailable")
        rules = tuple(self.settings.network)
        return SandboxState(True, self.settings.auto_allow, status.backend, status.detail, rules)

    def policy(
        self,
        roots: Sequence[Path],
        home: Path,
        scratch: Sequence[Path],
        proxy_dir: Path | None = None,
        made: frozenset[Path] = frozenset(),
        *,
        read_only: bool = False,
        fixed: Sequence[Path] = (),
    ) -> SandboxPolicy:
        """`roots`: the working directories, workspace first; `scratch`: other directories commands write;
        `made`: the stand-ins that exist now (SandboxPolicy.stand_ins_made); `read_only`: nothing writable but
        the private and scratch directories; `fixed`: files in the scratch directories kept read-only."""
        writable = tuple(dict.fromkeys(plan_roots(roots)))
        hooks = tuple(Path(os.path.realpath(p)) for p in git_hooks_dirs(writable[0], home)) if writable else ()
        return SandboxPolicy(
            writable_roots=writable,
            extra_protected=hooks,
            home=Path(os.path.realpath(home)),
            empty_dir=self._stand_ins() / "empty",
            empty_file=self._stand_ins() / "empty-file",
            scratch_dirs=tuple(Path(os.path.realpath(p)) for p in scratch),
            extra_writable=tuple(Path(os.path.realpath(os.path.expanduser(p))) for p in self.settings.writable),
            extra_hidden=tuple(Path(os.path.realpath(os.path.expanduser(p))) for p in self.settings.hidden),
            proxy_dir=proxy_dir,
            tool_dirs=tool_dirs(os.environ.get("PATH", os.defpath)),
            stand_ins_made=made,
            read_only=read_only,
            fixed_files=tuple(Path(os.path.realpath(p)) for p in fixed),
            case_variants=() if read_only else case_variants_at(writable),
        )

    def plan(
        self,
        roots: Sequence[Path],
        home: Path,
        scratch: Sequence[Path],
        proxy_dir: Path | None = None,
        *,
        read_only: bool = False,
    ) -> SandboxPlan:
        return self.backend.plan(self.policy(roots, home, scratch, proxy_dir, read_only=read_only))

    def launch(
        self,
        roots: Sequence[Path],
        home: Path,
        scratch: Sequence[Path],
        *,
        outside: bool,
        read_only: bool = False,
        fixed: Sequence[Path] = (),
    ) -> Launch:
        """Where one command runs (no lease: without a sandbox), and a note for its result. `read_only`: in the
        profile where nothing is writable but the private and scratch directories (`fixed`: files in those kept
        read-only)."""
        if outside:
            return Launch((), "This command ran outside the sandbox, as approved.")
        state = self.state()
        if not state.active:
            note = None if self.settings.enabled == "off" else f"The sandbox is not running: {state.detail}."
            return Launch((), note)
        channel: Channel | None = None
        try:
            proxy_dir = None
            if self.network_specs:
                channel = self._egress().open_channel()
                proxy_dir = self._egress().directory
            profile = _Profile(roots, home, scratch, proxy_dir, read_only, fixed)
            lease = self._lease(profile)
        except (OSError, StateError) as exc:
            if channel is not None:
                self._egress().close_channel(channel)
            if isinstance(exc, StateError):
                raise
            # Fail closed: the ladder may have allowed this on the sandbox's account, so it must not run outside.
            raise StateError(
                f"The sandbox could not be set up ({exc}), so the command did not run. Fix the cause, or turn the "
                "sandbox off (sandbox.enabled: off) and let the user approve commands one by one."
            ) from None
        if channel is None:
            return Launch((), None, lease=lease, read_only=read_only)
        forwarder = (forwarder_python(), "-I", "-S", "-c", _FORWARDER.read_text(encoding="utf-8"))
        prefix = (*forwarder, str(channel.socket), str(PROXY_PORT), "--")
        return Launch(prefix, None, proxy_env(self.network_specs), channel, lease, read_only)

    def _lease(self, profile: _Profile) -> Lease:
        """A hold on the resident sandbox for this policy: the current one if it still holds, else a new one."""
        with placeholders.LOCK:  # no placeholder is removed between the plan's look and the sandbox's claim
            placeholders.sweep_once()
            # A stand-in another command made (here, or in another toolgate process, which makes this one
            # an owner too) is planned as absent: it gets its empty read-only mount again, and must outlive
            # this sandbox too. bwrap resolves every source before it mounts anything, so an absent mount
            # point must exist first: `acquire` makes the rest.
            others, foreign = set(placeholders.in_use()), ledger.foreign()
            made = frozenset(others | foreign.keys())
            policy = self.policy(
                profile.roots,
                profile.home,
                profile.scratch,
                profile.proxy_dir,
                read_only=profile.read_only,
                fixed=profile.fixed,
            )
            current = self._current.get(profile.read_only)
            if current is not None and current.holds(policy, made, others):
                lease = current.resident.lease()
                if lease is not None:
                    return lease
            probes: dict[Path, Kind] = {}

            def kinds(path: Path) -> Kind:
                probes[path] = found = path_kind(path)
                return found

            plan = self.backend.plan(replace(policy, stand_ins_made=made), kinds)
            adopt = {p: foreign[p] for p in plan.stand_ins if p in foreign and p not in others}
            token = placeholders.acquire(plan.stand_ins, adopt)
        if current is not None:
            self._let_go(current)
        try:
            resident = Resident(plan.argv, forwarder_python())
        except (OSError, StateError):
            placeholders.release(token)
            raise
        entry = _Current(resident, policy, made, probes, plan.stand_ins, token)
        resident.when_idle(lambda _r: self._idle(entry))
        lease = resident.lease()
        assert lease is not None
        with self._lock:
            self._current[entry.read_only] = entry
            self._residents.append(entry)
        return lease

    def _let_go(self, entry: _Current) -> None:
        """No new command runs in it; it ends when its last one did."""
        with self._lock:
            if self._current.get(entry.read_only) is entry:
                del self._current[entry.read_only]
        self._idle(entry)

    def _idle(self, entry: _Current) -> None:
        """No command holds it now: one that is no longer current ends at once, the current one after `idle_s`."""
        with self._lock:
            if self._current.get(entry.read_only) is entry:
                entry.idle_since = time.monotonic()
                if self._timer is None:
                    self._timer = threading.Timer(self.idle_s, self._on_timer)
                    self._timer.daemon = True
                    self._timer.start()
                return
        if entry.resident.retire_if_idle():
            threading.Thread(target=self._end, args=(entry,), name="toolgate-sandbox-end", daemon=True).start()

    def _on_timer(self) -> None:
        ended: list[_Current] = []
        with self._lock:
            self._timer = None
            waits: list[float] = []
            for profile, entry in list(self._current.items()):
                if entry.idle_since is None:
                    continue
                wait = entry.idle_since + self.idle_s - time.monotonic()
                if wait > 0:  # used again meanwhile, and idle again since
                    waits.append(wait)
                elif entry.resident.retire_if_idle():  # else a command holds it: it goes idle again later
                    del self._current[profile]
                    ended.append(entry)
            if waits:
                self._timer = threading.Timer(min(waits), self._on_timer)
                self._timer.daemon = True
                self._timer.start()
        for entry in ended:
            self._end(entry)

    def _end(self, entry: _Current) -> None:
        entry.resident.retire()  # waits until nothing runs in it, so its mount points may go
        placeholders.release(entry.token)
        with self._lock:
            if entry in self._residents:
                self._residents.remove(entry)

    def finish(self, launch: Launch) -> str | None:
        """After a foreground command: its hold on the sandbox is let go, its proxy socket is closed, and what the
        proxy refused it is returned (for the result)."""
        if launch.lease is not None:
            launch.lease.release()
        if launch.channel is None:
            return None
        blocked = list(launch.channel.blocked)
        self._egress().close_channel(launch.channel)
        return describe_refusals(blocked)

    def refusal_feed(self, launch: Launch) -> Callable[[], str | None] | None:
        """For a background command: what the proxy refused it since the last call (for each BashOutput)."""
        channel = launch.channel
        if channel is None:
            return None
        shown = 0

        def new_refusals() -> str | None:
            nonlocal shown
            blocked = channel.blocked[shown:]
            shown += len(blocked)
            return describe_refusals(blocked)

        return new_refusals

    def _egress(self) -> EgressProxy:
        if self._proxy is None:
            self._proxy = EgressProxy(self.network_specs)
        self._proxy.specs = self.network_specs  # changed rules apply to the next request, in every sandbox
        return self._proxy

    def _stand_ins(self) -> Path:
        """A private directory holding an empty directory and an empty file, both read-only."""
        if self._empty is None:
            directory = Path(tempfile.mkdtemp(prefix="toolgate-sandbox-"))
            try:
                (directory / "empty").mkdir(mode=0o555)
                (directory / "empty-file").touch(mode=0o444)
            except OSError:
                shutil.rmtree(directory, ignore_errors=True)
                raise
            self._empty = directory
        return self._empty

    def close(self) -> None:
        """After the shell host stopped every background command (the Bash tool resolves the sandbox first,
        so it is closed last)."""
        with self._lock:
            entries = list(self._residents)
            self._current.clear()
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        for entry in entries:
            entry.resident.retired = True
            self._end(entry)
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None
        placeholders.flush()  # nothing of this session's is left behind once it ended
        if self._empty is not None:
            os.chmod(self._empty / "empty", 0o755)
            shutil.rmtree(self._empty, ignore_errors=True)
            self._empty = None


@dataclass(frozen=True, slots=True)
class _Profile:
    """What one launch asks of the sandbox (`Sandbox.launch`'s arguments)."""

    roots: Sequence[Path]
    home: Path
    scratch: Sequence[Path]
    proxy_dir: Path | None
    read_only: bool
    fixed: Sequence[Path]


def _close(sandbox: Sandbox) -> None:
    sandbox.close()


# Off unless the session's builder says otherwise (`RuntimeOptions.sandbox`): the CLI and the sidecar pass
# the settings' `sandbox` (default auto); a library caller that passes nothing gets the plain executor.
SANDBOX: Dep[Sandbox] = Dep("sandbox", lambda _r: Sandbox(SandboxSettings(enabled="off")), close=_close)
