"""Padding in batched capture: a pipeline that pads each batch to its longest row stores (and runs
prefill over) batch_size x that maximum, not the rows' own lengths.

Unsorted batches (SpecForge's DataCollatorWithPadding over a shuffled dataset): the expected
maximum of n independent draws from the row-length distribution, by order statistics,

    E[max_n] = sum_i L_i (F_i^n - F_(i-1)^n),  F_i = P(L <= L_i) over the atoms sorted by length;

with drop_last the last partial batch is never captured: floor(N / n) batches of n rows.
Length-sorted batches: batch k of the sorted rows ends at quantile k n / N, so its maximum is that
quantile of the distribution.
All O(atoms) (unsorted) or O(batches) (sorted), vectorised.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Padded:
    rows_captured: float        # rows actually written (drop_last drops the last partial batch)
    tokens_per_row: float       # expected stored tokens per captured row (the batch maximum)
    tokens_sq_per_row: float    # expected square of it (prefill attention cost)
    unpadded_tokens_per_row: float

    @property
    def factor(self) -> float:
        return self.tokens_per_row / self.unpadded_tokens_per_row if self.unpadded_tokens_per_row else 1.0


# Above this many capture batches the sorted-batch tops are counted per atom (O(atoms)), not listed per
# batch (O(batches)): both agree to 1e-12 (tests/test_padding.py), and a plan of 250,000 rows in
# batches of 16 lists 15,600 tops a component, which took most of a plan's time.
MAX_BATCH_ARRAY = 256


def _sorted_atoms(lengths: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The atoms sorted by length and their cumulative probabilities."""
    order = np.argsort(lengths, kind="stable")
    L = np.asarray(lengths, float)[order]
    F = np.cumsum(np.asarray(weights, float)[order])
    F /= F[-1]
    return L, F


def _point_probabilities(cdf: np.ndarray) -> np.ndarray:
    p = np.empty_like(cdf)
    p[0] = cdf[0]
    np.subtract(cdf[1:], cdf[:-1], out=p[1:])
    return p


def batch_maximum(lengths: np.ndarray, weights: np.ndarray, batch_size: int) -> tuple[float, float]:
    """(E[max], E[max^2]) of n = `batch_size` independent draws from atoms `lengths` with probabilities ~ `weights`."""
    L, F = _sorted_atoms(lengths, weights)
    p = _point_probabilities(F ** batch_size if batch_size > 1 else F)
    pL = p * L
    return float(pL.sum()), float(pL @ L)


def captured_rows(rows: float, batch_size: int, drop_last: bool) -> float:
    """The rows a capture writes: with drop_last, floor(rows / batch_size) whole batches."""
    return math.floor(rows / batch_size) * batch_size if drop_last else rows


def padded(lengths: np.ndarray, weights: np.ndarray, rows: float, batch_size: int, *, sort_by_length: bool = False,
           drop_last: bool = True) -> Padded:
    """Expected stored tokens per row when `rows` rows with this length distribution are captured
    in batches of `batch_size`, each padded to its longest row."""
    w = np.asarray(weights, float)
    L = np.asarray(lengths, float)
    if w.sum() <= 0 or rows <= 0:
        return Padded(0.0, 0.0, 0.0, 0.0)
    total = w.sum()
    wL = w * L
    mean = float(wL.sum() / total)
    if batch_size <= 1:
        return Padded(rows, mean, float(wL @ L / total), mean)
    captured = captured_rows(rows, batch_size, drop_last)
    if not sort_by_length:
        m1, m2 = batch_maximum(L, w, batch_size)
        return Padded(float(captured), m1, m2, mean)
    batches = max(1, math.ceil(captured / batch_size))
    Ls, F = _sorted_atoms(L, w)
    # batch k (1-based) of the sorted rows ends at quantile min(1, k * batch_size / rows)
    if batches <= MAX_BATCH_ARRAY:
        q = np.minimum(1.0, np.arange(1, batches + 1) * batch_size / rows)
        tops = Ls[np.minimum(np.searchsorted(F, q - 1e-12), len(Ls) - 1)]
        return Padded(float(captured), float(tops.mean()), float((tops * tops).mean()), mean)
    # Too many batches for one array each (a billion rows in pairs is 34 GB): count the batches whose
    # top is each atom instead. Batch k's top is the first atom j with F_j >= q_k - 1e-12, so atom j
    # tops the batches with q_k in (F_{j-1} + 1e-12, F_j + 1e-12]; the count of k <= B with
    # q_k <= x is B for x >= 1, else floor(x * rows / batch_size). Batches past the last atom's F
    # take the last atom, as the clip above does.
    def at_most(x: np.ndarray) -> np.ndarray:
        return np.where(x >= 1.0, batches, np.minimum(batches, np.floor(x * rows / batch_size)))
    upto = at_most(F + 1e-12)
    counts = np.diff(np.concatenate(([0.0], upto)))
    counts[-1] += batches - upto[-1]
    return Padded(float(captured), float(counts @ Ls / batches), float(counts @ (Ls * Ls) / batches), mean)


def padded_per_row(lengths: np.ndarray, weights: np.ndarray, batch_size: int) -> tuple[np.ndarray, np.ndarray]:
    """For each atom i: the expected stored length E[max(L_i, M)] and its square, where M is the
    longest of the n - 1 other rows of the batch (n = `batch_size`) (drawn from the same distribution):

        E[max(L_i, M)] = L_i P(M <= L_i) + sum_{j: L_j > L_i} L_j P(M = L_j),  P(M <= x) = F(x)^(n-1).

    Averaged over the atoms with their weights this is E[max_n] (batch_maximum)."""
    L = np.asarray(lengths, float)
    w = np.asarray(weights, float)
    if batch_size <= 1 or w.sum() <= 0:
        return L.copy(), L * L
    order = np.argsort(L, kind="stable")
    Ls, ws = L[order], w[order]
    F = np.cumsum(ws) / ws.sum()
    F[-1] = 1.0
    G = F ** (batch_size - 1)                                   # P(M <= Ls[k])
    pM = np.diff(np.concatenate([[0.0], G]))           # P(M = Ls[k])
    # sums over strictly longer atoms: reverse cumulative sums shifted by one
    above1 = np.concatenate([np.cumsum((Ls * pM)[::-1])[::-1][1:], [0.0]])
    above2 = np.concatenate([np.cumsum((Ls * Ls * pM)[::-1])[::-1][1:], [0.0]])
    # ties: atoms of equal length count as "not longer" (P(M <= L_i) covers them)
    e1s = Ls * G + above1
    e2s = Ls * Ls * G + above2
    e1, e2 = np.empty_like(L), np.empty_like(L)
    e1[order], e2[order] = e1s, e2s
    return e1, e2
