"""The storage band on every plan (issue 33): each component's lengths at the low and the high end of
its band (planner/phases/mix_storage.py length_band: (1 -+ 0.1) x (mean / median) ** -+share, share 0 for a
published mean, 0.5 third-party, 1 estimate; datasets_meta/components.yaml length_band), run through
the pipeline's own cap and padding. Worked by hand for a small mix."""
from __future__ import annotations

import json
import math

import pytest

from planner import plan
from planner.catalog.stats import get_catalog
from planner.scenario import MixItem, Scenario, UniformMix

BPT = 40_964    # seed-article on Qwen3-8B: 5 layers x 4,096 x 2 B + an int32 id; no file overhead


def _ratio(cid: str) -> float:
    a = get_catalog().components[cid].conversation
    return a.mean_tokens() / a.median_tokens()


def _seed(mix: list[tuple[str, int]]) -> Scenario:
    # no cap (seed-article skips rows past 3,072), no regeneration, one row per conversation
    return Scenario(model="qwen3-8b", layout="seed-article", max_seq_len="none", capture_batch_size=1,
                    regenerate=False, mix=[MixItem(id=i, rows=n) for i, n in mix])


def test_the_band_of_a_small_mix_by_hand():
    # mean/median of each component's own distribution (log-normal fits, binned 2.2% wide):
    #   ultrachat (mean published, 1,467; default sigma 0.7): exp(0.7^2 / 2) = 1.2776
    #   evol_codealpaca (mean an estimate, 560; median 471 third-party): 560 / 471 = 1.1890
    #   sharegpt_68k (mean third-party, 1,130; default sigma, bounded at EAGLE's 2,048-token pieces: 16% of rows
    #   at 2,048, the rest scaled up to keep the mean,
    #   tests/unit/planner/test_distributions_bounded_lengths.py): under 1.2776
    re_, rs = _ratio("evol_codealpaca"), _ratio("sharegpt_68k")
    assert re_ == pytest.approx(560 / 471, rel=0.01) and 1.10 < rs < math.exp(0.245) / 1.1
    assert _ratio("ultrachat") == pytest.approx(math.exp(0.245), rel=0.01)
    # the binned atoms' own ratios, which the band reads: evol_codealpaca 560 / 474.5 = 1.1802, sharegpt_68k
    # (bounded) 1,130 / 1,013.3 = 1.1152 (sqrt 1.05603)
    # 1,000 rows each: tokens 1,467,000 + 560,000 + 1,130,000 = 3,157,000 x 40,964 = 129,323,348,000 B
    # low:  1,467,000 x 0.9 (published: the tokenizer alone)            = 1,320,300
    #     + 560,000 x 0.9 / 1.1802 (estimate: all of its ratio)        ~   427,050
    #     + 1,130,000 x 0.9 / 1.05603 (third-party: half of it)        ~   963,040   -> ~2,710,390 tokens
    # high: 1,467,000 x 1.1 + 560,000 x 1.1 x 1.1802 + 1,130,000 x 1.1 x 1.05603
    #     = 1,613,700 + ~727,000 + ~1,312,650 = ~3,653,350 tokens (seed-article has no cap: nothing cut)
    p = plan(_seed([("ultrachat", 1000), ("evol_codealpaca", 1000), ("sharegpt_68k", 1000)]), get_catalog())
    assert p.bytes_per_token == BPT
    assert p.storage_bytes == pytest.approx(3_157_000 * BPT, rel=1e-9)
    low = 1_320_300 + 560_000 * 0.9 / re_ + 1_130_000 * 0.9 / rs ** 0.5
    high = 1_613_700 + 560_000 * 1.1 * re_ + 1_130_000 * 1.1 * rs ** 0.5
    assert p.storage_bytes_low == pytest.approx(low * BPT, rel=1e-9)
    assert p.storage_bytes_high == pytest.approx(high * BPT, rel=1e-9)
    assert p.storage_bytes_low / 1e12 == pytest.approx(2_710_390 * BPT / 1e12, rel=2e-4)
    assert p.storage_bytes_high / 1e12 == pytest.approx(3_653_350 * BPT / 1e12, rel=2e-4)
    assert p.sampled_components == []


def test_the_cap_and_padding_shape_the_band():
    # NeMo Automodel pads every sample to its 2,048-token cap (eagle3.py:194): the bytes are rows x cap
    # whatever the lengths, so the band is a point
    p = plan(Scenario(layout="nemo-automodel", mix=[MixItem(id="openorca", rows=1000)]), get_catalog())
    assert p.storage_bytes_low == p.storage_bytes == p.storage_bytes_high
    # a cap below the lengths flattens the high end: openorca (500 tokens, an estimate) capped at 64
    # stores nearly 64 tokens a row at both ends; without a cap the ends are x0.9/1.28 and x1.1 x 1.28
    capped = plan(_seed([("openorca", 1000)]).with_changes(max_seq_len=64), get_catalog())
    free = plan(_seed([("openorca", 1000)]), get_catalog())
    r = _ratio("openorca")
    assert free.storage_bytes_high / free.storage_bytes == pytest.approx(1.1 * r, rel=1e-9)
    assert free.storage_bytes_low / free.storage_bytes == pytest.approx(0.9 / r, rel=1e-9)
    assert capped.storage_bytes_high / capped.storage_bytes < 1.01


def test_a_uniform_mix_is_exact_and_the_json_always_carries_the_band(capsys):
    p = plan(Scenario(uniform=UniformMix(samples=1000, tokens=900, response_tokens=300)))
    assert p.storage_bytes_low == p.storage_bytes == p.storage_bytes_high
    from planner.cli.main import main
    assert main(["estimate", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["storage_bytes_low"] < d["storage_bytes"] < d["storage_bytes_high"]
    assert main(["estimate"]) == 0
    out = capsys.readouterr().out
    lo, hi = d["storage_bytes_low"] / 1e12, d["storage_bytes_high"] / 1e12
    assert f"storage band (raw)     {lo:>16,.2f} to {hi:,.2f} TB" in out
