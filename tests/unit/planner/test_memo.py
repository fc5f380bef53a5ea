"""planner/memo.py ByIdentity: a result per (objects by identity, key), computed once; emptied when full."""
from __future__ import annotations

from planner.memo import ByIdentity


class Calls:
    def __init__(self):
        self.n = 0

    def __call__(self):
        self.n += 1
        return self.n


def test_the_same_objects_and_key_compute_once():
    memo, calls, a = ByIdentity(8), Calls(), [1, 2]
    assert memo.get((a,), ("x",), calls) == 1
    assert memo.get((a,), ("x",), calls) == 1        # a hit: compute not called again
    assert calls.n == 1


def test_another_key_or_an_equal_but_other_object_computes_again():
    memo, calls, a, b = ByIdentity(8), Calls(), [1, 2], [1, 2]   # a == b, a is not b
    assert memo.get((a,), ("x",), calls) == 1
    assert memo.get((a,), ("y",), calls) == 2        # another key
    assert memo.get((b,), ("x",), calls) == 3        # equal, not the same object: kept apart
    assert memo.get((a,), ("x",), calls) == 1        # the first still kept (3 entries < 8)


def test_it_is_emptied_when_full():
    # size 2: the third entry finds 2 kept (2 >= 2) and clears them; the first is then computed anew
    memo, calls, a = ByIdentity(2), Calls(), object()
    memo.get((a,), (1,), calls)                      # 1
    memo.get((a,), (2,), calls)                      # 2
    memo.get((a,), (3,), calls)                      # 3: cleared first, now holds only key 3
    assert memo.get((a,), (3,), calls) == 3          # kept
    assert memo.get((a,), (1,), calls) == 4          # gone with the clear: computed again
    assert len(memo._kept) == 2


def test_it_holds_the_objects_so_their_ids_stay_theirs():
    memo, calls = ByIdentity(8), Calls()
    memo.get(([5],), (), calls)                      # the list has no other reference
    kept_objects = next(iter(memo._kept.values()))[0]
    assert kept_objects == ([5],)                    # held by the memo: its id cannot be reused
