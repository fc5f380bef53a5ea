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
import math
import os
import pickletools
import stat
import struct
import zipfile
from dataclasses import dataclass, field

from planner.errors import PlannerInputError
from planner.safe_io import open_binary

MAX_HEADER_BYTES = 100_000_000      # safetensors refuses larger headers itself
MAX_PICKLE_BYTES = 1_000_000        # a record's data.pkl is a few hundred bytes
MAX_ZIP_ENTRIES = 10_000
MAX_INDEX_BYTES = 56 * 10_000_000   # ten million samples per index
INDEX_RECORD = struct.Struct("<QIIQQQQQ")

SAFETENSORS_DTYPES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E4M3FN": 1, "F8_E8M0": 1,
                      "I16": 2, "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8,
                      "F64": 8}
TORCH_STORAGES = {"BoolStorage": 1, "ByteStorage": 1, "CharStorage": 1, "ShortStorage": 2, "IntStorage": 4,
                  "LongStorage": 8, "HalfStorage": 2, "BFloat16Storage": 2, "FloatStorage": 4, "DoubleStorage": 8,
                  "Float8_e4m3fnStorage": 1, "Float8_e5m2Storage": 1}
TOKEN_TENSORS = ("input_ids", "token_ids")      # the first present counts the tokens


class FormatError(ValueError):
    """A file that cannot be read as its format: the one-line reason."""


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


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
def read_safetensors(fh, size: int) -> FileInfo:
    head = fh.read(8)
    if len(head) < 8:
        raise FormatError("truncated: shorter than a safetensors header")
    n = int.from_bytes(head, "little")
    if n > MAX_HEADER_BYTES or n > size - 8:
        raise FormatError(f"not a safetensors file, or truncated: its header claims {n:,} bytes of {size:,}")
    raw = fh.read(n)
    if len(raw) < n:
        raise FormatError("truncated in its header")
    try:
        header = json.loads(raw.decode("utf-8"), parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise FormatError("its safetensors header is not valid JSON")
    if not isinstance(header, dict):
        raise FormatError("its safetensors header is not a mapping")
    tensors, end = [], 0
    for name, t in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape, (a, b) = t["dtype"], tuple(t["shape"]), t["data_offsets"]
            width = SAFETENSORS_DTYPES[dtype]
            if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in (*shape, a, b)):
                raise ValueError
        except (KeyError, TypeError, ValueError):
            raise FormatError(f"tensor {name[:60]!r} has no valid dtype, shape and offsets")
        if b < a or math.prod(shape) * width != b - a:
            raise FormatError(f"tensor {name[:60]!r}: {dtype} {list(shape)} does not fill offsets {a}..{b}")
        tensors.append(Tensor(str(name), dtype, shape, b - a))
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


def _pickle_tensors(data: bytes) -> list[tuple[str, str, tuple[int, ...]]]:
    """The tensors a torch.save data.pkl describes, as (name, storage key, storage class, shape),
    found by reading its opcodes (pickletools.genops decodes, it does not run): a small stack of
    plain values. Any import but the tensor rebuild and its storage classes, and any opcode that
    builds other objects, is refused: loading that file would run code."""
    stack: list = []
    memo: dict = {}
    try:
        ops = list(pickletools.genops(data))
    except Exception as exc:     # genops raises ValueError and others on a bad stream
        raise FormatError(f"its data.pkl is not a readable pickle ({str(exc)[:80]})")

    def pop_mark():
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is _MARK:
                items = stack[i + 1:]
                del stack[i:]
                return items
        raise FormatError("its data.pkl is malformed (no mark)")

    result = None
    for op, arg, _pos in ops:
        name = op.name
        try:
            if name in ("PROTO", "FRAME"):
                continue
            if name == "STOP":
                result = stack.pop()
                break
            if name in ("EMPTY_DICT",):
                stack.append({})
            elif name == "EMPTY_LIST":
                stack.append([])
            elif name == "EMPTY_TUPLE":
                stack.append(())
            elif name == "MARK":
                stack.append(_MARK)
            elif name in ("BINUNICODE", "SHORT_BINUNICODE", "UNICODE", "BINUNICODE8", "SHORT_BINSTRING",
                          "BINSTRING", "STRING", "BININT", "BININT1", "BININT2", "LONG1", "LONG", "INT",
                          "BINFLOAT", "FLOAT", "SHORT_BINBYTES", "BINBYTES"):
                stack.append(arg)
            elif name in ("NEWTRUE", "NEWFALSE", "NONE"):
                stack.append({"NEWTRUE": True, "NEWFALSE": False, "NONE": None}[name])
            elif name == "TUPLE":
                stack.append(tuple(pop_mark()))
            elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
                k = int(name[-1])
                items = stack[-k:]
                del stack[-k:]
                stack.append(tuple(items))
            elif name in ("BINPUT", "LONG_BINPUT", "PUT"):
                memo[arg] = stack[-1]
            elif name == "MEMOIZE":
                memo[len(memo)] = stack[-1]
            elif name in ("BINGET", "LONG_BINGET", "GET"):
                stack.append(memo[arg])
            elif name == "SETITEM":
                v, k = stack.pop(), stack.pop()
                stack[-1][k] = v
            elif name == "SETITEMS":
                items = pop_mark()
                stack[-1].update(zip(items[::2], items[1::2]))
            elif name == "APPEND":
                v = stack.pop()
                stack[-1].append(v)
            elif name == "APPENDS":
                items = pop_mark()
                stack[-1].extend(items)
            elif name in ("GLOBAL", "STACK_GLOBAL"):
                if name == "GLOBAL":
                    module, _, attr = str(arg).partition(" ")
                else:
                    attr, module = stack.pop(), stack.pop()
                    if not isinstance(module, str) or not isinstance(attr, str):
                        raise FormatError("its data.pkl imports a computed name: loading it would run code")
                allowed = (module, attr) in ALLOWED_CALLS or (module == "torch" and attr in TORCH_STORAGES)
                if not allowed:
                    raise FormatError(f"its data.pkl imports {module[:60]}.{attr[:60]}: loading it would run "
                                      "code (not loaded)")
                stack.append(_Global(module, attr))
            elif name == "BINPERSID":
                pid = stack.pop()
                if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                        and isinstance(pid[1], _Global) and isinstance(pid[2], str)):
                    raise FormatError("its data.pkl has a persistent id that is not a torch storage")
                stack.append(("storage", pid[1].name, pid[2]))
            elif name == "REDUCE":
                args, fn = stack.pop(), stack.pop()
                if not isinstance(fn, _Global) or not isinstance(args, tuple):
                    raise FormatError("its data.pkl calls something that is not a tensor rebuild: loading it "
                                      "would run code")
                if fn.name == "OrderedDict":
                    stack.append({})
                else:
                    if len(args) < 3 or not (isinstance(args[0], tuple) and args[0][:1] == ("storage",)):
                        raise FormatError("its data.pkl rebuilds a tensor without a storage")
                    shape = args[2]
                    if not isinstance(shape, tuple) or not all(isinstance(x, int) and x >= 0 for x in shape):
                        raise FormatError("its data.pkl has a tensor shape that is not a list of sizes")
                    stack.append(("tensor", args[0][1], args[0][2], shape))
            else:
                raise FormatError(f"its data.pkl uses the {name} opcode, which builds objects or runs code: "
                                  "not loaded")
        except (IndexError, KeyError, TypeError, AttributeError):
            raise FormatError(f"its data.pkl is malformed (at {name})")
    if not isinstance(result, dict):
        raise FormatError("its data.pkl is not a mapping of named tensors")
    return [(str(k), v[2], v[1], v[3]) for k, v in result.items()
            if isinstance(v, tuple) and len(v) == 4 and v[0] == "tensor"]


def read_torch_zip(fh, size: int) -> FileInfo:
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise FormatError("not a torch.save zip archive, or truncated (no readable zip directory)")
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_ZIP_ENTRIES:
            raise FormatError(f"{len(infos):,} archive entries, over {MAX_ZIP_ENTRIES:,}")
        pkl = [i for i in infos if i.filename.endswith("/data.pkl") and i.filename.count("/") == 1]
        if len(pkl) != 1:
            raise FormatError("no <archive>/data.pkl: not a torch.save archive")
        prefix = pkl[0].filename[:-len("data.pkl")]
        if pkl[0].file_size > MAX_PICKLE_BYTES:
            raise FormatError(f"its data.pkl is {pkl[0].file_size:,} bytes, over {MAX_PICKLE_BYTES:,}")
        try:
            with zf.open(pkl[0]) as p:
                data = p.read(MAX_PICKLE_BYTES + 1)
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
            raise FormatError(f"its data.pkl cannot be read ({str(exc)[:80]})")
        storages = {i.filename[len(prefix) + len("data/"):]: i for i in infos
                    if i.filename.startswith(prefix + "data/")}
        tensors = []
        for name, key, cls, shape in _pickle_tensors(data):
            entry = storages.get(key)
            if entry is None:
                raise FormatError(f"tensor {name[:60]!r}: its storage {key[:20]!r} is not in the archive")
            if entry.header_offset + entry.compress_size > size:
                raise FormatError("truncated: a storage ends past the end of the file")
            if math.prod(shape) * TORCH_STORAGES[cls] > entry.file_size:
                raise FormatError(f"tensor {name[:60]!r}: {list(shape)} is larger than its storage")
            tensors.append(Tensor(name, cls.removesuffix("Storage"), tuple(shape), entry.file_size))
        data_bytes = sum(i.file_size for i in storages.values())
    tokens, rows = _tokens_rows(tensors)
    return FileInfo("torch-zip", size, data_bytes, tokens, rows, tuple(tensors))


# ---------------------------------------------------------------- DeepSpec index
def read_deepspec_index(fh, size: int) -> FileInfo:
    if size > MAX_INDEX_BYTES:
        raise FormatError(f"{size:,} bytes, over the {MAX_INDEX_BYTES:,}-byte bound for an index")
    whole = size - size % INDEX_RECORD.size      # a record being appended is left for the next look
    raw = fh.read(whole)
    if len(raw) < whole:
        raise FormatError("truncated while read")
    lengths = tuple(rec[2] for rec in INDEX_RECORD.iter_unpack(raw))
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


def read_file(path: str | os.PathLike, expect_size: int | None = None) -> FileInfo:
    """The FileInfo of a capture file, by its name's suffix; a file this module cannot read
    (compressed .ckpt.gz, DeepSpec .bin shards, JSON) gives its size only. FormatError: the reason
    the file cannot be read, in one line. expect_size: the size the scan saw; a different size now
    means it is still being written."""
    text = os.fspath(path)
    try:
        with open_binary(text, "file") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):     # pragma: no cover - open_binary refuses it already
                raise FormatError("not a regular file")
            size = st.st_size
            if expect_size is not None and size != expect_size:
                raise FormatError("still being written (its size changed)")
            suffix = os.path.splitext(text)[1]
            reader = READERS.get(suffix)
            if reader is None:
                return FileInfo("size-only", size, size, None, None)
            info = reader(fh, size)
            if os.fstat(fh.fileno()).st_size != size:
                raise FormatError("still being written (its size changed while read)")
            return info
    except PlannerInputError as exc:
        raise FormatError(exc.allowed)
    except OSError as exc:
        raise FormatError(f"cannot be read: {exc.strerror or exc}")
