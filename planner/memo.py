"""Results kept by the identity of the objects they come from."""
from __future__ import annotations

import operator


class ByIdentity:
    """Results kept per object (by identity, the object held so its id is not reused) and other
    hashable values: a plan's distributions are the catalog's own objects, kept for its lifetime, so
    a figure worked out from one is looked up the next time. Emptied when full."""

    def __init__(self, size: int):
        self.size = size
        self._kept: dict[tuple, tuple[tuple, object]] = {}   # key -> (the objects, the result)

    def get(self, objects: tuple, key: tuple, compute):
        k = (*map(id, objects), *key)
        hit = self._kept.get(k)
        if hit is None or not all(map(operator.is_, hit[0], objects)):
            if len(self._kept) >= self.size:
                self._kept.clear()
            hit = self._kept[k] = (objects, compute())
        return hit[1]
