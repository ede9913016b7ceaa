"""Finding text in a transcript from its bytes gives what parsing the whole transcript gives."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Literal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolgate.agent.conversation import Block, ChatMessage, user_text
from toolgate.agent.transcript import CompactedEntry, Entry, MessageEntry, Transcript, load_transcript
from toolgate.agent.transcript_export import find_text
from toolgate.agent.transcript_search import TEXT_BLOCK_OPENING, find_in_transcript
from toolgate.core.messages import TextBlock, ToolResult, ToolUse

# Characters JSON escapes (quote, backslash, controls, line breaks), non-ASCII ones whose lower case is ASCII
# (Kelvin sign, dotted capital I) or longer, or depends on what follows (capital sigma), and plain letters in
# both cases, so that random queries often match.
_CHARS = 'aAkKiIsS \t\n\r"\\/{}:,\x00\x1b\x7f\u2028é\u00c9\u212a\u0130\u03a3\u03c3ß\u1e9e\U0001f600'
texts = st.text(alphabet=_CHARS, max_size=10)


def _tool_use(text: str) -> ToolUse:
    return ToolUse(id="t1", name="Bash", input={"command": text})


def _said(role: Literal["user", "assistant"], *blocks: Block) -> MessageEntry:
    return MessageEntry(message=ChatMessage(role=role, content=list(blocks)))


# Everything a transcript holds that has text in it: prompts and answers (searched), a call's input, its result
# and a summary's head (not searched), and a result made of text blocks (the block's opening, but not a prompt).
entries: st.SearchStrategy[Entry] = st.one_of(
    texts.map(lambda text: _said("user", TextBlock(text=text))),
    st.tuples(texts, texts).map(lambda pair: _said("assistant", TextBlock(text=pair[0]), _tool_use(pair[1]))),
    texts.map(lambda text: _said("user", ToolResult(tool_use_id="t1", content=text))),
    texts.map(lambda text: _said("user", ToolResult(tool_use_id="t1", content=[TextBlock(text=text)]))),
    texts.map(lambda text: CompactedEntry(head=[user_text(text)], kept_messages=0, trigger="manual")),
)
_CUT_MESSAGE = b'{"type":"message","message":{"role":"user","content":[' + TEXT_BLOCK_OPENING
# Lines the writer never wrote: cut short by a crash (then ended by the next append), or damaged by hand (a
# carriage return between two parts of a message ends a line for the loader, so neither part is read).
damage = st.one_of(
    texts.map(lambda text: _said("user", TextBlock(text=text)).model_dump_json().encode().replace(b',"', b',\r"', 1)),
    texts.map(lambda text: TEXT_BLOCK_OPENING + text.encode()),
    texts.map(lambda text: _CUT_MESSAGE + text.encode()),
    st.binary(max_size=12),
)
steps = st.lists(st.one_of(entries, damage), max_size=8)


def _write(path: Path, written: list[Entry | bytes]) -> bytes:
    for step in written:
        if isinstance(step, bytes):
            with open(path, "ab") as handle:
                handle.write(step)
        else:
            transcript = Transcript(path)
            transcript.append(step)
            transcript.close()
    return path.read_bytes() if path.exists() else b""


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(written=steps, data=st.data())
def test_finding_in_the_bytes_equals_finding_in_the_parsed_transcript(
    written: list[Entry | bytes], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "transcript.jsonl"
        raw = _write(path, written)
        history = load_transcript(path).history
        said = [block.text for message in history for block in message.content if isinstance(block, TextBlock)]
        # Queries that match often: a piece of a prompt or an answer, in another case; and random ones.
        piece = st.sampled_from(said or [""]).flatmap(
            lambda text: st.tuples(st.integers(0, len(text)), st.integers(1, 4)).map(
                lambda cut: text[cut[0] : cut[0] + cut[1]]
            )
        )
        pieces = piece.filter(bool).flatmap(lambda text: st.sampled_from([text, text.upper(), text.swapcase()]))
        for query in data.draw(st.lists(st.one_of(pieces, st.text(alphabet=_CHARS, min_size=1, max_size=3)))):
            assert find_in_transcript(path, raw, query) == find_text(history, query), query


def test_the_writer_opens_every_text_block_as_the_scan_expects() -> None:
    line = MessageEntry(message=ChatMessage(role="assistant", content=[TextBlock(text="hi")])).model_dump_json()
    assert TEXT_BLOCK_OPENING + b'hi"}' in line.encode()


def test_escaped_and_non_ascii_text_is_found_in_prompts_and_answers_only(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    raw = _write(
        path,
        [
            MessageEntry(message=ChatMessage(role="assistant", content=[_tool_use("milk"), TextBlock(text="ok")])),
            MessageEntry(message=ChatMessage(role="user", content=[ToolResult(tool_use_id="t1", content="okapi")])),
            MessageEntry(message=user_text('Say "hi" to the Cache\\ at the café\nnow')),
        ],
    )
    assert find_in_transcript(path, raw, "cache") == 'Say "hi" to the Cache\\ at the café now'
    assert find_in_transcript(path, raw, '"HI"') == 'Say "hi" to the Cache\\ at the café now'
    assert find_in_transcript(path, raw, "CAFÉ\nNOW") == 'Say "hi" to the Cache\\ at the café now'
    assert find_in_transcript(path, raw, "milk") is None  # a call's input
    assert find_in_transcript(path, raw, "okapi") is None  # a call's result


def test_a_line_cut_short_does_not_hide_the_lines_after_it(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    raw = _write(
        path,
        [
            MessageEntry(message=user_text("first")),
            TEXT_BLOCK_OPENING + b"the crash came here",  # the string never ends: the writer ends the line
            MessageEntry(message=user_text("later prompt")),
        ],
    )
    assert find_in_transcript(path, raw, "crash") is None
    assert find_in_transcript(path, raw, "later") == "later prompt"
