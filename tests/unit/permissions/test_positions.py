"""Where a rule or a problem sits in its settings file: what the rules view and the problems banner open at."""

from __future__ import annotations

from pathlib import Path

from toolgate.permissions.sources import RuleBook, load_rule_book


def _book(workspace: Path, home: Path, flag_files: list[Path] | None = None) -> RuleBook:
    environ = {"XDG_CONFIG_HOME": str(home / "xdg")}
    return load_rule_book(workspace, home=home, environ=environ, flag_files=flag_files or [], trust_workspace=True)


def _project_file(workspace: Path, text: str) -> Path:
    path = workspace / ".toolgate" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_each_rule_carries_its_line_and_column_however_the_file_is_laid_out(tmp_path: Path) -> None:
    # Tabs, several rules on one line, a key before `permissions`, a string holding brackets, quotes and a
    # colon, and the same rule text under two behaviours: a text search would find the first of those only.
    text = (
        '{"note": "[\\"Bash(ls)\\"] {x: 1}",\n'
        '\t"permissions" :\n'
        "\t{\n"
        '\t\t"deny":[ "Bash(ls)" ,"Read(./.env)"],\n'
        '\t\t"allow": [\n'
        "\n"
        '\t\t\t    "Bash(ls)"\n'
        "\t\t]\n"
        "\t}\n"
        "}\n"
    )
    _project_file(tmp_path, text)
    book = _book(tmp_path, tmp_path / "home")
    places = {(e.behavior, e.rule.text): (e.line, e.column) for e in book.entries}
    assert places == {
        ("deny", "Bash(ls)"): (4, 12),
        ("deny", "Read(./.env)"): (4, 24),
        ("allow", "Bash(ls)"): (7, 8),
    }
    for (_, rule), (line, column) in places.items():
        assert line is not None and column is not None
        assert text.splitlines()[line - 1][column - 1 :].startswith(f'"{rule}"')


def test_a_rule_invalid_in_the_grammar_is_a_problem_at_its_own_place(tmp_path: Path) -> None:
    _project_file(tmp_path, '{"permissions": {\n  "ask": ["Bash(ok)",\n          "Bash(oops"]}}\n')
    book = _book(tmp_path, tmp_path / "home")
    [problem] = book.problems
    assert (problem.rule, problem.behavior, problem.line, problem.column) == ("Bash(oops", "ask", 3, 11)
    assert problem.sentence.startswith(f"project ({tmp_path / '.toolgate' / 'settings.json'}): 'Bash(oops' is not")
    assert [e.rule.text for e in book.entries] == ["Bash(ok)"]


def test_a_broken_json_file_is_a_problem_at_the_place_json_stopped(tmp_path: Path) -> None:
    path = _project_file(tmp_path, '{\n  "permissions": {\n    "allow": ["Bash(ls)",]\n  }\n}\n')
    [problem] = _book(tmp_path, tmp_path / "home").problems
    assert (problem.source.path, problem.line, problem.column, problem.rule) == (path, 3, 26, None)
    assert problem.sentence.startswith(f"{path}:3:26: this is not valid JSON")


def test_a_value_of_the_wrong_type_is_a_problem_at_that_value(tmp_path: Path) -> None:
    path = _project_file(tmp_path, '{\n  "permissions": {\n    "allow": "Bash(ls)"\n  }\n}\n')
    [problem] = _book(tmp_path, tmp_path / "home").problems
    assert (problem.line, problem.column) == (3, 14)
    assert problem.sentence.startswith(f"{path}:3:14: permissions.allow")


def test_settings_problems_that_are_not_rules_name_their_key(tmp_path: Path) -> None:
    text = (
        '{"permissions": {\n "defaultMode": "bypassPermissions",\n "additionalDirectories": ["/ok", " "]},\n'
        ' "trustedWorkspaces": ["/"]}\n'
    )
    _project_file(tmp_path, text)
    places = {p.message.split(" ")[0]: (p.line, p.column) for p in _book(tmp_path, tmp_path / "home").problems}
    assert places == {"trustedWorkspaces": (4, 23), "defaultMode": (2, 17), "additionalDirectories": (3, 35)}
