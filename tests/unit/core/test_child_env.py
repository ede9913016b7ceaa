"""Every child process starts from a scrubbed copy of the environment (core/child_env.py)."""

from __future__ import annotations

import os

import pytest

from toolgate.core.child_env import child_environment, is_secret_name, own_secret_values, secret_values


@pytest.mark.parametrize(
    "name",
    [
        "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "MY_SERVICE_API_KEY", "SOME_TOKEN", "app_secret", "DB_PASSWORD",
        "GCP_CREDENTIALS", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN", "GH_TOKEN",
        "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_STORAGE_KEY", "AZURE_OPENAI_API_KEY", "HF_TOKEN", "NPM_TOKEN",
    ],
)  # fmt: skip
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["HOME", "PATH", "LANG", "TERM", "SSH_AUTH_SOCK", "TOKENIZERS_PARALLELISM", "USER"])
def test_ordinary_names(name: str) -> None:
    assert not is_secret_name(name)


def test_child_environment_scrubs_passes_named_variables_and_adds_extras() -> None:
    base = {"HOME": "/h", "ANTHROPIC_API_KEY": "sk-ant-x", "GH_TOKEN": "gho_y", "PATH": "/bin"}
    env = child_environment(base, pass_through=["gh_token"], extra={"PAGER": "cat"})
    assert env == {"HOME": "/h", "GH_TOKEN": "gho_y", "PATH": "/bin", "PAGER": "cat"}
    assert base["ANTHROPIC_API_KEY"] == "sk-ant-x"  # the caller's mapping is not changed


def test_secret_values() -> None:
    assert secret_values({"A_TOKEN": "long-enough-value", "B_TOKEN": "short", "HOME": "/home/someone"}) == [
        "long-enough-value"
    ]


def test_own_secret_values_follow_changes_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLGATE_TEST_API_KEY", raising=False)
    assert "value-of-the-test-key" not in own_secret_values()
    monkeypatch.setenv("TOOLGATE_TEST_API_KEY", "value-of-the-test-key")
    assert "value-of-the-test-key" in own_secret_values()  # the cached answer is not reused after a change
    assert own_secret_values() is own_secret_values()  # and is reused while nothing changes
    monkeypatch.setenv("TOOLGATE_TEST_API_KEY", "another-value-now")
    assert "value-of-the-test-key" not in own_secret_values() and "another-value-now" in own_secret_values()


def test_own_environment_follows_changes_and_each_caller_gets_its_own_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLGATE_TEST_VISIBLE", raising=False)
    monkeypatch.setenv("TOOLGATE_TEST_API_KEY", "value-of-the-test-key")
    first = child_environment(extra={"PAGER": "cat"})
    assert "TOOLGATE_TEST_VISIBLE" not in first and "TOOLGATE_TEST_API_KEY" not in first
    first["MUTATED"] = "by the caller"  # must not leak into the next caller's copy
    monkeypatch.setenv("TOOLGATE_TEST_VISIBLE", "yes")
    second = child_environment(extra={"PAGER": "cat"})
    assert second["TOOLGATE_TEST_VISIBLE"] == "yes" and "MUTATED" not in second
    assert "TOOLGATE_TEST_API_KEY" not in second
    # Other arguments are not answered from the copy made for these.
    assert child_environment(pass_through=["toolgate_test_api_key"])["TOOLGATE_TEST_API_KEY"] == "value-of-the-test-key"
    assert child_environment().get("PAGER") == os.environ.get("PAGER")
    monkeypatch.setenv("TOOLGATE_TEST_VISIBLE", "changed")
    assert child_environment(extra={"PAGER": "cat"})["TOOLGATE_TEST_VISIBLE"] == "changed"
    monkeypatch.delenv("TOOLGATE_TEST_VISIBLE")
    assert "TOOLGATE_TEST_VISIBLE" not in child_environment(extra={"PAGER": "cat"})
