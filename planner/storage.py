"""Phase 1 of the arithmetic: what gets stored. Layout bytes per token, and per-component token
counts after sequence caps, per-turn fan-out and regenerated response lengths."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.distributions import Atoms
from planner.errors import PlannerInputError
from planner.specs import LayoutSpec, ModelSpec, dflash_layers, eagle3_layers

DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1}
FP8_SCALE_BYTES = 4  # one fp32 scale per token and layer (per-token scaling), an estimate


@dataclass(frozen=True)
class CaptureLayout:
    id: str
    name: str
    pipeline: str
    layers: list[int]
    hidden_dtype: str
    hidden_state_bytes_per_token: int
    scale_bytes_per_token: int
    token_id_bytes: int
    loss_mask_bytes: int
    file_overhead_bytes: float      # header + expected half-block rounding, per file (one file per row)
    file_pattern: str
    source: str

    @property
    def bytes_per_token(self) -> int:
        return self.hidden_state_bytes_per_token + self.scale_bytes_per_token + self.token_id_bytes + self.loss_mask_bytes


def resolve_layout(spec: LayoutSpec, model: ModelSpec, layers: list[int] | None, layer_count: int | None,
                   hidden_dtype: str | None) -> CaptureLayout:
    L = model.num_layers
    if layers is None:
        n = layer_count or spec.default_layer_count
        if spec.layer_rule == "dflash":
            layers = dflash_layers(L, n)
        elif spec.layer_rule == "eagle3":
            layers = eagle3_layers(L)
        else:
            layers = [L]
    bad = [x for x in layers if x < 0 or x > L]
    if bad:
        raise PlannerInputError("layers", bad[0], f"layer ids must be between 0 and {L} for {model.id}")
    dtype = hidden_dtype or spec.hidden_dtype
    n = len(layers)
    hidden = n * model.hidden_size * DTYPE_BYTES[dtype]
    scales = n * FP8_SCALE_BYTES if dtype == "fp8" else 0
    overhead = spec.file_header_bytes + spec.block_bytes / 2
    return CaptureLayout(spec.id, spec.name, spec.pipeline, list(layers), dtype, hidden, scales,
                         spec.token_id_bytes, spec.loss_mask_bytes, overhead, spec.file_pattern, spec.source)


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

    def __add__(self, other: "Workload") -> "Workload":
        return Workload(self.conversations + other.conversations, self.rows + other.rows,
                        self.tokens + other.tokens, self.uncapped_tokens + other.uncapped_tokens,
                        self.output_tokens + other.output_tokens, self.prefill_ctx_sum + other.prefill_ctx_sum,
                        self.decode_ctx_sum + other.decode_ctx_sum)

    @property
    def prefill_ctx(self) -> float:
        """Mean attention context of a stored token (token-weighted row length)."""
        return self.prefill_ctx_sum / self.tokens if self.tokens else 0.0

    @property
    def decode_ctx(self) -> float:
        """Mean context of a generated token."""
        return self.decode_ctx_sum / self.output_tokens if self.output_tokens else 0.0


NO_WORK = Workload(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def workload(conv: Atoms, turn: Atoms, conversations: float, *, cap: int | None, unit: str,
             regenerate: bool, multiplier: float, scale: float = 1.0) -> Workload:
    """O(bins): token counts for `conversations` rows drawn uniformly from a length distribution.

    Regeneration replaces each response R by multiplier x R (length L -> L + (m-1)R); responses
    are generated up to the cap. Turn unit: the fan-out atoms (prefix through each assistant turn).
    """
    cap_value = float(cap) if cap else np.inf
    m = multiplier if regenerate else 1.0
    if scale != 1.0:   # tokens per sample scaled (a tokenizer that counts differently, a sensitivity)
        conv = Atoms(conv.rows, conv.tokens * scale, conv.response * scale, conv.turns)
        turn = Atoms(turn.rows, turn.tokens * scale, turn.response * scale, turn.turns)
    L = conv.tokens + (m - 1.0) * conv.response
    stored_conv = np.minimum(L, cap_value)
    if unit == "turn":
        Lt = turn.tokens + (m - 1.0) * turn.response
        stored = np.minimum(Lt, cap_value)
        rows_per_conv = float(turn.rows.sum())
        tokens = float((turn.rows * stored).sum())
        uncapped = float((turn.rows * Lt).sum())
        ctx2 = float((turn.rows * stored * stored).sum())
    else:
        rows_per_conv = 1.0
        tokens = float((conv.rows * stored_conv).sum())
        uncapped = float((conv.rows * L).sum())
        ctx2 = float((conv.rows * stored_conv * stored_conv).sum())
    if regenerate:
        gen = m * conv.response * np.minimum(1.0, cap_value / L)
        output = float((conv.rows * gen).sum())
        decode_ctx = float((conv.rows * gen * (stored_conv - gen / 2)).sum())
    else:
        output = decode_ctx = 0.0
    n = float(conversations)
    return Workload(n, n * rows_per_conv, n * tokens, n * uncapped, n * output, n * ctx2, n * decode_ctx)
