"""Bash patterns compared with each other (text/shell_patterns.py) and credential names seen through them."""

from __future__ import annotations

import pytest

from toolgate.core.credentials import credential_reason
from toolgate.text.shell_patterns import has_pattern, overlaps

OVERLAP = [
    ("id_*", "id_rsa"), (".en[v]", ".env"), (".e*", ".env"), (".ss?", ".ssh"), ("*", "id_rsa"),
    ("[!a]d_rsa", "id_rsa"), ("cred*", "credentials"), (".env.*", ".env.?*"), (".*.local", ".env.?*"),
    (".[a-z]nv", ".env"), (".[[:alpha:]]nv", ".env"), (".ENV", ".env"), ("@(x|y)", "id_rsa"), ("\\.e*", ".env"),
]  # fmt: skip
APART = [
    ("*.py", ".env"), ("*", ".env"), ("?env", ".env"), ("[.]env", "env"), (".en[!v]", ".env"), ("id_*.pub", "id_rsa"),
    (".e?", ".env"), ("*.txt", ".env.?*"), ("*", ".ssh"), ("*.local", ".env.?*"),
]  # fmt: skip


@pytest.mark.parametrize(("pattern", "name"), OVERLAP)
def test_patterns_that_can_name_the_same_file(pattern: str, name: str) -> None:
    assert overlaps(pattern.casefold(), name)


@pytest.mark.parametrize(("pattern", "name"), APART)
def test_patterns_that_cannot(pattern: str, name: str) -> None:
    assert not overlaps(pattern, name)


def test_dotglob_lets_a_star_match_a_leading_dot() -> None:
    assert overlaps("*", ".env", dotglob=True) and not overlaps("*", ".env")


def test_escaped_characters_are_not_patterns() -> None:
    assert has_pattern("a*") and has_pattern("[ab]") and not has_pattern("a\\*") and not has_pattern("plain")


@pytest.mark.parametrize(
    "path",
    [
        "/h/.ss?/id_*", "/h/.ssh/*", "/h/.s*/id*", "/h/.*/credentials", "/h/.aws/cred*", "/w/.en[v]", "/w/.e*",
        "/w/.env.*", "/w/sub/.E[N]V", "/h/.config/g?/hosts.yml", "/h/.docker/*.json", "/h/.ssh/id_rsa*", "/w/.git*",
    ],
)  # fmt: skip
def test_a_pattern_that_can_match_a_credential_file_names_it(path: str) -> None:
    assert credential_reason(path) is not None


@pytest.mark.parametrize("path", ["/w/*.py", "/w/src/*", "/h/*/id_rsa", "/h/.ssh/*.pub", "/w/**/*.ts", "/w/.g?tignore"])
def test_patterns_that_cannot_reach_a_credential_file(path: str) -> None:
    assert credential_reason(path) is None


def test_globstar_with_dotglob_reaches_hidden_directories() -> None:
    assert credential_reason("/w/**/*.ts") is None
    assert credential_reason("/w/**/*.ts", dotglob=True) is not None
