"""The import graph of planner/, drafter_dashboard/ and app.py, read with ast (nothing imported), as
tests/integration/test_import_graph.py reads it and layers it (its LAYERS table):

    .venv/bin/python bench/import_graph.py [ROOT]     # ROOT: a checkout, this one by default

prints the modules, the layers, the import arrows (module-level, function-local, type-only: those
under `if TYPE_CHECKING:`), the arrows running up a layer (module-level and function-local; the
test allows none) and the cycles (strongly connected groups of modules): module-level, with the
function-local arrows added, and with the type-only arrows added."""
from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path


def _load_test(root: Path):
    spec = importlib.util.spec_from_file_location("_graph_test", root / "tests/integration/test_import_graph.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(root))
    spec.loader.exec_module(module)
    return module


def _type_only(g, module: str) -> set[str]:
    """The modules imported under `if TYPE_CHECKING:` in `module`."""
    out = set()
    for node in ast.walk(ast.parse(g.MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and g._is_type_checking(node):
            for inner in node.body:
                for n in ast.walk(inner):
                    if isinstance(n, (ast.Import, ast.ImportFrom)):
                        out |= g._targets(n, module) - {module}
    return out


def _groups(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]).resolve()
    g = _load_test(root)
    top = {m: t for m, (t, _) in g.GRAPH.items()}
    local = {m: loc - top[m] for m, (_, loc) in g.GRAPH.items()}
    typed = {m: _type_only(g, m) - top[m] - local[m] for m in g.GRAPH}

    def count(edges):
        return sum(len(t) for t in edges.values())

    def up(edges):
        return [f"{m} -> {n}" for m, t in sorted(edges.items()) for n in sorted(t) if g._layer(n) > g._layer(m)]

    layers = [name for name, _ in g.LAYERS]
    used = sorted({g._layer(m) for m in g.MODULES})
    print(f"root: {root}")
    print(f"modules: {len(g.MODULES)} (planner {sum(m.split('.')[0] == 'planner' for m in g.MODULES)})")
    print(f"layers: {len(layers)} ({' < '.join(layers)}); modules per layer: "
          + ", ".join(f"{layers[i]} {sum(g._layer(m) == i for m in g.MODULES)}" for i in used))
    print(f"import arrows: {count(top) + count(local)} (module-level {count(top)}, function-local {count(local)}); "
          f"type-only {count(typed)}")
    for name, edges in (("module-level", top), ("function-local", local)):
        found = up(edges)
        print(f"arrows up a layer, {name}: {len(found)}" + "".join(f"\n  {x}" for x in found))
    both = {m: top[m] | local[m] for m in g.GRAPH}
    typed_all = {m: both[m] | typed[m] for m in g.GRAPH}
    for name, edges in (("module-level", top), ("+ function-local", both), ("+ type-only", typed_all)):
        groups = _groups(edges)
        print(f"cycles, {name}: {len(groups)}" + "".join(f"\n  {' '.join(x)}" for x in groups))


if __name__ == "__main__":
    main()
