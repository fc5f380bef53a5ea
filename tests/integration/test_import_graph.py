"""The import graph of planner/, drafter_dashboard/ and app.py (read with ast, nothing imported) has
no circle, the packages' own __init__ included, and no upward import between the layers of LAYERS;
and `planner --help` loads neither DuckDB nor pandas nor plotly (issue 19).

An edge A -> B is an import A makes when it is loaded: module-level statements, those under
`if TYPE_CHECKING:` set aside (they never run). Imports inside a function run when it is called,
after every module-level import is done, so they cannot make a partly initialised module: they
are a graph of their own, checked for circles through the module-level edges below."""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("planner", "drafter_dashboard")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(f.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = f
    out["app"] = ROOT / "app.py"                    # the page, the top of the graph
    return out


MODULES = _modules()


def _public() -> dict[str, str]:
    """planner/__init__.py's _PUBLIC: `from planner import plan` loads planner.planning on first use
    (the package's lazy __getattr__), so it is an import of that module."""
    tree = ast.parse(MODULES["planner"].read_text(encoding="utf-8"))
    return next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "_PUBLIC" for t in n.targets))


PUBLIC = _public()


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
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES
                 else PUBLIC[a.name] if base == "planner" and a.name in PUBLIC else base for a in node.names]
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
    assert "planner._version" in GRAPH["planner"][0] and "planner.planning" not in GRAPH["planner"][0]
    assert "planner.export.plan_json" in GRAPH["planner.cli.estimate"][1]      # inside run(), for --json
    assert "planner.presets.layouts" not in GRAPH["planner.presets.drafter_kinds"][0]   # under TYPE_CHECKING
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
            "'numpy', 'streamlit', 'torch', 'transformers', 'safetensors'}))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "usage: planner" in r.stdout and r.stdout.splitlines()[-1] == "LOADED []", r.stdout[-300:]


HEAVY = ("torch", "transformers", "safetensors")     # the [preflight] extra (issue 37)


def _heavy_imports() -> list[str]:
    """'module: name (where)' for every import of the [preflight] extra's packages, where being
    'top' (module level) or 'function'."""
    found = []
    for m, f in MODULES.items():
        tree = ast.parse(f.read_text(encoding="utf-8"))
        local = {id(n) for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for n in ast.walk(fn)}
        for n in ast.walk(tree):
            names = ([a.name for a in n.names] if isinstance(n, ast.Import)
                     else [n.module or ""] if isinstance(n, ast.ImportFrom) else [])
            found += [f"{m}: {x} ({'function' if id(n) in local else 'top'})" for x in names
                      if x.split(".")[0] in HEAVY]
    return found


def test_torch_and_transformers_load_only_inside_the_preflight_run():
    # only planner/runs/preflight.py imports them, and only inside its functions: the planner, its CLI
    # and the dashboard run without the [preflight] extra
    found = _heavy_imports()
    assert found and all(x.startswith("planner.runs.preflight: ") and x.endswith("(function)") for x in found), found


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


# The layers, lowest first. A module may import its own layer and the layers below it, never one
# above. Each planner package is a layer; a new module of a package lands in its layer without
# editing this table; a new top-level planner module must be named here (else _layer fails).
# Two exact names sit below their package's layer, as the imports require: plan() refuses a figure
# that is not finite (planner.finite, which reads the Scenario) and plans the ways the blockers stop
# (planner.decisions.unblock, imported by planner.planning at module level).
LAYERS = (
    ("base", ("planner", "planner._version", "planner._moved", "planner.errors", "planner.ids", "planner.text",
              "planner.units", "planner.safe_io", "planner.distributions", "planner.findings",
              "planner.variants")),
    ("catalog", ("planner.catalog.*",)),
    ("scenario+presets", ("planner.scenario.*", "planner.presets.*")),
    ("phases", ("planner.phases.*",)),
    ("planning", ("planner.planning", "planner.finite", "planner.decisions.unblock")),
    ("decisions", ("planner.decisions.*",)),
    ("export", ("planner.export.*",)),
    ("runs", ("planner.runs.*",)),
    ("cli", ("planner.cli.*", "planner.__main__")),
    ("dashboard", ("drafter_dashboard.*",)),
    ("app", ("app",)),
)


def _layer(module: str) -> int:
    """The index in LAYERS of `module`: an exact name wins over a pattern, a longer pattern over a
    shorter one (planner.export.* over planner.*)."""
    best, rank = None, -1
    for i, (_, names) in enumerate(LAYERS):
        for name in names:
            if name == module:
                return i
            if name.endswith(".*") and (module == name[:-2] or module.startswith(name[:-1])) and len(name) > rank:
                best, rank = i, len(name)
    assert best is not None, f"{module} is in no layer of LAYERS"
    return best


def _upward(edges: dict[str, set[str]]) -> list[str]:
    """Every import of `edges` from a layer into a higher one, as 'a (layer) -> b (layer)'."""
    return [f"{m} ({LAYERS[_layer(m)][0]}) -> {n} ({LAYERS[_layer(n)][0]})"
            for m, targets in sorted(edges.items()) for n in sorted(targets) if _layer(n) > _layer(m)]


ALL_EDGES = {m: top | local for m, (top, local) in GRAPH.items()}


def test_the_layers_are_what_the_table_says():
    # read off the table by hand: the exact name beats the pattern, the longer pattern the shorter
    names = [name for name, _ in LAYERS]
    assert names[_layer("planner")] == "base" and names[_layer("planner.errors")] == "base"
    assert names[_layer("planner.catalog")] == names[_layer("planner.catalog.stats")] == "catalog"
    assert names[_layer("planner.scenario")] == names[_layer("planner.presets.specs")] == "scenario+presets"
    assert names[_layer("planner.phases.stored_bytes")] == names[_layer("planner.phases.a_new_phase")] == "phases"
    assert names[_layer("planner.planning")] == names[_layer("planner.decisions.unblock")] == "planning"
    assert names[_layer("planner.decisions.trim")] == names[_layer("planner.decisions")] == "decisions"
    with pytest.raises(AssertionError, match="planner.a_new_top_level_module is in no layer"):
        _layer("planner.a_new_top_level_module")
    assert names[_layer("planner.export.slurm")] == "export" and names[_layer("planner.runs.rundir")] == "runs"
    assert names[_layer("planner.cli._common")] == "cli" and names[_layer("drafter_dashboard.state")] == "dashboard"
    # app.py is a shim over the page (drafter_dashboard/page.py), which plans
    assert names[_layer("app")] == "app" and "app" in GRAPH and "drafter_dashboard.page" in GRAPH["app"][0]
    assert "planner.planning" in GRAPH["drafter_dashboard.page"][0]


def test_no_upward_import_module_level_or_function_local():
    # function-local imports count: they still make the lower layer depend on the higher one
    assert _upward(ALL_EDGES) == []


def test_the_planner_imports_neither_the_dashboard_nor_the_page():
    assert [f"{m} -> {n}" for m, targets in ALL_EDGES.items() if m.startswith("planner")
            for n in targets if n == "app" or n.startswith("drafter_dashboard")] == []


def test_an_injected_circle_or_upward_import_is_caught():
    # what the checks above would see if errors.py imported plan.py (plan imports errors already):
    # one circle errors -> plan -> errors (perhaps through other modules) and one upward import
    bad = {m: set(t) for m, t in ALL_EDGES.items()}
    bad["planner.errors"].add("planner.planning")
    circle = _cycle(bad)
    assert circle is not None and "planner.errors" in circle and "planner.planning" in circle
    assert set(_upward(bad)) - set(_upward(ALL_EDGES)) == {"planner.errors (base) -> planner.planning (planning)"}
    # and a phase module reaching the CLI, even from inside a function
    bad = {m: set(t) for m, t in ALL_EDGES.items()}
    bad["planner.phases.stored_bytes"].add("planner.cli._common")
    assert set(_upward(bad)) - set(_upward(ALL_EDGES)) == {
        "planner.phases.stored_bytes (phases) -> planner.cli._common (cli)"}


def _doc_layers() -> list[tuple[str, set[str]]]:
    """docs/architecture.md's layer table: (layer, the module names and patterns its row names in backticks;
    `planner` (its `__init__`) is the name planner)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        m = re.match(r"\| ([a-z+]+) \| (.*`.*) \|$", line)
        if m:
            names = set(re.findall(r"`([^`]+)`", m.group(2))) - {"__init__"}
            short = {n if n.startswith(("planner", "drafter_dashboard")) or n.endswith(".py")
                     else f"planner.{n}" for n in names}
            rows.append((m.group(1), {n.removesuffix(".py") for n in short}))
    return rows


def test_the_docs_layer_table_is_layers():
    # docs/architecture.md repeats LAYERS for readers: the same layers in the same order, each naming the same
    # modules (the base row writes them short: `errors` is planner.errors). It once named planner.memo after
    # memo.py had gone.
    assert _doc_layers() == [(name, set(names)) for name, names in LAYERS]
