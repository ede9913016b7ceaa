"""Programs that write files: never read-only, but the permission step wants to know where they write.

Best effort: the destinations of the common file utilities, found the way each reads its arguments.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolgate.bash.parse import Word
from toolgate.bash.programs.base import Options, Verdict, read_options

_SPECS: dict[str, tuple[Options, str]] = {
    "rm": (Options(), "rm deletes files"),
    "rmdir": (Options(), "rmdir deletes directories"),
    "unlink": (Options(), "unlink deletes a file"),
    "shred": (Options(short_values="ns"), "shred overwrites files"),
    "touch": (Options(short_values="dtr", reads=frozenset({"-r"})), "touch creates files or changes their times"),
    "mkdir": (Options(short_values="m"), "mkdir creates directories"),
    "tee": (Options(), "tee writes its input to files"),
    "truncate": (Options(short_values="sr", reads=frozenset({"-r"})), "truncate changes the size of files"),
    "chmod": (Options(), "chmod changes file permissions"),
    "chown": (Options(), "chown changes file owners"),
    "chgrp": (Options(), "chgrp changes file groups"),
    "cp": (Options(short_values="tS", writes=frozenset({"-t", "--target-directory"})), "cp copies files"),
    "mv": (Options(short_values="tS", writes=frozenset({"-t", "--target-directory"})), "mv moves files"),
    "ln": (Options(short_values="tS", writes=frozenset({"-t", "--target-directory"})), "ln creates links"),
    "install": (
        Options(short_values="gmoStS", writes=frozenset({"-t", "--target-directory"})),
        "install copies files",
    ),
    "mktemp": (Options(short_values="p"), "mktemp creates a file"),
    "dd": (Options(), "dd copies data, possibly onto a file"),
    "patch": (Options(short_values="pdiorBDFYzV"), "patch changes files"),
}


def check_writer(name: str, args: Sequence[Word]) -> Verdict:
    options, reason = _SPECS[name]
    parsed = read_options(name, args, options)
    operands = [w.value for w in parsed.operands]
    writes = list(parsed.writes)
    reads = list(parsed.reads)
    if name in ("chmod", "chown", "chgrp"):
        operands = operands[1:]  # the mode or owner
    if name == "dd":
        operands = [value.partition("=")[2] for value in operands if value.startswith("of=")]
    if name == "dd":
        reads.extend(value.partition("=")[2] for value in (w.value for w in parsed.operands) if value.startswith("if="))
    if name in ("cp", "install", "ln"):
        # The sources are read (a copy can carry a secret out of a protected place); the destination is written.
        if parsed.has("-t", "--target-directory"):
            sources, operands = operands, []  # the -t directory is already in `writes`
        elif len(operands) > 1 or name != "ln":
            sources, operands = operands[:-1], operands[-1:]
        else:
            sources = []  # `ln -s target`: the link goes in the current directory
        if name != "ln":  # a link reads nothing; its target may not even exist
            reads.extend(sources)
    if name == "patch":
        operands = operands[:1]
    writes.extend(operands)
    return Verdict.no(reason, writes=writes, reads=reads)


CHECKERS = dict.fromkeys(_SPECS, check_writer)
