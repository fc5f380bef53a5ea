"""What a capture file holds, read from its own metadata only: a safetensors file's JSON header, a
torch.save zip archive's directory and its data.pkl read opcode by opcode, DeepSpec's fixed-size
index records. No tensor data is read and nothing is unpickled: `pickle.load`/`torch.load` would
run whatever the file names, and these files come from elsewhere.

Per file it gives the tokens (the token-id tensor's element count, or the index's lengths), the
rows, the bytes of tensor data and so the bytes that are not data (headers, archive, pickle).

- safetensors (speculators hs_{idx}.safetensors: `token_ids` [T], `hidden_states` [T, n, H],
  src/speculators/train/data.py:281-302; NeMo shards: `input_ids` [n, S] among others,
  components/datasets/llm/eagle3_cache.py:35-45): 8-byte little-endian header length, then that
  many bytes of JSON {name: {dtype, shape, data_offsets}}; the data follow.
- torch.save zip (SpecForge data_{idx}.ckpt: input_ids [T], loss_mask [T], hidden state tensors
  [1, T, nH], scripts/prepare_hidden_states.py:719-730; Model-Optimizer {id}.pt: input_ids [T],
  loss_mask, hidden_states, aux_hidden_states, conversation_id,
  collect_hidden_states/compute_hidden_states_hf.py:190-201): `<archive>/data.pkl` (a pickle whose
  tensors are calls of torch._utils._rebuild_tensor_v2 on persistent ids ('storage', <dtype>Storage,
  key, location, numel)) and `<archive>/data/<key>` (each storage's raw bytes).
- DeepSpec samples.local.idx / samples.idx: records of struct "<QIIQQQQQ" (56 bytes: sample_id,
  shard_id, seq_len, five offsets; deepspec/data/target_cache_dataset.py:21-22, 77-98).
"""
from __future__ import annotations

import json
import lzma
import math
import os
import pickletools
import stat
import struct
import time
import zipfile
import zlib
from dataclasses import dataclass, field

from planner.errors import PlannerInputError
from planner.safe_io import open_binary

# Bounds on what a file may make this module read, build or compute (the files are hostile: issue 36).
# A capture file's safetensors header names a few tensors in under 1 KB; safetensors' own bound is
# 100 MB (safetensors/src/tensor.rs MAX_HEADER_SIZE), which json.loads takes 25 s and 1.2 GB to parse
# here (2026-12-06, this 2-core machine): 1 MB is 1,000x a capture's header and parses in a blink.
MAX_HEADER_BYTES = 1_000_000
MAX_PICKLE_BYTES = 1_000_000        # a record's data.pkl is a few hundred bytes
MAX_ZIP_ENTRIES = 10_000
# The central directory zipfile reads and parses whole: a torch.save entry is about 100 bytes (46 + its
# name + its extra field); a 10 MB directory of the smallest entries (47 bytes) took zipfile 1.6 s
# to parse here (2026-12-06, this 2-core machine, shared): 256 bytes an entry.
MAX_ZIP_DIRECTORY_BYTES = MAX_ZIP_ENTRIES * 256
MAX_INDEX_BYTES = 56 * 10_000_000   # ten million samples per index
INDEX_RECORD = struct.Struct("<QIIQQQQQ")
# Shapes: checked in count and size before any arithmetic. safetensors' shape entries are usize and
# its element count a checked product that fails on overflow however it ends (tensor.rs
# Metadata::validate at huggingface/safetensors@000a16f4: try_fold(1usize, usize::checked_mul), then
# checked_mul by the dtype's size), so a [huge, ..., huge, 0] shape is refused, not taken as 0
# elements; torch's sizes are int64.
MAX_DIMS = 64                       # a capture tensor has 1 to 3 (our bound, not a format's)
MAX_NUMEL = 2 ** 64 - 1
MAX_INT_DIGITS = 20                 # 2**64 has 20 digits: a longer integer in a header is refused unparsed
# The pickle opcode reader: every value it builds is bounded in depth and in parts (a part shared
# by memo counted each time it is referenced), its integers to 64 bits, its memo in entries. A
# torch data.pkl nests 4 deep (mapping, tensor, its arguments, the shape) with a few dozen parts a tensor.
MAX_VALUE_DEPTH = 32
MAX_VALUE_NODES = 1_000_000
MAX_MEMO = 100_000
# Time: a file's read stops after MAX_FILE_SECONDS (its loops look at the clock), and at the caller's
# deadline (status --verify's and calibrate's bound in all) when sooner. Reading a capture file's
# metadata takes milliseconds.
MAX_FILE_SECONDS = 10.0
_clock = time.monotonic

SAFETENSORS_DTYPES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E4M3FN": 1, "F8_E8M0": 1,
                      "I16": 2, "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8,
                      "F64": 8}
TORCH_STORAGES = {"BoolStorage": 1, "ByteStorage": 1, "CharStorage": 1, "ShortStorage": 2, "IntStorage": 4,
                  "LongStorage": 8, "HalfStorage": 2, "BFloat16Storage": 2, "FloatStorage": 4, "DoubleStorage": 8,
                  "Float8_e4m3fnStorage": 1, "Float8_e5m2Storage": 1}
TOKEN_TENSORS = ("input_ids", "token_ids")      # the first present counts the tokens


class FormatError(ValueError):
    """A file that cannot be read as its format: the one-line reason."""


class OutOfTime(FormatError):
    """The caller's deadline passed while this file was read: the file is not judged (not read)."""


class TooSlow(FormatError):
    """This file's read passed MAX_FILE_SECONDS: not measured, but not judged broken either (a
    stalled filesystem takes as long as a hostile file)."""


def _on_time(deadline: float | None) -> None:
    if deadline is not None and _clock() >= deadline:
        raise OutOfTime("not read: the bound on reading time passed")


def numel(shape, where: str, most: int = MAX_NUMEL) -> int:
    """The element count of `shape`, its entries checked in count and size before they are
    multiplied; the product refused as soon as it passes `most` (safetensors' checked product)."""
    if not isinstance(shape, (tuple, list)):
        raise FormatError(f"{where} has a shape that is not a list of sizes")
    if len(shape) > MAX_DIMS:
        raise FormatError(f"{where} has a shape of {len(shape):,} dimensions, over {MAX_DIMS}")
    n = 1
    for x in shape:
        if not isinstance(x, int) or isinstance(x, bool) or not 0 <= x <= most:
            raise FormatError(f"{where} has a shape entry that is not a size from 0 to {most:,}")
        n *= x
        if n > most:
            raise FormatError(f"{where}: its shape's element count passes {most:,}")
    return n


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int

    @property
    def numel(self) -> int:
        return math.prod(self.shape)      # the readers checked the shape (numel) before they made a Tensor


@dataclass(frozen=True)
class FileInfo:
    """One capture file as its metadata describes it."""
    format: str                     # "safetensors", "torch-zip", "deepspec-index", "size-only"
    size: int                       # bytes on disk (apparent size)
    data_bytes: int                 # tensor data (the rest is headers and archive structure)
    tokens: int | None              # None: this format does not say
    rows: int | None                # samples in the file (1 for a per-row file)
    tensors: tuple[Tensor, ...] = ()
    lengths: tuple[int, ...] = field(default=(), repr=False)   # per-row tokens (DeepSpec index)

    @property
    def overhead(self) -> int:
        return self.size - self.data_bytes


def _tokens_rows(tensors: list[Tensor]) -> tuple[int | None, int | None]:
    by = {t.name: t for t in tensors}
    for name in TOKEN_TENSORS:
        if name in by:
            shape = by[name].shape
            # a [n, S] input_ids is n rows of S tokens (NeMo's shards); [T] and [1, T] one row
            rows = shape[0] if len(shape) == 2 and shape[0] != 1 else 1
            return by[name].numel, rows
    return None, None


# ---------------------------------------------------------------- safetensors
def _header_int(text: str) -> int:
    """json's parse_int: an integer of more digits than 2**64 has is refused before int() reads it."""
    digits = len(text) - text.startswith("-")
    if digits > MAX_INT_DIGITS:
        raise FormatError(f"its safetensors header holds an integer of {digits:,} digits, over {MAX_INT_DIGITS}")
    return int(text)


def _no_constant(c):
    raise ValueError(c)


def _safetensors_header(fh, size: int) -> tuple[int, dict]:
    """(the header's length, the header) of a safetensors file of `size` bytes, bounded and checked."""
    head = fh.read(8)
    if len(head) < 8:
        raise FormatError("truncated: shorter than a safetensors header")
    n = int.from_bytes(head, "little")
    if n > MAX_HEADER_BYTES or n > size - 8:
        raise FormatError(f"not a safetensors file, or truncated: its header claims {n:,} bytes of {size:,}"
                          + (f" (at most {MAX_HEADER_BYTES:,} read)" if n > MAX_HEADER_BYTES else ""))
    raw = fh.read(n)
    if len(raw) < n:
        raise FormatError("truncated in its header")
    try:
        header = json.loads(raw.decode("utf-8"), parse_constant=_no_constant, parse_int=_header_int)
    except FormatError:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise FormatError("its safetensors header is not valid JSON") from None
    if not isinstance(header, dict):
        raise FormatError("its safetensors header is not a mapping")
    return n, header


def _safetensors_tensor(name, t) -> tuple[Tensor, int]:
    """(the tensor, where its bytes end) of one header entry, checked."""
    where = f"tensor {name[:60]!r}"
    try:
        dtype, shape, (a, b) = t["dtype"], t["shape"], t["data_offsets"]
        width = SAFETENSORS_DTYPES[dtype]
        if not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_NUMEL for x in (a, b)):
            raise ValueError
    except (KeyError, TypeError, ValueError):
        raise FormatError(f"{where} has no valid dtype, shape and offsets") from None
    count = numel(shape, where)
    if b < a or count * width != b - a:
        raise FormatError(f"{where}: {dtype} {list(shape)} does not fill offsets {a}..{b}")
    return Tensor(str(name), dtype, tuple(shape), b - a), b


def read_safetensors(handle, size: int, deadline: float | None = None) -> FileInfo:
    n, header = _safetensors_header(handle, size)
    tensors, end = [], 0
    for i, (name, t) in enumerate(header.items()):
        if i % 256 == 0:
            _on_time(deadline)
        if name == "__metadata__":
            continue
        tensor, b = _safetensors_tensor(name, t)
        tensors.append(tensor)
        end = max(end, b)
    if 8 + n + end > size:
        raise FormatError(f"truncated: its tensors end at byte {8 + n + end:,}, the file has {size:,}")
    tokens, rows = _tokens_rows(tensors)
    return FileInfo("safetensors", size, sum(t.nbytes for t in tensors), tokens, rows, tuple(tensors))


# ---------------------------------------------------------------- torch.save zip
class _Global:
    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __repr__(self):
        return f"{self.module}.{self.name}"


_MARK = object()
ALLOWED_CALLS = {("torch._utils", "_rebuild_tensor_v2"), ("collections", "OrderedDict")}
_PUSHED = frozenset(("BINUNICODE", "SHORT_BINUNICODE", "UNICODE", "BINUNICODE8", "SHORT_BINSTRING", "BINSTRING",
                     "STRING", "BINFLOAT", "FLOAT", "SHORT_BINBYTES", "BINBYTES"))
_INTS = frozenset(("BININT", "BININT1", "BININT2", "LONG1", "LONG4", "LONG", "INT"))   # each bounded to 64 bits
_KEYS = (str, int, float, bool, bytes, type(None))     # a mapping key is a plain value, hashed in O(its length)


class _T(tuple):
    """A tuple the reader built: `depth` and `nodes` (its parts, a part shared by memo counted each time)."""
    depth: int      # set by the reader when it builds the value (_grow)
    nodes: int


class _L(list):
    """A list the reader built (depth and nodes as _T, grown by APPEND)."""
    depth: int      # set by the reader when it builds the value (_grow)
    nodes: int


class _D(dict):
    """A mapping the reader built (depth and nodes as _T, grown by SETITEM)."""
    depth: int      # set by the reader when it builds the value (_grow)
    nodes: int


def _measure(v) -> tuple[int, int]:
    return (v.depth, v.nodes) if isinstance(v, (_T, _L, _D)) else (0, 1)


def _grow(c, items) -> None:
    """Count `items` into container `c`, refused past the bounds. A container changed after it was put
    in another leaves that one's count low: harmless, since nothing here walks a value but a key's
    hash (keys are plain values) and these counts."""
    for v in items:
        d, n = _measure(v)
        c.depth, c.nodes = max(c.depth, d + 1), c.nodes + n
    if c.depth > MAX_VALUE_DEPTH:
        raise FormatError(f"its data.pkl nests values over {MAX_VALUE_DEPTH} deep")
    if c.nodes > MAX_VALUE_NODES:
        raise FormatError(f"its data.pkl builds a value of over {MAX_VALUE_NODES:,} parts")


def _new(cls, items=()):
    c = cls(items)
    c.depth, c.nodes = 1, 1
    _grow(c, items)
    return c


def _check_int(x: int) -> int:
    if not -(2 ** 63) <= x < 2 ** 64:
        raise FormatError(f"its data.pkl holds an integer of {x.bit_length():,} bits, over 64")
    return x


class _OpReader:
    """A torch.save data.pkl read opcode by opcode into a small stack of plain values (nothing is
    unpickled: pickletools.genops decodes, it does not run)."""

    def __init__(self, deadline: float | None):
        self.stack: list = []
        self.memo: dict = {}
        self.deadline = deadline

    def pop(self, count: int) -> list:
        if len(self.stack) < count or any(v is _MARK for v in self.stack[len(self.stack) - count:]):
            raise IndexError
        items = self.stack[len(self.stack) - count:]
        del self.stack[len(self.stack) - count:]
        return items

    def pop_mark(self) -> list:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i] is _MARK:
                items = self.stack[i + 1:]
                del self.stack[i:]
                return items
        raise FormatError("its data.pkl is malformed (no mark)")

    def set_items(self, items: list) -> None:
        target = self.stack[-1]
        if not isinstance(target, _D) or len(items) % 2:
            raise TypeError
        for k in items[::2]:
            if not isinstance(k, _KEYS):
                raise FormatError("its data.pkl has a mapping key that is not a plain value")
        target.update(zip(items[::2], items[1::2], strict=True))
        _grow(target, items)

    def append(self, items: list) -> None:
        target = self.stack[-1]
        if not isinstance(target, _L):
            raise TypeError
        target.extend(items)
        _grow(target, items)

    def memo_put(self, key) -> None:
        if key not in self.memo and len(self.memo) >= MAX_MEMO:
            raise FormatError(f"its data.pkl memoizes over {MAX_MEMO:,} values")
        self.memo[key] = self.stack[-1]

    def run(self, data: bytes):
        ops = pickletools.genops(data)
        for count in range(len(data) + 1):       # an opcode takes at least one byte
            if count % 4096 == 0:
                _on_time(self.deadline)
            try:
                op, arg, _pos = next(ops)
            except StopIteration:
                break
            except Exception as exc:     # genops raises ValueError and others on a bad stream
                raise FormatError(f"its data.pkl is not a readable pickle ({str(exc)[:80]})") from exc
            if op.name == "STOP":
                return self.stack.pop() if self.stack else None
            try:
                self.step(op.name, arg)
            except (IndexError, KeyError, TypeError, AttributeError):
                raise FormatError(f"its data.pkl is malformed (at {op.name})") from None
        raise FormatError("its data.pkl is malformed (no STOP)")

    def step(self, name: str, arg) -> None:
        if name in ("PROTO", "FRAME"):
            return
        if not (self._push(name, arg) or self._build(name, arg)):
            raise FormatError(f"its data.pkl uses the {name} opcode, which builds objects or runs code: "
                              "not loaded")

    def _push(self, name: str, arg) -> bool:
        """An opcode that pushes a value as it is (a string, an int, an empty container, a mark, a
        constant, a memo's value): done, True; any other: False."""
        stack = self.stack
        if name in _PUSHED:
            stack.append(arg)
        elif name in _INTS:
            stack.append(_check_int(arg))
        elif name in ("EMPTY_DICT", "EMPTY_LIST", "EMPTY_TUPLE"):
            stack.append(_new({"EMPTY_DICT": _D, "EMPTY_LIST": _L, "EMPTY_TUPLE": _T}[name]))
        elif name == "MARK":
            stack.append(_MARK)
        elif name in ("NEWTRUE", "NEWFALSE", "NONE"):
            stack.append({"NEWTRUE": True, "NEWFALSE": False, "NONE": None}[name])
        elif name in ("BINGET", "LONG_BINGET", "GET"):
            stack.append(self.memo[arg])
        else:
            return False
        return True

    def _build(self, name: str, arg) -> bool:
        """An opcode that builds from the stack (tuples, the memo, items, a global, a storage, a
        call): done, True; any other: False."""
        stack = self.stack
        if name == "TUPLE":
            stack.append(_new(_T, self.pop_mark()))
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            stack.append(_new(_T, self.pop(int(name[-1]))))
        elif name in ("BINPUT", "LONG_BINPUT", "PUT"):
            self.memo_put(arg)
        elif name == "MEMOIZE":
            self.memo_put(len(self.memo))
        elif name in ("SETITEM", "SETITEMS"):
            self.set_items(self.pop(2) if name == "SETITEM" else self.pop_mark())
        elif name in ("APPEND", "APPENDS"):
            self.append(self.pop(1) if name == "APPEND" else self.pop_mark())
        elif name in ("GLOBAL", "STACK_GLOBAL"):
            stack.append(self.global_(name, arg))
        elif name == "BINPERSID":
            stack.append(self.persistent_id(stack.pop()))
        elif name == "REDUCE":
            args, fn = stack.pop(), stack.pop()
            stack.append(self.reduce(fn, args))
        else:
            return False
        return True

    def global_(self, name: str, arg) -> "_Global":
        if name == "GLOBAL":
            module, _, attr = str(arg).partition(" ")
        else:
            attr, module = self.stack.pop(), self.stack.pop()
            if not isinstance(module, str) or not isinstance(attr, str):
                raise FormatError("its data.pkl imports a computed name: loading it would run code")
        allowed = (module, attr) in ALLOWED_CALLS or (module == "torch" and attr in TORCH_STORAGES)
        if not allowed:
            raise FormatError(f"its data.pkl imports {module[:60]}.{attr[:60]}: loading it would run "
                              "code (not loaded)")
        return _Global(module, attr)

    @staticmethod
    def persistent_id(pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], _Global)
                and pid[1].module == "torch" and pid[1].name in TORCH_STORAGES and isinstance(pid[2], str)):
            raise FormatError("its data.pkl has a persistent id that is not a torch storage")
        return _new(_T, ("storage", pid[1].name, pid[2]))

    @staticmethod
    def reduce(func, args):
        if not isinstance(func, _Global) or not isinstance(args, tuple):
            raise FormatError("its data.pkl calls something that is not a tensor rebuild: loading it "
                              "would run code")
        if func.name == "OrderedDict":
            return _new(_D)
        if len(args) < 3 or not (isinstance(args[0], tuple) and args[0][:1] == ("storage",)):
            raise FormatError("its data.pkl rebuilds a tensor without a storage")
        shape = args[2]
        numel(shape, "its data.pkl's tensor", 2 ** 63 - 1)       # torch sizes are int64
        return _new(_T, ("tensor", args[0][1], args[0][2], _new(_T, shape)))


def _pickle_tensors(data: bytes, deadline: float | None = None) -> list[tuple[str, str, str, tuple[int, ...]]]:
    """The tensors a torch.save data.pkl describes, as (name, storage key, storage class, shape),
    found by reading its opcodes (_OpReader). Any import but the tensor rebuild and its storage
    classes, and any opcode that builds other objects, is refused: loading that file would run code."""
    try:
        result = _OpReader(deadline).run(data)
    except (RecursionError, MemoryError):       # the bounds above keep these away; never a traceback
        raise FormatError("its data.pkl is malformed (too deep or too large)") from None
    if not isinstance(result, dict):
        raise FormatError("its data.pkl is not a mapping of named tensors")
    out = []
    for k, v in result.items():
        if isinstance(v, tuple) and len(v) == 4 and v[0] == "tensor":
            if not isinstance(k, str):
                raise FormatError("its data.pkl names a tensor with other than text")
            out.append((k, v[2], v[1], tuple(v[3])))
    return out


# What zipfile raises on a malformed archive, besides BadZipFile: a version or compression it does
# not know (NotImplementedError), a name flagged UTF-8 that is not (UnicodeDecodeError, a
# ValueError), a directory offset past 2**63 (ValueError, OverflowError), a truncated or corrupt
# stream (EOFError, zlib.error, lzma.LZMAError, struct.error), an encrypted entry (RuntimeError).
ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, OverflowError,
              NotImplementedError, RuntimeError, struct.error, zlib.error, lzma.LZMAError, KeyError, IndexError)
_NO_ZIP = "not a torch.save zip archive, or truncated (no readable zip directory)"


def _zip_errors(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:80]}"


def _open_zip(fh, size: int) -> zipfile.ZipFile:
    """The archive, its directory bounded before zipfile reads it: the end record (in the last 64 KiB,
    read by zipfile's own _EndRecData, private, skipped if a Python lacks it) says the entries and
    the directory's size, which zipfile would read whole."""
    end_record = getattr(zipfile, "_EndRecData", None)
    if end_record is not None:
        try:
            end = end_record(fh)
        except ZIP_ERRORS:
            end = None
        if not end:
            raise FormatError(_NO_ZIP)
        entries, directory = end[4], end[5]       # _ECD_ENTRIES_TOTAL, _ECD_SIZE (zipfile.py)
        if entries > MAX_ZIP_ENTRIES:
            raise FormatError(f"{entries:,} archive entries, over {MAX_ZIP_ENTRIES:,}")
        if directory > min(size, MAX_ZIP_DIRECTORY_BYTES):
            raise FormatError(f"its zip directory claims {directory:,} bytes, over "
                              f"{min(size, MAX_ZIP_DIRECTORY_BYTES):,}")
        fh.seek(0)
    try:
        return zipfile.ZipFile(fh)
    except zipfile.BadZipFile:
        raise FormatError(_NO_ZIP) from None
    except ZIP_ERRORS as exc:
        raise FormatError(f"a malformed zip archive ({_zip_errors(exc)})") from exc


def _read_pickle_entry(zf: zipfile.ZipFile, infos) -> tuple[str, bytes]:
    pkl = [i for i in infos if i.filename.endswith("/data.pkl") and i.filename.count("/") == 1]
    if len(pkl) != 1:
        raise FormatError("no <archive>/data.pkl: not a torch.save archive")
    prefix = pkl[0].filename[:-len("data.pkl")]
    if pkl[0].file_size > MAX_PICKLE_BYTES:
        raise FormatError(f"its data.pkl is {pkl[0].file_size:,} bytes, over {MAX_PICKLE_BYTES:,}")
    try:
        with zf.open(pkl[0]) as p:
            data = p.read(MAX_PICKLE_BYTES + 1)
    except ZIP_ERRORS as exc:
        raise FormatError(f"its data.pkl cannot be read ({_zip_errors(exc)})") from exc
    if len(data) > MAX_PICKLE_BYTES:
        raise FormatError(f"its data.pkl is over {MAX_PICKLE_BYTES:,} bytes")
    return prefix, data


def read_torch_zip(handle, size: int, deadline: float | None = None) -> FileInfo:
    with _open_zip(handle, size) as zf:
        infos = zf.infolist()
        if len(infos) > MAX_ZIP_ENTRIES:
            raise FormatError(f"{len(infos):,} archive entries, over {MAX_ZIP_ENTRIES:,}")
        _on_time(deadline)
        prefix, data = _read_pickle_entry(zf, infos)
        storages = {i.filename[len(prefix) + len("data/"):]: i for i in infos
                    if i.filename.startswith(prefix + "data/")}
        tensors = []
        for name, key, cls, shape in _pickle_tensors(data, deadline):
            entry = storages.get(key)
            if entry is None:
                raise FormatError(f"tensor {name[:60]!r}: its storage {key[:20]!r} is not in the archive")
            if entry.header_offset + entry.compress_size > size:
                raise FormatError("truncated: a storage ends past the end of the file")
            if math.prod(shape) * TORCH_STORAGES[cls] > entry.file_size:     # shape checked (numel)
                raise FormatError(f"tensor {name[:60]!r}: {list(shape)} is larger than its storage")
            tensors.append(Tensor(name, cls.removesuffix("Storage"), tuple(shape), entry.file_size))
        data_bytes = sum(i.file_size for i in storages.values())
    tokens, rows = _tokens_rows(tensors)
    return FileInfo("torch-zip", size, data_bytes, tokens, rows, tuple(tensors))


# ---------------------------------------------------------------- DeepSpec index
_INDEX_CHUNK = INDEX_RECORD.size * 65_536       # records read at a time, the clock looked at between


def read_deepspec_index(handle, size: int, deadline: float | None = None) -> FileInfo:
    if size > MAX_INDEX_BYTES:
        raise FormatError(f"{size:,} bytes, over the {MAX_INDEX_BYTES:,}-byte bound for an index")
    whole = size - size % INDEX_RECORD.size      # a record being appended is left for the next look
    got: list[int] = []
    for start in range(0, whole, _INDEX_CHUNK):
        _on_time(deadline)
        want = min(_INDEX_CHUNK, whole - start)
        raw = handle.read(want)
        if len(raw) < want:
            raise FormatError("truncated while read")
        got.extend(rec[2] for rec in INDEX_RECORD.iter_unpack(raw))
    lengths = tuple(got)
    return FileInfo("deepspec-index", size, size, sum(lengths), len(lengths), (), lengths)


# The smallest file each format can be, from the format alone: `planner status` marks a finished
# file under it suspect from the size its scan already has (nothing read). A capture killed
# mid-write leaves such a stub under the file's final name.
# - safetensors: the 8-byte little-endian header length, then a JSON header of at least "{}": 8 + 2.
# - a torch.save zip archive (.ckpt, .pt): read_torch_zip needs its <archive>/data.pkl entry, so at
#   least a local file header (30 bytes + the name), the entry's data (the smallest pickle of a
#   mapping, EMPTY_DICT STOP "}.", 2 bytes), its central directory header (46 + the name) and the
#   end-of-central-directory record (22) (PKWARE APPNOTE 4.3.7, 4.3.12, 4.3.16), the name at least
#   "/data.pkl" (9): 30 + 9 + 2 + 46 + 9 + 22 = 118.
# - gzip (SpecForge's .ckpt.gz with --compress): a 10-byte header and an 8-byte CRC32 + size trailer
#   (RFC 1952, 2.3): 18.
# Any other file: 1 (a finished capture file is never empty).
_ZIP_MIN = 30 + 9 + 2 + 46 + 9 + 22
MIN_BYTES = {".safetensors": (8 + 2, "safetensors file"), ".ckpt": (_ZIP_MIN, "torch.save archive"),
             ".pt": (_ZIP_MIN, "torch.save archive"), ".gz": (10 + 8, "gzip file")}


def min_size(name: str) -> tuple[int, str]:
    """(the smallest size a whole file of this name's format has, the format's name)."""
    return MIN_BYTES.get(os.path.splitext(name)[1], (1, "capture file"))


READERS = {".safetensors": read_safetensors, ".ckpt": read_torch_zip, ".pt": read_torch_zip,
           ".idx": read_deepspec_index}


def read_file(path: str | os.PathLike, expect_size: int | None = None, *,
              expect_id: tuple[int, int] | None = None, deadline: float | None = None) -> FileInfo:
    """The FileInfo of a capture file, by its name's suffix; a file this module cannot read
    (compressed .ckpt.gz, DeepSpec .bin shards, JSON) gives its size only. FormatError: the reason
    the file cannot be read, in one line. expect_size: the size the scan saw; a different size now
    means it is still being written. expect_id: the (device, inode) the scan saw; another file now
    under the name (swapped in since the scan) is not read. The final name is opened with
    O_NOFOLLOW, never through a symlink. deadline (time.monotonic): past it, OutOfTime (not read);
    the read stops after MAX_FILE_SECONDS in any case (TooSlow)."""
    text = os.fspath(path)
    own = _clock() + MAX_FILE_SECONDS
    stop = own if deadline is None else min(own, deadline)
    try:
        with open_binary(text, "file", nofollow=True) as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):     # pragma: no cover - open_binary refuses it already
                raise FormatError("not a regular file")
            if expect_id is not None and (st.st_dev, st.st_ino) != tuple(expect_id):
                raise FormatError("replaced since the scan: another file has its name now (not read)")
            size = st.st_size
            if expect_size is not None and size != expect_size:
                raise FormatError("still being written (its size changed)")
            suffix = os.path.splitext(text)[1]
            reader = READERS.get(suffix)
            if reader is None:
                return FileInfo("size-only", size, size, None, None)
            info = reader(fh, size, stop)
            if os.fstat(fh.fileno()).st_size != size:
                raise FormatError("still being written (its size changed while read)")
            return info
    except OutOfTime:
        if deadline is not None and _clock() >= deadline:
            raise
        raise TooSlow(f"its metadata took over {MAX_FILE_SECONDS:g} s to read (not read)") from None
    except PlannerInputError as exc:
        raise FormatError(exc.allowed) from exc
    except OSError as exc:
        raise FormatError(f"cannot be read: {exc.strerror or exc}") from exc
