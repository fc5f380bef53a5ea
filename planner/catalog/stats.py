"""The component catalog in DuckDB: built from datasets_meta/ (and the user's profiled
components), opened read-only afterwards, loaded once into memory as atoms.

The build is deterministic and atomic: it writes a new file named by the hash of its inputs and
swaps it in with os.replace, so a reader never sees a half-written database. Builds, opens and the
removal of old builds hold one inter-process lock, and only builds unused for CLEANUP_MARGIN_S
are removed, so no process ever loses a file it is about to open.
"""
from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import secrets
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import filelock
import numpy as np

from planner.distributions import Atoms, fan_out, fit_component
from planner.catalog import user_catalog as uc
from planner.catalog.paths import SHIPPED_CATALOG, load_shipped_yaml, planner_home, user_catalog_path

if TYPE_CHECKING:
    import duckdb

BUILD_VERSION = "5"
# A build not opened for this long is removed when another build is made.
CLEANUP_MARGIN_S = 3600.0
LOCK_TIMEOUT_S = 120.0
COMPONENT_COLUMNS = ["id", "name", "family", "hf_repo", "subset", "split", "licence", "licence_note", "format",
                     "in_default_mix", "rows_in_mix", "rows_available", "turns", "mean_tokens", "median_tokens",
                     "assistant_share", "origin", "provenance", "local_path", "source_format", "sampled"]
PROVENANCE_FIELDS = ("rows_in_mix", "rows_available", "turns", "mean_tokens", "median_tokens", "assistant_share",
                     "max_tokens")


@dataclass
class ComponentStats:
    id: str
    name: str
    family: str
    hf_repo: str | None
    subset: str | None
    split: str | None
    licence: str | None
    licence_note: str | None
    format: str | None
    in_default_mix: bool
    rows_in_mix: int
    rows_available: int
    turns: float
    mean_tokens: float
    median_tokens: float | None
    assistant_share: float
    origin: str                    # shipped | measured
    provenance: dict = field(default_factory=dict)
    conversation: Atoms | None = None
    turn: Atoms | None = None
    local_path: str | None = None  # measured components: the profiled file
    source_format: str | None = None
    sampled: dict | None = None    # a sampled profile: rows sampled of total, seed, the means' 95% intervals

    def value_tag(self, name: str) -> str:
        return (self.provenance.get(name) or {}).get("tag", "estimate")


@dataclass(frozen=True)
class Overlap:
    a: str
    b: str
    shared_rows: int
    tag: str
    source: str


def _read_inputs(user_path: Path) -> tuple[dict, dict]:
    shipped = load_shipped_yaml(SHIPPED_CATALOG)
    cat, warning = uc.load(user_path)
    user = {"components": [c.model_dump(mode="json") for c in cat.components], "error": warning}
    return shipped, user


@functools.cache
def length_band_settings() -> tuple[float, dict[str, float]]:
    """The storage band's settings (datasets_meta/components.yaml `length_band`): the tokenizer's share
    and, per tag of a component's mean tokens, the share of its own mean/median ratio it may move by."""
    band = load_shipped_yaml(SHIPPED_CATALOG)["length_band"]
    return float(band["tokenizer"]["value"]), {k: float(v) for k, v in band["share"]["value"].items()}


def shipped_ids() -> set[str]:
    """The shipped component ids, read from the shipped YAML (no DuckDB build)."""
    return {c["id"] for c in load_shipped_yaml(SHIPPED_CATALOG)["components"]}


def _input_hash(shipped: dict, user: dict) -> str:
    blob = json.dumps([BUILD_VERSION, shipped, user], sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def _val(entry: dict | None, name: str):
    item = (entry or {}).get(name)
    return item.get("value") if isinstance(item, dict) else item


def _shipped_rows(shipped: dict) -> list[tuple[dict, Atoms]]:
    sigma = shipped["default_spread_sigma"]["value"]
    out = []
    for c in shipped["components"]:
        atoms = fit_component(
            _val(c, "mean_tokens"), _val(c, "assistant_share"), _val(c, "turns"),
            median_tokens=_val(c, "median_tokens"), default_sigma=sigma, bins=c.get("bins"),
            max_turns=int((c.get("turns") or {}).get("max", 512)), max_tokens=_val(c, "max_tokens"))
        prov = {k: {"tag": c[k]["tag"], "source": c[k]["source"]} for k in PROVENANCE_FIELDS if c.get(k)}
        if c.get("bins"):
            prov["length_distribution"] = {"tag": c["bins"]["tag"], "source": c["bins"]["source"]}
        elif _val(c, "median_tokens"):
            prov["length_distribution"] = {"tag": "estimate", "source": "log-normal fitted to the mean and median"}
        else:
            prov["length_distribution"] = {"tag": "estimate", "source": shipped["default_spread_sigma"]["source"]}
        meta = {k: c.get(k) for k in ("id", "name", "family", "hf_repo", "subset", "split", "licence", "format")}
        meta["licence_note"] = c.get("licence_note") or c.get("identity_note")
        meta.update(in_default_mix=bool(c.get("in_default_mix")), origin="shipped", provenance=prov,
                    rows_in_mix=int(_val(c, "rows_in_mix") or 0), rows_available=int(_val(c, "rows_available")),
                    turns=float(_val(c, "turns")), mean_tokens=float(_val(c, "mean_tokens")),
                    median_tokens=_val(c, "median_tokens"), assistant_share=float(_val(c, "assistant_share")),
                    local_path=None, source_format=None)
        out.append((meta, atoms))
    return out


def _atoms_from_json(d: dict) -> Atoms:
    return Atoms(np.asarray(d["rows"], float), np.asarray(d["tokens"], float),
                 np.asarray(d["response"], float), np.asarray(d["turns"], float))


def build(path: Path, shipped: dict, user: dict) -> None:
    """Write the catalog database to `path` atomically (temp file, then os.replace). DuckDB writes
    the file itself, so this is safe_io.atomic_write's pattern by hand: same temp name, removed
    (with its WAL) on every failure."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        _build_into(tmp, shipped, user)
        os.replace(tmp, path)
    except BaseException:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            try:
                leftover.unlink()
            except OSError:
                pass
        raise


def _insert(con, table: str, rows: list[tuple]) -> None:
    """`rows` into `table` in one statement, a list per column that DuckDB unnests side by side: no
    pandas (whose import was most of a first start's catalog build: issue 23)."""
    if not rows:
        return
    types = [t for (t,) in con.execute("SELECT data_type FROM information_schema.columns WHERE table_name = ? "
                                       "ORDER BY ordinal_position", [table]).fetchall()]
    con.execute(f"INSERT INTO {table} SELECT " + ", ".join(f"unnest(?::{t}[])" for t in types),
                [list(column) for column in zip(*rows)])


def _build_into(tmp: Path, shipped: dict, user: dict) -> None:
    import duckdb
    con = duckdb.connect(str(tmp))
    try:
        con.execute("""CREATE TABLE components (id VARCHAR PRIMARY KEY, name VARCHAR, family VARCHAR,
            hf_repo VARCHAR, subset VARCHAR, split VARCHAR, licence VARCHAR, licence_note VARCHAR,
            format VARCHAR, in_default_mix BOOLEAN, rows_in_mix BIGINT, rows_available BIGINT,
            turns DOUBLE, mean_tokens DOUBLE, median_tokens DOUBLE, assistant_share DOUBLE,
            origin VARCHAR, provenance JSON, local_path VARCHAR, source_format VARCHAR, sampled JSON)""")
        con.execute("""CREATE TABLE length_bins (component_id VARCHAR, unit VARCHAR, bin INTEGER,
            rows DOUBLE, tokens DOUBLE, response_tokens DOUBLE, turns DOUBLE)""")
        con.execute("CREATE TABLE component_overlaps (a VARCHAR, b VARCHAR, shared_rows BIGINT, tag VARCHAR, source VARCHAR)")
        con.execute("CREATE TABLE meta (key VARCHAR, value VARCHAR)")
        entries = _shipped_rows(shipped)
        shipped_ids = {m["id"] for m, _ in entries}
        measured = []
        for c in user.get("components", []):
            if c.get("id") in shipped_ids:
                continue  # a profiled component never shadows a shipped id (profile refuses it too)
            meta = {k: c.get(k) for k in ("id", "name", "family", "hf_repo", "subset", "split", "licence",
                                           "licence_note", "format", "rows_in_mix", "rows_available", "turns",
                                           "mean_tokens", "median_tokens", "assistant_share", "provenance",
                                           "local_path", "source_format", "sampled")}
            meta.update(in_default_mix=False, origin="measured")
            measured.append((meta, _atoms_from_json(c["conversation"]), _atoms_from_json(c["turn"])))
        comp_rows, bin_rows = [], []
        for meta, conv, *turn in [(m, a) for m, a in entries] + measured:
            turn_atoms = turn[0] if turn else fan_out(conv)
            comp_rows.append((meta["id"], meta["name"], meta["family"], meta["hf_repo"], meta["subset"],
                              meta["split"], meta["licence"], meta["licence_note"], meta["format"],
                              meta["in_default_mix"], meta["rows_in_mix"], meta["rows_available"], meta["turns"],
                              meta["mean_tokens"], meta["median_tokens"], meta["assistant_share"], meta["origin"],
                              json.dumps(meta["provenance"]), meta["local_path"], meta["source_format"],
                              json.dumps(meta["sampled"]) if meta.get("sampled") else None))
            for unit, atoms in (("conversation", conv), ("turn", turn_atoms)):
                for i in range(len(atoms)):
                    bin_rows.append((meta["id"], unit, i, float(atoms.rows[i]), float(atoms.tokens[i]),
                                     float(atoms.response[i]), float(atoms.turns[i])))
        _insert(con, "components", comp_rows)
        _insert(con, "length_bins", bin_rows)
        con.executemany("INSERT INTO component_overlaps VALUES (?,?,?,?,?)",
                        [(o["a"], o["b"], int(o["shared_rows"]), o["tag"], o["source"]) for o in shipped.get("overlaps", [])])
        con.executemany("INSERT INTO meta VALUES (?,?)", [("build_version", BUILD_VERSION),
                                                          ("default_mix_total", str(shipped["default_mix_total"])),
                                                          ("user_catalog_error", user.get("error") or "")])
        con.execute("CHECKPOINT")
    finally:
        con.close()


def _lock() -> filelock.FileLock:
    """One lock per PLANNER_HOME for building, opening and removing catalog databases (filelock's
    locks are also re-entrant and thread-safe within a process)."""
    return filelock.FileLock(str(planner_home() / "catalog.lock"), timeout=LOCK_TIMEOUT_S)


def _remove_unused(current: Path) -> None:
    """Remove builds (and temp files of killed builds) nobody opened for CLEANUP_MARGIN_S. Called
    under the lock; an open is marked by touching the file under the same lock, so a file is never
    removed between a reader choosing it and opening it."""
    now = time.time()
    for old in [*current.parent.glob("catalog-*.duckdb"), *current.parent.glob(".catalog-*.tmp*")]:
        if old == current:
            continue
        try:
            if now - old.stat().st_mtime > CLEANUP_MARGIN_S:
                old.unlink()
        except OSError:
            pass   # gone already, or open on Windows


def open_catalog(user_path: Path) -> StatsCatalog:
    """The catalog for the shipped one plus the user catalog at `user_path`: built when its inputs
    changed, opened under the lock (and marked as in use), old unused builds removed."""
    import duckdb     # here, not at import: the first catalog opened loads it (import planner stays light)
    shipped, user = _read_inputs(user_path)
    path = planner_home() / f"catalog-{_input_hash(shipped, user)}.duckdb"
    cached = _OPEN_BY_PATH.get(str(path))
    if cached is not None:
        return cached
    try:
        with _lock():
            if path.exists():
                os.utime(path)
            else:
                build(path, shipped, user)
                _remove_unused(path)
            try:
                cat = StatsCatalog(path)
            except duckdb.IOException:
                # removed or damaged by something that does not take the lock: build it again
                build(path, shipped, user)
                cat = StatsCatalog(path)
    except filelock.Timeout:
        raise RuntimeError(f"the catalog lock {planner_home() / 'catalog.lock'} was held for over "
                           f"{LOCK_TIMEOUT_S:.0f} s by another process")
    _OPEN_BY_PATH[str(path)] = cat
    return cat


class StatsCatalog:
    """Read-only view of one catalog database; statistics are loaded once into memory."""

    def __init__(self, path: Path):
        import duckdb
        self.path = path
        self._con = duckdb.connect(str(path), read_only=True)
        # the version plan()'s cache keys a plan by: the file's identity (its name holds the hash of the
        # catalog's inputs, open_catalog) and its inode, size and write time when opened; read-only after
        st = Path(path).stat()
        self.version = f"{Path(path).resolve()}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"
        self._local = threading.local()
        cur = self.cursor()
        cols = [d[0] for d in cur.execute("SELECT * FROM components ORDER BY rowid").description]
        comps = {}
        for row in cur.fetchall():
            r = dict(zip(cols, row))
            r["provenance"] = json.loads(r["provenance"]) if r["provenance"] else {}
            r["sampled"] = json.loads(r["sampled"]) if r["sampled"] else None
            comps[r["id"]] = ComponentStats(**r)
        for cid, unit, rows, tokens, resp, turns in cur.execute(
                "SELECT component_id, unit, list(rows ORDER BY bin), list(tokens ORDER BY bin), "
                "list(response_tokens ORDER BY bin), list(turns ORDER BY bin) FROM length_bins "
                "GROUP BY component_id, unit").fetchall():
            atoms = Atoms(np.array(rows), np.array(tokens), np.array(resp), np.array(turns))
            setattr(comps[cid], unit, atoms)
        self.components: dict[str, ComponentStats] = comps
        self.overlaps = [Overlap(*r) for r in cur.execute("SELECT a, b, shared_rows, tag, source FROM component_overlaps").fetchall()]
        meta = dict(cur.execute("SELECT key, value FROM meta").fetchall())
        self.default_mix_total = int(meta["default_mix_total"])
        self.user_catalog_error = meta.get("user_catalog_error") or None
        _OPENED.add(self)

    def close(self) -> None:
        import duckdb
        try:
            self._con.close()
        except duckdb.Error:
            pass

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """One cursor per thread (DuckDB connections are not shared across threads)."""
        cur = getattr(self._local, "cur", None)
        if cur is None:
            cur = self._local.cur = self._con.cursor()
        return cur

    def default_mix(self) -> list[tuple[str, int]]:
        return [(c.id, c.rows_in_mix) for c in self.components.values() if c.in_default_mix]


# Open catalogs by database path: visitors whose user catalogs hold the same components share one.
_OPEN_BY_PATH: weakref.WeakValueDictionary[str, StatsCatalog] = weakref.WeakValueDictionary()
_OPENED: weakref.WeakSet[StatsCatalog] = weakref.WeakSet()


def _stat_key(path: Path) -> tuple:
    try:
        st = path.stat()
        return st.st_mtime_ns, st.st_ino, st.st_size
    except OSError:
        return (-1,)


@functools.lru_cache(maxsize=64)
def _catalog_for(shipped_key: tuple, user_key: tuple, user_path: str) -> StatsCatalog:
    return open_catalog(Path(user_path))


def get_catalog(user_catalog: Path | None = None) -> StatsCatalog:
    """The shipped catalog plus a user catalog file (None: $PLANNER_HOME/user_catalog.json; the
    dashboard gives each visitor its own). Rebuilt and reopened only when one of the two files
    changes (two stat calls per plan, no parsing)."""
    user = Path(user_catalog) if user_catalog is not None else user_catalog_path()
    return _catalog_for(_stat_key(SHIPPED_CATALOG), _stat_key(user), str(user))


@atexit.register
def _close_all() -> None:
    """Close the read-only connections before the interpreter goes (DuckDB's bindings otherwise
    report the objects still alive at exit)."""
    _catalog_for.cache_clear()
    for cat in list(_OPENED):
        cat.close()
