"""Reading conversation datasets in the formats drafter pipelines meet, as (role, text) turns.

Formats: sharegpt (conversations[{from,value}]), openai (messages[{role,content}], also a
messages_json string), alpaca / flat (instruction|question|problem ... -> output|response|solution),
glaive (system + chat with USER:/ASSISTANT:/FUNCTION RESPONSE:). `auto` picks by the keys.
Files: JSONL (streamed line by line, so a bad line is reported with its number), JSON arrays
(streamed element by element, each element read as a JSONL line is) and Parquet (through DuckDB's
reader, streamed in record batches). A dataset is one file, a directory
of files or a glob of shards (`data/train-*.parquet`), read as one: every file must be a regular
file of one type (`dataset_files`).
"""
from __future__ import annotations

import contextlib
import glob
import itertools
import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import duckdb
import numpy as np

from planner.errors import PlannerInputError
from planner.ids import FORMATS  # noqa: F401  (formats.FORMATS: the formats read here)
from planner.safe_io import check_regular, open_binary
from planner.text import printable

ROLE_MAP = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant", "chatgpt": "assistant",
            "bing": "assistant", "bard": "assistant", "model": "assistant", "system": "system", "tool": "tool",
            "function": "tool", "function_call": "assistant", "observation": "tool", "ipython": "tool"}
PROMPT_KEYS = ("system_prompt", "system", "instruction", "input", "question", "problem", "prompt", "query")
RESPONSE_KEYS = ("output", "response", "solution", "answer", "completion", "chosen")
GLAIVE_SPLIT = re.compile(r"(USER:|ASSISTANT:|FUNCTION RESPONSE:)")
# glaive-function-calling-v2 writes an end-of-turn marker after each assistant turn and starts its
# system text with "SYSTEM: ": neither is text a chat template renders (issue 22). No pipeline ships
# a converter for this raw format to cite: git grep -i "glaive|endoftext" finds none in
# SpecForge@a6b6b023, speculators@c05b95b3, TorchSpec@6f21829c or Model-Optimizer@a2fbac7b's data
# preparation; NeMo Automodel@36044ad3 trains on llamafactory/glaive_toolcall_en, already converted
# to ShareGPT turns (docs/guides/llm/agent-sft.mdx:27)
GLAIVE_EOT = "<|endoftext|>"
GLAIVE_SYSTEM = re.compile(r"^\s*SYSTEM:\s*")
MAX_LINE_BYTES = 16 * 2**20
# A lone UTF-16 surrogate (JSON "\ud800") is not Unicode text: it cannot be encoded or tokenized.
SURROGATE = re.compile(r"[\ud800-\udfff]")
DATA_SUFFIXES = (".jsonl", ".ndjson", ".json", ".parquet")
MAX_DATASET_FILES = 100_000       # files of one dataset (a directory or a glob); more is refused
GLOB_CHARS = re.compile(r"[*?[]")
# What a Parquet file may expand to: Parquet's dictionary and run-length encodings under zstd
# turn 788 bytes into 3 GB of text. Before any row is materialized, the bytes of text the file holds
# are summed in SQL on the encoded columns (strlen does not expand a dictionary), and a file over
# max(MIN_EXPANDED_BYTES, EXPANSION_RATIO x its size) is refused (real text compresses 3-10x).
# Rows then stream in Arrow batches; a row over MAX_LINE_BYTES of text is a bad row (as a JSONL line
# is); DuckDB works within DUCKDB_MEMORY. PLANNER_MIN_EXPANDED_BYTES overrides the floor (tests).
# (A JSON array's text is at most its bytes: it is not read through DuckDB, see _array_elements.)
EXPANSION_RATIO = 100
MIN_EXPANDED_BYTES = int(os.environ.get("PLANNER_MIN_EXPANDED_BYTES") or 2**28)
DUCKDB_MEMORY = "1GB"
DUCKDB_READERS = {"parquet": "read_parquet(?{union})"}


class RecordError(ValueError):
    """A record that is not a conversation in the expected format."""


@dataclass
class Record:
    line: int                  # 1-based line (JSONL) or row number (JSON, Parquet), counted over the dataset
    turns: list[tuple[str, str]] | None
    error: str | None = None
    file: str | None = None    # the shard's name, when the dataset has several files
    at: int = 0                # the line or row within that file


@dataclass(slots=True)
class Raw:
    """One line or row before parsing: parsing and tokenizing happen in batches, maybe in another
    process, so a reader hands over the undecoded JSONL line or JSON array element (bytes) or DuckDB's
    Parquet row (a dict)."""
    line: int                  # position in the dataset (1-based), as Record.line
    payload: bytes | dict | None
    error: str | None = None   # a line that cannot be a record whatever it holds (too long)
    file: str | None = None
    at: int = 0


@dataclass(frozen=True)
class Dataset:
    """The files PATH names, in order, all of one type (jsonl, json or parquet)."""
    path: str
    files: tuple[Path, ...]
    kind: str

    @property
    def several(self) -> bool:
        return len(self.files) > 1

    def size(self) -> int:
        return sum(os.stat(f).st_size for f in self.files)


def _text(content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # openai content parts; a part without text (an image) adds nothing
        parts = []
        for j, p in enumerate(content):
            text = p.get("text", "") if isinstance(p, dict) else p
            if not isinstance(text, str):
                raise RecordError(f"content part {j}: text is {type(text).__name__ if text is not None else 'null'}, "
                                  f"not a string")
            parts.append(text)
        return "".join(parts)
    if isinstance(content, dict):
        return json.dumps(content, ensure_ascii=False)
    # a number (42, NaN, true) is not text a pipeline tokenizes: a bad line, as the threat model says
    raise RecordError(f"a content is {type(content).__name__} ({str(content)[:20]}), not text")


def detect_format(obj: dict) -> str:
    if not isinstance(obj, dict):
        raise RecordError(f"a record must be a JSON object, got {type(obj).__name__}")
    if isinstance(obj.get("conversations"), list):
        first = next((m for m in obj["conversations"] if isinstance(m, dict)), {})
        return "openai" if "role" in first else "sharegpt"
    if "messages" in obj or "messages_json" in obj:
        return "openai"
    if "chat" in obj:
        return "glaive"
    if any(k in obj for k in RESPONSE_KEYS):
        return "alpaca"
    raise RecordError(f"no conversation fields (conversations, messages, chat, instruction/output) in keys "
                      f"{sorted(obj)[:8]}")


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _embedded(tool, system: str, flat: str) -> bool:
    """Whether one tool definition is already written in the system text (`flat`: no spaces)."""
    forms = {tool} if isinstance(tool, str) else {json.dumps(tool, ensure_ascii=False, default=str),
                                                  json.dumps(tool, default=str)}
    if any(len(_squeeze(f)) >= 16 and _squeeze(f) in flat for f in forms):   # "{}" is no definition
        return True
    if isinstance(tool, str):
        return False
    fn = tool.get("function", tool) if isinstance(tool, dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    desc = fn.get("description") if isinstance(fn, dict) else None
    if not (isinstance(name, str) and name and isinstance(desc, str) and len(desc) >= 8):
        return False   # a name alone in a prompt is no definition
    return name in system and any(d in system for d in (desc, json.dumps(desc)[1:-1],
                                                         json.dumps(desc, ensure_ascii=False)[1:-1]))


def _tools_turn(tools, system: str) -> str:
    """The tools text to count: the definitions missing from `system`, or "" for none."""
    listed = tools
    if isinstance(tools, str):
        try:
            listed = json.loads(tools)
        except ValueError:
            listed = [tools]
    if not isinstance(listed, list):
        listed = [listed]
    flat = _squeeze(system)
    if len(listed) * len(system) > 2**26:   # a hostile record: searching would take hours; count them all
        missing = listed
    else:
        missing = [t for t in listed if not (system and _embedded(t, system, flat))]
    if not missing:
        return ""
    if len(missing) == len(listed) and isinstance(tools, str):
        return tools
    return "\n".join(t if isinstance(t, str) else json.dumps(t, ensure_ascii=False, default=str)
                     for t in missing)


def _with_tools(obj: dict, turns: list[tuple[str, str]], at: int) -> list[tuple[str, str]]:
    """`turns` with the record's `tools` missing from its system text inserted as a system turn at `at`."""
    if obj.get("tools"):
        extra = _tools_turn(obj["tools"], "\n".join(t for r, t in turns if r == "system"))
        if extra:
            turns.insert(at, ("system", extra))
    return turns


def _sharegpt_turns(obj: dict) -> list[tuple[str, str]]:
    convo = obj.get("conversations")
    if not isinstance(convo, list):
        raise RecordError("missing field 'conversations' (a list)")
    turns = [("system", _text(obj["system"]))] if obj.get("system") else []
    for i, m in enumerate(convo):
        if not isinstance(m, dict):
            raise RecordError(f"conversations[{i}] is not an object")
        role = m.get("from", m.get("role"))
        val = m.get("value", m.get("content"))
        if role is None or val is None:
            raise RecordError(f"conversations[{i}] lacks 'from'/'value'")
        turns.append((ROLE_MAP.get(str(role).lower(), "user"), _text(val)))
    return _with_tools(obj, turns, 1 if obj.get("system") else 0)


def _openai_messages(obj: dict) -> list:
    msgs = obj.get("messages")
    if msgs is None and isinstance(obj.get("messages_json"), str):
        try:
            msgs = json.loads(obj["messages_json"])
        except json.JSONDecodeError as exc:     # what json.loads raises for a str
            raise RecordError(f"messages_json is not valid JSON: {exc.msg}") from exc
    if isinstance(msgs, str):
        try:
            msgs = json.loads(msgs)
        except json.JSONDecodeError as exc:
            raise RecordError(f"messages is a string but not JSON: {exc.msg}") from exc
    if not isinstance(msgs, list):
        raise RecordError("missing field 'messages' (a list)")
    return msgs


def _openai_turns(obj: dict) -> list[tuple[str, str]]:
    turns = []
    for i, m in enumerate(_openai_messages(obj)):
        if not isinstance(m, dict) or "role" not in m:
            raise RecordError(f"messages[{i}] lacks 'role'")
        text = _text(m.get("content"))
        if m.get("tool_calls"):
            text += json.dumps(m["tool_calls"], ensure_ascii=False)
        turns.append((ROLE_MAP.get(str(m["role"]).lower(), "user"), text))
    return _with_tools(obj, turns, 0)


def _alpaca_turns(obj: dict) -> list[tuple[str, str]]:
    prompt = "\n".join(_text(obj[k]) for k in PROMPT_KEYS if obj.get(k))
    resp_key = next((k for k in RESPONSE_KEYS if k in obj), None)
    if resp_key is None:
        raise RecordError(f"missing a response field (one of {', '.join(RESPONSE_KEYS)})")
    if not prompt:
        raise RecordError(f"missing a prompt field (one of {', '.join(PROMPT_KEYS)})")
    return [("user", prompt), ("assistant", _text(obj[resp_key]))]


def _glaive_turns(obj: dict) -> list[tuple[str, str]]:
    chat = obj.get("chat")
    if not isinstance(chat, str):
        raise RecordError("missing field 'chat' (a string)")
    turns = [("system", GLAIVE_SYSTEM.sub("", _text(obj["system"]), count=1))] if obj.get("system") else []
    role = "user"
    for piece in GLAIVE_SPLIT.split(chat.replace(GLAIVE_EOT, "")):
        if piece == "USER:":
            role = "user"
        elif piece == "ASSISTANT:":
            role = "assistant"
        elif piece == "FUNCTION RESPONSE:":
            role = "tool"
        elif piece.strip():
            turns.append((role, piece.strip()))
    return turns


def to_turns(obj: dict, fmt: str) -> list[tuple[str, str]]:
    """The record's (role, text) turns as the pipeline will tokenize them. A `tools` field is one
    more system turn, holding only the tool definitions that the system text does not already
    hold (Hermes function calling writes the `tools` JSON into the system prompt): counted once.
    (materialize's hub script copies this function's source and every name in HUB_COPIES.)"""
    if not isinstance(obj, dict):
        raise RecordError(f"a record must be a JSON object, got {type(obj).__name__}")
    if fmt == "auto":
        fmt = detect_format(obj)
    if fmt == "sharegpt" or (fmt == "openai" and "conversations" in obj and "messages" not in obj):
        turns = _sharegpt_turns(obj)
    elif fmt == "openai":
        turns = _openai_turns(obj)
    elif fmt == "alpaca":
        turns = _alpaca_turns(obj)
    elif fmt == "glaive":
        turns = _glaive_turns(obj)
    else:
        raise RecordError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    if not any(r == "assistant" for r, _ in turns):
        raise RecordError("no assistant turn")
    for i, (_, text) in enumerate(turns):
        bad = None if text.isascii() else SURROGATE.search(text)   # isascii() is O(1) in CPython
        if bad:
            raise RecordError(f"turn {i}: lone surrogate \\u{ord(bad.group()):04x} is not valid Unicode text")
    return turns


# What materialize's hub script copies to run to_turns on its own (values by repr, patterns
# recompiled, functions and classes by their source): every name to_turns reaches.
HUB_COPIES = {
    "values": ("ROLE_MAP", "PROMPT_KEYS", "RESPONSE_KEYS", "FORMATS", "GLAIVE_EOT"),
    "patterns": ("GLAIVE_SPLIT", "GLAIVE_SYSTEM", "SURROGATE"),
    "sources": ("RecordError", "_text", "detect_format", "_squeeze", "_embedded", "_tools_turn", "_with_tools",
                "_sharegpt_turns", "_openai_messages", "_openai_turns", "_alpaca_turns", "_glaive_turns",
                "to_turns"),
}


def file_kind(path: Path, field: str = "PATH") -> str:
    name = path.name.lower()
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(".jsonl") or name.endswith(".ndjson"):
        return "jsonl"
    if name.endswith(".json"):
        with open_binary(path, field) as fh:
            head = fh.read(4096).removeprefix(_BOM).lstrip()
        return "json" if head.startswith(b"[") else "jsonl"
    raise RecordError(f"{path.name}: unknown file type; use .jsonl, .json or .parquet")


def dataset_files(path: str | os.PathLike, field: str = "PATH") -> Dataset:
    """The files PATH names: one file, a directory's .jsonl/.ndjson/.json/.parquet files (not its
    subdirectories), or the matches of a glob (`**` recurses). Each must be a regular file (a FIFO
    or a device among them is refused by name), of one type; at most MAX_DATASET_FILES."""
    text = os.fspath(path)
    if text and os.path.isdir(text):
        files = _directory_files(text, field)
    elif text and GLOB_CHARS.search(text) and not os.path.lexists(text):
        files = _glob_files(text, field)
    else:
        check_regular(text, field)
        return Dataset(text, (Path(text),), file_kind(Path(text), field))
    files = _once_each(files)
    kinds = []
    for f in files:
        check_regular(f, field)
        kinds.append(file_kind(f, field))
        if kinds[-1] != kinds[0]:
            raise PlannerInputError(field, str(f), f"it is {kinds[-1]} but {files[0].name} is {kinds[0]}: the files "
                                                   f"of one dataset must share one type")
    return Dataset(text, tuple(files), kinds[0])


def _once_each(files: list[Path]) -> list[Path]:
    """Each file once (by device and inode: a symlink or a hard link to a file already listed, or a
    path through a symlink loop, adds nothing), in order; a path that cannot be stat()ed stays (it is
    refused by name later)."""
    seen, out = set(), []
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            out.append(f)
            continue
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            out.append(f)
    return out


def _through_symlinked_dir(match: str, root: str) -> bool:
    """Whether a glob match lies below a symlink to a directory under the pattern's fixed part
    (`**` never descends through one: a loop would list the same files forty times)."""
    parent = Path(match).parent
    stop = Path(root)
    while parent != stop and parent != parent.parent and len(parent.parts) > len(stop.parts):
        if parent.is_symlink():
            return True
        parent = parent.parent
    return False


def _directory_files(text: str, field: str) -> list[Path]:
    names = []
    with os.scandir(text) as it:
        for entry in it:
            if entry.is_dir():   # a subdirectory (or a symlink to one) named x.jsonl is not read
                continue
            if not entry.name.startswith(".") and entry.name.lower().endswith(DATA_SUFFIXES):
                names.append(entry.name)
                if len(names) > MAX_DATASET_FILES:
                    raise PlannerInputError(field, text, f"the directory holds more than {MAX_DATASET_FILES:,} "
                                                         f"data files; give a narrower glob")
    if not names:
        raise PlannerInputError(field, text, "the directory holds no .jsonl, .ndjson, .json or .parquet file "
                                             "(subdirectories are not read: give a glob such as DIR/**/*.parquet)")
    return [Path(text) / n for n in sorted(names)]


def _glob_files(text: str, field: str) -> list[Path]:
    found = []
    first = GLOB_CHARS.search(text)
    assert first is not None       # called for a path with a glob character (dataset_files)
    root = text[:first.start()].rpartition("/")[0] or "."
    for match in glob.iglob(text, recursive=True):
        if os.path.isdir(match) or _through_symlinked_dir(match, root):
            continue
        found.append(match)
        if len(found) > MAX_DATASET_FILES:
            raise PlannerInputError(field, text, f"the pattern matches more than {MAX_DATASET_FILES:,} files; "
                                                 f"give a narrower one")
    if not found:
        raise PlannerInputError(field, text, "no file matches this pattern")
    return [Path(m) for m in sorted(found)]


def iter_records(path, fmt: str = "auto", progress=None, hasher=None, field: str = "PATH") -> Iterator[Record]:
    """Yield one Record per line/row of the dataset at `path` (a file, a directory or a glob;
    records numbered over the dataset); `progress(fraction)` is called now and then; `hasher` (a
    hashlib object) sees every byte of every file, in order. Only regular files are read (a FIFO or
    a device is refused by name as `field`)."""
    ds = path if isinstance(path, Dataset) else dataset_files(path, field)
    for raw in iter_raw(ds, progress, hasher, field):
        yield parse(raw, fmt)


def parse(raw: Raw, fmt: str) -> Record:
    """The Record of one raw line or row (a blank line gives a Record with neither turns nor error)."""
    if raw.error is not None:
        return Record(raw.line, None, raw.error, raw.file, raw.at)
    assert raw.payload is not None     # a Raw without an error holds its line or row
    turns, error = parse_payload(raw.payload, fmt)
    return Record(raw.line, turns, error, raw.file, raw.at)


def parse_payload(payload: bytes | dict, fmt: str) -> tuple[list[tuple[str, str]] | None, str | None]:
    """(turns, None), (None, why it is not a conversation) or (None, None) for a blank line."""
    if isinstance(payload, dict):
        rec = _turns_record(0, payload, fmt)
        return rec.turns, rec.error
    if not payload.strip():
        return None, None
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 at byte {exc.start}"
    rec = _record(0, text, fmt)
    return rec.turns, rec.error


def iter_raw(dataset: Dataset, progress=None, hasher=None, field: str = "PATH") -> Iterator[Raw]:
    """Every line (JSONL; blank lines left out) or row (JSON, Parquet) of the dataset, unparsed, in
    order; progress is the fraction of the dataset's bytes read."""
    sizes = [max(os.stat(f).st_size, 1) for f in dataset.files]
    total, before, offset = sum(sizes), 0, 0
    for f, size in zip(dataset.files, sizes, strict=True):
        def part(fraction, before=before, size=size):
            progress(min((before + fraction * size) / total, 1.0))
        name = f.name if dataset.several else None
        if dataset.kind == "jsonl":
            rows = _iter_jsonl(f, progress and part, hasher, field)
        elif dataset.kind == "json":
            rows = _iter_json_array(f, progress and part, hasher, field)
        else:
            _hash_file(f, hasher, field)
            rows = _iter_duckdb(f, dataset.kind, progress and part, field)
        n = 0
        try:
            for n, raw in rows:
                if raw is not None:
                    yield Raw(offset + n, raw.payload, raw.error, name, n) if (offset or name) else raw
        except OSError as exc:   # an I/O error while reading names the file it came from
            if not exc.filename:
                exc.filename = str(f)
            raise
        offset += n
        before += size


def _hash_file(path: Path, hasher, field: str) -> None:
    if hasher is not None:
        with open_binary(path, field) as fh:
            while chunk := fh.read(2**20):
                hasher.update(chunk)


def _record(n: int, text: str, fmt: str) -> Record:
    try:
        obj = json.loads(text)
    except RecursionError:
        return Record(n, None, "invalid JSON: nested too deeply")
    except ValueError as exc:
        return Record(n, None, f"invalid JSON: {getattr(exc, 'msg', str(exc))}")
    return _turns_record(n, obj, fmt)


def _turns_record(n: int, obj, fmt: str) -> Record:
    """Record n's turns, or the reason it has none (a bad record is a line to report, not a crash)."""
    try:
        return Record(n, to_turns(obj, fmt))
    except RecordError as exc:
        return Record(n, None, str(exc))
    except RecursionError:
        return Record(n, None, "nested too deeply")


def _iter_jsonl(path: Path, progress, hasher, field: str) -> Iterator[tuple[int, Raw | None]]:
    """(line number, Raw) of every non-blank line; the count of lines read is the last number."""
    update = hasher.update if hasher is not None else (lambda _b: None)
    with open_binary(path, field) as fh:
        size = max(os.fstat(fh.fileno()).st_size, 1)
        done = 0
        n = 0
        while True:
            raw = fh.readline(MAX_LINE_BYTES + 1)
            if not raw:
                break
            update(raw)
            n += 1
            done += len(raw)
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                # skip the rest of an enormous line without holding it in memory
                while True:
                    chunk = fh.readline(MAX_LINE_BYTES)
                    update(chunk)
                    done += len(chunk)
                    if not chunk or chunk.endswith(b"\n"):
                        break
                yield n, Raw(n, None, f"line longer than {MAX_LINE_BYTES // 2**20} MiB", None, n)
                continue
            if progress and n % 20000 == 0:
                progress(done / size)
            if not raw.strip():
                continue
            yield n, Raw(n, raw, None, None, n)
        if n:
            yield n, None   # the line count, for the numbering of the next file
    if progress:
        progress(1.0)


# ---------------------------------------------------------------- JSON arrays, streamed
# A JSON array is read as JSONL is: element by element, each element's bytes handed over as one
# line's are (parsed by the same json.loads, so a bad element is a bad line, counted the same), with
# at most MAX_LINE_BYTES of one element held. The scan finds each element's end from its brackets
# and strings alone (the element's own syntax is json.loads's to judge): memory does not grow with
# the file, no schema is inferred, and a record with a key no earlier record had is just a record.
# Hand-written, not a library's (issue 32 item 3; `bench/json_scan.py --libraries`, docs/benchmarks.md,
# 2026-12-06): ijson 3.6 holds each element whole (a 100 MB element: +190 MB, 72 s), grows with the
# square of the depth (100,000 brackets: past 4 GiB) and stops at the first broken element; DuckDB's
# read_json_objects grows by 130-310 MB where this grows by 16 and refuses the whole file for one
# element over its object size or one malformed element.
ARRAY_CHUNK_BYTES = 2**20
_NOT_SPACE = re.compile(rb"[^ \t\n\r]")
_STRING_REST = re.compile(rb'(?:[^"\\]++|\\.)*+"', re.S)   # the rest of a string, through its closing quote
# Inside an element, one match skips (in C) every byte that leaves the depth as it is: text, whole
# strings and whole bracket pairs holding no bracket, then takes a run of opening or closing brackets
# at once (or a string's opening quote whose end is in a later chunk). So the Python loop turns once
# a run of brackets, not once a bracket or string: [[[...]]] or [["",...],...] scans at C speed.
_FLAT = rb'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")'
_IN_ELEMENT = re.compile(rb'(?:%s|[\[{]%s*+[\]}])*+(?:([\[{]++)|([\]}]++)|("))?' % (_FLAT, _FLAT), re.S)
_SCALAR_END = re.compile(rb'[ \t\n\r,\[\]{}"]')
# An element whose regex scan turns VECTOR_AFTER times (one of many short bracket runs, as
# [[[]],[[]],...]) is scanned on in numpy windows, from 1 KiB, doubling to a chunk: the Python loop
# turns at most VECTOR_AFTER times an element, then once a window, and an element that ends soon
# after the switch costs one small window.
VECTOR_AFTER = 16
_DEPTH_STEP = np.zeros(256, np.int32)
_DEPTH_STEP[list(b"[{")], _DEPTH_STEP[list(b"]}")] = 1, -1
_BOM = b"\xef\xbb\xbf"


def _scan_window(chunk: bytes, i: int, j: int, depth: int):
    """chunk[i:j] of an element at `depth` (i outside any string), scanned at once: (where the
    element ends, 0, False, False), or (j, the depth, in a string, its next byte escaped) at j.
    None when a backslash stands outside a string (invalid JSON, which the regex scan reads)."""
    a = np.frombuffer(chunk, np.uint8, j - i, i)
    steps = _DEPTH_STEP[a]
    in_string = escaped = False
    if chunk.find(b'"', i, j) >= 0 or chunk.find(b"\\", i, j) >= 0:
        quote, slash = a == 0x22, a == 0x5C
        run = 0       # the backslashes that end the window
        if chunk.find(b"\\", i, j) >= 0:
            # a quote after an odd run of backslashes is escaped: the run is the quote's distance
            # from the last byte before it that is not a backslash
            last = np.maximum.accumulate(np.where(slash, -1, np.arange(len(a))))
            at = np.flatnonzero(quote[1:]) + 1
            quote[at[(at - 1 - last[at - 1]) % 2 == 1]] = False
            run = len(a) - 1 - int(last[-1])
        inside = np.bitwise_xor.accumulate(quote.view(np.uint8)).view(bool)   # an opening quote to its string's end
        if (slash & ~inside).any():
            return None
        steps[inside] = 0
        in_string = bool(inside[-1])
        escaped = in_string and run % 2 == 1
    steps = np.cumsum(steps, dtype=np.int32)
    k = int(np.argmax(steps <= -depth))        # the depth moves by one a bracket: the first 0 is where it ends
    if steps[k] <= -depth:
        return i + k + 1, 0, False, False
    return j, depth + int(steps[-1]), in_string, escaped


class _ArrayScan:
    """Where the splitter stands in a JSON array, across chunks: its state (start, first, next (after
    ','), after (an element), element, scalar, done), the current element's depth, whether it is in a
    string and its next byte escaped, its turns of the regex scan and numpy's next window, where it
    began (`begin`, a byte offset of the file) and where its bytes start in this chunk (`start`)."""

    def __init__(self, shown: str):
        self.shown, self.state = shown, "start"
        self.depth = self.turns = self.window = self.begin = self.start = 0
        self.in_string = self.escaped = False

    def refuse(self, offset: int, why: str) -> RecordError:
        return RecordError(f"{self.shown}: not a JSON array of records: {why} at byte {offset:,}")

    def step(self, chunk: bytes, i: int, n: int, base: int) -> tuple[int, int]:
        """One turn of the scan from chunk[i]: (where it goes on, n for the next chunk; where the
        current element ends in this chunk, -1 while it does not)."""
        if self.state == "element":
            if self.escaped or self.in_string or self.turns > VECTOR_AFTER:
                return self._element(chunk, i, n)
            return self._regex_turn(chunk, i, n)       # the common turn, one call fewer
        if self.state == "scalar":
            m = _SCALAR_END.search(chunk, i)
            return (n, -1) if m is None else (m.start(), m.start())
        return self._between(chunk, i, n, base)

    def _element(self, chunk: bytes, i: int, n: int) -> tuple[int, int]:
        if self.escaped:
            self.escaped = False
            return i + 1, -1
        if self.in_string:
            m = _STRING_REST.match(chunk, i)
            if m is None:    # the string goes on in the next chunk: is this one's last byte escaped?
                self.escaped = min(n - len(chunk.rstrip(b"\\")), n - i) % 2 == 1
                return n, -1
            self.in_string = False
            return m.end(), (m.end() if self.depth == 0 else -1)
        if self.turns > VECTOR_AFTER:
            return self._window(chunk, i, n)
        return self._regex_turn(chunk, i, n)

    def _window(self, chunk: bytes, i: int, n: int) -> tuple[int, int]:
        got = _scan_window(chunk, i, min(n, i + self.window), self.depth)
        if got is None:
            self.turns = -2**62       # the regex scan reads this element's stray backslash
            return i, -1
        i, self.depth, self.in_string, self.escaped = got
        self.window = min(2 * self.window, ARRAY_CHUNK_BYTES)
        return i, (i if self.depth == 0 else -1)

    def _regex_turn(self, chunk: bytes, i: int, n: int) -> tuple[int, int]:
        self.turns += 1
        m = _IN_ELEMENT.match(chunk, i)
        assert m is not None          # every part of _IN_ELEMENT is optional: it matches, perhaps empty
        i = m.end()
        if m.lastindex == 1:
            self.depth += i - m.start(1)
        elif m.lastindex == 2:
            closed = i - m.start(2)
            if closed >= self.depth:        # the element ends inside the run; the rest is the array's
                i, self.depth = m.start(2) + self.depth, 0
                return i, i
            self.depth -= closed
        elif m.lastindex == 3:
            self.in_string = True
        else:            # nothing but flat bytes to the chunk's end
            return n, -1
        return i, -1

    def _between(self, chunk: bytes, i: int, n: int, base: int) -> tuple[int, int]:
        """Outside an element: the array's '[', a ',', its ']', or an element's first byte."""
        m = _NOT_SPACE.search(chunk, i)
        if m is None:
            return n, -1
        i, c, state = m.start(), chunk[m.start()], self.state
        at, shown = base + i, chunk[i:i + 1]
        if state == "start":
            if c != 0x5B:
                raise self.refuse(at, f"it starts with {shown!r}, not '['")
            self.state = "first"
        elif state == "after":
            if c not in b",]":
                raise self.refuse(at, f"{shown!r} after an element, not ',' or ']'")
            if c == 0x2C:      # on to the next element's first byte in the same call
                self.state = "next"
                return self._between(chunk, i + 1, n, base)
            self.state = "done"
        elif state == "done":
            raise self.refuse(at, f"{shown!r} after the array's closing ']'")
        elif c == 0x5D and state == "first":
            self.state = "done"
        elif c in b",]}":      # (a '}' would otherwise be read as an empty scalar)
            raise self.refuse(at, f"{shown!r} where an element should be")
        else:
            return self._begin(chunk, i, n, at)
        return i + 1, -1

    def _begin(self, chunk: bytes, i: int, n: int, at: int) -> tuple[int, int]:
        self.begin, self.start, self.turns, self.window = at, i, 0, 1024
        c = chunk[i]
        if c in b"[{":
            self.state, self.depth = "element", 1
            return self._regex_turn(chunk, i + 1, n)
        if c == 0x22:        # a string element: read on to its end at once
            self.state, self.depth, self.in_string = "element", 0, True
            return self._element(chunk, i + 1, n)
        self.state = "scalar"
        return i, -1

    def finish(self, base: int) -> None:
        """At the file's end (`base` bytes): refuses a file that ends before the array's ']'."""
        if self.state != "done":
            where = "inside an element" if self.state in ("element", "scalar") else "before the closing ']'"
            raise self.refuse(base, f"the file ends {where} (truncated?)")


def _skip_bom(chunks) -> tuple[bytes, int, Iterator[bytes]]:
    """(the first chunk, of 3 bytes at least unless the file is shorter, without a byte-order mark;
    the bytes skipped; the rest of the chunks)."""
    chunks, head = iter(chunks), b""
    for chunk in chunks:
        head += chunk
        if len(head) >= len(_BOM):
            break
    if head.startswith(_BOM):
        return head[len(_BOM):], len(_BOM), chunks
    return head, 0, chunks


def _array_elements(chunks, shown: str) -> Iterator[tuple[int, bytes | None]]:
    """(byte offset, the element's bytes, or None for one over MAX_LINE_BYTES) of each element of
    the JSON array that `chunks` (the file's bytes, in pieces) holds. A file that is not one array
    (no '[' first, something other than ',' or ']' after an element, data after the closing ']',
    or an end before it) raises RecordError naming `shown` and the byte offset."""
    scan = _ArrayScan(shown)
    head, base, chunks = _skip_bom(chunks)
    parts: list[bytes] = []
    held, step = 0, scan.step
    for chunk in itertools.chain([head], chunks):
        n, i, scan.start = len(chunk), 0, 0
        while i < n:
            i, end = step(chunk, i, n, base)
            if end >= 0:
                piece = chunk[scan.start:end]
                held += len(piece)
                yield scan.begin, (b"".join(parts) + piece if held <= MAX_LINE_BYTES else None)
                parts, held, scan.state = [], 0, "after"
        if scan.state in ("element", "scalar"):      # the element goes on in the next chunk
            held += n - scan.start
            if held <= MAX_LINE_BYTES:
                parts.append(chunk[scan.start:])
            else:
                parts.clear()
        base += n
    scan.finish(base)


def _iter_json_array(path: Path, progress, hasher, field: str) -> Iterator[tuple[int, Raw | None]]:
    """(element number, Raw) of every element of a JSON array file, as _iter_jsonl's lines."""
    update = hasher.update if hasher is not None else (lambda _b: None)
    with open_binary(path, field) as fh:
        size = max(os.fstat(fh.fileno()).st_size, 1)

        def chunks():
            while chunk := fh.read(ARRAY_CHUNK_BYTES):
                update(chunk)
                yield chunk

        n = 0
        for at, payload in _array_elements(chunks(), printable(path.name)):
            n += 1
            yield n, (Raw(n, payload, None, None, n) if payload is not None else
                      Raw(n, None, f"element longer than {MAX_LINE_BYTES // 2**20} MiB (at byte {at:,})", None, n))
            if progress and n % 5000 == 0:
                progress(fh.tell() / size)
        if n:
            yield n, None
    if progress:
        progress(1.0)


def _reader(kind: str, several: bool) -> str:
    return DUCKDB_READERS[kind].format(union=", union_by_name=true" if several else "")


def _text_chars(value) -> int:
    """Characters of text a row holds (its strings, nested ones too; 8 for any other value)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(len(k) + _text_chars(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return sum(_text_chars(v) for v in value)
    return 8


def _connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{DUCKDB_MEMORY}'")
    con.execute("SET enable_progress_bar = false")   # the CLI draws its own
    return con


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _size_sql(expr: str, t, depth: int = 0) -> str:
    """SQL for the bytes of text in `expr` of DuckDB type `t` (UTF-8), computed on the encoded column
    (strlen of a dictionary-encoded string does not expand it)."""
    kind = t.id
    if kind == "varchar":
        return f"coalesce(strlen({expr}), 0)"
    if kind == "struct":
        parts = [_size_sql(f"struct_extract({expr}, '{name.replace(chr(39), chr(39) * 2)}')", ct, depth + 1)
                 for name, ct in t.children]
        return "(" + " + ".join(parts) + ")" if parts else "0"
    if kind == "list":
        x = f"x{depth}"
        return f"coalesce(list_sum(list_transform({expr}, lambda {x}: {_size_sql(x, t.children[0][1], depth + 1)})), 0)"
    if kind in ("map", "union", "json"):
        return f"coalesce(strlen(CAST({expr} AS VARCHAR)), 0)"
    return "8"


def _check_expansion(con, reader: str, arg, files: list[Path], field: str) -> None:
    """Refuse files whose text would pass the expansion cap, before any row is materialized."""
    rel = con.sql(f"SELECT * FROM {reader} LIMIT 0", params=[arg])
    expr = " + ".join(_size_sql(_quoted(name), t) for name, t in zip(rel.columns, rel.types, strict=True)) or "0"
    size = sum(os.stat(f).st_size for f in files)
    cap = max(MIN_EXPANDED_BYTES, EXPANSION_RATIO * size)
    shown = str(files[0]) if len(files) == 1 else f"{files[0].parent}/..."
    try:
        total = con.execute(f"SELECT coalesce(sum({expr}), 0) FROM {reader}", [arg]).fetchall()[0][0]
    except duckdb.OutOfMemoryException:
        raise PlannerInputError(field, shown, f"reading it needs more memory than the {DUCKDB_MEMORY} it may use "
                                              "(a compression bomb?)") from None
    if total > cap:
        raise PlannerInputError(field, shown, f"its {size:,} bytes expand to {int(total):,} bytes of text (a "
                                              f"compression bomb?); at most {EXPANSION_RATIO}x its size or "
                                              f"{MIN_EXPANDED_BYTES:,} bytes are read")


def _first_line(exc: BaseException) -> str:
    text = str(exc).replace("\\n", "\n").strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


def _stream(con, query: str, arg) -> Iterator[tuple[dict | None, str | None]]:
    """(row, None) or (None, why it is a bad row) for every row, streamed in Arrow batches of 256
    rows (DuckDB's execute() would hold the whole result)."""
    for batch in con.sql(query, params=[arg]).to_arrow_reader(256):
        for row in batch.to_pylist():
            yield ((None, f"row longer than {MAX_LINE_BYTES // 2**20} MiB of text")
                   if _text_chars(row) > MAX_LINE_BYTES else (row, None))   # characters: at most its bytes


def _iter_duckdb(path: Path, kind: str, progress, field: str = "PATH") -> Iterator[tuple[int, Raw | None]]:
    con = _connect()
    try:
        reader = _reader(kind, False)
        try:
            total = con.execute(f"SELECT count(*) FROM {reader}", [str(path)]).fetchall()[0][0]
            _check_expansion(con, reader, str(path), [path], field)
            rows = _stream(con, f"SELECT * FROM {reader}", str(path))
        except duckdb.Error as exc:
            raise RecordError(f"{path.name}: cannot be read as {kind}: {str(exc).splitlines()[0]}") from exc
        n = 0
        try:
            for row, error in rows:
                n += 1
                yield n, Raw(n, row, error, None, n)
                if progress and n % 5000 == 0:
                    progress(n / max(total, 1))
        except (duckdb.Error, OSError, MemoryError) as exc:   # Arrow's stream reports DuckDB's errors as OSError
            raise RecordError(f"{path.name}: cannot be read as {kind}: {_first_line(exc)}") from exc
        if progress:
            progress(1.0)
    finally:
        con.close()


def sample_duckdb(dataset: Dataset, size: int, seed: int, hasher=None, field: str = "PATH") -> tuple[list[Raw], int]:
    """A uniform sample of `size` rows of a Parquet dataset (DuckDB's reservoir sample with a fixed
    seed: a percentage sample would be a block sample) and the dataset's row count (Parquet's from
    the files' metadata). Rows are numbered in sample order. `hasher` sees every byte of every file,
    in a thread of its own while DuckDB samples (both release the GIL)."""
    with _hashing(dataset, hasher, field):
        return _sample_rows(dataset, size, seed, field)


@contextlib.contextmanager
def _hashing(ds: Dataset, hasher, field: str):
    """Hash the dataset's files in a thread while the block runs; an error reading them is raised."""
    failed: list[BaseException] = []

    def work():
        try:
            for f in ds.files:
                _hash_file(f, hasher, field)
        except BaseException as exc:   # handed to the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join()
    if failed:
        raise failed[0]


def _sample_rows(ds: Dataset, k: int, seed: int, field: str = "PATH") -> tuple[list[Raw], int]:
    con = _connect()
    files = [str(f) for f in ds.files] if ds.several else str(ds.files[0])
    reader = _reader(ds.kind, ds.several)
    try:
        try:
            total = con.execute(f"SELECT count(*) FROM {reader}", [files]).fetchall()[0][0]
            _check_expansion(con, reader, files, list(ds.files), field)
            rows = list(_stream(con, f"SELECT * FROM {reader} USING SAMPLE reservoir({int(k)} ROWS) "
                                     f"REPEATABLE ({int(seed)})", files))
        except (duckdb.Error, OSError, MemoryError) as exc:
            raise RecordError(f"{ds.files[0].name if not ds.several else ds.path}: cannot be read as {ds.kind}: "
                              f"{_first_line(exc)}") from exc
        out = [Raw(i, row, error, None, i) for i, (row, error) in enumerate(rows, start=1)]
    finally:
        con.close()
    return out, int(total)
