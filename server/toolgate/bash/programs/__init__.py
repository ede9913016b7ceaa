"""Per-program tables: for each program the classifier knows, a checker that reads its arguments.

A program that is not here is not read-only. Each checker is pure: it sees the words, never the disk.
"""

from __future__ import annotations

from toolgate.bash.programs import builtin_queries, builtins, utilities, writers
from toolgate.bash.programs.base import Checker, Verdict
from toolgate.bash.programs.builtins import EVAL_LIKE
from toolgate.bash.programs.git import check_git
from toolgate.bash.programs.scripting import check_awk, check_jq
from toolgate.bash.programs.search import check_fd, check_find, check_rg
from toolgate.bash.programs.sed import check_sed
from toolgate.bash.programs.wrappers import WRAPPERS, check_xargs, unwrap

PROGRAMS: dict[str, Checker] = {
    **utilities.VERSION_ONLY,
    **utilities.CHECKERS,
    **builtins.CHECKERS,
    **builtin_queries.CHECKERS,
    **writers.CHECKERS,
    "git": check_git,
    "sed": check_sed,
    "find": check_find,
    "rg": check_rg,
    "fd": check_fd,
    "fdfind": check_fd,
    "jq": check_jq,
    "awk": check_awk,
    "gawk": check_awk,
    "mawk": check_awk,
    "nawk": check_awk,
    "xargs": check_xargs,
}

__all__ = ["EVAL_LIKE", "PROGRAMS", "WRAPPERS", "Checker", "Verdict", "unwrap"]
