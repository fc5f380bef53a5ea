"""Capture layouts: what each pipeline stores per token, per row and per file, and the defaults it
runs with (sample unit, sequence cap, what happens past the cap, capture batch and padding), each
read from the pipeline's code and cited in presets/layouts.yaml.

A Scenario leaves `unit`, `max_seq_len`, `capture_batch_size` and `sort_by_length` at None to mean
"the layout's value"; `effective()` resolves them and says which came from the layout.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Callable, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from planner.errors import PlannerInputError
from planner.ids import check_no_control
from planner.variants import Registry

PRESETS = Path(__file__).resolve().parent
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1}
FP8_SCALE_BYTES = 4  # one fp32 scale per token and layer (per-token scaling), an estimate


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


Text = Annotated[str, Field(max_length=2000), AfterValidator(check_no_control)]


class Default(_Strict):
    value: int | str | bool | None
    source: Text


class IntDefault(Default):
    """A default that is a whole number (draft_layers): typed at load, not converted where it is used."""
    value: int


class VocabDefault(Default):
    """A head's vocabulary: "full" (the target's) or a size."""
    value: int | Literal["full"]


class LayoutDefaults(_Strict):
    unit: Default
    max_seq_len: Default
    overflow: Default = Default(value="truncate", source="truncation to the cap")
    capture_batch_size: Default = Default(value=1, source="one row per forward pass")
    padding: Default = Default(value="none", source="each row stored at its own length")
    sort_by_length: Default = Default(value=False, source="no length grouping")
    drop_last: Default = Default(value=False, source="every row captured")
    draft_layers: IntDefault = IntDefault(value=1, source="EAGLE-1/2/3 drafters train one decoder layer")
    # where the target's distribution is stored (vocab_distribution): its width and its top-k, as the
    # pipeline's flags default (None: the full target vocabulary; 0: the distribution stored in full)
    draft_vocab_size: Default | None = None
    target_probs_topk: Default | None = None


class LayoutTraining(_Strict):
    """How the pipeline's trainer runs the drafter (what planner/presets/drafter_kinds.py counts), each value cited:
    - ttt_steps: EAGLE-3 training-time-test steps (EAGLE-1/2: 1);
    - num_anchors, block_size: DFlash anchors and the draft block run from each;
    - scope: row (anchors and lengths per sample) or pack (samples packed into `pack_tokens`, each
      pack padded to it, anchors per pack);
    - head_vocab: the vocabulary of the head applied at every trained position ("full" or a size);
    - head_passes: matmul passes of that head (2 frozen: forward + input gradient; 3 trained, or
      frozen and recomputed under checkpointing);
    - teacher: a no-grad pass of the target's head per token for the soft labels (none, full, draft);
    - attention_window: the draft layers' sliding window, if any;
    - batch_size: rows per GPU per optimizer step (row scope; a pack scope steps one pack per GPU)."""

    ttt_steps: IntDefault | None = None
    num_anchors: IntDefault | None = None
    block_size: IntDefault | None = None
    scope: Default = Default(value="row", source="one sample per training row")
    pack_tokens: IntDefault | None = None
    head_vocab: VocabDefault = VocabDefault(value="full", source="the target's vocabulary")
    head_passes: IntDefault = IntDefault(value=2, source="a frozen head: forward and input gradient")
    teacher: Default = Default(value="none", source="hard labels: no teacher pass")
    attention_window: IntDefault | None = None
    batch_size: IntDefault = IntDefault(value=1, source="estimate: one row per GPU per optimizer step (the "
                                                         "trainer's batch was not read)")


def dflash_layers(num_layers: int, count: int) -> list[int]:
    """DFlash rule: `count` layers evenly spaced from 1 to L-3; one layer gives [L//2]."""
    if count <= 1:
        return [num_layers // 2]
    last = num_layers - 3
    return [round(1 + i * (last - 1) / (count - 1)) for i in range(count)]


# Capture-layer rules by name (a layout's `layer_rule`): the layer ids stored for a model of L layers,
# given the layout's default_layer_count n (before any last layer the layout appends).
LAYER_RULES: Registry[Callable[[int, int], list[int]]] = Registry("layer rule", "layer_rule")
LAYER_RULES.register("dflash", dflash_layers)
LAYER_RULES.register("speculators", lambda L, n: [2, L // 2, L - 3])
LAYER_RULES.register("sglang-eagle3", lambda L, n: sorted({1, L // 2 - 1, L - 4}))
LAYER_RULES.register("last", lambda L, n: [L])


def _registered(registry: Registry) -> AfterValidator:
    def check(name: str) -> str:
        if name not in registry:
            raise ValueError(f"not a registered {registry.what}; one of {', '.join(registry)}")
        return name
    return AfterValidator(check)


class LayoutSpec(_Strict):
    id: Text
    name: Text
    pipeline: Text
    # a drafter kind of planner.presets.drafter_kinds.DRAFTER_KINDS (checked by layout_presets)
    drafter: Text
    layer_rule: Annotated[str, _registered(LAYER_RULES)]
    default_layer_count: int = Field(ge=1, le=256)
    append_last_layer: bool
    hidden_dtype: Literal["bf16", "fp16", "fp8"]
    token_id_bytes: int = Field(ge=0)
    loss_mask_bytes: int = Field(ge=0)
    other_bytes_per_token: int = Field(0, ge=0)
    sidecar_bytes_per_token: int = Field(0, ge=0)     # another file's bytes per token (speculators' Arrow dataset)
    vocab_distribution: bool = False                   # the target's distribution over the vocabulary, per token
    file_header_bytes: int = Field(ge=0)
    block_bytes: int = Field(ge=0)
    grouping: Literal["per_row", "rows_per_file", "shard_bytes"]
    rows_per_file: int | None = Field(None, ge=1)
    shard_bytes: int | None = Field(None, ge=1)
    index_bytes_per_row: int = Field(0, ge=0)
    once_embeddings_fp32: bool = False                 # the target's input embeddings, once, in fp32
    topk_index_bytes: int = Field(0, ge=0)             # a top-k distribution's index bytes per kept entry
    file_pattern: Text
    defaults: LayoutDefaults
    training: LayoutTraining
    source: Text
    estimates: Text | None = None

    @model_validator(mode="after")
    def _grouping_has_its_size(self) -> LayoutSpec:
        """rows_per_file / shard_bytes grouping names its shard size (files_and_overhead divides by it)."""
        if self.grouping in ("rows_per_file", "shard_bytes") and getattr(self, self.grouping) is None:
            raise ValueError(f"grouping {self.grouping} needs {self.grouping}")
        return self

    @property
    def default_max_seq_len(self) -> int | None:
        v = self.defaults.max_seq_len.value
        return None if v in (None, "none") else int(v)


@functools.cache
def layout_presets() -> dict[str, LayoutSpec]:
    # read here, not through specs.load_preset: specs imports this module (its layouts re-export)
    from planner.catalog.paths import load_shipped_yaml
    from planner.presets.drafter_kinds import DRAFTER_KINDS  # numpy: not at import (planner --help)
    specs = {d["id"]: LayoutSpec(**d) for d in load_shipped_yaml(PRESETS / "layouts.yaml")}
    for spec in specs.values():     # every layout's drafter is a registered kind, checked once here
        DRAFTER_KINDS.lookup(spec.drafter)
    return specs


def capture_layers(spec: LayoutSpec, num_layers: int, layers: list[int] | None, layer_count: int | None) -> list[int]:
    """The layer ids a layout stores for a model with `num_layers` layers."""
    L = num_layers
    if layers is None:
        if layer_count:
            layers = dflash_layers(L, layer_count)
        else:
            layers = LAYER_RULES.lookup(spec.layer_rule)(L, spec.default_layer_count)
        if spec.append_last_layer and L not in layers:
            layers = [*layers, L]
    bad = [x for x in layers if x < 0 or x > L]
    if bad:
        raise PlannerInputError("layers", bad[0], f"layer ids must be between 0 and {L}")
    return list(layers)


@dataclass(frozen=True)
class Bytes:
    hidden: int          # hidden-state bytes per token
    scales: int          # fp8 scale bytes per token
    ids_and_masks: int   # token ids, loss mask and other per-token fields
    vocab: int           # the stored vocabulary distribution per token
    sidecar: int         # another file's bytes per token

    @property
    def per_token(self) -> int:
        return self.hidden + self.scales + self.ids_and_masks + self.vocab + self.sidecar


def vocab_bytes(spec: LayoutSpec, vocab_size: int, width: int, draft_vocab_size: int | None = None,
                target_probs_topk: int | None = None) -> int:
    """Bytes per token of the stored target distribution (0 where the layout stores none). The draft
    vocabulary is the target's unless a smaller size is given (NeMo Automodel@36044ad3
    components/datasets/llm/eagle3.py:283-286: None or a size >= the target's selects every token);
    a top-k with 0 < k < that vocabulary stores k values in the cache dtype and k int32 indices
    (components/datasets/llm/eagle3_cache.py:104-106, 109-123), else the distribution in full."""
    if not spec.vocab_distribution:
        return 0
    d = spec.defaults
    if draft_vocab_size is None and d.draft_vocab_size is not None and d.draft_vocab_size.value is not None:
        draft_vocab_size = int(d.draft_vocab_size.value)
    if target_probs_topk is None and d.target_probs_topk is not None:
        target_probs_topk = int(d.target_probs_topk.value or 0)
    draft = min(draft_vocab_size or vocab_size, vocab_size)
    k = target_probs_topk or 0
    if 0 < k < draft:
        return k * (width + spec.topk_index_bytes)
    return draft * width


def bytes_per_token(spec: LayoutSpec, n_layers: int, hidden_size: int, vocab_size: int, dtype: str,
                    draft_vocab_size: int | None = None, target_probs_topk: int | None = None) -> Bytes:
    width = DTYPE_BYTES[dtype]
    return Bytes(hidden=n_layers * hidden_size * width,
                 scales=n_layers * FP8_SCALE_BYTES if dtype == "fp8" else 0,
                 ids_and_masks=spec.token_id_bytes + spec.loss_mask_bytes + spec.other_bytes_per_token,
                 vocab=vocab_bytes(spec, vocab_size, width, draft_vocab_size, target_probs_topk),
                 sidecar=spec.sidecar_bytes_per_token)


def files_and_overhead(spec: LayoutSpec, rows: float, data_bytes: float, hidden_size: int,
                       vocab_size: int) -> tuple[float, float]:
    """(files written, overhead bytes beyond the per-token data): headers and half a block per file,
    index entries, and what is written once."""
    if spec.grouping == "per_row":
        files = rows
    elif spec.grouping == "rows_per_file":
        assert spec.rows_per_file is not None        # LayoutSpec's validator: this grouping names it
        files = math.ceil(rows / spec.rows_per_file) if rows else 0
    else:
        assert spec.shard_bytes is not None          # LayoutSpec's validator: this grouping names it
        files = math.ceil(data_bytes / spec.shard_bytes) if data_bytes else 0
    overhead = files * (spec.file_header_bytes + spec.block_bytes / 2) + rows * spec.index_bytes_per_row
    if spec.once_embeddings_fp32 and rows:
        overhead += vocab_size * hidden_size * 4
    return float(files), float(overhead)


@dataclass(frozen=True)
class Effective:
    unit: str
    max_seq_len: int | None
    overflow: str
    capture_batch_size: int
    padding: str
    sort_by_length: bool
    drop_last: bool
    draft_layers: int
    from_layout: tuple[str, ...]     # the names whose value came from the layout


def effective(spec: LayoutSpec, *, unit: str | None, max_seq_len: int | str | None, capture_batch_size: int | None,
              sort_by_length: bool | None) -> Effective:
    """The values in force: the scenario's where it sets them, the layout's otherwise."""
    d = spec.defaults
    taken = []

    def pick(name, given, default):
        if given is None:
            taken.append(name)
            return default
        return given

    u = pick("unit", unit, d.unit.value)
    cap = pick("max_seq_len", max_seq_len, d.max_seq_len.value)
    cap = None if cap in (None, "none") else int(cap)
    batch = int(pick("capture_batch_size", capture_batch_size, d.capture_batch_size.value))
    sort = bool(pick("sort_by_length", sort_by_length, d.sort_by_length.value))
    padding = str(d.padding.value)
    if padding == "batch" and batch <= 1:
        padding = "none"
    return Effective(unit=str(u), max_seq_len=cap, overflow=str(d.overflow.value), capture_batch_size=batch,
                     padding=padding, sort_by_length=sort, drop_last=bool(d.drop_last.value),
                     draft_layers=d.draft_layers.value, from_layout=tuple(taken))
