"""The quote-aware scanner: contexts, here-documents, unterminated text, and word values."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.bash.quoting import (
    CODE,
    COMMENT,
    DOUBLE,
    HEREDOC,
    SINGLE,
    scan,
)
from toolgate.bash.word_values import _scanned_word_value, decode_ansi_c, word_value


def test_contexts_per_character() -> None:
    text = "a 'b' \"c $(d 'e') f\" # g"
    mask = scan(text).mask
    assert mask[text.index("a")] == CODE
    assert mask[text.index("b")] == SINGLE
    assert mask[text.index("c")] == DOUBLE
    assert mask[text.index("d")] == CODE  # a command substitution inside double quotes is code again
    assert mask[text.index("e")] == SINGLE
    assert mask[text.index("f")] == DOUBLE
    assert mask[text.index("g")] == COMMENT


def test_heredoc_bodies() -> None:
    text = "cat <<A <<-'B'\nbody a\nA\n\tbody b $x\n\tB\necho after"
    info = scan(text)
    first, second = info.heredocs
    assert (first.delimiter, first.quoted, first.strip_tabs) == ("A", False, False)
    assert (second.delimiter, second.quoted, second.strip_tabs) == ("B", True, True)
    assert first.body_span is not None and text[slice(*first.body_span)] == "body a\n"
    assert all(info.mask[k] == HEREDOC for k in range(text.index("body b"), text.index("echo") - 1))
    assert info.mask[text.index("echo")] == CODE
    assert info.unterminated is None


def test_here_string_is_not_a_heredoc() -> None:
    info = scan("wc -l <<< 'x'\necho next")
    assert info.heredocs == []
    assert info.unterminated is None


def test_unterminated_text_is_reported() -> None:
    assert scan("echo 'x").unterminated is not None
    assert scan('echo "x').unterminated is not None
    assert scan("echo $(ls").unterminated is not None
    assert scan("cat <<EOF\nno end").unterminated is not None
    assert scan("echo `ls").unterminated is not None


def test_comment_needs_a_word_start() -> None:
    assert COMMENT not in scan("echo a#b").mask
    assert COMMENT not in scan("echo $#").mask
    assert COMMENT in scan("echo a #b").mask


def test_ansi_c_decoding() -> None:
    assert decode_ansi_c("a\\tb\\n") == "a\tb\n"
    assert decode_ansi_c("\\x2di") == "-i"
    assert decode_ansi_c("\\101\\102") == "AB"
    assert decode_ansi_c("\\u00e9") == "é"
    assert decode_ansi_c("\\cA") == "\x01"
    assert decode_ansi_c("\\'") == "'"
    assert decode_ansi_c("\\q") == "\\q"


def test_word_flags() -> None:
    assert word_value("*.py").pattern
    assert not word_value("'*.py'").pattern
    assert word_value("{a,b}").pattern
    assert word_value("x{1..3}").pattern
    assert not word_value("{}").pattern
    assert not word_value("[").pattern
    assert word_value("[ab]").pattern
    assert word_value("$HOME").expansion
    assert word_value('"$HOME"').expansion
    assert not word_value("'$HOME'").expansion
    assert word_value("`ls`").expansion
    assert word_value("${x:-*}").expansion and not word_value("${x:-*}").pattern
    assert word_value("~/x").tilde and not word_value("~/x").other_tilde
    assert word_value("~root").other_tilde
    assert not word_value("'~'").tilde
    assert word_value("$'\\x2di'").value == "-i"


# Words of ordinary characters, with the ones that mean something to the shell mixed in now and then.
_words = st.text(alphabet=st.sampled_from("ab-_./=:,% \t\n\\'\"$`()<>#{}[]*?@+!~"), max_size=24)


@settings(max_examples=examples(500))
@given(raw=_words)
def test_the_plain_word_shortcut_agrees_with_the_full_scan(raw: str) -> None:
    assert word_value(raw) == _scanned_word_value(raw)
