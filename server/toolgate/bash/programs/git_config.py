"""Which entries of a git configuration file name a program that a read-only git command would run.

A repository's own `.git/config` is not under version control, so a planted repository (an unpacked
fixture, a vendored checkout, a submodule's `.git/modules/x/config`) can say anything: `core.fsmonitor`
runs on `git status`, `diff.external` and textconv drivers on `git diff` and `git log -p`, clean filters
on `git status` for modified files, `gpg.program` on `git log` when `log.showSignature` is on, `core.pager`
when output is a terminal, `core.sshCommand` and credential helpers on `git ls-remote`. The git table calls
those subcommands read-only; this reader says when the repository's configuration makes that untrue.

Pure: it reads text, never the disk (permissions/repo_config.py finds the files). A line it cannot read
is reported too (fail closed): git's syntax has corners (continuation lines, quoted values) that a short
reader should not guess at.
"""

from __future__ import annotations

import re

__all__ = ["programs_in_config"]

_SECTION = re.compile(r'\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_ENTRY = re.compile(r"\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")
_FALSE = frozenset({"", "false", "no", "off", "0"})
_BOOLEAN = _FALSE | {"true", "yes", "on", "1"}

# section.key (no subsection) whose value is a program git runs, a file it loads, or a place it reads instead.
# Not here: core.pager and pager.* (the shell runs commands with GIT_PAGER=cat and no terminal, so no pager
# starts), core.editor and sequence.editor (GIT_EDITOR=true; no read-only subcommand edits), core.hooksPath
# (no read-only subcommand runs a hook).
_PROGRAM_KEYS = frozenset(
    {
        "core.fsmonitor", "core.worktree", "diff.external", "gpg.program", "include.path", "log.showsignature",
        "uploadpack.packobjectshook",
    }
)  # fmt: skip
_SUBSECTION_KEYS = frozenset(
    {
        "diff.command",
        "diff.textconv",
        "filter.clean",
        "filter.smudge",
        "filter.process",
        "gpg.program",
        "includeif.path",
    }
)
# Only a subcommand that talks to a remote (ls-remote) runs these.
_NETWORK_KEYS = frozenset(
    {"core.sshcommand", "core.askpass", "core.gitproxy", "core.alternaterefscommand", "credential.helper"}
)
_NETWORK_SUBSECTION_KEYS = frozenset(
    {"remote.uploadpack", "remote.receivepack", "credential.helper", "url.insteadof", "remote.url"}
)
# The filter entries `git lfs install --local` writes: a well-known program, not a planted one.
_KNOWN_FILTERS = frozenset({"git-lfs clean -- %f", "git-lfs smudge -- %f", "git-lfs filter-process"})


def _strip_comment(value: str) -> str:
    quoted = False
    for index, ch in enumerate(value):
        if ch == '"':
            quoted = not quoted
        elif ch in "#;" and not quoted:
            return value[:index].strip()
    return value.strip()


def _names_a_program(section: str, subsection: str | None, key: str, value: str, network: bool) -> bool:
    if subsection is not None:
        name = f"{section}.{key}"
        if section == "remote" and key == "url":
            return network and "::" in value  # `ext::cmd`, `helper::url`: a remote helper program runs
        if section == "filter" and value in _KNOWN_FILTERS:
            return False
        return name in _SUBSECTION_KEYS or (network and name in _NETWORK_SUBSECTION_KEYS)
    name = f"{section}.{key}"
    if name == "core.fsmonitor":
        return value.lower() not in _BOOLEAN  # true/false: the built-in daemon or none; anything else is a hook
    if name == "log.showsignature":
        return value.lower() not in _FALSE
    return name in _PROGRAM_KEYS or (network and name in _NETWORK_KEYS)


def programs_in_config(text: str, *, network: bool = False) -> list[str]:
    """The `section.key` names in this configuration text that make a read-only git command run a program
    (or load another file), and `"?"` for a line this reader cannot follow. `network`: the command talks to a
    remote (git ls-remote), so the entries that only matter then count too."""
    found: list[str] = []
    section, subsection = "", None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            match = _SECTION.match(line)
            if match is None:
                found.append("?")
                continue
            section, subsection = match.group(1).lower(), match.group(2)
            if "." in section:  # the old [section.subsection] spelling
                section, _, subsection = section.partition(".")
            line = match.group(3).strip()
            if not line or line[0] in "#;":
                continue
        entry = _ENTRY.match(line)
        if entry is None or line.endswith("\\"):
            found.append("?")
            continue
        key, value = entry.group(1).lower(), _strip_comment(entry.group(2) or "").strip('"')
        if _names_a_program(section, subsection, key, value, network):
            shown = f"{section}.{subsection}.{key}" if subsection is not None else f"{section}.{key}"
            found.append(shown)
    return found
