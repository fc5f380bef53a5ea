"""planner/presets/drafter_kinds.py: drafter training FLOPs per kind, on small shapes worked by hand."""
from __future__ import annotations

import numpy as np
import pytest

from planner.presets.drafter_kinds import (
    DRAFTER_KINDS,
    NO_ROWS,
    DrafterKnobs,
    DrafterShape,
    RowSums,
    drafter_params,
    drafter_shape,
    epoch_flops,
    knobs,
    row_sums,
)
from planner.presets.layouts import layout_presets
from planner.presets.specs import model_presets

# H 4, q 4, kv 2, I 8
SHAPE = DrafterShape(hidden=4, q=4, kv=2, intermediate=8)


def _knobs(kind, **kw) -> DrafterKnobs:
    base = dict(kind=kind, layers=1, n_aux=3, ttt_steps=None, num_anchors=None, block_size=None, scope="row",
                pack_tokens=None, head_vocab=10, head_passes=2, teacher_vocab=0, attention_window=None)
    return DrafterKnobs(**(base | kw))


def test_layer_flops_and_params():
    # P(d) = 2 d (q + 2 kv) + 2 q H + 6 H I; d = 8: 2*8*(4+4) + 2*4*4 + 6*4*8 = 128 + 32 + 192 = 352
    assert SHAPE.layer_flops(8) == 352
    assert SHAPE.layer_params(8) == 176
    # d = 4: 64 + 32 + 192 = 288
    assert SHAPE.layer_flops(4) == 288


def test_drafter_shape_copies_the_target_and_estimates_a_missing_mlp():
    m = model_presets()["qwen3.6-27b"]   # 24 Q / 4 KV heads of 256, intermediate 17,408 (models.yaml)
    s = drafter_shape(m)
    assert (s.hidden, s.q, s.kv, s.intermediate) == (5120, 24 * 256, 4 * 256, 17_408)
    # without an intermediate size: 8/3 x 5120 = 13,653.3 -> //256 = 53 -> ceil: 54 x 256 = 13,824
    assert drafter_shape(m.model_copy(update={"intermediate_size": None})).intermediate == 13_824


def test_kinds_widths():
    assert DRAFTER_KINDS.lookup("eagle3").widths(4, 3) == (8, 12)   # layer 2H, fc n_aux H
    assert DRAFTER_KINDS.lookup("dflash").widths(4, 3) == (4, 12)
    assert DRAFTER_KINDS.lookup("eagle1").widths(4, 3) == (4, 8)    # fc 2H -> H whatever n_aux


def test_drafter_params():
    # eagle3, 3 head passes: layer P(8)/2 = 176, fc 12 x 4 = 48, trained head 4 x 10 = 40 -> 264
    assert drafter_params(SHAPE, _knobs("eagle3", head_passes=3)) == 264
    # 2 passes: the head is frozen -> 224
    assert drafter_params(SHAPE, _knobs("eagle3")) == 224
    # dflash never trains the head: P(4)/2 = 144 + 48 = 192
    assert drafter_params(SHAPE, _knobs("dflash", head_passes=3)) == 192


def test_row_sums_pads_windows_and_anchors():
    lengths, weights, supervised = np.array([4.0, 8.0]), np.array([0.5, 0.5]), np.array([2.0, 6.0])
    # 2 conversations: weights 1, 1; tokens 12; padded to 24: T = 8, 16
    r = row_sums(lengths, weights, supervised, 2.0, padded_tokens=24.0, num_anchors=4, window=None)
    # pairs T^2/2: 32 + 128 = 160; anchors min(4, S): 2 + 4 = 6; context A x T / 2: 2*4 + 4*8 = 40
    assert r == RowSums(2.0, 24.0, 160.0, 6.0, 40.0)
    # window 10: T = 8 inside (32), T = 16 past it: 10*16 - 50 = 110 -> 142
    assert row_sums(lengths, weights, supervised, 2.0, padded_tokens=24.0, num_anchors=None, window=10) \
        == RowSums(2.0, 24.0, 142.0, 0.0, 0.0)
    assert row_sums(lengths, weights, supervised, 0.0, padded_tokens=0.0, num_anchors=4, window=None) is NO_ROWS
    assert r + NO_ROWS == r


def test_eagle3_epoch_by_hand():
    k = _knobs("eagle3", ttt_steps=2, teacher_vocab=10)
    r = RowSums(rows=2, tokens=10, pairs=30, anchors=0, anchor_context=0)
    f = epoch_flops(SHAPE, k, r)
    # fc 2*2*10*12*4 = 1,920; layer 2*3*1*10*352 = 21,120; attention 2*3*1*4*4*30 = 2,880;
    # head 2*2*2*10*4*10 = 3,200; teacher 2*10*4*10 = 800; total 29,920
    assert f.parts == {"fc (weight gradient)": 1920, "draft layer x steps": 21_120, "attention x steps": 2880,
                       "head x steps": 3200, "teacher head (no grad)": 800}
    assert (f.total, f.per_token, f.per_row, f.draft_positions) == (29_920, 2992, 14_960, 20)
    # a drafter given at twice the estimate doubles the draft layer only
    assert epoch_flops(SHAPE, k, r, params_scale=2.0).total == 29_920 + 21_120


def test_dflash_epoch_by_hand():
    k = _knobs("dflash", num_anchors=4, block_size=2, teacher_vocab=10)
    r = RowSums(rows=2, tokens=10, pairs=30, anchors=3, anchor_context=12)
    f = epoch_flops(SHAPE, k, r)
    # Q = 3 x 2 = 6; fc 2*2*10*3*4*4 = 1,920; K/V 3*1*10*4*4*2 = 960; layers 3*1*6*288 = 5,184;
    # attention 3*1*4*4*(12*2 + 6*2) = 1,728; head 2*2*6*4*10 = 960; teacher 2*min(6,10)*4*10 = 480
    assert f.parts == {"fc (weight gradient)": 1920, "context K/V in every draft layer": 960,
                       "draft layers at the draft positions": 5184, "attention of the draft positions": 1728,
                       "head at the draft positions": 960, "teacher head (no grad)": 480}
    assert (f.total, f.draft_positions) == (11_232, 6)


def test_dflash_packs_run_every_anchor():
    k = _knobs("dflash", num_anchors=4, block_size=2, scope="pack", pack_tokens=5)
    r = RowSums(rows=2, tokens=10, pairs=30, anchors=3, anchor_context=12)
    f = epoch_flops(SHAPE, k, r)
    # 10/5 = 2 packs x 4 anchors x 2 = Q 16; mean row 5, context 2.5: attention 3*4*4*(16*2.5 + 16*2) = 3,456
    assert f.draft_positions == 16
    assert f.parts["attention of the draft positions"] == 3456


def test_empty_rows_give_zero_per_token():
    f = epoch_flops(SHAPE, _knobs("eagle3"), NO_ROWS)
    assert (f.total, f.per_token, f.per_row) == (0, 0, 0)


@pytest.mark.parametrize("layout, steps, anchors, block, n_aux", [
    ("specforge-eagle3", 7, None, None, 3),     # ttt_length 7 (layouts.yaml); last layer appended: 4 - 1
    ("seed-article", None, 512, 16, 4),         # DFlash defaults 512 anchors, block 16; no appended layer
])
def test_knobs_take_the_layouts_recipe(layout, steps, anchors, block, n_aux):
    m = model_presets()["qwen3.6-27b"]
    k = knobs(layout_presets()[layout], m, captured_layers=4, draft_layers=1, ttt_steps=None, num_anchors=None,
              block_size=None)
    assert (k.ttt_steps, k.num_anchors, k.block_size, k.n_aux) == (steps, anchors, block, n_aux)
    assert k.from_layout  # the recipe's defaults came from the layout


def test_knobs_prefer_the_scenarios_values():
    m = model_presets()["qwen3.6-27b"]
    k = knobs(layout_presets()["specforge-eagle3"], m, captured_layers=4, draft_layers=2, ttt_steps=3,
              num_anchors=99, block_size=99)
    # EAGLE ignores anchors/blocks; the given steps win and nothing is taken from the layout
    assert (k.ttt_steps, k.num_anchors, k.block_size, k.layers, k.from_layout) == (3, None, None, 2, [])
    assert k.teacher_vocab == m.vocab_size   # teacher: full (SpecForge eagle3/model.py:279-307)
