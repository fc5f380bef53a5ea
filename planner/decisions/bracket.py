"""One bracketed solver: where, between two points, an answer flips (issue 32 item 3).

`flip(probe, a, b)` narrows a bracket [a, b] whose end `a` keeps an answer and whose end `b` does
not, until it is `rtol` wide (relative): each step plans one or two points inside it and keeps the
half whose ends still disagree. The first `interpolated` steps guess by regula falsi, where two
signed gaps are known at the ends (`gaps`): the point where the straight line between them crosses
zero, in x or, with `inverse`, in 1/x (a quantity that goes as 1/x, e.g. hours over a link), and
probe just either side of that guess, so that a gap linear there closes the bracket in one step.
After those, or without gaps, the bracket is bisected: geometrically while both ends are positive
(the inputs span decades), arithmetically otherwise.

`root(f, lo, hi)` is the same search for a continuous f: a root within `rtol` where f changes sign
between lo and hi, None where it does not (no bracket: f may still have an even number of roots
there, which a bracketed method cannot see).

The verdict's break-evens (planner/decisions/verdict.py) are `flip` over the cheapest way to train.
"""
from __future__ import annotations

import math
from typing import Any, Callable

STEPS = 60          # steps at most; each halves the bracket at least (interpolated steps shrink it too)
RTOL = 1e-10        # the bracket's width relative to its larger end, where the search stops
INTERPOLATED = 6    # regula falsi steps first, then plain bisection

# probe(x) -> (x keeps the answer a has, what was worked out at x: handed to gaps and returned)
Probe = Callable[[float], "tuple[bool, Any]"]
# gaps(at_a, at_b) -> (the signed gap at a, at b) of the quantity whose zero is the flip; None: none known
Gaps = Callable[[Any, Any], "tuple[float, float] | None"]


def middle(end_a: float, end_b: float) -> float:
    """The bisection point: geometric between two positive ends, arithmetic otherwise."""
    return math.sqrt(end_a * end_b) if end_a > 0 and end_b > 0 else (end_a + end_b) / 2


def _interpolated(a: float, at_a: Any, b: float, at_b: Any, gaps: Gaps | None, inverse: bool) -> float:
    """Regula falsi's guess strictly inside (a, b), in x or 1/x; the middle where no gap is known, the
    two gaps are equal or the guess falls outside."""
    g = gaps(at_a, at_b) if gaps is not None and a > 0 and b > 0 else None
    if g is not None and g[0] != g[1]:
        ga, gb = g
        ua, ub = (1 / a, 1 / b) if inverse else (a, b)
        u = ua + (ub - ua) * ga / (ga - gb)
        x = 1 / u if inverse else u
        if min(a, b) < x < max(a, b):
            return x
    return middle(a, b)


def flip(probe: Probe, end_a: float, at_a: Any, end_b: float, at_b: Any, *, gaps: Gaps | None = None,
         inverse: bool = False, rtol: float = RTOL, steps: int = STEPS,
         interpolated: int = INTERPOLATED) -> tuple[float, Any]:
    """The point between `end_a` (keeps the answer; `at_a` what probe worked out there) and `end_b` (flips
    it) where the answer flips, within `rtol` of the larger end; with what probe worked out at the last
    point on end_b's side (the flipped answer's figures). end_a may lie above or below end_b."""
    for step in range(steps):
        if abs(end_b - end_a) <= rtol * max(abs(end_a), abs(end_b)):
            break
        guess = _interpolated(end_a, at_a, end_b, at_b, gaps, inverse) if step < interpolated else middle(end_a, end_b)
        probes = [guess]
        if step < interpolated:
            # just either side of the guess: a gap that is linear there closes the bracket at once
            d = rtol / 4 * abs(guess) * math.copysign(1, end_b - end_a)
            probes = [x for x in (guess - d, guess + d) if min(end_a, end_b) < x < max(end_a, end_b)] or [guess]
        for x in probes:
            if not min(end_a, end_b) < x < max(end_a, end_b):
                continue
            keeps, at_x = probe(x)
            if keeps:
                end_a, at_a = x, at_x
            else:
                end_b, at_b = x, at_x
    return (end_a + end_b) / 2, at_b


def root(func: Callable[[float], float], low: float, high: float, *, rtol: float = RTOL,
         steps: int = STEPS) -> float | None:
    """A root of continuous `func` between `low` and `high` within `rtol` (relative to the larger end),
    where func changes sign there; an end where func is 0 is the root; None where func(low) and
    func(high) have one sign."""
    f_lo, f_hi = func(low), func(high)
    if f_lo == 0:
        return low
    if f_hi == 0:
        return high
    if (f_lo > 0) == (f_hi > 0):
        return None
    up = f_lo > 0

    def probe(x: float) -> tuple[bool, float]:
        fx = func(x)
        return (fx > 0) == up and fx != 0, fx

    x, _ = flip(probe, low, f_lo, high, f_hi, gaps=lambda ga, gb: (ga, gb), rtol=rtol, steps=steps)
    return x
