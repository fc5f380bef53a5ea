"""The user catalog: one model, read in one place; a file that cannot be used is kept aside (never
overwritten), an id is replaced only on request, each entry records the sha256 of what was profiled."""
import ast
import hashlib
import json
from pathlib import Path

import pytest

from planner.catalog import user_catalog as uc
from planner.catalog.profile import profile_file
from planner.catalog.stats import get_catalog
from planner.errors import PlannerInputError
from tests.helpers import ROOT, run_cli

ROW = {"instruction": "abcd" * 10, "output": "abcd" * 20}   # 10 + 4 and 20 + 4 tokens: 38 per conversation


@pytest.fixture()
def home(tmp_path, monkeypatch):
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("PLANNER_HOME", str(h))
    return h


def data_file(path: Path, n: int = 3, row=ROW) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for _ in range(n)))
    return path


def listing(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and not p.name.endswith(".lock")}


def test_sha256_is_that_of_the_profiled_bytes(home, tmp_path):
    f = data_file(tmp_path / "d.jsonl", 4)
    arr = tmp_path / "a.json"
    arr.write_text(json.dumps([ROW, ROW]))
    profile_file(f, "lines")
    profile_file(arr, "array")
    cat, warning = uc.load(home / "user_catalog.json")
    assert warning is None
    assert cat.get("lines").sha256 == hashlib.sha256(f.read_bytes()).hexdigest()
    assert cat.get("array").sha256 == hashlib.sha256(arr.read_bytes()).hexdigest()
    assert cat.get("lines").local_path == str(f.resolve())


@pytest.mark.parametrize("content, problem", [
    (b"[]", "got list"),
    (b'{"version": 1, "components": [', "not valid JSON"),                       # truncated
    (b"\xff\xfe{}", "not UTF-8"),
    (b'{"components": "x"}', "components"),
])
def test_an_unusable_file_is_kept_aside_and_never_overwritten(home, tmp_path, content, problem):
    path = home / "user_catalog.json"
    path.write_bytes(content)
    cat = get_catalog()
    assert len([c for c in cat.components.values() if c.in_default_mix]) == 10
    aside = list(home.glob("user_catalog.corrupt-*.json"))
    assert len(aside) == 1 and aside[0].read_bytes() == content and not path.exists()
    assert aside[0].name in cat.user_catalog_error and problem in cat.user_catalog_error
    # the next profile writes a new catalog beside it; the old bytes stay as they were
    profile_file(data_file(tmp_path / "d.jsonl"), "after")
    assert aside[0].read_bytes() == content
    assert [c.id for c in uc.load(path)[0].components] == ["after"]


def test_an_empty_list_file_no_longer_breaks_the_cli(home):
    (home / "user_catalog.json").write_bytes(b"[]")
    r = run_cli("components", "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert len([c for c in json.loads(r.stdout) if c["in_default_mix"]]) == 10
    assert [p.read_bytes() for p in home.glob("user_catalog.corrupt-*.json")] == [b"[]"]


def _valid_entry(tmp_path, home) -> dict:
    profile_file(data_file(tmp_path / "good.jsonl"), "good")
    return json.loads((home / "user_catalog.json").read_text())


@pytest.mark.parametrize("field, value, problem", [
    ("id", "Bad Id", "components.1.id"),
    ("id", "abc\n", "components.1.id"),
    ("name", "evil\x1b[2J", "components.1.name"),
    ("local_path", "/tmp/x\ny", "components.1.local_path"),
    ("mean_tokens", -1, "components.1.mean_tokens"),
    ("format", "weird", "components.1.format"),
    ("sha256", "XYZ", "components.1.sha256"),
])
def test_one_malformed_entry_sets_the_file_aside_whole(home, tmp_path, field, value, problem):
    data = _valid_entry(tmp_path, home)
    bad = dict(data["components"][0], id="second")
    bad[field] = value
    data["components"].append(bad)
    path = home / "user_catalog.json"
    path.write_text(json.dumps(data))
    before = path.read_bytes()
    cat = get_catalog()
    assert "good" not in cat.components and "openorca" in cat.components
    assert problem in cat.user_catalog_error
    assert [p.read_bytes() for p in home.glob("user_catalog.corrupt-*.json")] == [before]


def test_non_finite_numbers_and_oversized_lists_are_refused(home, tmp_path):
    data = _valid_entry(tmp_path, home)
    text = json.dumps(data).replace('"turns": 1.0', '"turns": NaN', 1)
    with pytest.raises(uc.UserCatalogError, match="NaN"):
        uc.parse(text.encode(), home / "x.json")
    data["components"][0]["conversation"]["rows"] = [1.0] * (uc.MAX_BINS + 1)
    with pytest.raises(uc.UserCatalogError, match="conversation.rows"):
        uc.parse(json.dumps(data).encode(), home / "x.json")
    with pytest.raises(uc.UserCatalogError, match="nested too deeply"):
        uc.parse(b"[" * 100_000, home / "x.json")


def test_replacing_an_id_needs_replace(home, tmp_path):
    f = data_file(tmp_path / "d.jsonl", 3)
    g = data_file(tmp_path / "e.jsonl", 5)
    profile_file(f, "mine")
    path = home / "user_catalog.json"
    before = path.read_bytes()
    with pytest.raises(PlannerInputError) as exc:
        profile_file(g, "mine")
    assert exc.value.field == "--name" and "--replace" in exc.value.allowed
    assert path.read_bytes() == before
    r = run_cli("profile", str(g), "--name", "mine", "--quiet")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        "planner: error: --name: 'mine' is not allowed; a component with that id exists; pass --replace to replace it"]
    assert path.read_bytes() == before
    r = run_cli("profile", str(g), "--name", "mine", "--quiet", "--replace")
    assert r.returncode == 0, r.stderr
    assert uc.load(path)[0].get("mine").rows_available == 5


def test_each_visitor_catalog_is_its_own(home, tmp_path):
    a, b = tmp_path / "a" / "user_catalog.json", tmp_path / "b" / "user_catalog.json"
    a.parent.mkdir()
    b.parent.mkdir()
    profile_file(data_file(tmp_path / "d.jsonl", 3), "only_a", user_catalog=a)
    profile_file(data_file(tmp_path / "e.jsonl", 2), "only_b", user_catalog=b)
    ca, cb, default = get_catalog(a), get_catalog(b), get_catalog()
    assert "only_a" in ca.components and "only_b" not in ca.components
    assert "only_b" in cb.components and "only_a" not in cb.components
    assert not {"only_a", "only_b"} & set(default.components)
    assert ca.components["only_a"].rows_available == 3 and cb.components["only_b"].rows_available == 2
    assert not (home / "user_catalog.json").exists()


def test_profiling_builds_no_catalog_database(home, tmp_path):
    profile_file(data_file(tmp_path / "d.jsonl"), "mine")
    assert list(home.glob("catalog-*.duckdb")) == []


def test_the_catalog_code_needs_no_fcntl():
    """The dashboard must import on Windows: the locks are filelock's."""
    for rel in ("planner/catalog/profile.py", "planner/catalog/user_catalog.py", "planner/catalog/stats.py"):
        tree = ast.parse((ROOT / rel).read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
        mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "fcntl" not in names | mods, rel
