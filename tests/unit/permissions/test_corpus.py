"""The Bash permission corpus: hundreds of (command, rules, mode) cases from everyday agent use and from
permission bypasses reported against coding agents. Every decision exactly as expected, zero false allows
(reported on their own, since a false allow is the one mistake that matters), and with no classifier at all
nothing is allowed."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest
from tests.unit.permissions.corpus import Case, Layout, build_layout, load_cases
from tests.unit.permissions.helpers import make_runtime

from toolgate.bash.classify import classify as REAL
from toolgate.permissions.bash import Classifier, Unclassified


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Layout]:
    yield build_layout(tmp_path_factory.mktemp("corpus"))


def decide_all(layout: Layout, classifier: Classifier) -> list[tuple[Case, str, str]]:
    """(case, decision, reason) for every case; one runtime per distinct rule set and mode."""

    async def run() -> list[tuple[Case, str, str]]:
        results: list[tuple[Case, str, str]] = []
        runtimes = {}
        try:
            for case in load_cases(layout):
                key = (case.mode, case.allow, case.ask, case.deny)
                if key not in runtimes:
                    runtimes[key] = make_runtime(
                        layout.workspace, mode=case.mode, allow=case.allow, ask=case.ask, deny=case.deny,
                        home=layout.home, classifier=classifier,
                    )  # fmt: skip
                result = await runtimes[key].check("Bash", {"command": case.command})
                results.append((case, result.decision, result.reason))
        finally:
            for rt in runtimes.values():
                await rt.aclose()
        return results

    return anyio.run(run)


def test_the_corpus_is_large_and_varied(layout: Layout) -> None:
    cases = load_cases(layout)
    assert len(cases) >= 300
    assert {c.expected for c in cases} == {"allow", "ask", "deny"}
    assert len({c.mode for c in cases}) == 4


@pytest.mark.parametrize("which", ["real", "none"])
def test_no_false_allows(layout: Layout, which: str) -> None:
    classifier = REAL if which == "real" else Unclassified
    wrong = [
        f"[{case.group}] {case.command!r}: allowed ({reason}), expected {case.expected}"
        for case, decision, reason in decide_all(layout, classifier)
        if decision == "allow" and case.expected != "allow"
    ]
    assert not wrong, "\n".join(wrong)


def test_every_decision_is_as_expected(layout: Layout) -> None:
    wrong = [
        f"[{case.group}] {case.command!r}: {decision} ({reason}), expected {case.expected}"
        for case, decision, reason in decide_all(layout, REAL)
        if decision != case.expected
    ]
    assert not wrong, f"{len(wrong)} cases differ:\n" + "\n".join(wrong)


def test_without_a_classifier_nothing_is_allowed(layout: Layout) -> None:
    decisions = {decision for _, decision, _ in decide_all(layout, Unclassified)}
    assert "allow" not in decisions
