"""What one search works out once and reads again, passed to the phases explicitly.

The phases keep nothing between calls: the one cache is at the boundary of plan() (planner/planning.py).
A search that plans the same scenario many times with only its row counts (and the cap) changed
(planner/decisions/trim.py) makes a Reuse, passes it to the phases it runs, and drops it when it returns: a
result kept here never outlives the call that made it, so no input of a later call can find it stale.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class Reuse:
    """Results of pure functions within one search, keyed by the function's name and its complete
    arguments: the arrays and distributions among them by identity (held here, so an id is never
    reused while the search runs), the other values as they are."""

    def __init__(self) -> None:
        self._kept: dict[tuple, tuple[tuple, object]] = {}

    def get(self, name: str, objects: tuple, args: tuple, compute: Callable[[], T]) -> T:
        k = (name, *map(id, objects), *args)
        hit = self._kept.get(k)
        if hit is None:
            hit = self._kept[k] = (objects, compute())
        return hit[1]  # type: ignore[return-value]  # kept as object; the key names what compute() made, a T


def reused(reuse: Reuse | None, name: str, objects: tuple, args: tuple, compute: Callable[[], T]) -> T:
    """compute(), or the search's result of it when `reuse` is given."""
    return compute() if reuse is None else reuse.get(name, objects, args, compute)
