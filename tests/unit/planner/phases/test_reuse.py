"""planner/phases/reuse.py: one call's explicit reuse (issue 32: the phases keep nothing between calls)."""
import numpy as np

from planner.phases.reuse import Reuse, reused


def test_a_result_is_worked_out_once_per_name_objects_and_arguments():
    calls = []
    reuse = Reuse()
    a, b = np.arange(3.0), np.arange(3.0)          # equal arrays, two objects: two keys (by identity)
    for arr, arg in ((a, 1), (a, 1), (b, 1), (a, 2)):
        reused(reuse, "f", (arr,), (arg,), lambda arr=arr, arg=arg: calls.append((id(arr), arg)) or arg)
    assert calls == [(id(a), 1), (id(b), 1), (id(a), 2)]
    reused(reuse, "g", (a,), (1,), lambda: calls.append("g"))     # another name, another result
    assert calls[-1] == "g"


def test_the_objects_are_held_so_an_id_is_never_reused_within_the_call():
    reuse = Reuse()
    first = reused(reuse, "f", (np.zeros(2),), (), lambda: "first")
    # the first array is held by the Reuse: a new array made now cannot take its id and its result
    second = reused(reuse, "f", (np.ones(2),), (), lambda: "second")
    assert (first, second) == ("first", "second")


def test_without_a_reuse_every_call_works_it_out():
    calls = []
    for _ in range(3):
        reused(None, "f", (), (), lambda: calls.append(1))
    assert len(calls) == 3
