"""A component whose rows are at most N tokens by construction (datasets_meta/components.yaml `max_tokens`,
planner/distributions.py fit_component): its length spread stops at N and keeps its mean, so a cap of N cuts
nothing (issue 33 item 7: EAGLE's ShareGPT pieces, at most 2,048 tokens by its ge_data code)."""
from __future__ import annotations

import numpy as np
import pytest

from planner import plan
from planner.catalog.stats import get_catalog
from planner.distributions import fit_component
from planner.scenario import MixItem, Scenario


def test_a_bounded_spread_keeps_its_mean_and_stops_at_the_bound():
    # the default log-normal (sigma 0.7) of mean 1,130: exp(ln 1,130 - 0.245 + 0.7 z) passes 2,048 at
    # z = ln(2,048 / 884) / 0.7 = 1.20, about 11.5% of rows; bounded, those rows sit at 2,048 and the rest
    # are scaled up until the mean is 1,130 again
    free = fit_component(1130, 0.84, 5.6, default_sigma=0.7)
    bound = fit_component(1130, 0.84, 5.6, default_sigma=0.7, max_tokens=2048)
    assert free.tokens.max() > 2048 and float(free.rows[free.tokens > 2048].sum()) == pytest.approx(0.115, abs=0.01)
    assert bound.tokens.max() == 2048
    assert bound.mean_tokens() == pytest.approx(1130, rel=1e-9)
    # more rows at the bound than the free spread had past it (the scale-up pushes more there), and a
    # narrower spread: mean / median under exp(0.245) = 1.2776
    at = float(bound.rows[bound.tokens >= 2048 * 0.999].sum())
    assert 0.115 < at < 0.25
    assert bound.mean_tokens() / bound.median_tokens() < free.mean_tokens() / free.median_tokens()
    # the response tokens keep the assistant share
    assert float((bound.rows * bound.response).sum()) == pytest.approx(0.84 * 1130, rel=1e-9)
    # a bound at or under the mean cannot hold it
    with pytest.raises(ValueError, match="bound"):
        fit_component(1130, 0.84, 5.6, max_tokens=1000)


def test_sharegpt_68k_is_bounded_at_eagles_2048_and_its_cap_cuts_nothing():
    comp = get_catalog().components["sharegpt_68k"]
    assert comp.conversation.tokens.max() <= 2048
    assert comp.conversation.mean_tokens() == pytest.approx(1130, rel=1e-9)
    assert comp.provenance["max_tokens"]["tag"] == "published"
    assert "ge_data_all_llama2chat.py:46, 88-91" in comp.provenance["max_tokens"]["source"]
    # EAGLE #30's setup (bench/users_reports.yaml): eagle1 on a hidden size of 4,096, 68,000 rows at EAGLE's
    # 2,048 cap. Per token: fp16 hidden 4,096 x 2 + int64 input_ids 8 + int64 loss_mask 8 = 8,208 B; per file
    # 3,584 B. Nothing cut: 68,000 x 1,130 = 76,840,000 tokens x 8,208 = 630,702,720,000
    # + 68,000 x 3,584 = 243,712,000 -> 630,946,432,000 B (631 GB; 631 / 0.85 = 742 GB in Llama-2 tokens
    # against the 740 GB reported). Unbounded, the cap kept ~1,017 tokens a row: ~568 GB.
    p = plan(Scenario(layout="eagle1", model="llama-3.1-8b", regenerate=False,
                      mix=[MixItem(id="sharegpt_68k", rows=68000)]))
    assert p.bytes_per_token == 8208
    assert p.tokens == pytest.approx(76_840_000, rel=1e-9)
    assert p.storage_bytes == pytest.approx(630_946_432_000, rel=1e-9)
    assert not any("cap" in f.code for f in p.findings)


def test_other_components_keep_their_unbounded_spread():
    # only a component that says max_tokens is bounded: ultrachat (no bound) still runs past 2,048
    assert np.max(get_catalog().components["ultrachat"].conversation.tokens) > 2048
