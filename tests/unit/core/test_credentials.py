"""Credential files by name: the quick regex test that searches use for every listed file gives the same answer
as comparing the path part by part, whatever the case, depth or place of the rule's parts."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.core.credentials import (
    CREDENTIAL_DIRS,
    CREDENTIAL_FILES,
    credential_reason,
    none_among,
    reason_by_parts,
)

RULE_WORDS = sorted({part for rule in CREDENTIAL_DIRS for part in rule} | CREDENTIAL_FILES)
OTHER_WORDS = ["src", "app.py", "id_rsa", "known_hosts", "x.pub", ".env.example", ".env.local", "config.yml", "a"]


def _cased(word: str, pattern: int) -> str:
    return "".join(c.upper() if pattern >> (i % 16) & 1 else c for i, c in enumerate(word))


@settings(max_examples=examples(300))
@given(
    st.lists(st.tuples(st.sampled_from(RULE_WORDS + OTHER_WORDS), st.integers(0, 2**16 - 1)), min_size=1, max_size=6),
    st.booleans(),
)
def test_the_quick_test_agrees_with_the_part_by_part_check(parts: list[tuple[str, int]], absolute: bool) -> None:
    path = ("/" if absolute else "") + "/".join(_cased(word, case) for word, case in parts)
    assert credential_reason(path) == reason_by_parts(path), path


def test_names_that_fold_to_a_rule_are_found_although_they_are_not_ascii() -> None:
    # "ſ" (long s) folds to "s": no ASCII substring test can see ".ssh" in ".ſsh", so such paths take the long way.
    assert credential_reason("/work/.ſsh/id_rsa") is not None
    assert credential_reason("/work/src/κey.py") is None
    assert credential_reason("/work/\u212aeyrings/.ENV") is not None  # Kelvin sign; the file is an .env file


def test_ordinary_paths_and_templates_are_not_credentials() -> None:
    for path in ("/w/src/app.py", "/w/tsconfig.json", "/w/.env.example", "/w/.ssh/id_rsa.pub", "/w/.ssh/config"):
        assert credential_reason(path) is None, path
    for path in ("/w/deep/er/.SSH/id_ed25519", "/w/x/.Config/GCloud/adc.json", "/w/a/.env.production", "/w/.NETRC"):
        assert credential_reason(path) is not None, path


_path_words = st.sampled_from(RULE_WORDS + OTHER_WORDS + ["*.py", "sr[c]", "caf\u00e9", "notes.txt"])


@settings(max_examples=examples(300))
@given(st.lists(st.lists(st.tuples(_path_words, st.integers(0, 2**16 - 1)), min_size=1, max_size=4), max_size=8))
def test_many_paths_cleared_at_once_are_each_clear(paths: list[list[tuple[str, int]]]) -> None:
    # Grep clears every file it lists with one pass when it can; a path that would be refused must never pass.
    shown = ["/ws/" + "/".join(_cased(word, case) for word, case in parts) for parts in paths]
    if none_among([os.fsencode(p) for p in shown]):
        assert all(credential_reason(p) is None for p in shown), shown


def test_one_credential_file_among_thousands_is_not_cleared() -> None:
    listed = [f"/ws/pkg{i}/module{i}.py".encode() for i in range(5000)]
    assert none_among(listed)
    assert not none_among([*listed, b"/ws/pkg9/.env"])
    assert not none_among([*listed, b"/ws/deploy/.SSH/id_ed25519"])
    assert not none_among([*listed, b"/ws/pkg*/x"])  # a name that bash would read as a pattern: checked one by one
