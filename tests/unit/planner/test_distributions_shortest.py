"""The `shortest` selection: planner.distributions.shortest on atoms small enough to work by hand, and
the plan's use of it against the rows a mix item asks for (all of a component's rows or more: the
whole distribution; none: nothing), issue 19's surviving mutant in the shortest selection."""
from __future__ import annotations

import numpy as np
import pytest

from planner import plan
from planner.distributions import Atoms, shortest
from planner.scenario import Scenario

# three lengths: 100 tokens (half the rows), 10 tokens (0.3), 1,000 tokens (0.2)
ATOMS = Atoms(np.array([0.5, 0.3, 0.2]), np.array([100.0, 10.0, 1000.0]), np.array([50.0, 5.0, 500.0]),
              np.array([1.0, 1.0, 2.0]))


def test_the_shortest_60_percent_by_hand():
    # sorted by length: 10 (0.3), 100 (0.5), 1,000 (0.2). The shortest 0.6 of the rows: all 0.3 of the
    # 10s and 0.3 of the 100s, renormalised: rows 0.5 / 0.5, mean (10 + 100) / 2 = 55 tokens
    a = shortest(ATOMS, 0.6)
    assert a.tokens.tolist() == [10.0, 100.0] and a.response.tolist() == [5.0, 50.0]
    assert a.rows == pytest.approx([0.5, 0.5])
    assert float((a.rows * a.tokens).sum()) == pytest.approx(55.0)


def test_the_shortest_20_percent_is_within_the_first_length_and_90_percent_reaches_the_longest():
    # 0.2 < 0.3: only 10-token rows, renormalised to 1
    a = shortest(ATOMS, 0.2)
    assert a.tokens.tolist() == [10.0] and a.rows == pytest.approx([1.0])
    # 0.9: 0.3 of 10, 0.5 of 100, 0.1 of 1,000 -> / 0.9: 1/3, 5/9, 1/9; mean (3 + 50 + 100) / 0.9 = 170
    a = shortest(ATOMS, 0.9)
    assert a.tokens.tolist() == [10.0, 100.0, 1000.0] and a.turns.tolist() == [1.0, 1.0, 2.0]
    assert a.rows == pytest.approx([1 / 3, 5 / 9, 1 / 9])
    assert float((a.rows * a.tokens).sum()) == pytest.approx(170.0)


def test_all_rows_or_more_is_the_whole_distribution():
    assert shortest(ATOMS, 1.0) is ATOMS and shortest(ATOMS, 2.5) is ATOMS


def _tokens(mix) -> float:
    return plan(Scenario(mix=mix, max_seq_len="none", capture_batch_size=1, regenerate=False)).tokens


def test_a_mix_item_asking_for_all_rows_or_more_plans_the_whole_component():
    from planner.catalog.stats import get_catalog
    available = get_catalog().components["ultrachat"].rows_available
    # the shortest n of n (or of fewer than n) rows are all the rows: the same tokens as a uniform pick
    for rows in (available, 2 * available):
        assert _tokens([{"id": "ultrachat", "rows": rows, "selection": "shortest"}]) == \
            pytest.approx(_tokens([{"id": "ultrachat", "rows": rows}]), rel=1e-12)
    # one row fewer than all: the longest row's share is the one left out, so strictly fewer tokens
    # than (available - 1) rows at the whole mean
    short = _tokens([{"id": "ultrachat", "rows": available - 1, "selection": "shortest"}])
    assert short < _tokens([{"id": "ultrachat", "rows": available - 1}])


def test_a_shortest_item_with_no_rows_adds_nothing():
    # gsm8k alone against gsm8k beside 0 shortest rows of ultrachat: the same tokens, a finite number
    alone = _tokens([{"id": "gsm8k", "rows": 1000}])
    both = _tokens([{"id": "ultrachat", "rows": 0, "selection": "shortest"}, {"id": "gsm8k", "rows": 1000}])
    assert np.isfinite(both) and both == pytest.approx(alone, rel=1e-12)
