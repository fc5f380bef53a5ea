"""Writes tests/fixtures/runs/: small capture files made by the real serializers, for the tests of
planner/runs/formats.py and `planner calibrate` (the tests read them; they never need torch).

Run once, in a scratch environment outside the repository:
    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch==2.13.0 safetensors numpy
    /tmp/torchenv/bin/python scripts/make_run_fixtures.py
It records the versions it ran with in tests/fixtures/runs/VERSIONS.txt.

A tiny target: hidden size H = 16, 8 layers, vocabulary 64 (the tests' custom model). Rows of T =
7, 12 and 20 tokens. Each file holds what its pipeline's code stores (planner/runs/rundir.py and
planner/runs/formats.py cite the lines):
- speculators hs_{idx}.safetensors: hidden_states [T, 4, H] (3 layers + the last), token_ids [T]
  int64, by safetensors' numpy API (numpy has no bfloat16: float16, the same 2 bytes);
- SpecForge DFlash rows_0-2000/data_{idx}.ckpt by torch.save: input_ids [T], loss_mask [T] int64,
  hidden_states [1, T, 5H] bf16;
- Model-Optimizer openorca-{n}.pt by torch.save: input_ids [T], hidden_states [T, H],
  aux_hidden_states [T, 3H] bf16, loss_mask [T] int64, conversation_id;
- NeMo shard-000000.safetensors: 4 samples padded to S = 16: input_ids, attention_mask, loss_mask
  [4, S] int64, aux_hidden_states [4, S, 3H] float16, position_mask [4, S, 1] bool, target_probs
  [4, S, 64] float16;
- DeepSpec _tmp/rank_0/shard-local-00000.bin + samples.local.idx: each sample's bytes as
  target_cache_dataset.py writes them (int32 ids, uint8 masks, bf16 states of 5 layers and the
  last) and a 56-byte "<QIIQQQQQ" record per sample;
- hostile/: a torch.save archive whose data.pkl would call os.system if loaded (written as bytes,
  never loaded), a truncated .ckpt and a truncated .safetensors.
"""
from __future__ import annotations

import io
import os
import pickle
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np
import safetensors
import torch
from safetensors.numpy import save_file

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "runs"
H, V, LENGTHS, S = 16, 64, (7, 12, 20), 16
MTIME = 1_780_000_000          # a fixed date (2026-05-28), so the files' times do not depend on the run


def rng(seed):
    return np.random.default_rng(seed)


def speculators():
    d = OUT / "speculators"
    d.mkdir(parents=True, exist_ok=True)
    for i, t in enumerate(LENGTHS):
        r = rng(i)
        save_file({"hidden_states": r.standard_normal((t, 4, H)).astype(np.float16),
                   "token_ids": r.integers(0, V, t).astype(np.int64)}, str(d / f"hs_{i}.safetensors"))


def specforge():
    d = OUT / "specforge" / "rows_0-2000"
    d.mkdir(parents=True, exist_ok=True)
    for i, t in enumerate(LENGTHS):
        g = torch.Generator().manual_seed(i)
        torch.save({"input_ids": torch.randint(0, V, (t,), generator=g),
                    "loss_mask": torch.ones(t, dtype=torch.long),
                    "hidden_states": torch.randn(1, t, 5 * H, generator=g).to(torch.bfloat16)}, d / f"data_{i}.ckpt")


def modelopt():
    d = OUT / "modelopt"
    d.mkdir(parents=True, exist_ok=True)
    for i, t in enumerate(LENGTHS):
        g = torch.Generator().manual_seed(10 + i)
        with open(d / f"openorca-{i}.pt", "wb") as f:
            torch.save({"input_ids": torch.randint(0, V, (t,), generator=g),
                        "hidden_states": torch.randn(t, H, generator=g).to(torch.bfloat16),
                        "aux_hidden_states": torch.randn(t, 3 * H, generator=g).to(torch.bfloat16),
                        "loss_mask": torch.ones(t, dtype=torch.long),
                        "conversation_id": f"openorca-{i}"}, f)


def nemo():
    d = OUT / "nemo"
    d.mkdir(parents=True, exist_ok=True)
    r, n = rng(20), 4
    save_file({"input_ids": r.integers(0, V, (n, S)).astype(np.int64),
               "attention_mask": np.ones((n, S), np.int64), "loss_mask": np.ones((n, S), np.int64),
               "aux_hidden_states": r.standard_normal((n, S, 3 * H)).astype(np.float16),
               "position_mask": np.ones((n, S, 1), bool),
               "target_probs": r.random((n, S, V)).astype(np.float16)}, str(d / "shard-000000.safetensors"))


def deepspec():
    d = OUT / "deepspec" / "_tmp" / "rank_0"
    d.mkdir(parents=True, exist_ok=True)
    shard, index = bytearray(), bytearray()
    for i, t in enumerate(LENGTHS):
        parts = [np.arange(t, dtype=np.int32).tobytes(), np.ones(t, np.uint8).tobytes(), np.ones(t, np.uint8).tobytes(),
                 torch.randn(t, 5 * H).to(torch.bfloat16).view(torch.int16).numpy().tobytes(),
                 torch.randn(t, H).to(torch.bfloat16).view(torch.int16).numpy().tobytes()]
        offsets, pos = [], len(shard)
        for p in parts:
            offsets.append(pos)
            pos += len(p)
            shard += p
        index += struct.pack("<QIIQQQQQ", i, 0, t, *offsets)
    (d / "shard-local-00000.bin").write_bytes(bytes(shard))
    (d / "samples.local.idx").write_bytes(bytes(index))


class _RunsCode:
    def __reduce__(self):
        return (os.system, ("echo this would have run",))


def hostile():
    d = OUT / "hostile"
    d.mkdir(parents=True, exist_ok=True)
    real = (OUT / "specforge" / "rows_0-2000" / "data_1.ckpt").read_bytes()
    with zipfile.ZipFile(io.BytesIO(real)) as src, zipfile.ZipFile(d / "evil.ckpt", "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("/data.pkl"):
                data = pickle.dumps({"input_ids": _RunsCode()}, protocol=2)    # dumped, never loaded
            dst.writestr(info.filename, data)
    (d / "truncated.ckpt").write_bytes(real[: len(real) // 2])
    st = (OUT / "speculators" / "hs_1.safetensors").read_bytes()
    (d / "truncated.safetensors").write_bytes(st[: len(st) - 100])


def main():
    torch.manual_seed(0)
    speculators(), specforge(), modelopt(), nemo(), deepspec(), hostile()
    for p in OUT.rglob("*"):
        if p.is_file():
            os.utime(p, (MTIME, MTIME))
    (OUT / "VERSIONS.txt").write_text(f"python {sys.version.split()[0]}\ntorch {torch.__version__}\n"
                                      f"safetensors {safetensors.__version__}\nnumpy {np.__version__}\n")


if __name__ == "__main__":
    main()
