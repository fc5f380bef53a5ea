"""The import graph of planner/ and drafter_dashboard/ (read with ast, nothing imported) has no
circle, the packages' own __init__ included; and `planner --help` loads neither DuckDB nor pandas
nor plotly (issue 19).

An edge A -> B is an import A makes when it is loaded: module-level statements, those under
`if TYPE_CHECKING:` set aside (they never run). Imports inside a function run when it is called,
after every module-level import is done, so they cannot make a partly initialised module: they
are a graph of their own, checked for circles through the module-level edges below."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("planner", "drafter_dashboard")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(f.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = f
    return out


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _targets(node: ast.Import | ast.ImportFrom, module: str) -> set[str]:
    """The project modules an import statement loads (a submodule named in `from pkg import x` is
    the submodule; any other name is the package itself)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
            package = package[: len(package) - node.level + 1]
            base = ".".join([*package, *([base] if base else [])])
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
    out = set()
    for name in names:
        while name and name not in MODULES:       # `import planner.cli.main` loads planner.cli.main
            name = name.rpartition(".")[0]
        if name:
            out.add(name)
    return out


def _imports(module: str) -> tuple[set[str], set[str]]:
    """(module-level imports, function-local imports) of `module`, TYPE_CHECKING blocks set aside."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    top, local = set(), set()

    def walk(nodes, in_function: bool):
        for n in nodes:
            if isinstance(n, ast.If) and _is_type_checking(n):
                walk(n.orelse, in_function)
                continue
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                (local if in_function else top).update(_targets(n, module) - {module})
            inner = in_function or isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            walk(ast.iter_child_nodes(n), inner)

    walk(tree.body, False)
    return top, local


GRAPH = {m: _imports(m) for m in MODULES}


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One circle of `edges`, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state and (found := visit(n)):
                return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_the_graph_reads_what_it_should():
    # a few edges known by reading the files, so a broken reader cannot pass the checks below
    assert "planner.scenario" in GRAPH["planner.cli._common"][0]
    assert "planner._version" in GRAPH["planner"][0] and "planner.plan" not in GRAPH["planner"][0]
    assert "planner.plan" in GRAPH["planner.cli.estimate"][1]                  # inside run()
    assert "planner.plan" not in GRAPH["planner.output"][0]                     # under TYPE_CHECKING
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_circle_among_module_level_imports():
    assert _cycle({m: top for m, (top, _) in GRAPH.items()}) is None


def test_no_circle_through_function_local_imports_either():
    # plan.py imported output.py for to_json_dict, and output.py imports the report (which imports
    # plan) when it runs: a circle only a function-local import hid
    assert _cycle({m: top | local for m, (top, local) in GRAPH.items()}) is None


def test_planner_help_loads_no_duckdb_pandas_or_plotly():
    code = ("import runpy, sys\nsys.argv = ['planner', '--help']\n"
            "try:\n    runpy.run_module('planner', run_name='__main__', alter_sys=True)\n"
            "except SystemExit:\n    pass\n"
            "print('LOADED', sorted({m.split('.')[0] for m in sys.modules} & {'duckdb', 'pandas', 'plotly', "
            "'numpy', 'streamlit'}))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "usage: planner" in r.stdout and r.stdout.splitlines()[-1] == "LOADED []", r.stdout[-300:]


def test_the_planner_imports_no_plotly_or_streamlit():
    # the figures are the dashboard's (drafter_dashboard/figures.py); the planner carries neither
    found = []
    for m, f in MODULES.items():
        if m.split(".")[0] == "planner":
            for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                names = ([a.name for a in n.names] if isinstance(n, ast.Import)
                         else [n.module or ""] if isinstance(n, ast.ImportFrom) else [])
                found += [f"{m}: {x}" for x in names if x.split(".")[0] in ("plotly", "streamlit")]
    assert found == []
