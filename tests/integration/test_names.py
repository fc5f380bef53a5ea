"""No public function or method of planner/ has a parameter of 1 or 2 characters (issue 32 item 4: names at
module boundaries say what they are, `scenario` not `s`, `manifest` not `m`, `tensor_parallel` not `tp`).

Public: a module-level function, or a method of a module-level class (nested classes included), whose name
and every enclosing class's name do not start with "_". A function nested in another function is local, not
a boundary, and may keep a short name (`at(x)` of a band's formula); so may a private helper. Parameters are
the positional and keyword ones, self and cls left out (*args and **kw are not named by the caller).

ALLOWED lists the exceptions, each with its reason; a listed one that is gone must leave the list.

    .venv/bin/python tests/integration/test_names.py     # prints every short public parameter today
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_SHORT = 2

# "file:qualified name:parameter": why it keeps its short name
ALLOWED: dict[str, str] = {
    "planner/phases/training.py:pace:io": "pace's keywords are the names of the bounds it returns (compute, "
                                          "supply, io, overhead): callers pass the rates keyed by bound, pace(**per_s)",
}


def short_parameters(source: str, rel: str) -> list[str]:
    """'file:qualified name:parameter' of every public function's parameter of MAX_SHORT characters or fewer."""
    out: list[str] = []

    def visit(node: ast.AST, qual: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef) and not child.name.startswith("_"):
                visit(child, f"{qual}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and not child.name.startswith("_"):
                a = child.args
                out.extend(f"{rel}:{qual}{child.name}:{p.arg}" for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]
                           if p.arg not in ("self", "cls") and len(p.arg) <= MAX_SHORT)
            elif not isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, qual)      # an `if TYPE_CHECKING:` or try block at module level
    visit(ast.parse(source), "")
    return out


def measured() -> list[str]:
    out: list[str] = []
    for f in sorted((ROOT / "planner").rglob("*.py")):
        out += short_parameters(f.read_text(encoding="utf-8"), f.relative_to(ROOT).as_posix())
    return out


def test_no_public_function_has_a_short_parameter_but_the_listed_ones():
    new = [p for p in measured() if p not in ALLOWED]
    assert not new, (f"public parameters of {MAX_SHORT} characters or fewer: {new}; name them for what they are "
                     "(Scenario -> scenario, Plan -> plan, Manifest -> manifest, ...) or make the function private")


def test_the_list_only_holds_parameters_still_short():
    stale = sorted(set(ALLOWED) - set(measured()))
    assert not stale, f"no longer short (or gone): remove from ALLOWED: {stale}"


def test_the_check_finds_a_short_parameter_and_passes_private_and_local_ones():
    # a deliberately short public parameter is found (module function, method, keyword-only, nested class);
    # a private function's, a private class's method's, a nested function's, self and *a/**kw are not
    source = '''
def plan(s, catalog=None): ...
def ok(scenario, *a, **kw): ...
def _private(s): ...
class Public:
    def method(self, p, *, tp=1): ...
    @classmethod
    def of(cls, m): ...
    def _helper(self, x): ...
    class Inner:
        def go(self, n): ...
class _Private:
    def method(self, s): ...
def outer(scenario):
    def at(x): ...
    return at
'''
    assert short_parameters(source, "f.py") == ["f.py:plan:s", "f.py:Public.method:p", "f.py:Public.method:tp",
                                                "f.py:Public.of:m", "f.py:Public.Inner.go:n"]


if __name__ == "__main__":
    shorts = measured()
    for p in shorts:
        print(p, "(allowed)" if p in ALLOWED else "")
    print(f"{len(shorts)} short public parameters, {len([p for p in shorts if p not in ALLOWED])} not allowed")
