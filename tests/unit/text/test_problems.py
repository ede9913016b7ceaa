"""The 'new problems' diff: problems an edit only moved are old, the same message elsewhere is new, and the cap is
announced."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toolgate.text.problems import (
    Baseline,
    FileProblems,
    Problem,
    baselines_after_moves,
    fair_shares,
    line_map,
    new_problems,
    problem_line,
    render_new_problems,
    reported,
    utf16_to_column,
)

OLD = "import a\nconst x: number = 'no'\nconsole.log(x)\n"


def err(line: int, message: str = "Type 'string' is not assignable to type 'number'.", column: int = 6) -> Problem:
    return Problem(line, column, "error", message, "ts", "2322")


def test_a_problem_moved_down_by_inserted_lines_is_not_new() -> None:
    new = "// one\n// two\n" + OLD
    assert new_problems([err(1)], [err(3)], OLD, new) == []


def test_a_problem_moved_up_by_removed_lines_is_not_new() -> None:
    new = OLD.replace("import a\n", "")
    assert new_problems([err(1)], [err(0)], OLD, new) == []


def test_the_same_message_on_another_line_is_new() -> None:
    new = OLD + "const y: number = 'no'\n"
    assert new_problems([err(1)], [err(1), err(3)], OLD, new) == [err(3)]


def test_a_problem_on_a_line_the_edit_changed_is_new() -> None:
    new = OLD.replace("const x: number = 'no'", "const x: number = 'still no'")
    assert new_problems([err(1)], [err(1)], OLD, new) == [err(1)]


def test_a_problem_that_stayed_on_its_unchanged_line_is_not_new_but_a_second_copy_is() -> None:
    new = OLD.replace("console.log(x)", "console.log(x, x)")
    assert new_problems([err(1)], [err(1), err(1)], OLD, new) == [err(1)]


def test_a_different_message_or_column_on_the_same_line_is_new() -> None:
    new = "// added\n" + OLD
    other = err(2, "Cannot find name 'x'.")
    moved_column = err(2, column=9)
    assert new_problems([err(1)], [other, moved_column], OLD, new) == [other, moved_column]


def test_every_problem_of_a_file_that_had_none_is_new() -> None:
    assert new_problems([], [err(0), err(2)], "", OLD) == [err(0), err(2)]


def test_a_change_in_the_middle_maps_lines_on_both_sides_of_it() -> None:
    old = "".join(f"line {i}\n" for i in range(10))
    new = old.replace("line 4\n", "line 4a\nline 4b\nline 4c\n")
    where = line_map(old, new)
    assert [where(i) for i in range(10)] == [0, 1, 2, 3, None, 7, 8, 9, 10, 11]


@given(
    lines=st.lists(st.sampled_from(["a", "b", "c", "d", ""]), max_size=30),
    inserted=st.lists(st.sampled_from(["x", "y", "a"]), max_size=8),
    at=st.integers(min_value=0, max_value=30),
    data=st.data(),
)
def test_an_insertion_never_makes_an_old_problem_on_an_unchanged_line_new(
    lines: list[str], inserted: list[str], at: int, data: st.DataObject
) -> None:
    at = min(at, len(lines))
    old = "".join(f"{line}\n" for line in lines)
    new = "".join(f"{line}\n" for line in [*lines[:at], *inserted, *lines[at:]])
    where = line_map(old, new)
    mapped = [(i, where(i)) for i in range(len(lines))]
    # Every line the edit kept is found again, with its own text.
    new_lines = new.splitlines()
    for i, j in mapped:
        if j is not None:
            assert new_lines[j] == lines[i]
    # Lines are found in their order (a problem never jumps over another).
    targets = [j for _, j in mapped if j is not None]
    assert targets == sorted(targets)
    before = [err(i, message=f"m{i}") for i in data.draw(st.sets(st.integers(0, max(len(lines) - 1, 0))))]
    before = [p for p in before if p.line < len(lines)]
    after = [err(j, message=p.message) for p in before if (j := where(p.line)) is not None]
    assert new_problems(before, after, old, new) == []


def test_only_errors_and_warnings_are_reported_errors_first() -> None:
    warning = Problem(0, 0, "warning", "unused", "eslint", "no-unused-vars")
    hint = Problem(0, 0, "hint", "could be const")
    info = Problem(1, 0, "information", "spelling")
    assert reported([warning, hint, info, err(2)]) == [err(2), warning]


def test_a_problem_line_names_file_line_column_severity_source_and_message() -> None:
    text = "let a = 1\nconst x: number = 'no'\n"
    assert problem_line("src/main.ts", text, err(1)) == (
        "src/main.ts:2:7 error (ts 2322): Type 'string' is not assignable to type 'number'."
    )


def test_columns_count_characters_not_utf16_units() -> None:
    line = "const s = '😀'; bad"
    units = line.encode("utf-16-le").index("bad".encode("utf-16-le")) // 2
    assert utf16_to_column(line, units) == line.index("bad")
    text = f"{line}\n"
    assert problem_line("a.ts", text, Problem(0, units, "error", "x")).startswith(f"a.ts:1:{line.index('bad') + 1} ")


def test_a_multi_line_message_stays_indented_under_its_problem() -> None:
    problem = Problem(0, 0, "error", "Type 'A' is not assignable.\n  Property 'b' is missing.", "ts")
    assert problem_line("a.ts", "x\n", problem) == (
        "a.ts:1:1 error (ts): Type 'A' is not assignable.\n      Property 'b' is missing."
    )


def test_nothing_is_rendered_without_new_problems() -> None:
    assert render_new_problems([FileProblems("a.ts", "x\n", [])]) is None


def test_the_cap_is_announced_with_the_total() -> None:
    text = "".join(f"line {i}\n" for i in range(30))
    many = FileProblems("a.ts", text, [err(i, column=0) for i in range(25)])
    out = render_new_problems([many], cap=20)
    assert out is not None
    lines = out.splitlines()
    assert "showing 20 of 25" in lines[0]
    assert len(lines) == 22
    assert lines[-2].startswith("a.ts:20:1 error")
    assert lines[-1] == "(5 more in a.ts not shown)"


def warn(line: int) -> Problem:
    return Problem(line, 0, "warning", "'y' is declared but its value is never read.", "ts", "6133")


def test_the_cap_is_shared_between_files_so_one_file_cannot_hide_the_others() -> None:
    text = "".join(f"line {i}\n" for i in range(40))
    files = [
        FileProblems("big.ts", text, [err(i, column=0) for i in range(30)]),
        FileProblems("small.ts", text, [err(i, column=0) for i in range(3)]),
        FileProblems("mid.ts", text, [err(i, column=0) for i in range(12)]),
    ]
    out = render_new_problems(files, cap=20)
    assert out is not None
    lines = out.splitlines()
    assert "showing 20 of 45" in lines[0]
    shown = [line.split(":", 1)[0] for line in lines[1:] if not line.startswith("(")]
    # small.ts has 3, the rest is split evenly between the two that have more.
    assert [shown.count(label) for label in ("big.ts", "small.ts", "mid.ts")] == [9, 3, 8]
    assert "(21 more in big.ts not shown)" in lines
    assert "(4 more in mid.ts not shown)" in lines
    assert not any("small.ts not shown" in line for line in lines)
    # Each file's lines stay together, its left-out count right after them.
    assert lines.index("(21 more in big.ts not shown)") == 1 + 9


def test_errors_take_the_cap_before_warnings_and_a_file_with_none_shown_still_says_what_it_left_out() -> None:
    text = "".join(f"line {i}\n" for i in range(10))
    files = [
        FileProblems("warned.ts", text, [warn(i) for i in range(5)]),
        FileProblems("broken.ts", text, [err(i, column=0) for i in range(5)]),
    ]
    out = render_new_problems(files, cap=4)
    assert out is not None
    assert out.splitlines()[1:] == [
        "(5 more in warned.ts not shown)",
        *(f"broken.ts:{i + 1}:1 error (ts 2322): Type 'string' is not assignable to type 'number'." for i in range(4)),
        "(1 more in broken.ts not shown)",
    ]


def test_fair_shares_deals_one_at_a_time_to_each_list_with_more() -> None:
    assert fair_shares([30, 3, 12], 20) == [9, 3, 8]
    assert fair_shares([1, 1, 1], 2) == [1, 1, 0]
    assert fair_shares([2, 5], 20) == [2, 5]
    assert fair_shares([], 20) == []
    assert fair_shares([4, 4], 0) == [0, 0]


def test_a_moved_file_is_compared_with_its_old_path() -> None:
    before = {"old.ts": Baseline(OLD, [err(1)]), "kept.ts": Baseline("x\n", [])}
    baselines = baselines_after_moves(before, {"new.ts": "old.ts"})
    assert baselines == {"old.ts": before["old.ts"], "kept.ts": before["kept.ts"], "new.ts": before["old.ts"]}
    moved = baselines["new.ts"]
    # The old problem, at its place in the moved file, is not new; one added with the move is.
    new_text = OLD + "const y: number = 'no'\n"
    assert new_problems(moved.problems, [err(1), err(3)], moved.text, new_text) == [err(3)]


def test_a_move_from_a_path_with_no_baseline_gives_none() -> None:
    assert baselines_after_moves({}, {"new.ts": "gone.ts"}) == {}


def test_under_the_cap_every_problem_is_listed_without_a_cap_notice() -> None:
    out = render_new_problems([FileProblems("a.ts", OLD, [err(1)]), FileProblems("b.ts", OLD, [err(2)])])
    assert out is not None
    assert "showing" not in out
    assert out.splitlines()[1:] == [
        "a.ts:2:7 error (ts 2322): Type 'string' is not assignable to type 'number'.",
        "b.ts:3:7 error (ts 2322): Type 'string' is not assignable to type 'number'.",
    ]
