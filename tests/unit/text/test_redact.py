"""Secret shapes are taken out of text, with a note naming what and where. The tokens are fake."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolgate.text import redact as redact_module
from toolgate.text.redact import _SHAPES, Redacted, redact

FAKE = {
    "Anthropic API key": "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 3,
    "OpenAI API key": "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm" * 2,
    "GitHub token": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "AWS access key id": "AKIA" + "IOSFODNN7EXAMPLE",
    "Slack token": "xoxb-" + "123456789012-abcdefghijkl",
    "Google API key": "AIza" + "SyA1234567890abcdefghijklmnopqrstuv",
}
FAKE_PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAAB3NzaC1yc2E=\n-----END OPENSSH PRIVATE KEY-----"
)


@pytest.mark.parametrize(("kind", "token"), [*FAKE.items(), ("private key", FAKE_PEM)])
def test_each_shape_is_redacted_and_named(kind: str, token: str) -> None:
    text = f"first line\nvalue: {token} trailing\nlast"
    done = redact(text)
    assert token not in done.text
    assert f"[REDACTED {kind}]" in done.text
    assert done.text.startswith("first line\nvalue: ") and done.text.endswith(" trailing\nlast")
    assert done.found == ((kind, 2),)
    note = done.note("this Bash result")
    assert note is not None and kind in note and "line 2" in note and "this Bash result" in note


@pytest.mark.parametrize(
    "text",
    [
        "sk-short",  # too short to be a key
        "the task-ant-eater skipped",
        "AKIA lowercase akiaiosfodnn7example",
        "ghp_ is a prefix only",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqh\n-----END PUBLIC KEY-----",
        "git log --oneline: 1a2b3c4 fix",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    done = redact(text)
    assert done.text == text and done.found == () and done.note("x") is None


def test_known_values_from_the_environment_are_redacted_wherever_they_appear() -> None:
    done = redact("a=hunter2-long-secret b=hunter2-long-secret short=abc", ["hunter2-long-secret", "abc"])
    assert "hunter2-long-secret" not in done.text
    assert "short=abc" in done.text  # too short to look for
    assert len(done.found) == 2


def test_overlapping_matches_are_taken_out_once() -> None:
    token = FAKE["Anthropic API key"]
    done = redact(f"key={token}", [token])
    assert done.text == "key=[REDACTED secret from the environment]"
    assert len(done.found) == 1


def _redact_unhinted(text: str, known: list[str]) -> Redacted:
    """What `redact` must answer, found the slow way: every pattern run over the whole text (the empty character
    and the empty hint are in every text)."""
    unhinted = tuple((kind, pattern, "", ("",)) for kind, pattern in _SHAPES)
    with mock.patch.object(redact_module, "_HINTED", unhinted):
        return redact(text, known)


# Every prefix a shape starts with, and bodies long enough for each shape: random joins make tokens of every kind.
_PREFIXES = st.sampled_from(
    ["sk-", "sk-ant-", "sk-proj-", "sk-svcacct-", "sk-admin-", "github_pat_", "AIza", "AKIA", "ASIA", "ABIA", "ACCA"]
    + [f"gh{c}_" for c in "pousr"]
    + [f"xox{c}-" for c in "abposr"]
    + ["-----BEGIN PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----", "-----END PRIVATE KEY-----"]
)
_BODIES = st.sampled_from(
    [
        "IOSFODNN7EXAMPLE",
        "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "A1b2C3d4E5f6G7h8I9j0" * 3,
        "A1b2C3d4E5f6G7h8I9j0" * 2,
        "123456789012-abcdefghijkl",
        "SyA1234567890abcdefghijklmnopqrstuv",
        "",
    ]
)
# Text made of tokens, of the pieces they are built from, and of ordinary words holding near-misses ("gh" in
# "through", "sk-" in "task-"), so random draws hit the shapes and their edges.
_PIECES = st.one_of(
    st.tuples(_PREFIXES, _BODIES).map("".join),
    st.sampled_from([FAKE_PEM, *FAKE.values(), "through", "task-", "_", "-", " ", "\n", "x"]),
    st.text(max_size=6),
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_PIECES, max_size=30).map("".join),
    st.lists(st.sampled_from(["hunter2-long-secret", "short", "A1b2C3d4E5"]), max_size=2),
)
def test_hints_never_hide_a_secret(text: str, known: list[str]) -> None:
    """The substring hints only skip patterns that cannot match: whatever any pattern or known value finds is
    taken out, and text where none finds anything comes back unchanged."""
    assert redact(text, known) == _redact_unhinted(text, known)
