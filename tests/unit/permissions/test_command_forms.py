"""The word lists deny and ask rules see read the wrapper and git option tables the classifier reads."""

from __future__ import annotations

import pytest

from toolgate.bash.programs.wrappers import WRAPPER_NAMES, WRAPPERS, value_options
from toolgate.permissions.command_forms import deny_forms


@pytest.mark.parametrize(
    ("command", "hidden"),
    [
        ("stdbuf --output L rm -rf x", ("rm", "-rf", "x")),  # stdbuf's long options were missing here
        ("stdbuf -o L rm -rf x", ("rm", "-rf", "x")),
        ("xargs -i rm {}", ("rm", "{}")),  # -i's value is optional and attached: rm is the command
        ("xargs --eof rm x", ("rm", "x")),
        ("env -C /tmp rm x", ("rm", "x")),
        ("time -o out rm x", ("rm", "x")),
        ("sudo -u root rm x", ("rm", "x")),
        ("git -C . push", ("git", "push")),
        ("git --namespace n push", ("git", "push")),
    ],
)
def test_deny_forms_look_behind_wrappers_with_the_shared_tables(command: str, hidden: tuple[str, ...]) -> None:
    words = tuple(command.split())
    assert hidden in deny_forms(words, ())


def test_every_wrapper_the_classifier_looks_through_is_in_the_shared_table() -> None:
    for name in WRAPPERS:
        assert name in WRAPPER_NAMES
        assert value_options(name) == WRAPPERS[name].valued
    assert value_options("ls") is None
