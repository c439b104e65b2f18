"""Layering guards for the product package and for kubesim: no import cycles between their
modules, and no module named after a standard-library one.

Imports are read statically (`ast`), every one of them: top level and inside functions alike,
relative ones resolved. Only imports under `if TYPE_CHECKING:` are left out (they never run)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PACKAGES = [
    pytest.param("verify", id="verify"),
    pytest.param("tests/kubesim", id="tests/kubesim"),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(package: str) -> dict[str, Path]:
    """Every module under the package directory, by dotted name."""
    return {module_name(p): p for p in sorted((REPO / package).rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Import statements anywhere in the tree, except in the body of `if TYPE_CHECKING:`."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _parse(path: Path) -> ast.Module:
    """ast.parse, asked again when CPython 3.11.7's AST converter trips over another thread's
    parsing (gh-106905, fixed in 3.11.8: "AST constructor recursion depth mismatch"): a kubesim
    thread left by an earlier test in this worker may be importing while this test parses."""
    for _ in range(4):
        try:
            return ast.parse(path.read_text(), filename=str(path))
        except SystemError as e:
            if "recursion depth mismatch" not in str(e):
                raise
    return ast.parse(path.read_text(), filename=str(path))


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of `known` that module `name` (at `path`) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _imports(_parse(path)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                base_parts = package.split(".")
                if node.level > 1:
                    base_parts = base_parts[: -(node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # `from pkg import sub` imports the submodule `pkg.sub`; `from mod import name`, `mod`
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for target in targets:
            # `import a.b.c` runs a.b.c; the nearest known module is what it depends on
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def import_graph(package: str) -> dict[str, set[str]]:
    mods = modules(package)
    known = set(mods)
    return {name: imported_modules(name, path, known) for name, path in mods.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path back to its start) per strongly connected component that has one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def strongconnect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(comp)

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)

    cycles = []
    for comp in components:
        start = min(comp)
        # breadth-first from start back to start, inside the component: a shortest cycle
        paths = {start: [start]}
        queue = [start]
        cycle: list[str] | None = None
        while queue and cycle is None:
            v = queue.pop(0)
            for w in sorted(graph[v] & comp):
                if w == start:
                    cycle = [*paths[v], start]
                    break
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    queue.append(w)
        assert cycle is not None
        cycles.append(cycle)
    return cycles


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycles(package: str) -> None:
    cycles = find_cycles(import_graph(package))
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_is_named_after_a_standard_library_module(package: str) -> None:
    clashes = sorted(
        name
        for name in modules(package)
        if name.rpartition(".")[2] in sys.stdlib_module_names and not name.endswith("__main__")
    )
    assert not clashes, f"named after standard-library modules: {', '.join(clashes)}"


def test_the_checker_sees_function_level_imports_and_skips_type_checking_ones(tmp_path: Path) -> None:
    """The guard itself: a cycle through an import inside a function counts; one through an
    `if TYPE_CHECKING:` import does not; relative imports resolve."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .a import x\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nfrom .d import y\nif TYPE_CHECKING:\n    from .a import z\n"
    )
    (pkg / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.c import w\n"
    )
    known = {"pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d"}
    graph = {
        m: imported_modules(m, pkg / ("__init__.py" if m == "pkg" else f"{m[4:]}.py"), known) for m in known
    }
    assert graph["pkg.a"] == {"pkg.b"}
    assert graph["pkg.b"] == {"pkg.a"}
    assert graph["pkg.c"] == {"pkg.d"}
    assert graph["pkg.d"] == set()
    assert find_cycles(graph) == [["pkg.a", "pkg.b", "pkg.a"]]


# a module over this is doing more than one job (kubesim's assembly, cluster.py, is the largest)
MAX_LINES = {"verify": 400, "tests/kubesim": 600}


@pytest.mark.parametrize("package", list(MAX_LINES))
def test_no_module_is_doing_several_jobs(package: str) -> None:
    too_long = {
        name: lines
        for name, path in modules(package).items()
        if (lines := len(path.read_text().splitlines())) > MAX_LINES[package]
    }
    assert not too_long, f"split these along their jobs: {too_long}"


# what reads a refused exec's text does no I/O: the exec transport imports it, never the reverse,
# and it opens no socket of its own (kube.api lends it the TLS wording, kube.retry the policy)
SOCKET_MODULES = {"verify.kube.exec", "verify.kube.stream", "verify.kube.transport", "verify.kube.daemons"}


def test_the_exec_refusal_reader_is_apart_from_the_exec_transport() -> None:
    graph = import_graph("verify")
    assert "verify.kube.refusal" in graph["verify.kube.exec"]
    assert not graph["verify.kube.refusal"] & SOCKET_MODULES, graph["verify.kube.refusal"]
    source = (REPO / "verify/kube/refusal.py").read_text()
    assert not {"socket", "websocket", "httpx"} & {
        alias.name.partition(".")[0]
        for node in _imports(ast.parse(source))
        for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])
    }
