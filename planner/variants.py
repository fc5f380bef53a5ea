"""The registries of the planner's variants (issue 19): each variant is one object registered by
name, and the code that dispatches on it looks the name up instead of testing it.

- drafter kinds, `planner.presets.drafter_kinds.DRAFTER_KINDS`: how the drafter drafts, its trained widths and
  its training FLOPs per epoch (its quality curve is its entry in presets/quality.yaml);
- capture-layer rules, `planner.presets.layouts.LAYER_RULES`: which target layers a layout stores;
- export formats, `planner.export.commands.EXPORT_FORMATS`: the command builder of `export --format`.

A layout is one entry of presets/layouts.yaml naming its drafter kind and its layer rule. How to add
each: docs/architecture.md.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

from planner.errors import PlannerInputError

T = TypeVar("T")

_CHANGES = [0]     # registrations and removals in every registry: a version plan()'s cache is keyed by


def registries_version() -> int:
    """How many times any registry has changed (a name registered or removed): a plan kept before a
    change is never returned after it (planner/planning.py plan_key)."""
    return _CHANGES[0]


class Registry(dict[str, T], Generic[T]):
    """Objects by name, in registration order. `what` names the variant in messages and `field` the
    input that names one (a lookup of an unknown name is a PlannerInputError on that field). Every
    change counts in registries_version()."""

    def __setitem__(self, name: str, obj: T) -> None:
        _CHANGES[0] += 1
        super().__setitem__(name, obj)

    def __delitem__(self, name: str) -> None:
        _CHANGES[0] += 1
        super().__delitem__(name)

    def __init__(self, what: str, field: str):
        super().__init__()
        self.what = what
        self.field = field

    def register(self, name: str, obj: T) -> T:
        if name in self:
            raise ValueError(f"{self.what} {name!r} is registered twice")
        self[name] = obj
        return obj

    def lookup(self, name: str) -> T:
        try:
            return self[name]
        except KeyError:
            raise PlannerInputError(self.field, name, f"not a known {self.what}; one of {', '.join(self)}") from None

    @contextmanager
    def temporarily(self, name: str, obj: T) -> Iterator[T]:
        """`obj` registered as `name` inside the block only (tests)."""
        self.register(name, obj)
        try:
            yield obj
        finally:
            del self[name]
