"""Reading conversation datasets in the formats drafter pipelines meet, as (role, text) turns.

Formats: sharegpt (conversations[{from,value}]), openai (messages[{role,content}], also a
messages_json string), alpaca / flat (instruction|question|problem ... -> output|response|solution),
glaive (system + chat with USER:/ASSISTANT:/FUNCTION RESPONSE:). `auto` picks by the keys.
Files: JSONL (streamed line by line, so a bad line is reported with its number), JSON arrays and
Parquet (through DuckDB's readers, streamed in record batches).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import duckdb

from planner.safe_io import check_regular, open_binary

FORMATS = ("auto", "sharegpt", "openai", "alpaca", "glaive")
ROLE_MAP = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant", "chatgpt": "assistant",
            "bing": "assistant", "bard": "assistant", "model": "assistant", "system": "system", "tool": "tool",
            "function": "tool", "function_call": "assistant", "observation": "tool", "ipython": "tool"}
PROMPT_KEYS = ("system_prompt", "system", "instruction", "input", "question", "problem", "prompt", "query")
RESPONSE_KEYS = ("output", "response", "solution", "answer", "completion", "chosen")
GLAIVE_SPLIT = re.compile(r"(USER:|ASSISTANT:|FUNCTION RESPONSE:)")
MAX_LINE_BYTES = 16 * 2**20
# A lone UTF-16 surrogate (JSON "\ud800") is not Unicode text: it cannot be encoded or tokenized.
SURROGATE = re.compile(r"[\ud800-\udfff]")


class RecordError(ValueError):
    """A record that is not a conversation in the expected format."""


@dataclass
class Record:
    line: int                  # 1-based line (JSONL) or row number (JSON, Parquet)
    turns: list[tuple[str, str]] | None
    error: str | None = None


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
    return str(content)


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


def to_turns(obj: dict, fmt: str) -> list[tuple[str, str]]:
    if not isinstance(obj, dict):
        raise RecordError(f"a record must be a JSON object, got {type(obj).__name__}")
    if fmt == "auto":
        fmt = detect_format(obj)
    turns: list[tuple[str, str]] = []
    if fmt == "sharegpt" or (fmt == "openai" and "conversations" in obj and "messages" not in obj):
        convo = obj.get("conversations")
        if not isinstance(convo, list):
            raise RecordError("missing field 'conversations' (a list)")
        extra = obj.get("system") or obj.get("tools")
        if extra:
            turns.append(("system", _text(extra)))
        for i, m in enumerate(convo):
            if not isinstance(m, dict):
                raise RecordError(f"conversations[{i}] is not an object")
            role = m.get("from", m.get("role"))
            val = m.get("value", m.get("content"))
            if role is None or val is None:
                raise RecordError(f"conversations[{i}] lacks 'from'/'value'")
            turns.append((ROLE_MAP.get(str(role).lower(), "user"), _text(val)))
    elif fmt == "openai":
        msgs = obj.get("messages")
        if msgs is None and isinstance(obj.get("messages_json"), str):
            try:
                msgs = json.loads(obj["messages_json"])
            except ValueError as exc:
                raise RecordError(f"messages_json is not valid JSON: {exc.msg}")
        if isinstance(msgs, str):
            try:
                msgs = json.loads(msgs)
            except ValueError as exc:
                raise RecordError(f"messages is a string but not JSON: {exc.msg}")
        if not isinstance(msgs, list):
            raise RecordError("missing field 'messages' (a list)")
        if obj.get("tools"):
            turns.append(("system", _text(obj["tools"])))
        for i, m in enumerate(msgs):
            if not isinstance(m, dict) or "role" not in m:
                raise RecordError(f"messages[{i}] lacks 'role'")
            text = _text(m.get("content"))
            if m.get("tool_calls"):
                text += json.dumps(m["tool_calls"], ensure_ascii=False)
            turns.append((ROLE_MAP.get(str(m["role"]).lower(), "user"), text))
    elif fmt == "alpaca":
        prompt = "\n".join(_text(obj[k]) for k in PROMPT_KEYS if obj.get(k))
        resp_key = next((k for k in RESPONSE_KEYS if k in obj), None)
        if resp_key is None:
            raise RecordError(f"missing a response field (one of {', '.join(RESPONSE_KEYS)})")
        if not prompt:
            raise RecordError(f"missing a prompt field (one of {', '.join(PROMPT_KEYS)})")
        turns = [("user", prompt), ("assistant", _text(obj[resp_key]))]
    elif fmt == "glaive":
        chat = obj.get("chat")
        if not isinstance(chat, str):
            raise RecordError("missing field 'chat' (a string)")
        if obj.get("system"):
            turns.append(("system", _text(obj["system"])))
        role = "user"
        for piece in GLAIVE_SPLIT.split(chat):
            if piece == "USER:":
                role = "user"
            elif piece == "ASSISTANT:":
                role = "assistant"
            elif piece == "FUNCTION RESPONSE:":
                role = "tool"
            elif piece.strip():
                turns.append((role, piece.strip()))
    else:
        raise RecordError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    if not any(r == "assistant" for r, _ in turns):
        raise RecordError("no assistant turn")
    for i, (_, text) in enumerate(turns):
        bad = None if text.isascii() else SURROGATE.search(text)   # isascii() is O(1) in CPython
        if bad:
            raise RecordError(f"turn {i}: lone surrogate \\u{ord(bad.group()):04x} is not valid Unicode text")
    return turns


def file_kind(path: Path, field: str = "PATH") -> str:
    name = path.name.lower()
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(".jsonl") or name.endswith(".ndjson"):
        return "jsonl"
    if name.endswith(".json"):
        with open_binary(path, field) as fh:
            head = fh.read(4096).lstrip()
        return "json" if head.startswith(b"[") else "jsonl"
    raise RecordError(f"{path.name}: unknown file type; use .jsonl, .json or .parquet")


def iter_records(path: Path, fmt: str = "auto", progress=None, hasher=None, field: str = "PATH") -> Iterator[Record]:
    """Yield one Record per line/row; `progress(fraction)` is called now and then; `hasher` (a
    hashlib object) sees every byte of the file. Only a regular file is read (a FIFO or a device
    is refused by name as `field`)."""
    path = Path(path)
    check_regular(path, field)
    kind = file_kind(path, field)
    if kind == "jsonl":
        yield from _iter_jsonl(path, fmt, progress, hasher, field)
    else:
        if hasher is not None:
            with open_binary(path, field) as fh:
                while chunk := fh.read(2**20):
                    hasher.update(chunk)
        yield from _iter_duckdb(path, kind, fmt, progress)


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


def _iter_jsonl(path: Path, fmt: str, progress, hasher, field: str) -> Iterator[Record]:
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
                yield Record(n, None, f"line longer than {MAX_LINE_BYTES // 2**20} MiB")
                continue
            if progress and n % 20000 == 0:
                progress(done / size)
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield Record(n, None, f"invalid UTF-8 at byte {exc.start}")
                continue
            yield _record(n, text, fmt)
    if progress:
        progress(1.0)


def _iter_duckdb(path: Path, kind: str, fmt: str, progress) -> Iterator[Record]:
    con = duckdb.connect()
    try:
        reader = "read_parquet(?)" if kind == "parquet" else "read_json(?, format='array', maximum_object_size=67108864)"
        try:
            total = con.execute(f"SELECT count(*) FROM {reader}", [str(path)]).fetchone()[0]
            rel = con.execute(f"SELECT * FROM {reader}", [str(path)])
        except duckdb.Error as exc:
            raise RecordError(f"{path.name}: cannot be read as {kind}: {str(exc).splitlines()[0]}")
        cols = [d[0] for d in rel.description]
        n = 0
        while True:
            rows = rel.fetchmany(5000)
            if not rows:
                break
            for row in rows:
                n += 1
                yield _turns_record(n, dict(zip(cols, row)), fmt)
            if progress:
                progress(n / max(total, 1))
    finally:
        con.close()
