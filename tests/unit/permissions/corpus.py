"""The Bash permission corpus (data/bash_corpus.json): its cases, and the workspace they are decided in.

Shared by the corpus test and `bench/bench_permissions.py`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from toolgate.core.permission import PermissionMode

CORPUS = Path(__file__).with_name("data") / "bash_corpus.json"


@dataclass(frozen=True, slots=True)
class Case:
    group: str
    command: str
    expected: str
    mode: PermissionMode
    allow: tuple[str, ...]
    ask: tuple[str, ...]
    deny: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Layout:
    workspace: Path
    outside: Path
    home: Path

    def fill(self, text: str) -> str:
        return (
            text.replace("{ws}", str(self.workspace))
            .replace("{outside}", str(self.outside))
            .replace("{home}", str(self.home))
        )


def load_cases(layout: Layout) -> list[Case]:
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    cases: list[Case] = []
    for group in data["groups"]:
        rules = {k: tuple(layout.fill(r) for r in group[k]) for k in ("allow", "ask", "deny")}
        for command, expected in group["cases"]:
            cases.append(Case(group["name"], layout.fill(command), expected, PermissionMode(group["mode"]), **rules))
    return cases


def build_layout(root: Path) -> Layout:
    """A workspace with the files, secrets, links and protected directories the corpus talks about."""
    ws, outside, home = root / "ws", root / "outside", root / "home"
    for directory in (ws / "src" / "lib", ws / "docs", ws / "build", ws / ".git" / "hooks", outside, home / ".ssh"):
        directory.mkdir(parents=True, exist_ok=True)
    files = {
        ws / "a.txt": "alpha\n",
        ws / "b.txt": "beta\n",
        ws / "README.md": "# readme\n",
        ws / "package.json": "{}\n",
        ws / "Makefile": "all:\n",
        ws / ".env": "SECRET=1\n",
        ws / "src" / "app.py": "print(1)\n",
        ws / "docs" / "guide.md": "guide\n",
        ws / ".git" / "config": "[core]\n",
        outside / "secret.txt": "secret\n",
        home / ".bashrc": "# rc\n",
        home / ".ssh" / "id_rsa": "key\n",
    }
    for path, text in files.items():
        path.write_text(text)
    for link, target in (
        (ws / "link_out", outside),
        (ws / "leak.txt", outside / "secret.txt"),
        (ws / "gitlink", ws / ".git"),
    ):
        if not os.path.lexists(link):
            link.symlink_to(target)
    return Layout(ws, outside, home)
