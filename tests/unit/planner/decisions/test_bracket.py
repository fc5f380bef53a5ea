"""planner/decisions/bracket.py: the one bracketed solver (the verdict's break-evens), checked on functions
whose roots are known by hand."""
import math

from planner.decisions.bracket import RTOL, flip, middle, root


def counted(f):
    calls = []

    def g(x):
        calls.append(x)
        return f(x)
    return g, calls


def test_a_root_within_tolerance():
    # x^2 - 2 on [1, 2]: f(1) = -1, f(2) = 2, the root sqrt(2) = 1.41421356237...
    x = root(lambda x: x * x - 2, 1.0, 2.0)
    assert abs(x - math.sqrt(2)) <= RTOL * 2


def test_a_linear_function_closes_in_one_interpolated_step():
    # x - 3 on [1, 10]: f(1) = -2, f(10) = 7; regula falsi's guess 1 + 9 x (-2) / (-2 - 7) = 3 exactly,
    # then one probe just below (3 - 7.5e-11: f < 0) and one just above (3 + 7.5e-11: f > 0): the bracket
    # is 1.5e-10 wide, under RTOL x 3 = 3e-10, so 4 calls in all where bisection needs about 33 steps
    f, calls = counted(lambda x: x - 3)
    x = root(f, 1.0, 10.0)
    assert abs(x - 3) <= 3 * RTOL
    assert len(calls) == 4


def test_no_bracket_is_none():
    # (x - 1)(x - 2) on [0, 3]: f(0) = 2 and f(3) = 2, one sign at both ends: two roots inside that a
    # bracketed method cannot see
    assert root(lambda x: (x - 1) * (x - 2), 0.0, 3.0) is None
    # a root-free function: x^2 + 1 on [-5, 5]
    assert root(lambda x: x * x + 1, -5.0, 5.0) is None


def test_an_end_that_is_a_root_is_returned():
    assert root(lambda x: x - 1, 1.0, 5.0) == 1.0
    assert root(lambda x: x - 5, 1.0, 5.0) == 5.0


def test_non_monotone_finds_one_of_its_roots():
    # (x - 1)(x - 2)(x - 3) on [0.5, 3.7]: f(0.5) = (-0.5)(-1.5)(-2.5) = -1.875, f(3.7) = 2.7 x 1.7 x 0.7
    # = 3.213: the sign changes, so the search ends within tolerance of one of 1, 2, 3 (which one depends
    # on the steps), where f changes sign
    f = lambda x: (x - 1) * (x - 2) * (x - 3)      # noqa: E731
    x = root(f, 0.5, 3.7)
    nearest = min((1.0, 2.0, 3.0), key=lambda r: abs(r - x))
    assert abs(x - nearest) <= 3.7 * RTOL
    # and a non-monotone function with one root: x + sin(3x) rises and falls, crosses 0 once at 0
    g = lambda x: x + 0.9 * math.sin(3 * x)        # noqa: E731
    assert abs(root(g, -2.0, 3.0)) <= 3 * RTOL


def test_negative_ends_bisect_arithmetically():
    # x + 0.5 on [-2, 3]: the geometric middle is undefined across 0, the arithmetic one is used
    assert middle(-2.0, 3.0) == 0.5
    assert middle(4.0, 9.0) == 6.0          # sqrt(36): geometric between positive ends
    assert abs(root(lambda x: x + 0.5, -2.0, 3.0) + 0.5) <= 3 * RTOL


def test_the_bracket_may_run_downwards():
    # 3 - x from a = 10 (f = -7) down to b = 1 (f = 2): the root 3, the bracket's ends reversed
    assert abs(root(lambda x: 3 - x, 10.0, 1.0) - 3) <= 10 * RTOL


def test_flip_in_inverse_x():
    # the hours of a link go as 1/x: a way costing 100/x against one costing 20 flips at x = 5. The gap
    # 100/x - 20 is linear in 1/x, so with inverse=True the first guess is 5 (1/1 = 1 at a: gap 80;
    # 1/100 = 0.01 at b: gap -19; u = 1 + (0.01 - 1) x 80 / 99 = 0.2) and the probes either side close it
    calls = []

    def probe(x):
        calls.append(x)
        return 100 / x > 20, 100 / x - 20

    x, at_b = flip(probe, 1.0, 80.0, 100.0, -19.0, gaps=lambda ga, gb: (ga, gb), inverse=True)
    assert abs(x - 5) <= 100 * RTOL
    assert len(calls) == 2
    assert at_b <= 0                  # what probe worked out on the flipped side is handed back
    # in x (not inverse) the same search takes more steps, and still lands on 5
    calls.clear()
    x, _ = flip(probe, 1.0, 80.0, 100.0, -19.0, gaps=lambda ga, gb: (ga, gb))
    assert abs(x - 5) <= 100 * RTOL and len(calls) > 2


def test_flip_without_gaps_bisects_a_classifier():
    # a yes/no answer with no gap to interpolate: kept below 7; bisection from [1, 64] stops when the
    # bracket is under RTOL x 7 wide
    x, _ = flip(lambda x: (x < 7, None), 1.0, None, 64.0, None)
    assert abs(x - 7) <= 7 * RTOL * 2
