"""Batch padding by order statistics, worked by hand and checked against a simulation."""
import numpy as np
import pytest

from planner.phases.padding import batch_maximum, padded


def test_two_lengths_batch_of_two_by_hand():
    # rows of 100 or 1,000 tokens, half each. Two rows per batch: the batch is all-short with
    # probability 0.5^2 = 0.25, so E[max] = 0.25 x 100 + 0.75 x 1,000 = 775 and
    # E[max^2] = 0.25 x 10,000 + 0.75 x 1,000,000 = 752,500; unpadded mean (100 + 1,000) / 2 = 550
    m1, m2 = batch_maximum(np.array([1000.0, 100.0]), np.array([0.5, 0.5]), 2)
    assert m1 == pytest.approx(775.0) and m2 == pytest.approx(752_500.0)
    p = padded(np.array([100.0, 1000.0]), np.array([1.0, 1.0]), rows=10, batch_size=2)
    assert p.rows_captured == 10 and p.factor == pytest.approx(775 / 550)


def test_batch_of_32_is_almost_always_padded_to_the_long_rows():
    # P(all 32 short) = 0.5^32 = 2.3e-10: E[max] = 1,000 - 900 x 2.3e-10
    m1, _ = batch_maximum(np.array([100.0, 1000.0]), np.array([0.5, 0.5]), 32)
    assert m1 == pytest.approx(1000 - 900 * 0.5 ** 32, rel=1e-12)


def test_drop_last_and_batch_of_one():
    p = padded(np.array([100.0, 1000.0]), np.array([0.5, 0.5]), rows=100, batch_size=32)
    assert p.rows_captured == 96                      # floor(100 / 32) = 3 batches of 32
    one = padded(np.array([100.0, 1000.0]), np.array([0.5, 0.5]), rows=100, batch_size=1)
    assert one.rows_captured == 100 and one.factor == 1.0 and one.tokens_per_row == 550
    keep = padded(np.array([100.0, 1000.0]), np.array([0.5, 0.5]), rows=100, batch_size=32, drop_last=False)
    assert keep.rows_captured == 100


def test_sorted_batches_pad_only_within_a_length_band():
    # 64 rows sorted: the first batch of 32 is all 100-token rows, the second all 1,000: no padding
    p = padded(np.array([100.0, 1000.0]), np.array([0.5, 0.5]), rows=64, batch_size=32, sort_by_length=True)
    assert p.tokens_per_row == pytest.approx(550.0) and p.factor == pytest.approx(1.0)


def test_matches_a_simulation():
    rng = np.random.default_rng(0)
    lengths = np.exp(rng.normal(6.0, 0.8, 64)).round()
    weights = rng.uniform(0.2, 1.0, 64)
    draws = rng.choice(lengths, size=(40_000, 32), p=weights / weights.sum())
    m1, m2 = batch_maximum(lengths, weights, 32)
    assert m1 == pytest.approx(draws.max(axis=1).mean(), rel=0.01)
    assert m2 == pytest.approx((draws.max(axis=1) ** 2).mean(), rel=0.02)


def test_per_row_padding_by_hand_and_consistent_with_the_batch_maximum():
    from planner.phases.padding import padded_per_row
    # lengths 100 and 1,000, half each, batches of 2: a 100-token row meets one other row, long
    # with probability 0.5: E = 0.5 x 100 + 0.5 x 1,000 = 550; a 1,000-token row always stores 1,000
    e1, e2 = padded_per_row(np.array([1000.0, 100.0]), np.array([0.5, 0.5]), 2)
    assert e1.tolist() == pytest.approx([1000.0, 550.0])
    assert e2.tolist() == pytest.approx([1e6, 0.5 * 1e4 + 0.5 * 1e6])
    # averaged over the rows: (550 + 1,000) / 2 = 775 = E[max of 2] from the order statistics
    rng = np.random.default_rng(1)
    L, w = rng.uniform(10, 5000, 50).round(), rng.uniform(0.1, 1, 50)
    e1, _ = padded_per_row(L, w, 32)
    assert (w * e1).sum() / w.sum() == pytest.approx(batch_maximum(L, w, 32)[0], rel=1e-9)


def test_sorted_batch_tops_counted_per_atom_equal_the_listed_ones(monkeypatch):
    """Above MAX_BATCH_ARRAY batches the sorted tops are counted per atom (a billion rows in pairs
    listed one batch each took 34.5 GiB, found by test_bad_input's hypothesis run). Both ways must
    agree: force each way on the same random mixes."""
    import numpy as np

    from planner.phases import padding
    rng = np.random.default_rng(7)
    for trial in range(100):
        n = int(rng.integers(1, 20))
        L = np.sort(rng.integers(1, 4000, n)).astype(float)
        w = rng.random(n)
        rows, bs = float(rng.integers(500, 400_000)), int(rng.integers(2, 64))
        got = []
        for cap in (10**9, 0):          # listed, then counted
            monkeypatch.setattr(padding, "MAX_BATCH_ARRAY", cap)
            p = padding.padded(L, w, rows, bs, sort_by_length=True, drop_last=bool(trial % 2))
            got.append((p.rows_captured, p.tokens_per_row, p.tokens_sq_per_row))
        assert got[0] == pytest.approx(got[1], rel=1e-12)


def test_a_billion_rows_in_pairs_is_counted_not_listed():
    # two lengths 1 and 148, equal weight (F(1) = 0.5), sorted into pairs: 499,999,999 batches, the
    # rows captured 999,999,998 (drop_last). Batch k's top is 1 while 2k / 999,999,999 <= 0.5, i.e.
    # k <= 249,999,999.75: 249,999,999 batches top 1, the other 250,000,000 top 148. Mean top =
    # (249,999,999 + 250,000,000 x 148) / 499,999,999 = 74.5 + 73.5 / 499,999,999
    import numpy as np

    from planner.phases.padding import padded
    p = padded(np.array([1.0, 148.0]), np.array([1.0, 1.0]), 999_999_999.0, 2, sort_by_length=True)
    assert p.rows_captured == 999_999_998
    assert p.tokens_per_row == pytest.approx(74.5 + 73.5 / 499_999_999, rel=1e-9)


def test_the_plan_keeps_the_rows_before_drop_last_for_the_headline():
    # issue 35: the headline said 913,760 samples under a caption of 913,786: SpecForge's capture batches
    # of 32 with drop_last leave out 913,786 mod 32 = 26 rows (913,786 = 28,555 x 32 + 26)
    from planner import default_scenario, plan
    p = plan(default_scenario())
    assert p.rows_before_drop == 913_786 and p.samples == 913_786 - 913_786 % 32 == 913_760
