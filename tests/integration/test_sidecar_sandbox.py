"""The sandbox in the editor's sidecar (real bwrap): on by default, its stand-ins announced so the editor can mark
them in the Explorer, none for read-only commands, and none in the person's way for good.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import anyio
from tests.integration.sidecar_client import SidecarClient, use

from toolgate.sidecar import protocol as p


def writer(name: str) -> str:
    """A command that writes the workspace in a way the classifier cannot see: allowed on the sandbox's account."""
    return "python3 -c " + shlex.quote(f"open({name!r}, 'w').write('x')")


async def test_the_editor_runs_bash_sandboxed_by_default(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = (await sidecar.call(p.SESSION_NEW, {"title": "s"}))["sessionId"]
    sandbox = (await sidecar.call(p.SETTINGS_GET, {"sessionId": session_id}))["sandbox"]
    assert sandbox["state"] == "on" and sandbox["autoAllow"] is True, sandbox


async def test_stand_ins_are_announced_while_they_exist_and_read_only_commands_make_none(
    sidecar: SidecarClient, workspace: Path
) -> None:
    session_id = (await sidecar.call(p.SESSION_NEW, {"title": "s"}))["sessionId"]
    [listing] = await sidecar.run(session_id, use("Bash", command="ls -a"))
    assert not listing["is_error"], listing
    assert sidecar.stand_ins == []  # a read-only command runs where nothing is writable: no mount points needed

    [made] = await sidecar.run(session_id, use("Bash", command=writer("made.txt")))
    assert not made["is_error"], made
    assert (workspace / "made.txt").read_text() == "x"
    announced = {Path(path) for path in sidecar.stand_ins[0]}  # sent before the command ran
    assert {workspace.resolve() / ".vscode", workspace.resolve() / ".envrc", workspace.resolve() / "AGENTS.md"} <= (
        announced
    )
    await sidecar.wait_for(lambda: sidecar.stand_ins[-1] == [])  # gone once the sandbox went idle
    assert not any(path.exists() for path in announced)


async def test_git_never_sees_a_stand_in(sidecar: SidecarClient, workspace: Path) -> None:
    await anyio.run_process(["git", "init", "-q", str(workspace)])
    session_id = (await sidecar.call(p.SESSION_NEW, {"title": "s"}))["sessionId"]
    command = f"{writer('made.txt')} && git status --porcelain --untracked-files=all"
    [result] = await sidecar.run(session_id, use("Bash", command=command))
    assert sidecar.stand_ins and sidecar.stand_ins[0], "the command ran with stand-ins in the workspace"
    assert result["content"].split() == ["??", "made.txt"], result


async def test_the_person_can_put_the_real_file_where_a_stand_in_stood(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = (await sidecar.call(p.SESSION_NEW, {"title": "s"}))["sessionId"]
    [started] = await sidecar.run(
        session_id, use("Bash", command=f"{writer('made.txt')} && sleep 60", run_in_background=True)
    )
    assert not started["is_error"], started
    envrc = workspace.resolve() / ".envrc"
    await sidecar.wait_for(lambda: sidecar.stand_ins and str(envrc) in sidecar.stand_ins[-1])
    # The person, outside any sandbox, while the command holds the stand-in: the tooltip says to delete it first.
    envrc.rmdir()
    envrc.write_text("export MINE=1\n")
    # The next command's sandbox sees the person's file, and keeps it read-only like any present protected file.
    hidden = bytes(".envrc", "utf-8").hex()
    overwrite = "python3 -c " + shlex.quote(f"open(bytes.fromhex({hidden!r}).decode(), 'w').write('changed')")
    [refused] = await sidecar.run(session_id, use("Bash", command=overwrite))
    assert refused["is_error"] and "Read-only file system" in refused["content"], refused
    await sidecar.call(p.SESSION_DELETE, {"sessionId": session_id})  # stops the background command, ends the sandbox
    await sidecar.wait_for(lambda: sidecar.stand_ins[-1] == [])
    assert envrc.read_text() == "export MINE=1\n"  # the stand-ins went; the person's file stayed
