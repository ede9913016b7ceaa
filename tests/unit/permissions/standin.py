"""A small stand-in for `toolgate.shell.classify` (built in parallel), with the same answer shape.

It knows a handful of programs, enough to exercise the engine's Bash logic (per-command rules, paths,
redirections, substitutions, cd). Tests inject it with `PermissionEngine(classifier=classify)`; the corpus
test uses the real classifier instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import bashlex


@dataclass(frozen=True, slots=True)
class Redirect:
    op: str
    target: str
    fd: int | None
    writes: bool


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    argv: tuple[str, ...]
    effective_argv: tuple[str, ...]
    assignments: tuple[str, ...]
    redirects: tuple[Redirect, ...]
    text: str
    read_only: bool
    reason: str
    write_targets: tuple[str, ...]
    read_targets: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Classification:
    command: str
    parsed: bool
    read_only: bool
    reason: str
    commands: tuple[SimpleCommand, ...]
    operators: tuple[str, ...]
    has_substitution: bool
    raw_check_failures: tuple[str, ...]
    write_targets: tuple[str, ...]


READERS = {"cat", "head", "tail", "wc", "ls", "grep", "sort", "stat", "file"}
READ_ONLY = READERS | {"echo", "pwd", "true", "cd", "which", "date"}
GIT_READ_ONLY = {"log", "status", "diff", "show", "blame"}
WRITERS = {"mkdir", "touch", "rm", "rmdir", "mv", "cp"}
WRAPPERS = {"timeout", "nice", "nohup", "time", "sudo", "env", "xargs"}


def _unwrap(argv: list[str]) -> list[str]:
    words = list(argv)
    while words and words[0] in WRAPPERS:
        words.pop(0)
        while words and (words[0].startswith("-") or re.fullmatch(r"[0-9.]+[smh]?|\w+=\S*", words[0])):
            words.pop(0)
    return words


def _judge(eff: list[str], redirects: list[Redirect]) -> tuple[bool, str, list[str], list[str]]:
    writes = [r.target for r in redirects if r.writes]
    if not eff:
        return not writes, "no command", writes, []
    name, args = eff[0], [a for a in eff[1:] if not a.startswith("-")]
    reads: list[str] = []
    if name in READERS:
        reads = args[1:] if name == "grep" else args
    if name == "cd":
        reads = args[:1]
    if name in WRITERS:
        writes += args
        return False, f"{name} changes files", writes, reads
    if name == "git" and len(eff) > 1 and eff[1] in GIT_READ_ONLY:
        outputs = [a.split("=", 1)[1] for a in eff[2:] if a.startswith("--output=")]
        writes += outputs
        return not writes, "git can write with --output" if outputs else "git reads", writes, reads
    if name in READ_ONLY:
        return not writes, "read-only" if not writes else "writes through a redirection", writes, reads
    return False, f"{name} is not known to be read-only", writes, reads


def classify(command: str) -> Classification:
    failures = tuple(f for f, bad in (("a control character", re.search(r"[\x00-\x08\x0b-\x1f\x7f]", command)),
                                      ("unicode whitespace", re.search(r"[\u00a0\u2000-\u200b\u3000]", command)),
                                      ("$IFS", "IFS" in command)) if bad)  # fmt: skip
    try:
        trees = bashlex.parse(command) if command.strip() else []
    except Exception as exc:
        return Classification(command, False, False, f"cannot parse: {exc}", (), (), False, failures, ())
    commands: list[SimpleCommand] = []
    operators: list[str] = []
    state: dict[str, Any] = {"subst": False, "unknown": None, "dir": ""}

    def join(path: str) -> str:
        # Like the real classifier: after `cd DIR`, later relative paths are reported relative to DIR.
        base = state["dir"]
        return path if not base or path.startswith(("/", "~")) else f"{base}/{path}"

    def visit(node: Any) -> None:
        kind = node.kind
        if kind in ("list", "pipeline"):
            for part in node.parts:
                if part.kind == "operator":
                    operators.append(part.op)
                elif part.kind == "pipe":
                    operators.append("|")
                else:
                    visit(part)
        elif kind == "command":
            argv, assignments, redirects = [], [], []
            for part in node.parts:
                if part.kind == "word":
                    argv.append(part.word)
                    for sub in getattr(part, "parts", []):
                        if sub.kind in ("commandsubstitution", "processsubstitution"):
                            state["subst"] = True
                            visit(sub.command)
                elif part.kind == "assignment":
                    assignments.append(part.word)
                elif part.kind == "redirect":
                    out = part.output
                    target = out.word if hasattr(out, "word") else str(out)
                    writes = part.type in (">", ">>", ">|", "&>") and target not in ("/dev/null",)
                    redirects.append(
                        Redirect(part.type, target, part.input if isinstance(part.input, int) else None, writes)
                    )
            eff = _unwrap(argv)
            read_only, reason, writes, reads = _judge(eff, redirects)
            writes, reads = [join(w) for w in writes], [join(r) for r in reads]
            if eff[:1] == ["cd"] and reads:
                state["dir"] = reads[0]
            if assignments:
                read_only = False
            text = command[node.pos[0] : node.pos[1]]
            commands.append(
                SimpleCommand(tuple(argv), tuple(eff), tuple(assignments), tuple(redirects), text, read_only, reason,
                              tuple(writes), tuple(reads))
            )  # fmt: skip
        else:
            state["unknown"] = kind

    for tree in trees:
        visit(tree)
    parsed = state["unknown"] is None
    read_only = parsed and not failures and not state["subst"] and all(c.read_only for c in commands)
    return Classification(
        command=command,
        parsed=parsed,
        read_only=read_only,
        reason="" if parsed else f"{state['unknown']} is not understood",
        commands=tuple(commands),
        operators=tuple(operators),
        has_substitution=state["subst"],
        raw_check_failures=failures,
        write_targets=tuple(w for c in commands for w in c.write_targets),
    )
