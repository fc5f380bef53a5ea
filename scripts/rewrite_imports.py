"""Rewrite the old flat planner module paths (before the split into one package per concern) to
the new ones in the files given: `import planner.x`, `from planner.x import`, `from planner import x`,
dotted names (`"planner.x.name"` monkeypatch targets, importlib strings, `planner.x.f` uses) and
`planner/x.py` paths. The old -> new table is planner/_moved.py's (read here, written there once).

    .venv/bin/python scripts/rewrite_imports.py FILE...          # rewrite in place
    .venv/bin/python scripts/rewrite_imports.py --check FILE...  # exit 1 listing files with old paths

A directory given is walked for .py, .md, .toml, .txt, .cfg, .ini, .yaml and .sh files.

`planner.plan` stays the function plan() (only `planner.plan.<name>`, a quoted "planner.plan" and
imports of it are rewritten). `planner.scenario` and `planner.phases` are packages now: a name that
of the old module (bound at the top of planner/scenario/model.py, planner/phases/compose.py) goes
there, except the public names planner/scenario/__init__.py re-exports, which `from planner.scenario
import` keeps."""
from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = {".py", ".md", ".toml", ".txt", ".cfg", ".ini", ".yaml", ".sh"}


def _table() -> tuple[dict[str, str], dict[str, str], tuple[str, ...]]:
    """MOVED, FACADES and SHADOWED read from planner/_moved.py's source (nothing imported: the
    tool runs on any tree)."""
    tree = ast.parse((ROOT / "planner" / "_moved.py").read_text(encoding="utf-8"))
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and target.id in ("MOVED", "FACADES", "SHADOWED"):
                found[target.id] = ast.literal_eval(node.value)
    return found["MOVED"], found["FACADES"], tuple(found["SHADOWED"])


MOVED, FACADES, SHADOWED = _table()
OLD = {**MOVED, **FACADES}


def _submodules(package: str) -> set[str]:
    folder = ROOT.joinpath(*package.split("."))
    return {p.stem for p in folder.glob("*.py") if p.stem != "__init__"} | {
        p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()}


def _reexported(package: str) -> set[str]:
    """The names a facade package's __init__ imports (its public re-exports)."""
    init = ROOT.joinpath(*package.split("."), "__init__.py")
    tree = ast.parse(init.read_text(encoding="utf-8"))
    return {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}


def _defined(module: str) -> set[str]:
    """The names a module binds at its top level (defs, classes, assignments, imports)."""
    tree = ast.parse(ROOT.joinpath(*module.split(".")).with_suffix(".py").read_text(encoding="utf-8"))
    out = set()
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                out |= {x.id for x in ast.walk(t) if isinstance(x, ast.Name)}
    return out


SUBMODULES = {f: _submodules(f) for f in FACADES}
FACADE_NAMES = {f: _defined(new) - SUBMODULES[f] for f, new in FACADES.items()}
KEPT = {"planner.scenario": _reexported("planner.scenario"), "planner.phases": set()}


def _new_home(module: str, name: str) -> str:
    """Where `name` imported from `module` lives now (the module to import it from)."""
    if module in FACADES:
        return FACADES[module] if name in FACADE_NAMES[module] and name not in KEPT[module] else module
    if module == "planner" and f"planner.{name}" in MOVED and f"planner.{name}" not in SHADOWED:
        return "planner"            # `from planner import storage`: handled by _from_planner
    return MOVED.get(module, module)


_FROM = re.compile(r"(?P<indent>[ \t]*)from[ \t]+(?P<module>planner(?:\.\w+)*)[ \t]+import[ \t]+"
                   r"(?P<names>\([^)]*\)|[^\n;\"'`#]*[^\n;\"'`#\s])(?P<comment>[ \t]*#[^\n]*)?")


def _names(text: str) -> list[tuple[str, str | None]]:
    text = re.sub(r"#[^\n]*", "", text).strip().strip("()").replace("\\\n", " ")
    out = []
    for part in text.split(","):
        part = part.split()
        if part:
            out.append((part[0], part[2] if len(part) == 3 and part[1] == "as" else None))
    return out


def _clause(module: str, names: list[tuple[str, str | None]], indent: str, paren: bool) -> str:
    body = ", ".join(n if a is None else f"{n} as {a}" for n, a in names)
    line = f"{indent}from {module} import {body}"
    if len(line) <= 110 or not paren:
        return line
    return f"{indent}from {module} import (\n{indent}    {body},\n{indent})"


def _from(m: re.Match) -> str:
    module, indent = m["module"], m["indent"]
    names = _names(m["names"])
    paren = m["names"].startswith("(")
    groups: dict[str, list] = {}
    for name, alias in names:
        if module == "planner" and f"planner.{name}" in MOVED and f"planner.{name}" not in SHADOWED:
            package, _, new = MOVED[f"planner.{name}"].rpartition(".")
            groups.setdefault(package, []).append((new, alias or (name if new != name else None)))
        else:
            groups.setdefault(_new_home(module, name), []).append((name, alias))
    if list(groups) == [module]:
        return m.group(0)
    if len(groups) == 1 and not (module == "planner" or module in FACADES):
        return m.group(0).replace(module, next(iter(groups)), 1)
    at_line_start = m.start() == 0 or m.string[m.start() - 1] == "\n"
    sep = "\n" if at_line_start else "; "          # inline, e.g. in `python -c "..."`
    comment = m["comment"] or ""                    # a trailing noqa comment goes with every line
    return sep.join(_clause(mod, ns, indent, paren) + comment for mod, ns in groups.items())


_IMPORT = re.compile(r"(?m)^(?P<indent>[ \t]*)import[ \t]+(?P<module>planner(?:\.\w+)+)\b")
_DOTTED = re.compile(r"(?<![\w./])(?P<q>[\"']?)(?P<old>planner\.\w+)(?P<rest>(?:\.\w+)?)(?P<q2>[\"']?)")
_PATH = re.compile(r"(?<![\w./-])planner/(?P<old>\w+)\.py\b")


def _import(m: re.Match) -> str:
    module = m["module"]
    new = OLD.get(module, module)
    return f"{m['indent']}import {new}"


def _dotted(m: re.Match) -> str:
    q, old, rest, q2 = m["q"], m["old"], m["rest"], m["q2"]
    if old in FACADES:
        if rest and rest[1:] in FACADE_NAMES[old]:              # a name of the old module
            return f"{q}{FACADES[old]}{rest}{q2}"
        return m.group(0)
    if old not in MOVED:
        return m.group(0)
    if old in SHADOWED and not rest and not (q and q2):             # planner.plan(...): the function
        return m.group(0)
    return f"{q}{MOVED[old]}{rest}{q2}"


def _path(m: re.Match) -> str:
    old = f"planner.{m['old']}"
    new = OLD.get(old)
    return m.group(0) if new is None else new.replace(".", "/") + ".py"


def rewrite(text: str) -> str:
    text = _FROM.sub(_from, text)
    text = _IMPORT.sub(_import, text)
    text = _DOTTED.sub(_dotted, text)
    return _PATH.sub(_path, text)


def _files(args: list[str]) -> list[Path]:
    out = []
    for a in args:
        p = Path(a)
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in SUFFIXES
                          and ".venv" not in f.parts and "node_modules" not in f.parts)
        else:
            out.append(p)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 listing files with old paths")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    stale = []
    for f in _files(args.files):
        try:
            text = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            print(f"{f}: cannot read ({e.__class__.__name__})", file=sys.stderr)
            return 2
        new = rewrite(text)
        if new != text:
            stale.append(f)
            if not args.check:
                f.write_text(new, encoding="utf-8")
    verb = "uses old planner paths" if args.check else "rewritten"
    for f in stale:
        print(f"{f}: {verb}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
