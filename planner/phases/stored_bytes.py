"""Phase 1 of the arithmetic: what gets stored. Layout bytes per token, and per-component token
counts after sequence caps, per-turn fan-out and regenerated response lengths."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.distributions import Atoms
from planner.presets.layouts import Bytes, LayoutSpec, bytes_per_token, capture_layers
from planner.phases.reuse import Reuse, reused
from planner.presets.specs import ModelSpec


@dataclass(frozen=True)
class CaptureLayout:
    id: str
    name: str
    pipeline: str
    drafter: str
    layers: list[int]
    hidden_dtype: str
    hidden_state_bytes_per_token: int
    scale_bytes_per_token: int
    token_id_bytes: int              # token ids, loss mask and the pipeline's other per-token fields
    loss_mask_bytes: int
    vocab_bytes_per_token: int       # the target's distribution over the vocabulary (NeMo)
    sidecar_bytes_per_token: int     # another file's bytes per token (speculators' Arrow dataset)
    file_overhead_bytes: float       # per file: header + expected half-block rounding
    file_pattern: str
    source: str
    spec: LayoutSpec
    measured_file_bytes_per_token: int | None = None   # a run's own files (planner calibrate): in place of the fields above

    @property
    def bytes_per_token(self) -> int:
        if self.measured_file_bytes_per_token is not None:
            return self.measured_file_bytes_per_token + self.sidecar_bytes_per_token
        return Bytes(hidden=self.hidden_state_bytes_per_token, scales=self.scale_bytes_per_token,
                     ids_and_masks=self.token_id_bytes + self.loss_mask_bytes, vocab=self.vocab_bytes_per_token,
                     sidecar=self.sidecar_bytes_per_token).per_token


def resolve_layout(spec: LayoutSpec, model: ModelSpec, layers: list[int] | None, layer_count: int | None,
                   hidden_dtype: str | None, draft_vocab_size: int | None = None,
                   target_probs_topk: int | None = None) -> CaptureLayout:
    ids = capture_layers(spec, model.num_layers, layers, layer_count)
    dtype = hidden_dtype or spec.hidden_dtype
    b = bytes_per_token(spec, len(ids), model.hidden_size, model.vocab_size, dtype, draft_vocab_size,
                        target_probs_topk)
    return CaptureLayout(spec.id, spec.name, spec.pipeline, spec.drafter, ids, dtype, b.hidden, b.scales,
                         spec.token_id_bytes + spec.other_bytes_per_token, spec.loss_mask_bytes, b.vocab, b.sidecar,
                         spec.file_header_bytes + spec.block_bytes / 2, spec.file_pattern, spec.source, spec)


@dataclass(frozen=True)
class Workload:
    """What one component (or a whole uniform mix) puts through the pipeline."""

    conversations: float
    rows: float                 # training rows = files written (fan-out in the turn unit)
    tokens: float               # stored tokens, after the cap
    uncapped_tokens: float
    output_tokens: float        # tokens to generate (0 without regeneration)
    prefill_ctx_sum: float      # sum over rows of length^2 (for attention FLOPs)
    decode_ctx_sum: float       # sum over generated tokens of their context length
    conversation_tokens: float = 0.0   # each conversation's tokens once, after the cap (what the drafter learns from)

    def __add__(self, other: "Workload") -> "Workload":
        return Workload(self.conversations + other.conversations, self.rows + other.rows,
                        self.tokens + other.tokens, self.uncapped_tokens + other.uncapped_tokens,
                        self.output_tokens + other.output_tokens, self.prefill_ctx_sum + other.prefill_ctx_sum,
                        self.decode_ctx_sum + other.decode_ctx_sum,
                        self.conversation_tokens + other.conversation_tokens)

    @property
    def prefill_ctx(self) -> float:
        """Mean attention context of a stored token (token-weighted row length)."""
        return self.prefill_ctx_sum / self.tokens if self.tokens else 0.0

    @property
    def decode_ctx(self) -> float:
        """Mean context of a generated token."""
        return self.decode_ctx_sum / self.output_tokens if self.output_tokens else 0.0


NO_WORK = Workload(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def total_of(works: list[Workload]) -> Workload:
    """sum(works, NO_WORK): each figure added in the works' order from 0.0, as Workload.__add__ adds
    them (the same floats), without a Workload made at every step."""
    c = r = t = u = o = p = d = k = 0.0
    for w in works:
        c += w.conversations
        r += w.rows
        t += w.tokens
        u += w.uncapped_tokens
        o += w.output_tokens
        p += w.prefill_ctx_sum
        d += w.decode_ctx_sum
        k += w.conversation_tokens
    return Workload(c, r, t, u, o, p, d, k)


@dataclass(frozen=True)
class RowLengths:
    """The stored rows of one conversation, as atoms: lengths and rows per conversation (after the
    cap, the per-turn fan-out and rows skipped past the cap), and the supervised (loss-mask) tokens
    of each row: its responses, cut by the cap in proportion."""

    lengths: np.ndarray
    weights: np.ndarray
    supervised: np.ndarray


def workload(conv: Atoms, turn: Atoms, conversations: float, *, cap: int | None, unit: str,
             regenerate: bool, multiplier: float, scale: float = 1.0,
             overflow: str = "truncate", reuse: Reuse | None = None) -> tuple[Workload, RowLengths]:
    """Token counts for `conversations` rows drawn uniformly from a length distribution: the
    per-conversation figures times the count (a search's `reuse` works the per-conversation figures
    out once per distribution and settings: they do not depend on the count)."""
    per, lengths = reused(
        reuse, "per_conversation", (conv, turn), (cap, unit, regenerate, multiplier, scale, overflow),
        lambda: _per_conversation(conv, turn, cap=cap, unit=unit, regenerate=regenerate, multiplier=multiplier,
                                  scale=scale, overflow=overflow))
    n = float(conversations)
    return Workload(*[n * x for x in per]), lengths


def _per_conversation(conv: Atoms, turn: Atoms, *, cap: int | None, unit: str, regenerate: bool,
                      multiplier: float, scale: float, overflow: str) -> tuple[tuple[float, ...], RowLengths]:
    """O(bins): one conversation's figures.

    Regeneration replaces each response R by multiplier x R (length L -> L + (m-1)R); responses
    are generated up to the cap. Turn unit: the fan-out atoms (prefix through each assistant turn).
    overflow "truncate" stores a long row up to the cap; "skip" does not store it at all
    (Model-Optimizer). Regeneration runs over every conversation either way.
    """
    cap_value = float(cap) if cap else np.inf
    m = multiplier if regenerate else 1.0
    if scale != 1.0:   # tokens per sample scaled (a tokenizer that counts differently, a sensitivity)
        conv = Atoms(conv.rows, conv.tokens * scale, conv.response * scale, conv.turns)
        turn = Atoms(turn.rows, turn.tokens * scale, turn.response * scale, turn.turns)
    L = conv.tokens + (m - 1.0) * conv.response
    stored_conv = np.minimum(L, cap_value)
    rows_atoms, full = (turn.rows, turn.tokens + (m - 1.0) * turn.response) if unit == "turn" else (conv.rows, L)
    # supervised tokens of a row: its (regenerated) responses, the share past the cap cut away; for a
    # per-turn row (speculators masks all but its last turn) the response share of its prefix is an upper bound
    supervised_full = m * (turn.response if unit == "turn" else conv.response)
    if overflow == "skip":
        keep = full <= cap_value
        weights, stored = rows_atoms * keep, np.where(keep, full, 0.0)
    else:
        weights, stored = rows_atoms, np.minimum(full, cap_value)
    rows_per_conv = float(weights.sum())
    tokens = float((weights * stored).sum())
    uncapped = float((rows_atoms * full).sum())
    ctx2 = float((weights * stored * stored).sum())
    if regenerate:
        gen = m * conv.response * np.minimum(1.0, cap_value / L)
        output = float((conv.rows * gen).sum())
        decode_ctx = float((conv.rows * gen * (stored_conv - gen / 2)).sum())
    else:
        output = decode_ctx = 0.0
    supervised = np.where(full > 0, supervised_full * np.minimum(1.0, stored / np.maximum(full, 1e-9)), 0.0)
    kept = conv.rows * (L <= cap_value) if overflow == "skip" else conv.rows
    conversation_tokens = float((kept * stored_conv).sum())
    return (1.0, rows_per_conv, tokens, uncapped, output, ctx2, decode_ctx, conversation_tokens), \
        RowLengths(stored, weights, supervised)
