"""Length distributions as weighted atoms, so that every query costs O(bins), never O(samples).

A component's lengths are a list of atoms (rows_fraction, tokens, response_tokens, turns):
`rows_fraction` sums to 1 over the conversation unit; over the per-turn unit it sums to the
mean number of training rows one conversation fans out to. Atoms are the token-weighted means
of log-spaced bins (32 per octave, 2.2% wide), so a point mass stays exact.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

BINS_PER_OCTAVE = 32
QUANTILE_POINTS = 2048


@dataclass(frozen=True)
class Atoms:
    rows: np.ndarray        # rows per conversation in this atom (fraction of a conversation)
    tokens: np.ndarray      # tokens of one row
    response: np.ndarray    # assistant (response) tokens of one row
    turns: np.ndarray       # assistant turns of one row (conversation unit only; 1 for turn rows)

    def __len__(self) -> int:
        return len(self.rows)

    def mean_tokens(self) -> float:
        return float((self.rows * self.tokens).sum() / self.rows.sum())

    def median_tokens(self) -> float:
        return self.quantile(0.5)

    def quantile(self, fraction: float) -> float:
        order = np.argsort(self.tokens)
        cum = np.cumsum(self.rows[order]) / self.rows.sum()
        return float(self.tokens[order][np.searchsorted(cum, fraction)])


def aggregate(rows: np.ndarray, tokens: np.ndarray, response: np.ndarray, turns: np.ndarray) -> Atoms:
    """Merge weighted points into log-spaced bins, keeping each bin's row-weighted means."""
    rows = np.asarray(rows, float)
    tokens = np.asarray(tokens, float)
    keep = rows > 0
    rows, tokens = rows[keep], tokens[keep]
    response = np.asarray(response, float)[keep]
    turns = np.asarray(turns, float)[keep]
    idx = bin_index(tokens)
    uniq, inv = np.unique(idx, return_inverse=True)
    w = np.bincount(inv, weights=rows)
    mean = lambda x: np.bincount(inv, weights=rows * x) / w  # noqa: E731
    return Atoms(w, mean(tokens), mean(response), mean(turns))


def turns_for(tokens: np.ndarray, mean_turns: float, mean_tokens: float, max_turns: int) -> np.ndarray:
    """Estimate: multi-turn conversations have turns in proportion to their length."""
    if mean_turns <= 1:
        return np.ones_like(tokens)
    return np.clip(np.rint(mean_turns * tokens / mean_tokens), 1, max_turns)


def fit_component(mean_tokens: float, assistant_share: float, mean_turns: float, *,
                  median_tokens: float | None = None, default_sigma: float = 0.7,
                  bins: dict | None = None, max_turns: int = 512, max_tokens: float | None = None) -> Atoms:
    """Fit a conversation-length distribution to what is published.

    - bins (edges + shares): log-uniform within each bin, then scaled to the published mean;
    - mean and median: log-normal with sigma = sqrt(2 ln(mean / median));
    - mean only: log-normal with the documented default spread.
    Lengths are then rescaled so the mean is exact. max_tokens: no row is longer, by construction of the data
    (a set cut into pieces of at most that many tokens): the lengths are min(s x length, max_tokens) with the
    scale s that keeps the mean exact, so the longest rows sit at the bound and none runs past it.
    """
    q = (np.arange(QUANTILE_POINTS) + 0.5) / QUANTILE_POINTS
    if bins:
        edges = np.asarray(bins["edges"], float)
        shares = np.asarray(bins["shares"], float)
        cum = np.concatenate([[0.0], np.cumsum(shares / shares.sum())])
        j = np.clip(np.searchsorted(cum, q, side="right") - 1, 0, len(shares) - 1)
        frac = (q - cum[j]) / (cum[j + 1] - cum[j])
        tokens = edges[j] * (edges[j + 1] / edges[j]) ** frac
    else:
        if median_tokens and median_tokens < mean_tokens:
            sigma = math.sqrt(2 * math.log(mean_tokens / median_tokens))
        else:
            sigma = default_sigma
        mu = math.log(mean_tokens) - sigma**2 / 2
        z = np.array([NormalDist().inv_cdf(x) for x in q])
        tokens = np.exp(mu + sigma * z)
    tokens = tokens * (mean_tokens / tokens.mean())
    if max_tokens is not None:
        tokens = _bounded(tokens, mean_tokens, float(max_tokens))
    tokens = np.maximum(tokens, 1.0)
    rows = np.full(QUANTILE_POINTS, 1.0 / QUANTILE_POINTS)
    turns = turns_for(tokens, mean_turns, mean_tokens, max_turns)
    return aggregate(rows, tokens, tokens * assistant_share, turns)


def _bounded(tokens: np.ndarray, mean_tokens: float, bound: float) -> np.ndarray:
    """min(s x tokens, bound) with s >= 1 such that the mean stays `mean_tokens` (bisection: the mean of the
    clipped lengths grows with s, from at most mean_tokens at s = 1 to the bound as s grows)."""
    if not 0 < mean_tokens < bound:
        raise ValueError(f"a bounded length distribution needs 0 < mean ({mean_tokens:g}) < bound ({bound:g})")
    lo, hi = 1.0, 2.0
    while np.minimum(tokens * hi, bound).mean() < mean_tokens:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if np.minimum(tokens * mid, bound).mean() < mean_tokens else (lo, mid)
    return np.minimum(tokens * hi, bound)


def point_mass(tokens: float, response_tokens: float, turns: int = 1) -> Atoms:
    return Atoms(np.array([1.0]), np.array([float(tokens)]), np.array([float(response_tokens)]),
                 np.array([float(turns)]))


def shortest(conv: Atoms, fraction: float) -> Atoms:
    """The length distribution of the shortest `fraction` of rows (rows renormalised to 1)."""
    if fraction >= 1.0:
        return conv
    order = np.argsort(conv.tokens, kind="stable")
    rows = conv.rows[order]
    total = rows.sum()
    keep = np.clip(fraction * total - (np.cumsum(rows) - rows), 0.0, rows)
    mask = keep > 0
    kept = keep[mask]
    return Atoms(kept / kept.sum(), conv.tokens[order][mask], conv.response[order][mask], conv.turns[order][mask])


def fan_out(conv: Atoms) -> Atoms:
    """Per-assistant-turn rows (speculators): row t of a k-turn conversation holds the prefix
    through turn t, i.e. t/k of its tokens (turns taken as equal). Totals per conversation:
    rows k, tokens L (k+1)/2."""
    k = np.maximum(np.rint(conv.turns), 1).astype(np.int64)
    rep = np.repeat(np.arange(len(conv)), k)
    t = np.concatenate([np.arange(1, n + 1) for n in k]) if len(k) else np.zeros(0)
    frac = t / k[rep]
    return aggregate(conv.rows[rep], conv.tokens[rep] * frac, conv.response[rep] * frac, np.ones(len(rep)))


def bin_index(tokens) -> np.ndarray:
    """The log-spaced bin of each length, floor(32 x log2(max(tokens, 1))): the one definition
    shared by the fitted atoms and the profiler's streaming histogram."""
    return np.floor(BINS_PER_OCTAVE * np.log2(np.maximum(np.asarray(tokens, float), 1.0))).astype(np.int64)


# two-sided 90% Student t quantiles (0.95 one-sided) by degrees of freedom; above 30 the normal's 1.645
_T95 = {1: 6.314, 2: 2.920, 3: 2.353, 4: 2.132, 5: 2.015, 6: 1.943, 7: 1.895, 8: 1.860, 9: 1.833, 10: 1.812,
        12: 1.782, 15: 1.753, 20: 1.725, 30: 1.697}


def band_from_residuals(log_residuals: list[float]) -> tuple[float, float]:
    """The 90% prediction interval of the next run's log(measured / predicted) from these published
    runs' residuals (mean +- t x sd x sqrt(1 + 1/n), Student t with n - 1 degrees of freedom), as
    multipliers (low, high) on a predicted rate. Fewer than two residuals: no spread to go on, (0, inf)."""
    n = len(log_residuals)
    if n < 2:
        return 0.0, math.inf
    mean = sum(log_residuals) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in log_residuals) / (n - 1))
    t = _T95[max(k for k in _T95 if k <= n - 1)] if n - 1 <= 30 else 1.645
    half = t * sd * math.sqrt(1 + 1 / n)
    return math.exp(mean - half), math.exp(mean + half)
