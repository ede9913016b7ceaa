"""The shape of server/toolgate: its top-level packages import only downward (LAYERS), no import cycle between
its modules, and no module over 500 lines (the extension's TypeScript modules are held to the same length).

An import cycle is found by a small AST pass (nothing is imported): every `import a.b` and `from a import b`
of a toolgate module, resolved to the module it names (`from toolgate.tools import _write` is the module
`toolgate.tools._write`; `from toolgate.tools import ReadTool` is the package `toolgate.tools`).

- Imports under `if TYPE_CHECKING:` do not count: they never run, and annotations naming each other's types
  (core's ToolContext and Tool, for instance) are not a dependency of one module's code on another's.
- Function-local imports DO count. A lazy import defers a loop to the moment the function runs; it does not
  remove it (`cli/main.py` imports its commands lazily for a fast start, and the commands once imported
  `UsageError` back from it). Lazy imports stay fine for speed, as long as they point one way.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import toolgate

PACKAGE_DIR = Path(toolgate.__file__).parent
MAX_MODULE_LINES = 500
GENERATED_MARKERS = ("@generated", "do not edit")  # looked for in lower case
REPO_ROOT = Path(__file__).resolve().parents[2]
EXTENSION_SOURCES = (REPO_ROOT / "extension" / "src", REPO_ROOT / "extension" / "webview")


def module_files(package_dir: Path) -> dict[str, Path]:
    """Dotted module name → file, for every module in the package (a package is its __init__.py)."""
    root = package_dir.parent
    found: dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: at module level or in a function, not under `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for statement in child.orelse:
                yield from _runtime_imports_of(statement)
            continue
        yield from _runtime_imports_of(child)


def _runtime_imports_of(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    else:
        yield from _runtime_imports(node)


def _absolute(module: str, is_package: bool, statement: ast.ImportFrom) -> str:
    if not statement.level:
        return statement.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (statement.level - 1)]
    return ".".join([*parts, *([statement.module] if statement.module else [])])


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Module → the package's modules it imports when it runs."""
    modules = module_files(package_dir)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for statement in _runtime_imports(tree):
            if isinstance(statement, ast.Import):
                targets = [alias.name for alias in statement.names]
            else:
                base = _absolute(name, path.name == "__init__.py", statement)
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in statement.names
                ]
            graph[name].update(target for target in targets if target in modules and target != name)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1 or node in graph[node]:
                        cycles.append(sorted(group))
    return cycles


# The top-level packages of server/toolgate, lowest first: a package may import from its own layer's packages'
# neighbours only if no cycle results, and from lower layers freely; never from a higher one. A module directly
# under toolgate/ (runtime.py, testing.py, …) is a package of its own here; "toolgate" is the root __init__.
LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(layer.split())
    for layer in (
        "toolgate",  # the version, nothing else
        "text",  # pure algorithms, no I/O
        "core",  # the tool contract, runner, file state, dependencies (core.containment: what the sandbox offers)
        "bash shell session_files session_lease checkpoints mockmodel",  # analysis; running; stores; test peer
        "permissions",  # rules, settings, the ladder (asks bash/ what a command does, shell/ runs its hooks)
        "sandbox",  # containment: reads the permissions' network and safety tables, wraps shell/'s executors
        "mcp",  # MCP client: server tools adapted to the tool contract
        "tools",  # one module per tool
        "runtime testing",  # the composition root: session + registry + runner (+ sandbox, checkpoints, MCP)
        "agent",  # the loop and the providers
        "sidecar",  # the editor's JSON-RPC server
        "cli __main__",  # the `toolgate` command (serve starts the sidecar; `mcp serve` is cli/mcp_server.py)
    )
)


def top_package(module: str) -> str:
    """`toolgate.shell.executor` → `shell`; `toolgate.runtime` → `runtime`; `toolgate` → `toolgate`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Top-level package → the other top-level packages its modules import when they run."""
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        source = top_package(module)
        packages.setdefault(source, set()).update(t for t in map(top_package, targets) if t != source)
    return packages


def upward_imports(graph: dict[str, set[str]], layers: Sequence[frozenset[str]]) -> list[str]:
    """Every module import that points from a package to one in a higher layer (or to an unplaced package)."""
    rank = {package: level for level, layer in enumerate(layers) for package in layer}
    problems: list[str] = []
    for module, targets in sorted(graph.items()):
        source = top_package(module)
        for target in sorted(targets):
            to = top_package(target)
            if source not in rank or to not in rank:
                unplaced = source if source not in rank else to
                problems.append(f"{module} -> {target}: place package {unplaced!r} in LAYERS")
            elif rank[to] > rank[source]:
                problems.append(f"{module} -> {target}: {source} imports the higher {to}")
    return problems


def _describe(cycle: list[str], graph: dict[str, set[str]]) -> str:
    members = set(cycle)
    edges = [f"{a} -> {b}" for a in cycle for b in sorted(graph[a]) if b in members]
    return "; ".join(edges)


def long_modules(package_dir: Path, limit: int = MAX_MODULE_LINES) -> list[str]:
    return long_files(module_files(package_dir).values(), package_dir.parent, limit)


def long_files(paths: Iterable[Path], root: Path, limit: int = MAX_MODULE_LINES) -> list[str]:
    """The hand-written files over the limit (a generated file says so in its first lines and is left out)."""
    too_long: list[str] = []
    for path in paths:
        lines = path.read_text(encoding="utf-8").splitlines()
        if any(marker in line.lower() for line in lines[:5] for marker in GENERATED_MARKERS):
            continue
        if len(lines) > limit:
            too_long.append(f"{path.relative_to(root)}: {len(lines)} lines")
    return too_long


# --- the checks on toolgate itself ------------------------------------------------------------------------


def test_no_import_cycle_between_toolgate_modules() -> None:
    graph = import_graph(PACKAGE_DIR)
    assert len(graph) > 100  # the pass really saw the package
    cycles = import_cycles(graph)
    assert not cycles, "import cycles (break them by moving the shared piece down a layer):\n" + "\n".join(
        _describe(cycle, graph) for cycle in cycles
    )


def test_top_level_packages_import_each_other_in_one_direction_only() -> None:
    graph = import_graph(PACKAGE_DIR)
    packages = package_graph(graph)
    assert {"bash", "shell", "sandbox", "permissions", "core"} <= packages.keys()  # the pass saw the packages
    cycles = import_cycles(packages)
    assert not cycles, "top-level packages that import each other at run time:\n" + "\n".join(
        _describe(cycle, packages) for cycle in cycles
    )
    problems = upward_imports(graph, LAYERS)
    assert not problems, "imports against the layers (move the shared piece down, or register it):\n" + "\n".join(
        problems
    )


def test_command_analysis_never_imports_execution() -> None:
    # bash/ decides without running anything: it may not reach shell/ (execution) or the sandbox, even one-way.
    packages = package_graph(import_graph(PACKAGE_DIR))
    assert packages["bash"] <= {"core", "text"}, packages["bash"]
    assert "sandbox" not in packages["permissions"]


def test_no_toolgate_module_is_over_500_lines() -> None:
    assert not long_modules(PACKAGE_DIR), f"split these modules (at most {MAX_MODULE_LINES} lines each)"


def test_no_extension_module_is_over_500_lines() -> None:
    # The same limit for the extension's TypeScript (the host side and the webview), generated protocol aside.
    sources = [path for folder in EXTENSION_SOURCES for path in sorted(folder.rglob("*.ts"))]
    assert len(sources) > 40  # the walk really saw the extension
    assert not long_files(sources, REPO_ROOT), f"split these modules (at most {MAX_MODULE_LINES} lines each)"


# --- the checks check what they claim (a planted cycle and a planted long module) -------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    package = tmp_path / "pkg"
    for name, text in {"__init__.py": "", **files}.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    return package


def test_a_planted_cycle_is_found_through_from_imports_and_relative_ones(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "a.py": "from pkg.b import thing\n",
            "b.py": "from . import c\n",
            "c.py": "import pkg.a\n",
            "d.py": "from pkg import a\n",  # into the cycle, not part of it
        },
    )
    assert import_cycles(import_graph(package)) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_a_function_local_import_closes_a_cycle(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "main.py": "from pkg.errors import E\n\ndef run():\n    from pkg.command import go\n    go()\n",
            "command.py": "from pkg.main import helper\n",
            "errors.py": "class E(Exception): ...\n",
        },
    )
    assert import_cycles(import_graph(package)) == [["pkg.command", "pkg.main"]]


def test_type_checking_imports_and_one_way_imports_are_no_cycle(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "a.py": "from typing import TYPE_CHECKING\nimport pkg.b\nif TYPE_CHECKING:\n    from pkg.c import C\n",
            "b.py": "import typing\nif typing.TYPE_CHECKING:\n    from pkg.a import A\nelse:\n    import pkg.c\n",
            "c.py": "import os\n",
            "sub/__init__.py": "from pkg.sub import leaf\n",
            "sub/leaf.py": "from pkg import c\n",
        },
    )
    graph = import_graph(package)
    assert graph["pkg.b"] == {"pkg.c"}  # the else branch of TYPE_CHECKING runs
    assert graph["pkg.sub"] == {"pkg.sub.leaf"}
    assert import_cycles(graph) == []


def test_a_planted_mutual_import_between_two_packages_is_found(tmp_path: Path) -> None:
    # No module cycle here (a.x -> b.y -> a.z), yet the packages a and b import each other: the package check
    # sees it, the module check does not.
    package = _package(
        tmp_path,
        {
            "a/__init__.py": "",
            "a/x.py": "from pkg.b import y\n",
            "a/z.py": "import os\n",
            "b/__init__.py": "",
            "b/y.py": "from pkg.a import z\n",
        },
    )
    graph = import_graph(package)
    assert import_cycles(graph) == []
    assert import_cycles(package_graph(graph)) == [["a", "b"]]
    layers = (frozenset({"pkg"}), frozenset({"a"}), frozenset({"b"}))
    assert upward_imports(graph, layers) == ["pkg.a.x -> pkg.b.y: a imports the higher b"]


def test_a_type_checking_import_between_packages_is_no_dependency(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "a/__init__.py": "from pkg.b import y\n",
            "b/__init__.py": "",
            "b/y.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import A\n",
        },
    )
    assert import_cycles(package_graph(import_graph(package))) == []


def test_a_planted_long_module_is_found_and_a_generated_one_is_not(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "long.py": "x = 1\n" * (MAX_MODULE_LINES + 1),
            "fits.py": "x = 1\n" * MAX_MODULE_LINES,
            "made.py": "# @generated by a tool: DO NOT EDIT\n" + "x = 1\n" * 900,
        },
    )
    assert long_modules(package) == [f"pkg/long.py: {MAX_MODULE_LINES + 1} lines"]
