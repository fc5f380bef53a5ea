"""planner/runs/formats.py on files written by the real serializers (tests/fixtures/runs, made by
scripts/make_run_fixtures.py with the versions in VERSIONS.txt): tokens, rows and data bytes from
the metadata alone, worked out by hand from what each pipeline stores (H = 16, T = 7, 12, 20)."""
import os
import pickle
import struct
import zipfile
from pathlib import Path

import pytest

from planner.runs import formats as rf

RUNS = Path(__file__).resolve().parents[3] / "fixtures" / "runs"
T = (7, 12, 20)


@pytest.mark.parametrize("rel, per_token", [
    # speculators: token_ids int64 8 + hidden_states 4 layers x 16 x 2 bytes = 136
    ("speculators/hs_{i}.safetensors", 8 + 4 * 16 * 2),
    # SpecForge DFlash: input_ids 8 + loss_mask 8 + 5 layers x 16 x 2 = 176
    ("specforge/rows_0-2000/data_{i}.ckpt", 8 + 8 + 5 * 16 * 2),
    # Model-Optimizer: input_ids 8 + loss_mask 8 + final 16 x 2 + aux 3 x 16 x 2 = 144
    ("modelopt/openorca-{i}.pt", 8 + 8 + 16 * 2 + 48 * 2),
])
def test_per_row_files_give_tokens_and_data_bytes_exactly(rel, per_token):
    for i, t in enumerate(T):
        path = RUNS / rel.format(i=i)
        info = rf.read_file(path)
        assert (info.tokens, info.rows) == (t, 1)
        assert info.data_bytes == t * per_token
        assert info.size == path.stat().st_size and info.overhead == info.size - t * per_token > 0


def test_nemo_shard_counts_rows_and_padded_tokens():
    info = rf.read_file(RUNS / "nemo" / "shard-000000.safetensors")
    # 4 samples x S = 16; per token ids and masks 3 x 8 + aux 3 x 16 x 2 + position 1 + probs 64 x 2 = 249
    assert (info.rows, info.tokens, info.data_bytes) == (4, 64, 64 * 249)


def test_deepspec_index_gives_each_sample_its_length():
    info = rf.read_file(RUNS / "deepspec" / "_tmp" / "rank_0" / "samples.local.idx")
    assert (info.rows, info.tokens, info.lengths) == (3, 39, T)
    shard = rf.read_file(RUNS / "deepspec" / "_tmp" / "rank_0" / "shard-local-00000.bin")
    # 39 tokens x (4 + 1 + 1 + 2 x 16 x 6) = 39 x 198; sizes only (the index says the rows)
    assert (shard.format, shard.size, shard.tokens) == ("size-only", 39 * 198, None)


def test_a_pickle_that_would_run_code_is_refused_unloaded(monkeypatch):
    monkeypatch.setattr(pickle, "loads", lambda *a, **k: pytest.fail("unpickled"))
    monkeypatch.setattr(pickle, "load", lambda *a, **k: pytest.fail("unpickled"))
    with pytest.raises(rf.FormatError, match=r"imports posix\.system: loading it would run code"):
        rf.read_file(RUNS / "hostile" / "evil.ckpt")


@pytest.mark.parametrize("name, reason", [
    ("truncated.ckpt", "truncated"), ("truncated.safetensors", "truncated")])
def test_truncated_archives_say_so(name, reason):
    with pytest.raises(rf.FormatError, match=reason):
        rf.read_file(RUNS / "hostile" / name)


def _zip_with_pickle(tmp_path, payload: bytes) -> Path:
    p = tmp_path / "x.ckpt"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("archive/data.pkl", payload)
    return p


@pytest.mark.parametrize("payload, reason", [
    (b"\x80\x02cbuiltins\neval\nq\x00.", "imports builtins.eval"),
    (b"\x80\x02(cos\nsystem\no.", "imports os.system"),
    (b"(i__main__\nFoo\n.", "the INST opcode"),           # protocol 0's import-and-call
    (b"not a pickle", "not a readable pickle|opcode"),
])
def test_other_hostile_pickles(tmp_path, payload, reason):
    with pytest.raises(rf.FormatError, match=reason):
        rf.read_file(_zip_with_pickle(tmp_path, payload))


def test_bad_safetensors_headers(tmp_path):
    cases = {
        "huge.safetensors": struct.pack("<Q", 10**12) + b"{}",
        "json.safetensors": struct.pack("<Q", 5) + b"{nope",
        "fill.safetensors": struct.pack("<Q", 60) + b'{"a":{"dtype":"F16","shape":[4],"data_offsets":[0,4]}}'.ljust(60)
                            + b"\0" * 8,
        "short.safetensors": b"\1\2",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(rf.FormatError):
            rf.read_file(tmp_path / name)


def test_a_fifo_is_not_opened_for_reading(tmp_path):
    os.mkfifo(tmp_path / "hs_0.safetensors")
    with pytest.raises(rf.FormatError, match="FIFO"):
        rf.read_file(tmp_path / "hs_0.safetensors")


def test_size_changed_since_the_scan():
    with pytest.raises(rf.FormatError, match="still being written"):
        rf.read_file(RUNS / "speculators" / "hs_0.safetensors", expect_size=1)


def test_the_fixtures_name_their_versions():
    text = (RUNS / "VERSIONS.txt").read_text()
    assert "torch 2.13.0" in text and "safetensors" in text


def test_a_safetensors_file_short_by_a_few_bytes_is_truncated(tmp_path):
    # the data end at 8 (length) + header + 1,632 bytes of tensors = the file's 1,784 bytes; 4 short
    data = (RUNS / "speculators" / "hs_1.safetensors").read_bytes()
    assert len(data) == 1784
    (tmp_path / "hs_1.safetensors").write_bytes(data[:-4])
    with pytest.raises(rf.FormatError, match="truncated: its tensors end at byte 1,784, the file has 1,780"):
        rf.read_file(tmp_path / "hs_1.safetensors")
