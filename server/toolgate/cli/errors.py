"""What every command of the CLI may raise: `cli.main` reports it, the commands raise it.

Its own module so that the commands do not import `cli.main` (which imports them): no import loop in `cli/`.
"""

from __future__ import annotations


class UsageError(Exception):
    """Bad command-line usage: reported on stderr with exit status 2."""
