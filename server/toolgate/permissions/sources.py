"""Where rules come from, and the merged view of them: the rule book.

Sources, in listing order: session (memory), cli (`--allow/--ask/--deny`), local
(`.toolgate/settings.local.json`), project (`.toolgate/settings.json`), user
(`$XDG_CONFIG_HOME/toolgate/settings.json`), and `--settings FILE` files. Precedence is by behaviour, never by
source: any matching deny beats any ask, which beats any allow.

Relative path patterns are relative to the source's root: the workspace for session, cli and user rules (a
user rule such as `Edit(docs/**)` applies to whichever project is open), the project (the directory holding
`.toolgate/`) for local and project rules, and the file's own directory for a `--settings FILE`.

The workspace's own files (local, project) only restrict until the workspace is trusted: see trust.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from toolgate.core.paths import expand_path, is_within, resolved_forms
from toolgate.core.permission import PermissionMode, mode_traits
from toolgate.permissions.jsonpos import locate
from toolgate.permissions.rules import Behavior, Rule, RuleError, is_code_execution_rule, parse_rule
from toolgate.permissions.safety import git_hooks_dirs
from toolgate.permissions.settings import (
    LOCAL_FILE,
    PROJECT_FILE,
    SETTINGS_DIR,
    HookMatcher,
    Settings,
    SettingsError,
    SubagentsSettings,
    parse_settings,
    read_settings_text,
)
from toolgate.permissions.trust import is_trusted, untrusted_message, widening_parts

SourceName = Literal["session", "cli", "local", "project", "user", "flag"]
BEHAVIORS: tuple[Behavior, ...] = ("deny", "ask", "allow")


@dataclass(frozen=True, slots=True)
class RuleSource:
    name: SourceName
    path: Path | None  # the settings file (None: memory or command line)
    root: Path  # what relative path patterns are relative to

    def describe(self) -> str:
        return f"{self.name} ({self.path})" if self.path else self.name


@dataclass(frozen=True, slots=True)
class RuleEntry:
    rule: Rule
    behavior: Behavior
    source: RuleSource
    base_forms: tuple[Path, ...]  # the absolute directory a path pattern is matched under (and its real path)
    line: int | None = None  # where the rule's string sits in its settings file (1-based; None: not from a file)
    column: int | None = None

    @property
    def code_execution(self) -> bool:
        return self.behavior == "allow" and is_code_execution_rule(self.rule)

    def matches_path(self, path: Path) -> bool:
        """Whether this path rule covers `path` (one form of it). Deny/ask rules ignore case (they match more);
        allow rules respect it (they match less)."""
        pattern = self.rule.pattern
        if pattern is None:
            return self.rule.kind == "tool"
        for base in self.base_forms:
            try:
                relative = path.relative_to(base).as_posix()
            except ValueError:
                continue
            if pattern.matches("" if relative == "." else relative, ignore_case=self.behavior != "allow"):
                return True
        return False

    def may_match_below(self, directory: Path) -> bool:
        """Whether this path rule could match something inside `directory` (for tools that read whole trees)."""
        pattern = self.rule.pattern
        if pattern is None:
            return self.rule.kind == "tool"
        fixed: list[str] = []
        if pattern.anchored:
            for segment in pattern.text.lstrip("./").split("/"):
                if not segment or any(ch in segment for ch in "*?[\\"):
                    break
                fixed.append(segment)
        for base in self.base_forms:
            reach = base.joinpath(*fixed)  # an anchored pattern reaches no further than its fixed part
            for form in resolved_forms(directory):
                if is_within(form, reach) or is_within(reach, form):
                    return True
        return False


@dataclass(frozen=True, slots=True)
class RuleProblem:
    """A rule (or a whole settings file) that could not be used, and why; and where, when it is in a file."""

    source: RuleSource
    message: str
    rule: str | None = None
    behavior: Behavior | None = None
    line: int | None = None  # 1-based, in `source.path`; None: the file as a whole
    column: int | None = None

    @property
    def sentence(self) -> str:
        """The problem in words, naming its source when the message does not (a broken file's does)."""
        return self.message if self.rule is None else f"{self.source.describe()}: {self.message}"


@dataclass(slots=True)
class LoadedSource:
    source: RuleSource
    settings: Settings | None = None  # None: no such file, or it is broken (see `error`)
    error: SettingsError | None = None
    text: str = ""  # the file as read, to say where things sit in it (jsonpos.locate)

    def place(self, *path: str | int) -> tuple[int | None, int | None]:
        """(line, column) of the value at `path` in the file, or of the deepest part of it that exists."""
        return locate(self.text, path) if self.text.strip() else (None, None)


def settings_paths(workspace: Path, home: Path, environ: Mapping[str, str]) -> dict[SourceName, Path]:
    config_home = environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    return {
        "local": workspace / SETTINGS_DIR / LOCAL_FILE,
        "project": workspace / SETTINGS_DIR / PROJECT_FILE,
        "user": Path(config_home).expanduser() / "toolgate" / "settings.json",
    }


def _base_forms(rule: Rule, root: Path, home: Path) -> tuple[Path, ...]:
    base = {"rule": root, "home": home, "filesystem": Path("/")}[rule.path_root]
    forms: list[Path] = []
    for form in resolved_forms(base):
        if form not in forms:
            forms.append(form)
    return tuple(forms)


@dataclass(slots=True)
class RuleBook:
    """Every usable rule, the problems found while loading, and the rest of what settings configure."""

    entries: list[RuleEntry] = field(default_factory=list)
    problems: list[RuleProblem] = field(default_factory=list)
    broken_files: list[SettingsError] = field(default_factory=list)
    hooks: dict[str, list[tuple[RuleSource, HookMatcher]]] = field(default_factory=dict)
    # Hooks of an untrusted workspace's files: never run, only listed (`toolgate hooks list`).
    untrusted_hooks: dict[str, list[tuple[RuleSource, HookMatcher]]] = field(default_factory=dict)
    trusted_hooks: frozenset[str] = frozenset()  # trustedHooks, from the user's settings file only
    default_mode: PermissionMode | None = None
    additional_dirs: list[Path] = field(default_factory=list)
    files: dict[SourceName, Path] = field(default_factory=dict)
    flag_files: list[Path] = field(default_factory=list)
    workspace_trusted: bool = True  # False: the workspace's own files only restrict (trust.py)
    untrusted_files: list[Path] = field(default_factory=list)  # files with something ignored for that reason
    pass_through: tuple[str, ...] = ()  # env.passThrough, from the user's settings file only
    subagents: SubagentsSettings = field(default_factory=SubagentsSettings)  # from the user's settings file only
    hooks_dirs: list[Path] = field(default_factory=list)  # git's core.hooksPath targets (protected writes)
    _settings_forms: list[Path] | None = None

    def of(self, behavior: Behavior) -> list[RuleEntry]:
        return [e for e in self.entries if e.behavior == behavior]

    @property
    def settings_files(self) -> list[Path]:
        """Every settings file toolgate reads (existing or not), as given and with symlinks resolved: writes to
        them are safety-checked. Resolved once per load (a rule book is rebuilt whenever settings change)."""
        if self._settings_forms is None:
            paths = [*self.files.values(), *self.flag_files]
            self._settings_forms = list(dict.fromkeys(form for p in paths for form in resolved_forms(p)))
        return self._settings_forms


def add_rules(
    book: RuleBook,
    source: RuleSource,
    rules: Mapping[Behavior, Iterable[str]],
    home: Path,
    loaded: LoadedSource | None = None,
) -> list[RuleProblem]:
    """Parse and add rules from one source; invalid ones become problems (reported, never used). `loaded`: the
    settings file they were read from (`permissions.<behavior>[i]`), to say where each one sits."""
    problems: list[RuleProblem] = []
    for behavior in BEHAVIORS:
        for index, text in enumerate(rules.get(behavior, ())):
            line, column = loaded.place("permissions", behavior, index) if loaded else (None, None)
            try:
                rule = parse_rule(text)
            except RuleError as exc:
                message = f"{text!r} is not a valid rule: {exc}"
                problems.append(RuleProblem(source, message, text, behavior, line, column))
                continue
            base_forms = _base_forms(rule, source.root, home)
            book.entries.append(RuleEntry(rule, behavior, source, base_forms, line, column))
    book.problems.extend(problems)
    return problems


def loaded_path(loaded: LoadedSource) -> Path:
    assert loaded.source.path is not None  # file sources always have one
    return loaded.source.path


def _load_file(source: RuleSource) -> LoadedSource:
    assert source.path is not None
    try:
        text = read_settings_text(source.path)
        if text is None:
            return LoadedSource(source)
        return LoadedSource(source, parse_settings(text, source.path), text=text)
    except SettingsError as exc:
        return LoadedSource(source, error=exc)


def load_rule_book(
    workspace: Path,
    *,
    home: Path,
    environ: Mapping[str, str] | None = None,
    session_rules: Mapping[Behavior, Sequence[str]] | None = None,
    cli_rules: Mapping[Behavior, Sequence[str]] | None = None,
    flag_files: Sequence[Path] = (),
    read_files: bool = True,
    trust_workspace: bool | None = None,
) -> RuleBook:
    """`trust_workspace` None: trusted when the user settings' trustedWorkspaces covers it (see trust.py)."""
    environ = os.environ if environ is None else environ
    paths = settings_paths(workspace, home, environ)
    book = RuleBook(files=paths, flag_files=[Path(os.path.abspath(p)) for p in flag_files])
    book.hooks_dirs = git_hooks_dirs(workspace, home)
    add_rules(book, RuleSource("session", None, workspace), session_rules or {}, home)
    add_rules(book, RuleSource("cli", None, workspace), cli_rules or {}, home)
    if not read_files:
        return book
    file_sources = [
        RuleSource("local", paths["local"], workspace),
        RuleSource("project", paths["project"], workspace),
        RuleSource("user", paths["user"], workspace),
        *(RuleSource("flag", path, path.parent) for path in book.flag_files),
    ]
    # Mode precedence among files: the most specific wins (flag, local, project, user).
    mode_order = {"flag": 0, "local": 1, "project": 2, "user": 3}
    mode_rank = 99
    loaded_files = [_load_file(source) for source in file_sources]
    if trust_workspace is None:
        user = next(f.settings for f in loaded_files if f.source.name == "user")
        trust_workspace = user is not None and is_trusted(workspace, user.trustedWorkspaces, home)
    book.workspace_trusted = trust_workspace
    for loaded in loaded_files:
        source = loaded.source
        if loaded.error is not None:
            book.broken_files.append(loaded.error)
            error = loaded.error
            book.problems.append(RuleProblem(source, str(error), line=error.line, column=error.column))
            continue
        if loaded.settings is None:
            continue
        permissions = loaded.settings.permissions
        if loaded.settings.trustedWorkspaces and source.name != "user":
            message = "trustedWorkspaces is read from the user settings file only"
            book.problems.append(RuleProblem(source, message, None, None, *loaded.place("trustedWorkspaces")))
        if loaded.settings.trustedHooks and source.name != "user":
            message = "trustedHooks is read from the user settings file only"
            book.problems.append(RuleProblem(source, message, None, None, *loaded.place("trustedHooks")))
        if loaded.settings.subagents is not None and source.name != "user":
            message = "subagents is read from the user settings file only (it may widen them); it was ignored here"
            book.problems.append(RuleProblem(source, message, None, None, *loaded.place("subagents")))
        if source.name == "user":
            book.pass_through = tuple(loaded.settings.env.passThrough)
            book.trusted_hooks = frozenset(loaded.settings.trustedHooks)
            book.subagents = loaded.settings.subagents or book.subagents
        elif loaded.settings.env.passThrough:
            message = (
                "env.passThrough is read from the user settings file only (a workspace file must not hand your "
                "secrets to commands); it was ignored here"
            )
            book.problems.append(RuleProblem(source, message, None, None, *loaded.place("env", "passThrough")))
        # An untrusted workspace's own files only restrict; what they would widen is named, so the user can decide.
        restricted = source.name in ("local", "project") and not trust_workspace
        rules: dict[Behavior, list[str]] = {"ask": permissions.ask, "deny": permissions.deny}
        add_rules(book, source, rules if restricted else {"allow": permissions.allow, **rules}, home, loaded)
        mode = permissions.defaultMode
        if restricted:
            widening = widening_parts(loaded.settings)
            if widening:
                book.problems.append(RuleProblem(source, untrusted_message(workspace, widening)))
                book.untrusted_files.append(loaded_path(loaded))
            mode = None if mode is not None and mode_traits(mode).widening else mode
        if mode is not None and not mode_traits(mode).shared_default and source.name == "project":
            # A checked-in file must not be able to switch every check off for whoever clones the repository.
            message = f"defaultMode {mode.value} is ignored in a project's shared settings file"
            book.problems.append(RuleProblem(source, message, None, None, *loaded.place("permissions", "defaultMode")))
        elif mode is not None and mode_order[source.name] < mode_rank:
            book.default_mode, mode_rank = mode, mode_order[source.name]
        hooks = book.untrusted_hooks if restricted else book.hooks
        for event, matchers in loaded.settings.hooks.by_event().items():
            hooks.setdefault(event, []).extend((source, matcher) for matcher in matchers)
        if restricted:
            continue
        for index, raw in enumerate(permissions.additionalDirectories):
            try:
                directory = expand_path(raw, source.root, home)
            except Exception as exc:
                place = loaded.place("permissions", "additionalDirectories", index)
                book.problems.append(
                    RuleProblem(source, f"additionalDirectories entry {raw!r}: {exc}", None, None, *place)
                )
                continue
            if directory not in book.additional_dirs:
                book.additional_dirs.append(directory)
    return book
