"""The checkpoint store: one shadow repository per workspace under the data dir, shared by its sessions.

    <data>/checkpoints/<workspace-id>.git/                 the shadow repository (objects shared by sessions)
    <data>/checkpoints/<workspace-id>.git/toolgate/index-<session>   each session's own index
    <data>/checkpoints/<workspace-id>.git/toolgate/index-<session>.tree   the tree it describes (index_tree.py)
    <data>/checkpoints/<workspace-id>.git/toolgate/lock    taken around every change to the store
    <data>/checkpoints/sessions/<session>.json             which workspace a session's checkpoints belong to
    <data>/checkpoints/<workspace-id>.git/toolgate/notice-<session>.txt   a code restore the model is yet to hear of
    refs/toolgate/<session>/<NNNNNN>                       one ref per checkpoint, pointing at its commit
    refs/toolgate-transcripts/<session>/<NNNNNN>           the transcript a redo checkpoint keeps (a blob)

A checkpoint is a parentless commit whose message is the checkpoint's JSON, so dropping its ref (retention)
really frees it at the next gc.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import fcntl
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

from toolgate.checkpoints.capture import Captured, capture
from toolgate.checkpoints.git import ShadowGit, git_version, read_blobs, split_z, write_commit, write_object
from toolgate.checkpoints.index_tree import forget_tree, index_checksum, remember_tree, remembered_tree
from toolgate.checkpoints.models import Checkpoint, CheckpointError, CheckpointKind, ConversationMark
from toolgate.checkpoints.ref_updates import TRANSACTIONS_VERSION, RefUpdates
from toolgate.checkpoints.roots import capture_roots, root_changes, root_commits, root_skipped
from toolgate.checkpoints.settings import CheckpointSettings

_SESSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_REF_ROOT = "refs/toolgate"
_TRANSCRIPT_REF_ROOT = "refs/toolgate-transcripts"
_AS_IS = "* -text -eol -filter -ident -working-tree-encoding\n"


def workspace_id(workspace: Path) -> str:
    resolved = str(workspace.resolve())
    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", workspace.resolve().name)[:40] or "root"
    return f"{name}-{digest}"


def check_session_id(session: str) -> str:
    if not _SESSION.match(session):
        raise CheckpointError(f"{session!r} is not a session id (letters, digits, '_', '-', '.'; at most 128)")
    return session


def user_excludes(workspace: Path) -> Path | None:
    """The user's `info/exclude` for the workspace's repository (also for a worktree or submodule, where `.git`
    is a file naming the real git dir). Only ever read."""
    dot_git = workspace / ".git"
    git_dir: Path | None = None
    if dot_git.is_dir():
        git_dir = dot_git
    elif dot_git.is_file():
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            git_dir = (workspace / text.removeprefix("gitdir:").strip()).resolve()
            common = git_dir / "commondir"
            if common.is_file():
                git_dir = (git_dir / common.read_text().strip()).resolve()
    exclude = git_dir / "info" / "exclude" if git_dir is not None else None
    return exclude if exclude is not None and exclude.is_file() else None


class CheckpointStore:
    def __init__(
        self,
        data_root: Path,
        workspace: Path,
        settings: CheckpointSettings | None = None,
        *,
        long_lived_git: bool = False,
    ) -> None:
        """Opens (creating if needed) the workspace's store. Raises CheckpointError when checkpoints cannot work
        here (no git, an unwritable data dir), with a sentence that says why. `long_lived_git`: keep one git
        process for ref changes (see ref_updates) until `close()`; for an owner that closes the store."""
        self.settings = settings or CheckpointSettings()
        self.workspace = workspace.resolve()
        self.data_root = data_root
        self.root = data_root / "checkpoints"
        version = git_version()
        if isinstance(version, str):
            raise CheckpointError(version)
        binary = shutil.which("git") or "git"
        self.git = ShadowGit(
            binary,
            self.root / f"{workspace_id(self.workspace)}.git",
            self.workspace,
            user_excludes(self.workspace),
            self.settings.time_cap_seconds,
        )
        self.refs = RefUpdates(self.git, long_lived=long_lived_git and version >= TRANSACTIONS_VERSION)
        try:
            self._initialise()
        except OSError as exc:
            raise CheckpointError(
                f"the checkpoint store {self.git.git_dir} cannot be written ({exc.strerror or exc}); "
                "free some space or point --data-dir at a writable directory"
            ) from None

    def close(self) -> None:
        """End the store's long-lived git process (the store still works after: each ref change is then a process)."""
        self.refs.close()

    # --- layout -----------------------------------------------------------------------------------------
    @property
    def private(self) -> Path:
        return self.git.git_dir / "toolgate"

    def index(self, session: str, root: Path | None = None) -> Path:
        """The session's index of the workspace, or of an additional root (`+`: not a session id character)."""
        extra = "" if root is None or root == self.workspace else f"+{workspace_id(root)}"
        return self.private / f"index-{check_session_id(session)}{extra}"

    def root_git(self, root: Path | None) -> ShadowGit:
        """The shadow repository over `root` (None: the workspace). Every captured root shares one object
        store; each has its own work tree, index and ignore rules."""
        if root is None or root == self.workspace:
            return self.git
        return dataclasses.replace(self.git, work_tree=root, excludes_file=user_excludes(root))

    def _initialise(self) -> None:
        if not (self.git.git_dir / "HEAD").is_file():
            self.git.initialise()
        self.git.check_object_format()
        self.private.mkdir(exist_ok=True)
        exclude = self.git.git_dir / "info" / "exclude"
        exclude.parent.mkdir(exist_ok=True)
        wanted = "".join(f"{pattern}\n" for pattern in self.settings.ignore)
        if not exclude.is_file() or exclude.read_text(encoding="utf-8") != wanted:
            exclude.write_text(wanted, encoding="utf-8")
        # Bytes as they are: the workspace's .gitattributes (text, eol, filters) must not turn CRLF into LF or
        # run a clean filter on the way in. info/attributes outranks every .gitattributes file.
        attributes = self.git.git_dir / "info" / "attributes"
        if not attributes.is_file() or attributes.read_text(encoding="utf-8") != _AS_IS:
            attributes.write_text(_AS_IS, encoding="utf-8")

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Sessions of one workspace share the object store; one of them changes it at a time."""
        with open(self.private / "lock", "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def remember_session(self, session: str) -> None:
        """Let `toolgate checkpoints list --session ID` find this store from the session id alone."""
        sessions = self.root / "sessions"
        sessions.mkdir(parents=True, exist_ok=True)
        record = {"workspace": os.fsdecode(self.workspace), "store": self.git.git_dir.name}
        path = sessions / f"{check_session_id(session)}.json"
        if not path.is_file() or json.loads(path.read_text(encoding="utf-8")) != record:
            path.write_text(json.dumps(record), encoding="utf-8")

    @classmethod
    def for_session(cls, data_root: Path, session: str, settings: CheckpointSettings | None = None) -> CheckpointStore:
        path = data_root / "checkpoints" / "sessions" / f"{check_session_id(session)}.json"
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CheckpointError(
                f"session {session!r} has no checkpoints under {data_root}; check the id "
                "(`toolgate checkpoints list` needs the --data-dir the session ran with)"
            ) from None
        return cls(data_root, Path(record["workspace"]), settings)

    # --- reading ----------------------------------------------------------------------------------------
    def checkpoints(self, session: str) -> list[Checkpoint]:
        prefix = f"{_REF_ROOT}/{check_session_id(session)}/"
        out = self.git.output(["for-each-ref", "--format=%(objectname) %(tree) %(contents:subject)", prefix])
        found: list[Checkpoint] = []
        for line in out.decode("utf-8", "surrogateescape").splitlines():
            commit, tree, message = line.split(" ", 2)
            # json.loads, not pydantic's parser: a path that is not UTF-8 is a lone surrogate in the JSON.
            with contextlib.suppress(ValueError):
                loaded = Checkpoint.model_validate(json.loads(message))
                found.append(loaded.model_copy(update={"commit": commit, "tree": tree}))
        return sorted(found, key=lambda c: int(c.id))  # ids outgrow six digits

    def get(self, session: str, checkpoint_id: str) -> Checkpoint:
        for checkpoint in self.checkpoints(session):
            if checkpoint.id == checkpoint_id:
                return checkpoint
        known = [c.id for c in self.checkpoints(session)]
        hint = f"its checkpoints are {known[0]} … {known[-1]}" if known else "it has no checkpoints"
        raise CheckpointError(
            f"there is no checkpoint {checkpoint_id!r} in session {session!r} ({hint}); "
            "run `toolgate checkpoints list --session ID` to see them"
        )

    # --- writing ----------------------------------------------------------------------------------------
    def capture(self, session: str, root: Path | None = None) -> Captured:
        """Bring the session's index of `root` (None: the workspace) up to date (under the lock). Remembers the
        index's tree, so that an unchanged work tree costs one listing and no tree write."""
        git, index = self.root_git(root), self.index(session, root)
        checksum = index_checksum(index)
        index_tree = remembered_tree(index, checksum)
        try:
            captured = capture(git, index, self.settings.max_file_bytes, index_tree)
        except CheckpointError:
            if not index.is_file():
                raise
            # The index may name objects a gc freed (they were captured, never committed): start it afresh.
            index.unlink(missing_ok=True)
            forget_tree(index)
            index_tree = checksum = None
            captured = capture(git, index, self.settings.max_file_bytes)
        written = index_checksum(index)  # after git's last write of the index, which the record names
        if (captured.tree, written) != (index_tree, checksum):
            remember_tree(index, captured.tree, written)
        return captured

    def _last(self, session: str) -> Checkpoint | None:
        """The session's newest checkpoint: from its small file when there, else from the refs."""
        with contextlib.suppress(OSError, ValueError):
            last = Checkpoint.model_validate(json.loads(self._last_file(session).read_text(encoding="utf-8")))
            if last.tree:
                return last
        found = self.checkpoints(session)
        return found[-1] if found else None

    def create(
        self,
        session: str,
        *,
        turn: int,
        tool_use_id: str | None = None,
        kind: CheckpointKind = "tool",
        note: str | None = None,
        conversation: ConversationMark | None = None,
        roots: Sequence[Path] = (),
        agent_since: str | None = None,
    ) -> Checkpoint:
        """Capture the work tree (and the additional `roots`) as a new checkpoint. A tool checkpoint of trees
        that have not changed since the session's last checkpoint is that checkpoint (no new entry). A
        `conversation` with a blob (see `keep_transcript`) keeps that blob as long as the checkpoint is kept.
        `agent_since`: the checkpoint taken right before the tool call this one follows; recorded only when it is
        still the session's last, so that the difference between the two is exactly what the call changed."""
        with self.locked():
            captured = self.capture(session)
            extra = self.capture_roots(session, roots)
            return self.record(
                session,
                captured,
                extra,
                turn=turn,
                tool_use_id=tool_use_id,
                kind=kind,
                note=note,
                conversation=conversation,
                agent_since=agent_since,
            )

    def capture_roots(self, session: str, roots: Sequence[Path]) -> dict[str, Captured]:
        """The additional `roots` captured (under the lock), keyed by path, for `record`."""
        return capture_roots(self.workspace, roots, lambda root: self.capture(session, root))

    def record(
        self,
        session: str,
        captured: Captured,
        extra: dict[str, Captured],
        *,
        turn: int,
        tool_use_id: str | None = None,
        kind: CheckpointKind = "tool",
        note: str | None = None,
        conversation: ConversationMark | None = None,
        agent_since: str | None = None,
    ) -> Checkpoint:
        """`create` for trees the caller has just captured (`capture`, `capture_roots`) and still holds the lock
        for: a restore's redo checkpoint is the very capture its plan was made from, taken once."""
        self.remember_session(session)
        previous = self._last(session)
        trees = {root: c.tree for root, c in extra.items()}
        skipped = [*captured.skipped, *root_skipped(extra)]
        if previous is None:
            names = self.git.output(["ls-tree", "-r", "-z", "--name-only", captured.tree])
        elif captured.tree == previous.tree:
            if kind == "tool" and skipped == previous.skipped and trees == previous.roots:
                return previous
            names = b""
        elif captured.changed is not None and captured.base == previous.tree:
            names = b"\0".join(captured.changed)  # what the capture changed is what changed since then
        else:
            names = self.git.output(
                ["diff-tree", "-r", "-z", "--name-only", "--no-renames", previous.tree, captured.tree]
            )
        number = int(previous.id) + 1 if previous is not None else 1
        checkpoint = Checkpoint(
            id=f"{number:06d}",
            session=session,
            turn=turn,
            tool_use_id=tool_use_id,
            kind=kind,
            time=dt.datetime.now(dt.UTC),
            changed=[*(os.fsdecode(p) for p in split_z(names)), *root_changes(self.git, previous, extra)],
            skipped=skipped,
            note=note,
            conversation=conversation,
            roots=trees,
            agent_since=agent_since if previous is not None and previous.id == agent_since else None,
        )
        message = json.dumps(checkpoint.model_dump(mode="json", exclude={"commit", "tree"}), ensure_ascii=True)
        # The additional roots' trees hang off the checkpoint as parent commits: kept while it is kept.
        parents = root_commits(self.git, trees)
        commit = write_commit(self.git, captured.tree, parents, message)
        # One transaction: the new ref, and the one that falls out of retention (when it still exists).
        commands = f"create {self.ref(session, checkpoint.id)} {commit}\n"
        if conversation is not None and conversation.blob is not None:
            commands += f"create {self._transcript_ref(session, checkpoint.id)} {conversation.blob}\n"
        if number > self.settings.keep_per_session:
            old = f"{number - self.settings.keep_per_session:06d}"
            commands += f"delete {self.ref(session, old)}\ndelete {self._transcript_ref(session, old)}\n"
        self.refs.apply(commands)
        checkpoint = checkpoint.model_copy(update={"commit": commit, "tree": captured.tree})
        last = json.dumps(checkpoint.model_dump(mode="json"), ensure_ascii=True)  # paths may not be UTF-8
        self._last_file(session).write_text(last, encoding="utf-8")
        return checkpoint

    def _last_file(self, session: str) -> Path:
        return self.private / f"last-{check_session_id(session)}.json"

    def ref(self, session: str, checkpoint_id: str) -> str:
        return f"{_REF_ROOT}/{check_session_id(session)}/{checkpoint_id}"

    def _transcript_ref(self, session: str, checkpoint_id: str) -> str:
        return f"{_TRANSCRIPT_REF_ROOT}/{check_session_id(session)}/{checkpoint_id}"

    # --- the conversation -------------------------------------------------------------------------------
    def keep_transcript(self, data: bytes) -> str:
        """Write a transcript into the store as a blob; `create(conversation=...)` with it keeps it alive."""
        return write_object(self.git, "blob", data)

    def kept_transcripts(self, session: str) -> list[bytes]:
        """The transcripts the session's redo checkpoints keep, newest first."""
        prefix = f"{_TRANSCRIPT_REF_ROOT}/{check_session_id(session)}/"
        out = self.git.output(["for-each-ref", "--sort=-refname", "--format=%(objectname)", prefix])
        blobs = out.decode().split()
        if not blobs:
            return []
        found = read_blobs(self.git, blobs)
        return [found[blob] for blob in blobs if blob in found]

    def leave_notice(self, session: str, text: str | None) -> None:
        """What the session's next model request must be told (None: nothing). Kept in a file, so that a
        restore made by `toolgate rewind` reaches the next `chat --print --resume` too."""
        path = self.private / f"notice-{check_session_id(session)}.txt"
        if text is None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        else:
            path.write_text(text, encoding="utf-8")

    def take_notice(self, session: str) -> str | None:
        path = self.private / f"notice-{check_session_id(session)}.txt"
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        path.unlink()
        return text or None

    def _retain(self, session: str, checkpoints: list[Checkpoint]) -> None:
        extra = len(checkpoints) - self.settings.keep_per_session
        if extra > 0:
            self._drop(session, [c.id for c in checkpoints[:extra]])

    def _drop(self, session: str, ids: list[str]) -> None:
        commands = "".join(f"delete {self.ref(session, i)}\ndelete {self._transcript_ref(session, i)}\n" for i in ids)
        self.refs.apply(commands)
        with contextlib.suppress(OSError, ValueError):
            last = json.loads(self._last_file(session).read_text(encoding="utf-8"))
            if last.get("id") in ids:
                self._last_file(session).unlink()

    def delete_session(self, session: str) -> None:
        with self.locked():
            self._drop(session, [c.id for c in self.checkpoints(session)])
            leftovers = (self.index(session), self.private / f"index-{session}.tree", self._last_file(session))
            extra = self.private.glob(f"index-{check_session_id(session)}+*")
            for leftover in (*leftovers, *extra, self.private / f"notice-{session}.txt"):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()
            with contextlib.suppress(FileNotFoundError):
                (self.root / "sessions" / f"{session}.json").unlink()

    def size(self) -> int:
        total = 0
        for top, _dirs, files in os.walk(self.git.git_dir / "objects"):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(top, name)).st_size
        return total

    def gc(self) -> dict[str, int]:
        """Apply retention, pack what is kept, free what is not; then drop the oldest checkpoints (of any
        session) until the store is under its size cap."""
        with self.locked():
            refs = self.git.output(["for-each-ref", "--format=%(refname)", f"{_REF_ROOT}/"]).decode().split()
            sessions = sorted({ref.split("/")[2] for ref in refs})
            for session in sessions:
                self._retain(session, self.checkpoints(session))
            # A session's index may hold objects no commit names (a dry run's capture): the prune frees them,
            # so every index starts afresh after it (the next checkpoint hashes the tree once more).
            for stale in [*self.private.glob("index-*"), *self.git.git_dir.glob("sharedindex.*")]:
                stale.unlink()  # the split indexes' shared parts go with the indexes
            self.git.run(["gc", "-q", "--prune=now"], timeout=max(self.settings.time_cap_seconds, 600))
            dropped = 0
            while self.size() > self.settings.max_store_bytes:
                everything = sorted((c for s in sessions for c in self.checkpoints(s)), key=lambda c: c.time)
                if not everything:
                    break
                batch = everything[: max(1, len(everything) // 10)]
                for checkpoint in batch:
                    self._drop(checkpoint.session, [checkpoint.id])
                dropped += len(batch)
                self.git.run(["gc", "-q", "--prune=now"], timeout=max(self.settings.time_cap_seconds, 600))
            return {"dropped": dropped, "bytes": self.size()}
