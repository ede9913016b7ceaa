"""The panel's session history and a long session, in a real VS Code with the real sidecar and the mock model.

The History button lists the sessions with their dates and prompt counts; one is renamed and found by what was said
in it. A scripted 40-request session that reads large files against a small context window (the mock's, and the
toolgate.contextWindow setting) runs to its final answer in the panel by compacting at the setting's threshold, the
context line counting what each request filled, and the turns the model now sees only through the summary are marked
as soon as they are summarised and stay on screen.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import test_real_flows
from codeserver import CodeServer
from playwright.sync_api import expect
from test_real_flows import MockFactory, send
from workbench import Workbench

from toolgate.mockmodel.sessions import FINAL_ANSWER, long_session, write_long_session_files

pytestmark = pytest.mark.e2e

mock_model = test_real_flows.mock_model

# Tokens (the mock counts 4 characters as one): the tools and system prompt take about a third; a file about 2,500.
WINDOW = 24_000
MODULES = 39  # one Read per request, then the final answer: 40 requests


def test_the_history_lists_sessions_with_dates_renames_one_and_finds_what_was_said(
    mock_model: MockFactory, workbench: Workbench
) -> None:
    mock_model([{"text": "The parser splits lines."}, {"text": "The okapi cache keeps answers for an hour."}])
    chat = workbench.open_chat()
    send(workbench, "How does the quokka parser work?")
    expect(chat.locator(".msg-assistant").last).to_contain_text("The parser splits lines.")
    chat.get_by_role("button", name="New", exact=True).click()
    expect(chat.locator(".msg-assistant")).to_have_count(0)
    send(workbench, "Explain the cache")
    expect(chat.locator(".msg-assistant").last).to_contain_text("okapi cache")

    chat.get_by_role("button", name="History").click()
    history = chat.get_by_role("region", name="Session history")
    expect(history).to_be_visible()
    parser = history.locator(".history-row", has_text="How does the quokka parser work?")
    cache = history.locator(".history-row", has_text="Explain the cache")
    for row in (parser, cache):
        expect(row.locator("time")).to_have_text(re.compile(r"^Today \d\d:\d\d$"))
        expect(row.locator(".history-meta")).to_contain_text("1 prompt")
    expect(cache).to_have_attribute("data-current", "true")
    workbench.shot("90-sessions-history")

    parser.get_by_role("button", name="Rename").click()
    title = history.get_by_label(re.compile('New title for "How does the quokka'))  # the row shows a field now
    expect(title).to_be_focused()
    title.fill("Quokka parser notes")
    title.press("Enter")
    renamed = history.locator(".history-row", has_text="Quokka parser notes")
    expect(renamed.locator(".history-title")).to_have_text("Quokka parser notes")
    expect(renamed.locator("time")).to_have_text(re.compile(r"^Today "))

    # The sidecar looks through what was said: the answer holds "okapi", no title does.
    history.get_by_label("Search sessions").fill("OKAPI")
    expect(history.locator(".history-row")).to_have_count(1)
    expect(history.locator(".history-row .history-snippet")).to_contain_text("okapi cache keeps answers")
    workbench.shot("91-sessions-search")

    # Opening one from the list shows its conversation, under the title the person gave it.
    history.get_by_label("Search sessions").fill("")
    renamed.get_by_role("button", name="Quokka parser notes").click()
    expect(history).to_be_hidden()
    expect(chat.locator(".msg-assistant").last).to_contain_text("The parser splits lines.")


@pytest.fixture
def long_session_files(code_server: CodeServer) -> Iterator[list[str]]:
    names = write_long_session_files(code_server.workspace, MODULES)
    yield names
    for name in names:
        (code_server.workspace / name).unlink(missing_ok=True)


def test_a_long_session_runs_to_its_final_answer_with_the_summarised_turns_marked(
    mock_model: MockFactory, workbench: Workbench, long_session_files: list[str]
) -> None:
    script = long_session(long_session_files, context_window=WINDOW)
    # The setting tells toolgate the window (the default model's known one is 400,000): it compacts near it.
    model = mock_model(script.pop("steps"), script=script, settings={"toolgate.contextWindow": WINDOW})
    chat = workbench.open_chat()
    send(workbench, "Read every module")

    # Marked live: the first prompt is marked while the final answer is still to come (checked in one go, in the
    # page, not between two looks). Before the compaction event said what it kept, marks came only with the turn's end.
    panel = chat.owner.element_handle().content_frame()
    assert panel is not None
    seen = panel.wait_for_function(
        """(final) => {
            if ([...document.querySelectorAll('.msg-assistant')].some((m) => m.textContent.includes(final))) {
                return 'the final answer, with nothing marked before it';
            }
            return document.querySelector(".msg-user[data-summarised='true']") ? 'marked while running' : false;
        }""",
        arg=FINAL_ANSWER,
        timeout=300_000,
    ).json_value()
    assert seen == "marked while running"
    # The context line counts what the requests fill (the OpenAI-shaped usage), out of the window set.
    expect(chat.locator(".context-usage")).to_have_text(re.compile(r"^Context [1-9][\d,]* / 24,000 \(\d+%\)"))

    expect(chat.locator(".msg-assistant").last).to_contain_text(FINAL_ANSWER, timeout=300_000)
    expect(chat.locator("button.send")).to_be_visible()
    requests = model.requests()
    answered = [r for r in requests if r["body"].get("tools") and r["status"] == 200]
    assert len(answered) == MODULES + 1  # every scripted step was played
    assert any(not r["body"].get("tools") for r in requests)  # and summaries were asked for on the way
    # The threshold made the room: the mock never had to refuse a request as too long.
    assert [r["status"] for r in requests if r["status"] != 200] == []

    # Drawn again from the transcript: the first prompt and the first reads are still there, marked as summarised.
    first = chat.locator(".msg-user", has_text="Read every module")
    expect(first).to_have_attribute("data-summarised", "true")
    expect(chat.locator("[data-summarised='true']").first).to_be_visible()
    notices = chat.locator(".notice", has_text="The conversation was compacted")
    expect(notices.first).to_be_visible()
    notice = notices.last
    notice.get_by_text("Show the summary").click()
    expect(notice.locator(".compaction-summary")).to_contain_text("Goal and constraints")
    # The final answer and the turns after the last compaction are what the model still sees verbatim.
    expect(chat.locator(".msg-assistant").last).not_to_have_attribute("data-summarised", "true")
    workbench.shot("92-long-session-compacted")
