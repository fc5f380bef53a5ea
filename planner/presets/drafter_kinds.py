"""Drafter training FLOPs per drafter kind, counted the way the pipelines' trainers run them
(planner/presets/layouts.yaml `training`, each value cited from the pipeline's code).

Notation: H hidden size, q query width (heads x head dim), kv key/value width, I MLP width, V the
target's vocabulary, V_h the vocabulary of the head applied at trained positions, n_l draft layers,
n_aux captured layers fed to the drafter's fc, k TTT steps, B block size, T a row's stored length,
S its supervised (loss-mask) tokens, A = min(num_anchors, S) its anchors, Q = A x B its draft positions.

Per-token forward FLOPs of one drafter decoder layer whose attention input is d wide:
    P(d) = 2 d (q + 2 kv) + 2 q H + 6 H I
Backward: trained matmuls cost twice their forward (weight and input gradients), frozen ones that
pass a gradient once (input gradient), no-grad ones (the teacher) nothing; the fc's input is data,
so it gets only its weight gradient. Attention: 4 q FLOPs per (query, key) pair, backward twice that.

- EAGLE-3 (SpecForge specforge/algorithms/eagle3/model.py:364-427; speculators models/eagle3/core.py:269-300):
  the one draft layer (input 2H: embedding + state) runs over every position k times,
      per token: teacher 2 H V_t + fc 2 x 2 n_aux H^2 + k [3 P(2H) + passes x 2 H V_h] + k x 3 x 4 q ctx
- EAGLE-1/2 (SafeAILab/EAGLE eagle/train/main.py): one layer, fc 2H -> H, k = 1, the same form.
- DFlash (SpecForge specforge/algorithms/common/dflash_family_model.py:179-343): per row
      fc 2 x 2 T n_aux H^2 + 3 n_l (4 T H kv + Q P(H) + 4 q Q (T/2 + B)) + passes x 2 Q H V_h
      (+ a teacher 2 min(Q, T) H V_t where the pipeline labels with the verifier's head)
  so past num_anchors supervised tokens a row's cost grows only through the context terms (fc and
  the context K/V, linear in T). The mean anchor position is taken as T/2 (an estimate).
- Packed pipelines (speculators, src/speculators/train/data.py:352-363): rows are packed into
  `pack_tokens` and every pack is padded to it; a DFlash pack always runs num_anchors x B positions
  (models/dflash/core.py:359-367). Packs are counted as stored tokens / pack_tokens (an estimate:
  the LPT packer fills packs nearly full).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np
from pydantic import BaseModel

from planner.variants import Registry

if TYPE_CHECKING:
    from planner.presets.layouts import LayoutSpec
    from planner.presets.specs import ModelSpec

class DrafterKnobs(BaseModel):
    """The training recipe in force: the scenario's values where it sets them, the layout's otherwise."""

    kind: str                   # eagle3 | dflash | eagle1
    layers: int                 # draft decoder layers
    n_aux: int                  # captured target layers concatenated into the fc
    ttt_steps: int | None       # EAGLE: training-time-test steps (EAGLE-1/2: 1)
    num_anchors: int | None     # DFlash
    block_size: int | None      # DFlash
    scope: str                  # row | pack
    pack_tokens: int | None
    head_vocab: int             # vocabulary of the head at trained positions
    head_passes: int
    teacher_vocab: int          # 0: no teacher pass
    attention_window: int | None
    batch_size: int = 1         # rows per GPU per optimizer step (a pack scope: one pack)
    from_layout: list[str] = []


def knobs(spec: LayoutSpec, model: ModelSpec, *, captured_layers: int, draft_layers: int, ttt_steps: int | None,
          num_anchors: int | None, block_size: int | None) -> DrafterKnobs:
    t = spec.training
    taken: list[str] = []

    def pick(name: str, given, default):
        if given is None:
            if default is not None:
                taken.append(name)
            return None if default is None else int(default.value)
        return int(given)

    head_vocab = model.vocab_size if t.head_vocab.value == "full" else int(t.head_vocab.value)
    teacher_vocab = {"none": 0, "full": model.vocab_size, "draft": head_vocab}[str(t.teacher.value)]

    kind = spec.drafter
    blocks = DRAFTER_KINDS.lookup(kind).drafts_blocks
    steps = pick("ttt_steps", ttt_steps, t.ttt_steps) if not blocks else None
    if not blocks and steps is None:
        steps = 1
    anchors = pick("num_anchors", num_anchors, t.num_anchors) if blocks else None
    block = pick("block_size", block_size, t.block_size) if blocks else None
    if blocks:
        anchors = anchors or 512
        block = block or 16
    n_aux = captured_layers - (1 if spec.append_last_layer else 0)
    return DrafterKnobs(
        kind=kind, layers=draft_layers, n_aux=max(n_aux, 1), ttt_steps=steps, num_anchors=anchors, block_size=block,
        scope=str(t.scope.value), pack_tokens=None if t.pack_tokens is None else int(t.pack_tokens.value),
        head_vocab=head_vocab, head_passes=int(t.head_passes.value), teacher_vocab=teacher_vocab,
        attention_window=None if t.attention_window is None else int(t.attention_window.value),
        batch_size=int(t.batch_size.value), from_layout=taken)


@dataclass(frozen=True)
class DrafterShape:
    hidden: int
    q: int
    kv: int
    intermediate: int

    def layer_flops(self, d_in: int) -> float:
        """P(d): forward FLOPs per token of one decoder layer's matmuls (q, k, v, o, SwiGLU MLP)."""
        H = self.hidden
        return 2 * d_in * (self.q + 2 * self.kv) + 2 * self.q * H + 6 * H * self.intermediate

    def layer_params(self, d_in: int) -> float:
        return self.layer_flops(d_in) / 2


def drafter_shape(model: ModelSpec) -> DrafterShape:
    """The drafter takes the target's width, attention heads and MLP width (SpecForge's shipped
    Qwen3-8B DFlash config copies them: configs/qwen3-8b-dflash.json:18-44). Without an
    intermediate size the MLP is taken as 8/3 H rounded up to 256 (an estimate)."""
    H = model.hidden_size
    inter = model.intermediate_size or int(-(-8 * H // 3 // 256) * 256)
    return DrafterShape(hidden=H, q=model.num_q_heads * model.head_dim, kv=model.num_kv_heads * model.head_dim,
                        intermediate=inter)


def drafter_params(shape: DrafterShape, knobs: DrafterKnobs) -> float:
    """Trainable parameters: the draft layers and the fc (EAGLE-3's layer reads 2H; the heads and
    embeddings are the target's, frozen, except a trained EAGLE-3 draft head)."""
    H = shape.hidden
    kind = DRAFTER_KINDS.lookup(knobs.kind)
    d_in, fc_in = kind.widths(H, knobs.n_aux)
    head = H * knobs.head_vocab if (kind.head_trainable and knobs.head_passes == 3) else 0
    return knobs.layers * shape.layer_params(d_in) + fc_in * H + head


@dataclass(frozen=True)
class RowSums:
    """Sums over one epoch's training rows (stored, after any capture padding)."""

    rows: float
    tokens: float            # sum of T
    pairs: float             # sum over rows of the attention (query, key) pairs of a causal pass, T^2 / 2,
                             # inside the window where the pipeline has one
    anchors: float           # sum of A = min(num_anchors, S)
    anchor_context: float    # sum of A x T / 2 (the draft queries' context)

    def __add__(self, o: "RowSums") -> "RowSums":
        return RowSums(self.rows + o.rows, self.tokens + o.tokens, self.pairs + o.pairs, self.anchors + o.anchors,
                       self.anchor_context + o.anchor_context)


NO_ROWS = RowSums(0.0, 0.0, 0.0, 0.0, 0.0)


def row_sums(lengths: np.ndarray, weights: np.ndarray, supervised: np.ndarray, conversations: float, *,
             padded_tokens: float, num_anchors: int | None, window: int | None) -> RowSums:
    """One component's rows: the distribution's atoms (stored lengths, rows per conversation and
    supervised tokens of each) times its conversations. Capture padding stretches every row by the
    same factor (padded / unpadded tokens): its positions are computed, its loss mask is 0, so
    anchors come from the real supervised tokens only."""
    base = row_base(lengths, weights, supervised, conversations, num_anchors)
    return NO_ROWS if base is None else padded_row_sums(base, lengths, padded_tokens, window)


def row_base(lengths: np.ndarray, weights: np.ndarray, supervised: np.ndarray, conversations: float,
             num_anchors: int | None) -> tuple | None:
    """What row_sums reads that the capture padding does not change (the rows' weights, their
    tokens, the anchors): kept per component while a varied plan pads it again (planner/phases/compose.py);
    None when the rows hold no token."""
    w = weights * conversations
    tokens = float((w * lengths).sum())
    if not tokens:
        return None
    wa = w * (np.minimum(num_anchors, supervised) if num_anchors else np.zeros_like(lengths))
    return w, tokens, float(w.sum()), wa, float(wa.sum())


def padded_row_sums(base: tuple, lengths: np.ndarray, padded_tokens: float, window: int | None) -> RowSums:
    """row_sums from its padding-free part (row_base) and the padded tokens: the same operations."""
    w, tokens, rows, wa, anchors = base
    stretch = padded_tokens / tokens
    T = lengths * stretch
    if window:
        pairs = np.where(T <= window, T * T / 2, window * T - window * window / 2)
    else:
        pairs = T * T / 2
    return RowSums(rows, padded_tokens, float((w * pairs).sum()), anchors, float((wa * T / 2).sum()))


class DrafterFlops(BaseModel):
    """One epoch of drafter training: FLOPs in total and by part."""

    total: float
    per_token: float
    per_row: float
    parts: dict[str, float]
    draft_positions: float       # trained positions per epoch (DFlash: anchors x block; EAGLE: tokens x steps)


def _block_epoch(kind: "DrafterKind", shape: DrafterShape, k: DrafterKnobs, r: RowSums,
                 params_scale: float) -> tuple[dict[str, float], float]:
    """DFlash (module docstring): the parts of one epoch, and its draft positions (anchors x block)."""
    assert k.num_anchors is not None and k.block_size is not None   # a block drafter's knobs (drafter_knobs sets both)
    H = shape.hidden
    parts: dict[str, float] = {}
    # each pack computes pack_tokens positions
    packs = r.tokens / k.pack_tokens if k.scope == "pack" and k.pack_tokens else 0.0
    tokens = r.tokens
    B, L = k.block_size, k.layers
    if packs:
        Q = packs * k.num_anchors * B
        mean_row = r.tokens / r.rows if r.rows else 0.0
        ctx = min(mean_row / 2, k.attention_window or mean_row / 2)
        anchor_ctx = Q * ctx
    else:
        Q = r.anchors * B
        anchor_ctx = r.anchor_context * B
    parts["fc (weight gradient)"] = 2 * 2 * tokens * k.n_aux * H * H
    parts["context K/V in every draft layer"] = 3 * L * tokens * 4 * H * shape.kv
    parts["draft layers at the draft positions"] = 3 * L * Q * shape.layer_flops(kind.widths(H,
                                                                                             k.n_aux)[0]) * params_scale
    parts["attention of the draft positions"] = 3 * L * 4 * shape.q * (anchor_ctx + Q * B)
    parts["head at the draft positions"] = k.head_passes * 2 * Q * H * k.head_vocab
    if k.teacher_vocab:
        parts["teacher head (no grad)"] = 2 * min(Q, tokens) * H * k.teacher_vocab
    return parts, Q


def _steps_epoch(kind: "DrafterKind", shape: DrafterShape, k: DrafterKnobs, r: RowSums,
                 params_scale: float) -> tuple[dict[str, float], float]:
    """EAGLE (module docstring): the parts of one epoch, and its trained positions (tokens x steps)."""
    H = shape.hidden
    parts: dict[str, float] = {}
    tokens = r.tokens
    steps = k.ttt_steps or 1
    d_in, fc_in = kind.widths(H, k.n_aux)
    pairs = r.pairs
    parts["fc (weight gradient)"] = 2 * 2 * tokens * fc_in * H
    parts["draft layer x steps"] = steps * 3 * k.layers * tokens * shape.layer_flops(d_in) * params_scale
    parts["attention x steps"] = steps * 3 * k.layers * 4 * shape.q * pairs
    parts["head x steps"] = steps * k.head_passes * 2 * tokens * H * k.head_vocab
    if k.teacher_vocab:
        parts["teacher head (no grad)"] = 2 * tokens * H * k.teacher_vocab
    return parts, tokens * steps


@dataclass(frozen=True)
class DrafterKind:
    """One drafter kind, registered by name in DRAFTER_KINDS; a layout names it (`drafter` in
    presets/layouts.yaml) and its quality curve is its entry in presets/quality.yaml.

    - drafts_blocks: it drafts a block from each anchor (num_anchors, block_size) rather than running
      training-time-test steps over every position (ttt_steps);
    - layer_input: the draft layer's input width in units of H;
    - fc_input: the fc's input width in units of H; None: one H per captured auxiliary layer;
    - head_trainable: a head run in 3 passes is trained (its parameters count);
    - epoch: the FLOPs of one epoch by part and the trained positions (module docstring)."""

    name: str
    drafts_blocks: bool
    layer_input: int
    fc_input: int | None
    head_trainable: bool
    epoch: Callable[["DrafterKind", DrafterShape, DrafterKnobs, RowSums, float], tuple[dict[str, float], float]]

    def widths(self, hidden: int, n_aux: int) -> tuple[int, int]:
        """(the draft layer's input width, the fc's input width)."""
        return self.layer_input * hidden, (self.fc_input or n_aux) * hidden


DRAFTER_KINDS: Registry[DrafterKind] = Registry("drafter kind", "layout")
for _kind in (DrafterKind("eagle3", drafts_blocks=False, layer_input=2, fc_input=None, head_trainable=True,
                          epoch=_steps_epoch),
              DrafterKind("dflash", drafts_blocks=True, layer_input=1, fc_input=None, head_trainable=False,
                          epoch=_block_epoch),
              DrafterKind("eagle1", drafts_blocks=False, layer_input=1, fc_input=2, head_trainable=True,
                          epoch=_steps_epoch)):
    DRAFTER_KINDS.register(_kind.name, _kind)


def epoch_flops(shape: DrafterShape, knobs: DrafterKnobs, row_sums: RowSums, *,
                params_scale: float = 1.0) -> DrafterFlops:
    """FLOPs of one epoch over the rows `row_sums` (module docstring) for the drafter kind `knobs.kind`;
    `params_scale` scales the draft layers when the user gives the drafter's size instead of the estimate."""
    kind = DRAFTER_KINDS.lookup(knobs.kind)
    parts, positions = kind.epoch(kind, shape, knobs, row_sums, params_scale)
    total = float(sum(parts.values()))
    return DrafterFlops(total=total, per_token=total / row_sums.tokens if row_sums.tokens else 0.0,
                        per_row=total / row_sums.rows if row_sums.rows else 0.0, parts=parts, draft_positions=positions)
