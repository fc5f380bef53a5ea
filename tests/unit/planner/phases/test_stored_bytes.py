"""planner/phases/stored_bytes.py: the per-conversation token figures, worked by hand on two-atom distributions."""
import numpy as np

from planner.distributions import Atoms
from planner.phases.stored_bytes import workload


def _two_rows() -> Atoms:
    # half the conversations are 1,000 tokens long (400 of them the response), half 2,000 (800)
    return Atoms(rows=np.array([0.5, 0.5]), tokens=np.array([1000.0, 2000.0]),
                 response=np.array([400.0, 800.0]), turns=np.array([1.0, 1.0]))


def test_skip_keeps_a_row_exactly_at_the_cap():
    # Model-Optimizer skips a row longer than the cap; a row of exactly the cap fits it and is stored.
    # cap 1,000, no regeneration: the 1,000-token row is kept whole, the 2,000-token row is skipped.
    # 10 conversations: rows = 10 x 0.5 = 5; tokens = 10 x 0.5 x 1,000 = 5,000; uncapped = 10 x (0.5 x
    # 1,000 + 0.5 x 2,000) = 15,000; the drafter learns from the kept conversations only: 5,000 tokens
    conv = _two_rows()
    w, lengths = workload(conv, conv, 10, cap=1000, unit="conversation", regenerate=False, multiplier=1.0,
                          overflow="skip")
    assert w.rows == 5.0
    assert w.tokens == 5000.0
    assert w.uncapped_tokens == 15000.0
    assert w.conversation_tokens == 5000.0
    assert list(lengths.weights) == [0.5, 0.0]
    # sum of length^2 over stored rows: 10 x 0.5 x 1,000^2 = 5e6
    assert w.prefill_ctx_sum == 5e6


def test_truncate_stores_every_row_up_to_the_cap():
    # the same cap with overflow "truncate": both rows are stored, the long one cut to 1,000 tokens:
    # rows 10, tokens 10 x (0.5 x 1,000 + 0.5 x 1,000) = 10,000, and both conversations are learnt from
    conv = _two_rows()
    w, _ = workload(conv, conv, 10, cap=1000, unit="conversation", regenerate=False, multiplier=1.0,
                    overflow="truncate")
    assert (w.rows, w.tokens, w.conversation_tokens) == (10.0, 10000.0, 10000.0)


def test_skip_one_token_under_the_row_skips_it():
    # cap 999: the 1,000-token row is one token over and skipped too: nothing is stored
    conv = _two_rows()
    w, _ = workload(conv, conv, 10, cap=999, unit="conversation", regenerate=False, multiplier=1.0,
                    overflow="skip")
    assert (w.rows, w.tokens, w.conversation_tokens) == (0.0, 0.0, 0.0)
