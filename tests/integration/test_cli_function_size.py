"""No function in planner/cli/ is over 60 lines or a cyclomatic complexity of 15 (issue 32 items 2 and 3).

The complexity is counted as radon and mccabe count it: 1, plus 1 for each if / elif, for, while, except,
conditional expression, comprehension `if`, assert, match case, and each `and` / `or` beyond the first."""
from __future__ import annotations

import ast

from tests.helpers import ROOT

MAX_LINES, MAX_COMPLEXITY = 60, 15


def complexity(fn: ast.AST) -> int:
    n = 1
    for node in ast.walk(fn):
        if node is not fn and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue   # a nested function is counted on its own (its nodes are walked here all the same)
        if isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.IfExp, ast.Assert,
                             ast.match_case)):
            n += 1
        elif isinstance(node, ast.comprehension):
            n += len(node.ifs) + 1
        elif isinstance(node, ast.BoolOp):
            n += len(node.values) - 1
    return n


def _functions():
    for path in sorted((ROOT / "planner" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"{path.name}:{node.lineno} {node.name}", node


def test_the_counter_counts():
    # 1 + if + elif + for + a comprehension with one if (2) + one `and` = 7, worked by hand
    fn = ast.parse("def f(x):\n    if x and x > 1:\n        pass\n    elif x:\n        pass\n"
                   "    for y in x:\n        pass\n    return [z for z in x if z]\n").body[0]
    assert complexity(fn) == 7


def test_no_function_in_the_cli_is_too_long_or_too_branched():
    too_big = [f"{name}: {fn.end_lineno - fn.lineno + 1} lines, complexity {complexity(fn)}"
               for name, fn in _functions()
               if fn.end_lineno - fn.lineno + 1 > MAX_LINES or complexity(fn) > MAX_COMPLEXITY]
    assert too_big == []
