"""Edit with curly quotes, through the real runtime: a straight-quote old_string matches curly text, and the
new text is written in the file's quote style (the pure parts are tested in tests/unit/text/test_quotes.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.core.permission import PermissionMode
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.testing import AllowingApprover, run1
from toolgate.text.quotes import restyle_quotes
from toolgate.text.replace import find_matches


async def edit_file(rt: Runtime, path: Path, content: str, old: str, new: str) -> tuple[str, str]:
    await anyio.Path(path).write_text(content, encoding="utf-8")
    assert not (await run1(rt, "Read", file_path=str(path))).is_error
    result = await run1(rt, "Edit", file_path=str(path), old_string=old, new_string=new)
    assert not result.is_error, result.text()
    return await anyio.Path(path).read_text(encoding="utf-8"), result.text()


@pytest.mark.parametrize(
    ("content", "old", "new", "expected"),
    [
        pytest.param(
            "He said \u201chello\u201d and it\u2019s fine\n",
            'said "hello" and it\'s',
            "said \"goodbye\" and it's 'x'",
            "He said \u201cgoodbye\u201d and it\u2019s \u2018x\u2019 fine\n",
            id="doubles, apostrophe, new singles",
        ),
        pytest.param(
            "title = \u201cShe said \u2018hi\u2019\u201d\n",
            "\"She said 'hi'\"",
            "\"She said 'bye'\"",
            "title = \u201cShe said \u2018bye\u2019\u201d\n",
            id="nested quotes",
        ),
        pytest.param(
            "don\u2019t stop\n",
            "don't stop",
            "won't stop, can't stop",
            "won\u2019t stop, can\u2019t stop\n",
            id="apostrophes between letters",
        ),
        pytest.param(
            "(\u201cquoted\u201d)\n",
            '("quoted")',
            '("changed")',
            "(\u201cchanged\u201d)\n",
            id="opening after a bracket",
        ),
        pytest.param(
            "print('a') # \u201cb\u201d\n",
            "print('a') # \"b\"",
            "print('c') # \"d\"",
            "print('c') # \u201cd\u201d\n",
            id="straight singles stay straight while doubles are curly",
        ),
        pytest.param(
            'x = "straight" and \u201ccurly\u201d\n',
            '"straight" and "curly"',
            '"STRAIGHT" and "CURLY"',
            'x = "STRAIGHT" and \u201cCURLY\u201d\n',
            id="a match mixing styles keeps each position's style",
        ),
        pytest.param(
            "plain 'text' here\n",
            "plain \u2018text\u2019",
            "plain \u2018words\u2019",
            "plain 'words' here\n",
            id="curly quotes the file does not have become straight",
        ),
    ],
)
async def test_quote_styles(rt: Runtime, workspace: Path, content: str, old: str, new: str, expected: str) -> None:
    written, text = await edit_file(rt, workspace / "q.txt", content, old, new)
    assert written == expected
    assert "curly quotes" in text


async def test_exact_match_wins_and_nothing_is_restyled(rt: Runtime, workspace: Path) -> None:
    content = 'a = "x"\nb = \u201cx\u201d\n'
    written, text = await edit_file(rt, workspace / "q.txt", content, 'a = "x"', 'a = "y"')
    assert written == 'a = "y"\nb = \u201cx\u201d\n'
    assert "curly" not in text


async def test_a_match_across_straight_and_curly_lines_is_found_once_folded(rt: Runtime, workspace: Path) -> None:
    path = workspace / "q.txt"
    path.write_text('say "hi"\nsay \u201chi\u201d\n', encoding="utf-8")
    await run1(rt, "Read", file_path=str(path))
    result = await run1(
        rt, "Edit", file_path=str(path), old_string="say \u201chi\u201d\nsay \u201chi\u201d", new_string="x"
    )
    assert not result.is_error  # folded, the two-line string matches exactly once
    assert path.read_text(encoding="utf-8") == "x\n"


# Any character a text file can hold except NUL (binary) and CR (line endings have their own tests).
plain_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\r")


@settings(max_examples=examples(40), deadline=None)
@given(
    prefix=st.text(alphabet=plain_chars, max_size=30),
    middle=st.text(alphabet=plain_chars, min_size=1, max_size=10),
    suffix=st.text(alphabet=plain_chars, max_size=30),
    new=st.text(alphabet=plain_chars, min_size=1, max_size=10),
)
def test_an_edit_through_the_runtime_changes_exactly_the_matched_bytes(
    prefix: str, middle: str, suffix: str, new: str
) -> None:
    text = prefix + middle + suffix
    if middle == new or len(find_matches(text, middle)) != 1:
        return  # line-ending conversion and ambiguity have their own tests
    [(start, end)] = find_matches(text, middle).spans
    expected = text[:start] + (restyle_quotes(middle, text[start:end], new) if text[start:end] != middle else new)
    expected += text[end:]

    async def scenario(workspace: Path) -> bytes:
        runtime = build_runtime(workspace, AllowingApprover(), RuntimeOptions(mode=PermissionMode.BYPASS))
        try:
            target = workspace / "f.txt"
            target.write_bytes(text.encode("utf-8"))
            await run1(runtime, "Read", file_path=str(target), offset=1, limit=1)
            result = await run1(runtime, "Edit", file_path=str(target), old_string=middle, new_string=new)
            assert not result.is_error, result.text()
            return target.read_bytes()
        finally:
            await runtime.aclose()

    with tempfile.TemporaryDirectory() as directory:
        written = anyio.run(scenario, Path(directory))
    assert written == expected.encode("utf-8")
