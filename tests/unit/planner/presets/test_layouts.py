"""Each pipeline's layout, worked by hand for Qwen3-8B (hidden 4,096, 36 layers, vocab 151,936;
Qwen/Qwen3-8B config.json), against the code lines cited in planner/presets/layouts.yaml."""
import pytest

from planner.presets.layouts import bytes_per_token, capture_layers, effective, files_and_overhead, layout_presets

H, L, V = 4096, 36, 151_936


def _bpt(layout_id, layers=None, layer_count=None, dtype=None):
    spec = layout_presets()[layout_id]
    ids = capture_layers(spec, L, layers, layer_count)
    return ids, bytes_per_token(spec, len(ids), H, V, dtype or spec.hidden_dtype).per_token


@pytest.mark.parametrize("layout, layers, expected", [
    # seed article: DFlash rule, 5 layers evenly from 1 to L-3 = 33: 1, 9, 17, 25, 33;
    # 5 x 4,096 x 2 B + int32 id 4 = 40,964
    ("seed-article", [1, 9, 17, 25, 33], 40_964),
    # speculators (scripts/launch_vllm.py:128-134): [2, L//2, L-3, L] = [2, 18, 33, 36];
    # 4 x 8,192 = 32,768 + int64 token id 8 + Arrow dataset input_ids and loss_mask int64 16 = 32,792
    ("speculators", [2, 18, 33, 36], 32_792),
    # speculators' DFlash captures the same four layers by default: 32,792
    ("speculators-dflash", [2, 18, 33, 36], 32_792),
    # SpecForge EAGLE-3 (model_providers.py:188-211): [1, L//2-1, L-4] = [1, 17, 32] + the last 36;
    # 4 x 8,192 + input_ids 8 + loss_mask 8 = 32,784
    ("specforge-eagle3", [1, 17, 32, 36], 32_784),
    # SpecForge DFlash: 5 layers, no last: 40,960 + 16 = 40,976
    ("specforge-dflash", [1, 9, 17, 25, 33], 40_976),
    # Model-Optimizer: sorted({1, 17, 32}) + final: 32,784
    ("modelopt-eagle3", [1, 17, 32, 36], 32_784),
    # NeMo: 3 aux layers 24,576 + input_ids, attention_mask, loss_mask int64 24 + position_mask 1
    # + target_probs over the full vocabulary 151,936 x 2 = 303,872 -> 328,473 (about 328 KB/token)
    ("nemo-automodel", [1, 17, 32], 328_473),
    # DeepSpec: T (6 + 2H(n+1)) with n = 5: 6 + 2 x 4,096 x 6 = 49,158
    ("deepspec", [1, 9, 17, 25, 33, 36], 49_158),
    # EAGLE-1/2: the last hidden state in fp16 8,192 + ids 8 + mask 8 = 8,208
    ("eagle1", [36], 8_208),
])
def test_bytes_per_token_by_hand(layout, layers, expected):
    ids, bpt = _bpt(layout)
    assert ids == layers and bpt == expected


def test_a_layer_count_takes_the_dflash_rule_plus_the_pipelines_last_layer():
    # speculators-dflash with 5 layers: z-lab's [1, 9, 17, 25, 33] and, as --include-last-layer
    # appends it, 36: 6 x 8,192 + 24 = 49,176 = 1.5x its 4-layer default of 32,792
    ids, bpt = _bpt("speculators-dflash", layer_count=5)
    assert ids == [1, 9, 17, 25, 33, 36] and bpt == 49_176
    # explicit ids are taken as given
    assert _bpt("specforge-dflash", layers=[3, 7])[0] == [3, 7]


def test_files_and_overhead():
    nemo, deep, sf = (layout_presets()[k] for k in ("nemo-automodel", "deepspec", "specforge-dflash"))
    # NeMo: 1,000 rows in shards of 256 -> 4 files x (2,048 header + 2,048 half block) = 16,384,
    # plus the target's embeddings once in fp32: 151,936 x 4,096 x 4 = 2,489,319,424
    files, over = files_and_overhead(nemo, 1000, 0, H, V)
    assert files == 4 and over == 16_384 + 2_489_319_424
    # DeepSpec: 100 GiB of data in 64 GiB shards -> 2 files x 2,048 (half a block) + 1,000 x 56 index bytes
    files, over = files_and_overhead(deep, 1000, 100 * 2**30, H, V)
    assert files == 2 and over == 2 * 2048 + 56_000
    # SpecForge: a file per row: 1,000 x (1,536 + 2,048)
    assert files_and_overhead(sf, 1000, 0, H, V) == (1000, 3_584_000)


def test_effective_defaults_and_what_came_from_the_layout():
    spec = layout_presets()["speculators"]
    e = effective(spec, unit=None, max_seq_len=None, capture_batch_size=None, sort_by_length=None)
    # speculators: per-turn rows (preprocessing.py:208-231) at --seq-length 8192 (prepare_data.py:117-122)
    assert (e.unit, e.max_seq_len, e.capture_batch_size, e.padding) == ("turn", 8192, 1, "none")
    assert set(e.from_layout) == {"unit", "max_seq_len", "capture_batch_size", "sort_by_length"}
    sf = layout_presets()["specforge-dflash"]
    e = effective(sf, unit="turn", max_seq_len="none", capture_batch_size=None, sort_by_length=None)
    assert (e.unit, e.max_seq_len, e.capture_batch_size, e.padding, e.drop_last) == ("turn", None, 32, "batch", True)
    assert "unit" not in e.from_layout and "max_seq_len" not in e.from_layout
    # a batch of one means no padding
    assert effective(sf, unit=None, max_seq_len=None, capture_batch_size=1, sort_by_length=None).padding == "none"
    mo = layout_presets()["modelopt-eagle3"]
    assert effective(mo, unit=None, max_seq_len=None, capture_batch_size=None, sort_by_length=None).overflow == "skip"


def test_every_layout_names_its_drafter_and_cites_each_default():
    for spec in layout_presets().values():
        assert spec.drafter in ("eagle3", "dflash", "eagle1")
        for name in ("unit", "max_seq_len", "capture_batch_size"):
            assert getattr(spec.defaults, name).source


@pytest.mark.parametrize("draft, topk, expected", [
    # NeMo Automodel@36044ad3 precompute_eagle3.py:310-324: defaults None and 0 = the full target
    # vocabulary, stored in full: 24,576 + 25 + 151,936 x 2 = 328,473 (the table above)
    (None, None, 328_473),
    # --draft-vocab-size 32000 (eagle3.py:342-364 keeps 32,000 tokens): 24,601 + 32,000 x 2 = 88,601
    (32_000, None, 88_601),
    # + --target-probs-topk 64: values bf16 + int32 indices (eagle3_cache.py:109-123): 64 x 6 = 384 -> 24,985
    (32_000, 64, 24_985),
    # a draft vocabulary above the target's selects every token (eagle3.py:283-286): as the default
    (200_000, None, 328_473),
    # a k at or above the draft vocabulary does not compress (eagle3_cache.py:104-106): 24,601 + 1,000 x 2 = 26,601
    (1_000, 1_000, 26_601),
    # k = 999 < 1,000 compresses: 24,601 + 999 x 6 = 30,595 (more than in full: the code's own trade)
    (1_000, 999, 30_595),
])
def test_nemo_draft_vocabulary_and_topk_by_hand(draft, topk, expected):
    spec = layout_presets()["nemo-automodel"]
    ids = capture_layers(spec, L, None, None)
    assert bytes_per_token(spec, len(ids), H, V, "bf16", draft, topk).per_token == expected


def test_only_a_layout_that_stores_the_distribution_reads_the_draft_vocabulary():
    # SpecForge EAGLE-3 stores no target distribution: 3 aux + final = 4 x 8,192 + 16 = 32,784 either way
    spec = layout_presets()["specforge-eagle3"]
    assert bytes_per_token(spec, 4, H, V, "bf16", 32_000, 64).per_token == 32_784


@pytest.mark.parametrize("grouping", ["rows_per_file", "shard_bytes"])
def test_a_sharded_grouping_without_its_size_is_refused(grouping):
    # files_and_overhead divides by rows_per_file / shard_bytes: a layout that groups by one and leaves it unset
    # is refused when the preset loads, naming the field (not a TypeError in the middle of a plan)
    from pydantic import ValidationError

    from planner.presets.layouts import LayoutSpec
    d = next(iter(layout_presets().values())).model_dump()
    d.update(grouping=grouping, rows_per_file=None, shard_bytes=None)
    with pytest.raises(ValidationError, match=f"grouping {grouping} needs {grouping}"):
        LayoutSpec(**d)
    d[grouping] = 7
    assert LayoutSpec(**d).grouping == grouping
