"""The Scenario: everything a user can set, in one validated pydantic model.

It is what the dashboard edits, what the CLI builds from flags, what a manifest stores and what a
shared link encodes. Defaults are the `default` preset (efficiencies, batch and rates read from
planner/presets/hardware.yaml); `seed_article()` is the article's. Ids are strict (planner/ids.py).
"""
from __future__ import annotations

import functools
from typing import Annotated, Literal

from annotated_types import Ge, Le
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from planner.ids import FAMILIES
from planner.presets.specs import GPUSpec, Id, ModelSpec, link_efficiency
from planner.scenario.inputs import (
    BY_PLACEMENT,
    DISKS,
    EXTRACTION_GPU,
    FILE_ORDER,
    HARDWARE,
    LAYOUT,
    MODEL,
    NODES,
    PRICES,
    SAMPLES,
    SERVING,
    SORTED,
    THROUGHPUT,
    TRAINING,
    TRANSFER,
    Preset,
    declared,
)
from planner.scenario.inputs import Input as In

Family = Literal[FAMILIES]  # type: ignore[valid-type]  # mypy reads no Literal of a tuple

# Bounds: every numeric field has realistic bounds, defined here once (the dashboard reads them from
# `model_fields[...]` for its widgets). Any value inside them plans to finite figures; rates and
# efficiencies stay well above zero (efficiencies >= 0.01) so no division can blow up.
# What a person sees of a field (its flag, label, help, widget, section, Assumptions row) is the
# `In(...)` it carries (planner/scenario/inputs.py): the CLI, the dashboard and the Assumptions are built from it.
_FIXED = ("throughput.mode", ("fixed",))
_ROOFLINE = ("throughput.mode", ("calibrated", "roofline"))
_SHARED = ("placement", ("shared",))
_LINK = ("transfer.method", ("link", "object_store"))
_NODES_HELP = "0 = as many nodes as the GPUs need; otherwise nodes x GPUs per node must equal the GPU count"


class _Strict(BaseModel):
    # a field's docstring is its description: the CLI flag's help (planner/cli/_common.py declared_flags)
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, validate_assignment=False,
                              use_attribute_docstrings=True)


class MixItem(_Strict):
    id: Id
    rows: int = Field(ge=0, le=10**10)
    include: bool = True        # an unchecked component stays in the scenario (and its manifest and link), unplanned
    selection: Literal["uniform", "first", "shortest"] = "uniform"   # shortest: the n shortest of those available
    seed: int = Field(0, ge=0, le=2**32 - 1)


class UniformMix(_Strict):
    """N identical samples of `tokens` tokens, `response_tokens` of them generated (the article's method)."""

    samples: Annotated[int, In(special=True)] = Field(gt=0, le=10**10)
    """replace the mix by N uniform samples (with --tokens)"""
    tokens: Annotated[float, In(special=True)] = \
        Field(ge=1, le=10**7)
    """tokens per uniform sample"""
    response_tokens: Annotated[float, In(special=True)] = Field(0, ge=0, le=10**7)
    """generated (response) tokens per uniform sample"""
    turns: Annotated[int, In(special=True)] = Field(1, ge=1, le=10_000)
    """turns per uniform sample (default 1)"""

    @model_validator(mode="after")
    def _response_within(self) -> "UniformMix":
        if self.response_tokens > self.tokens:
            raise ValueError(f"response_tokens ({self.response_tokens:g}) cannot exceed tokens ({self.tokens:g})")
        return self


class Throughput(_Strict):
    # calibrated: the roofline scaled by the nearest published measurement (presets/throughput.yaml);
    # roofline: compute and bandwidth bounds alone; fixed: the article's tok/s x batching
    mode: Annotated[Literal["calibrated", "roofline", "fixed"], In(
        key="w_tp_mode", label="Throughput model", widget="radio", horizontal=True, section=HARDWARE, order=60,
        help="calibrated: the roofline scaled by the nearest published measurement (see Assumptions); "
             "roofline: compute and bandwidth bounds alone; fixed: the article's tok/s x batching")] = "calibrated"
    """calibrated: the roofline scaled by the nearest published measurement (the default); roofline: compute and
    bandwidth bounds alone; fixed: the article's tok/s x batching (set by --tokens-per-s and --batching)"""
    # fixed mode: single-GPU generation speed (1 tok/s, a CPU-class rate, up to 100k) and batching multiplier
    tokens_per_s: Annotated[float, In(
        key="w_tps", label="tok/s per GPU", section=THROUGHPUT, order=70, col="half", shown_when=_FIXED,
        also={"throughput.mode": "fixed"})] = \
        Field(default_factory=Preset("fixed_tokens_per_s"), ge=1, le=100_000)
    """fixed throughput mode: single-GPU tokens/s"""
    batching: Annotated[float, In(
        key="w_batching", label="batching x", section=THROUGHPUT, order=80, col="half", shown_when=_FIXED,
        also={"throughput.mode": "fixed"})] = \
        Field(default_factory=Preset("fixed_batching"), ge=0.1, le=100_000)
    """fixed throughput mode: batching factor"""
    prefill_mfu: Annotated[float | None, In(   # roofline: None = the GPU preset's default
        key="w_mfu", label="Prefill MFU (blank = GPU's)", step=0.05, section=THROUGHPUT, order=90, col="half",
        shown_when=_ROOFLINE, help="0.45-0.55 on H100/H200/B200; 0.30-0.45 on AMD, PCIe and consumer cards")] = \
        Field(None, ge=0.01, le=1)
    """prefill MFU (roofline)"""
    decode_mfu: Annotated[float | None, In(    # decode's own compute efficiency; None = the preset's
        key="w_decode_mfu", label="Decode compute eff. (blank = preset)", step=0.05, section=THROUGHPUT, order=110,
        col="half", shown_when=_ROOFLINE,
        help="decode's own compute efficiency, fitted on the published measurements (bench/fidelity.py)")] = \
        Field(None, ge=0.01, le=1)
    """decode's compute efficiency (default: the preset's, fitted on the published measurements)"""
    decode_bandwidth_efficiency: Annotated[float, In(
        key="w_bw_eff", label="Decode bandwidth eff.", step=0.05, section=THROUGHPUT, order=100, col="half",
        shown_when=_ROOFLINE, row="decode bandwidth efficiency")] = \
        Field(default_factory=Preset("decode_bandwidth"), ge=0.01, le=1)
    """share of the GPU's memory bandwidth decode reaches (roofline; default: the preset's)"""
    # the engine's scheduler caps (vLLM max_num_seqs, max_num_batched_tokens); None = its default for the GPU
    max_batch: Annotated[int | None, In(
        key="w_max_batch", label="max_num_seqs (0 = vLLM's)", none=0, section=THROUGHPUT, order=130, col="half",
        shown_when=_ROOFLINE,
        help="vLLM's default for the GPU's memory: 1,024 at 70 GiB and more (not A100), else 256")] = \
        Field(None, ge=1, le=65536)
    """the engine's max_num_seqs (default: vLLM's for the GPU's memory)"""
    max_batched_tokens: Annotated[int | None, In(
        key="w_max_tokens", label="max_batched_tokens (0 = vLLM's)", none=0, section=THROUGHPUT, order=140,
        col="half", shown_when=_ROOFLINE,
        help="vLLM's default for the GPU's memory: 16,384 at 70 GiB and more (not A100), else 8,192")] = \
        Field(None, ge=16, le=10**7)
    """the engine's max_num_batched_tokens (default: vLLM's for the GPU's memory)"""
    tensor_parallel_efficiency: Annotated[float, In(
        key="w_tp_eff", label="Tensor-parallel eff.", step=0.05, section=THROUGHPUT, order=120, col="half",
        shown_when=_ROOFLINE, help="throughput kept per GPU when a model is split over several",
        row="tensor-parallel efficiency")] = Field(default_factory=Preset("tensor_parallel_efficiency"),
                                                   ge=0.01, le=1)
    """throughput kept per GPU when a model is split over several (default: the preset's)"""


class Transfer(_Strict):
    method: Annotated[Literal["none", "link", "object_store", "drives"], In(
        key="w_transfer", label="Method", widget="select", section=TRANSFER, order=10,
        labels={"link": "network link", "object_store": "object storage (up + down)", "drives": "shipped drives",
                "none": "none (same machine)"})] = "link"
    """how the states reach the training machines"""
    link_gbps: Annotated[float, In(             # 10 Mb/s up to 100 Tb/s
        key="w_link", label="Link Gb/s", widget="special", section=TRANSFER, order=20, col="half",
        shown_when=_LINK)] = Field(10.0, ge=0.01, le=100_000)
    """link speed in Gb/s"""
    efficiency: Annotated[float, In(
        key="w_link_eff", label="Efficiency", step=0.05, section=TRANSFER, order=30, col="half", shown_when=_LINK,
        help="single-stream rsync/scp 0.1-0.4; parallel tools 0.5-0.8; RDMA 0.8-0.9")] = \
        Field(default_factory=lambda: float(link_efficiency()["value"]), ge=0.01, le=1)
    """share of the link speed reached"""
    drive_days: Annotated[float, In(
        key="w_drive_days", label="Days in transit", section=TRANSFER, order=50,
        shown_when=("transfer.method", ("drives",)))] = Field(3.0, ge=0.01, le=365)
    """days the shipped drives are in transit (transfer method drives)"""
    egress_usd_per_gb: Annotated[float | None, In(
        key="w_egress", label="Egress $/GB (blank = the storage's)", section=TRANSFER, order=40,
        shown_when=("transfer.method", ("object_store",)))] = Field(None, ge=0, le=100)
    """egress price in USD per GB (object store; default: the storage preset's)"""


class Training(_Strict):
    gpu: Annotated[Id, In(key="w_tr_gpu", label="Training GPU", widget="special", section=TRAINING, order=10,
                          col="wide")] = "b200"
    """training GPU id"""
    gpus: Annotated[int, In(key="w_tr_gpus", label="count", section=TRAINING, order=20, col="narrow")] = \
        Field(8, ge=1, le=100_000)
    """training GPU count"""
    epochs: Annotated[float, In(key="w_epochs", label="Epochs", step=1.0, section=TRAINING, order=30, col="half")] = \
        Field(3.0, ge=0.01, le=1000)
    """training epochs"""
    drafter_params: Annotated[float | None, In(   # None = estimate from the model and layout
        key="w_drafter_b", label="Drafter params (B, blank = estimate)", scale=1e9, section=TRAINING, order=50,
        col="half")] = Field(None, ge=1e6, le=1e12)
    """drafter parameters (default: estimated from the model and layout)"""
    drafter_layers: Annotated[int | None, In(     # None = the layout's rule (DFlash: capture count, EAGLE: 1)
        key="w_drafter_layers", label="Drafter layers (0 = layout's)", none=0, section=TRAINING, order=60,
        col="half")] = Field(None, ge=1, le=64)
    """drafter layers (default: the layout's rule; DFlash: the capture count, EAGLE: 1)"""
    mfu: Annotated[float, In(key="w_tr_mfu", label="Training MFU", step=0.05, section=TRAINING, order=40, col="half",
                             row="training MFU")] = \
        Field(default_factory=Preset("training_mfu"), ge=0.01, le=1)
    """drafter training MFU"""
    # the training nodes: None = as many nodes of `gpus_per_node` as `gpus` needs (the last one partly
    # filled); given, nodes x gpus_per_node must equal gpus
    nodes: Annotated[int | None, In(
        key="w_tr_nodes", label="Training nodes", none=0, section=NODES, order=30, col="half",
        help=_NODES_HELP + " (setting nodes sets the GPU count)")] = Field(None, ge=1, le=10_000)
    """training nodes (sets --train-gpus to nodes x --train-gpus-per-node unless given; then they must match)"""
    gpus_per_node: Annotated[int, In(key="w_tr_per_node", label="Training GPUs per node", section=NODES, order=40,
                                     col="half")] = Field(8, ge=1, le=64)
    """GPUs per training node (default 8)"""
    disk: Annotated[Id, In(key="w_tr_disk", label="Training disk (read)", widget="special", section=TRAINING,
                           order=100)] = "node-raid0"              # each training node's local disk
    """each training node's local disk, a disk preset id (planner/presets/hardware.yaml disks)"""
    disk_capacity_tb: Annotated[float | None, In(   # per training node, after a gather; None: unchecked
        key="w_tr_disk_cap", label="Training disk TB per node (blank = no check)", section=NODES, order=50,
        help="checked against each training node's share after the gather")] = \
        Field(None, ge=0.01, le=10**7)
    """each training node's local disk in TB (checked against its share after a gather)"""
    # the trainer's recipe; None = the layout's pipeline default (presets/layouts.yaml `training`)
    ttt_steps: Annotated[int | None, In(           # EAGLE-3 training-time-test steps
        key="w_ttt", label="TTT steps", widget="special", none=0, section=TRAINING, order=70, col="half")] = \
        Field(None, ge=1, le=64)
    """EAGLE-3 training-time-test steps (default: the layout's)"""
    num_anchors: Annotated[int | None, In(         # DFlash anchors per sample (or pack)
        key="w_anchors", label="Anchors", widget="special", none=0, section=TRAINING, order=80, col="half")] = \
        Field(None, ge=1, le=65536)
    """DFlash anchors per sample (default: the layout's)"""
    block_size: Annotated[int | None, In(          # DFlash draft block
        key="w_block", label="Block size", widget="special", none=0, section=TRAINING, order=90, col="half")] = \
        Field(None, ge=2, le=256)
    """DFlash block size (default: the layout's)"""


class Disaggregated(_Strict):
    """Capture servers stream hidden states to trainers over the network every epoch (SpecForge with
    Mooncake, speculators' hidden-state connectors, TorchSpec's Ray actors): nothing on disk but a
    buffer. None = the extraction GPUs capture and the training GPUs train."""

    capture_gpus: Annotated[int | None, In(      # of the extraction GPU
        key="w_dis_capture", label="Capture GPUs (0 = extraction's)", none=0, section=TRAINING, order=110,
        col="half", caption="Disaggregated: capture servers stream the states to trainers every epoch")] = \
        Field(None, ge=1, le=100_000)
    """disaggregated training: capture GPUs (of the extraction GPU; default: the extraction GPUs)"""
    train_gpus: Annotated[int | None, In(        # of the training GPU
        key="w_dis_train", label="Trainer GPUs (0 = training's)", none=0, section=TRAINING, order=120, col="half")] = \
        Field(None, ge=1, le=100_000)
    """disaggregated training: trainer GPUs (of the training GPU; default: the training GPUs)"""
    stream_buffer_gb: Annotated[float, In(
        key="w_buffer", label="Stream buffer GB", section=TRAINING, order=130,
        help="TorchSpec's Mooncake segment is 8 GB")] = \
        Field(default_factory=Preset("stream_buffer_gb"), ge=0.01, le=100_000)
    """disaggregated training: stream buffer GB"""


Share = Annotated[float, Ge(0), Le(1e6)]   # a family's share of the serving workload (scaled to sum to 1)


class WorkloadShares(_Strict):
    """The serving workload's shares, one field per family (the dashboard's widgets take their
    bounds from here; Quality.workload holds the same as a mapping)."""

    general: Share = 0.0
    code: Share = 0.0
    tool: Share = 0.0
    agentic: Share = 0.0
    math: Share = 0.0


assert tuple(WorkloadShares.model_fields) == FAMILIES


def _drafter_kinds() -> list[str]:
    """The registered drafter kinds (planner/presets/drafter_kinds.py DRAFTER_KINDS), read when a point is checked
    or the schema written, not at import: the drafter module loads numpy, which `planner --help` must not."""
    from planner.presets.drafter_kinds import DRAFTER_KINDS
    return list(DRAFTER_KINDS)


def _a_drafter_kind(name: str) -> str:
    kinds = _drafter_kinds()
    if name not in kinds:       # the message of the Literal this replaces
        expected = " or ".join(", ".join(repr(k) for k in kinds).rsplit(", ", 1))
        raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})
    return name


# a drafter kind's name, one of the registry's: registering a kind makes it a valid choice here too
DrafterKindName = Annotated[str, AfterValidator(_a_drafter_kind),
                            Field(json_schema_extra=lambda s: s.update(enum=_drafter_kinds()))]


class QualityPoint(_Strict):
    """One of your own runs (--quality-points FILE, a CSV of these columns): the drafter kind, the
    target, the benchmark's family, its training tokens and epochs, where tau was measured (at the
    engine's usual K, temperature 0) and tau."""

    drafter: DrafterKindName
    target: Id
    family: Family
    # at least one token and a hundredth of an epoch: below that a run's data axis underflows
    # (1e-300 tokens x 1e-300 epochs divided by zero in the curve fit; found by a hostile try)
    training_tokens: float = Field(ge=1, le=1e13)
    epochs: float = Field(ge=0.01, le=1000)
    eval_engine: Literal["paper", "vllm", "sglang"]
    tau: float = Field(gt=1, le=65)


class Quality(_Strict):
    """The serving side of the quality estimate (planner/phases/quality.py)."""

    # serving workload: shares per family (normalised, with a warning if they do not sum to 1);
    # None = the full mix's family shares (the catalog's default mix, fixed: trimming or dropping a
    # component never changes what is served); "mix" = the scenario's own training-token shares (what
    # a version-5 scenario meant by None; planner/export/versions.py)
    workload: Annotated[dict[Family, Share] | Literal["mix"] | None, In(
        label="Serving workload", widget="special", section=SERVING, order=10,
        help="what the drafter will serve, as shares of the catalog's families; the mix's own: its "
             "training-token shares. Shares are scaled to sum to 1",
        parse="shares")] = None
    """the serving workload as family shares, e.g. general=0.5,code=0.3,tool=0.2 (default: the full mix's family
    shares, fixed whatever is trimmed; shares are scaled to sum to 1)"""
    domain_transfer: Annotated[float | None, In(    # None = the preset's (quality.yaml transfer)
        key="w_q_transfer", label="Transfer between families (blank = 0.5)", step=0.05, section=SERVING, order=20,
        help="how much one family's training tokens count for another (0: nothing, 1: as its own); an "
             "estimate, see Assumptions")] = Field(None, ge=0, le=1)
    """how much one family's training tokens count for another (0-1; default: the preset's)"""
    serving_tokens_per_day: Annotated[float | None, In(
        key="w_serving_tokens_b", label="Served tokens/day (B, blank = none)", scale=1e9, section=SERVING, order=30,
        help="billions of tokens served a day: gives the payback of the offline run")] = \
        Field(None, gt=0, le=1e18)
    """tokens served a day: gives the payback of the offline run in days"""
    serving_gpu: Annotated[Id | None, In(           # None = the extraction GPU
        key="w_serving_gpu", label="Serving GPU", widget="special", none=EXTRACTION_GPU, section=SERVING, order=40)] = \
        None
    """the serving GPU for the payback (default: the extraction GPU)"""
    # where tau is measured (planner/phases/harness.py): the engine, its sampling temperature, and the drafted
    # tokens a step (None = the engine's usual value for the drafter kind, presets/harness.yaml)
    eval_engine: Annotated[Literal["paper", "vllm", "sglang"], In(
        key="w_eval_engine", label="tau measured on", widget="select", section=SERVING, order=50,
        help="where tau is measured: the serving engine (chain drafting, its usual K) or the "
             "paper's own harness; planner/presets/harness.yaml")] = "vllm"
    """where tau is measured: the serving engine or the paper's own harness (default: vllm)"""
    temperature: Annotated[float, In(
        key="w_temperature", label="Temperature", step=0.1, section=SERVING, order=60, col="half")] = \
        Field(0.0, ge=0, le=2)
    """the serving sampling temperature, 0-2 (default: 0)"""
    num_speculative_tokens: Annotated[int | None, In(
        key="w_spec_k", label="Draft tokens K (0 = usual)", none=0, step=1, section=SERVING, order=70, col="half",
        help="num_speculative_tokens; 0: the engine's usual value for the drafter kind")] = Field(None, ge=1, le=64)
    """drafted tokens a step (default: the engine's usual value for the drafter kind)"""
    # SGLang's tree (--speculative-eagle-topk, --speculative-num-draft-tokens): topk 1 is a chain of K + 1
    topk: Annotated[int, In(
        key="w_spec_topk", label="Tree top-k (SGLang)", step=1, section=SERVING, order=72, col="half",
        help="--speculative-eagle-topk: branches a draft step keeps; 1 is a chain (vLLM drafts a chain)")] = \
        Field(1, ge=1, le=16)
    """SGLang's --speculative-eagle-topk: branches each draft step keeps (default: 1, a chain)"""
    num_draft_tokens: Annotated[int | None, In(
        key="w_spec_n", label="Draft tokens verified (0 = K+1)", none=0, step=1, section=SERVING, order=74,
        col="half", help="--speculative-num-draft-tokens: tokens a sequence the verify step carries on a tree")] = \
        Field(None, ge=2, le=1024)
    """SGLang's --speculative-num-draft-tokens: tokens a sequence the verify step carries (default: K + 1, a chain)"""
    serving_tp: Annotated[int, In(
        key="w_serving_tp", label="Serving TP", step=1, section=SERVING, order=76, col="half",
        help="tensor-parallel GPUs serving one replica: two all-reduces a layer each step, the draft's too")] = \
        Field(1, ge=1, le=64)
    """tensor-parallel degree of the serving replica (default: 1)"""
    serving_batch: Annotated[float, In(   # the batch quality.speedup is given at (1: the papers')
        key="w_serving_batch", label="Serving batch (speedup)", step=1.0, section=SERVING, order=80, col="half",
        help="the batch the speedup is given at; 1 is the papers' interactive figure")] = Field(1.0, ge=1, le=4096)
    """the batch the speedup is given at (default: 1, the papers' interactive figure)"""
    fleet_batch: Annotated[float, In(     # the serving fleet's batch, for the payback
        key="w_fleet_batch", label="Fleet batch (payback)", step=1.0, section=SERVING, order=90, col="half",
        help="the serving fleet's batch: the payback uses the speedup at it")] = Field(32.0, ge=1, le=4096)
    """the serving fleet's batch, at which the payback's speedup is taken (default: 32)"""
    points: Annotated[list[QualityPoint] | None, In(parse="points")] = Field(   # your own runs: refit the levels
        None, max_length=1000, description="your own runs, a CSV with the header " + ",".join(QualityPoint.model_fields)
        + " (tau measured at the engine's usual K, temperature 0): refit the quality estimate's levels and curve on "
        "them")

    @model_validator(mode="after")
    def _tree(self) -> "Quality":
        """A tree is SGLang's (vLLM drafts a chain; the paper harness has its own tree); its tokens at most
        what SGLang's tree holds (planner/phases/harness.py max_tree_tokens) and more than a chain's."""
        if self.topk > 1 and self.eval_engine != "sglang":
            raise ValueError(f"topk {self.topk} (--topk) is a tree, which only SGLang drafts here: set "
                             f"eval_engine to sglang (--eval-engine sglang) or topk to 1")
        if self.num_draft_tokens is not None and self.topk == 1:
            raise ValueError(f"num_draft_tokens {self.num_draft_tokens} (--num-draft-tokens) needs a tree (topk "
                             "above 1); a chain verifies K + 1 tokens")
        k = self.num_speculative_tokens
        if self.num_draft_tokens is not None and k is not None \
                and not k + 1 <= self.num_draft_tokens <= 1 + self.topk + (k - 1) * self.topk ** 2:
            raise ValueError(f"num_draft_tokens {self.num_draft_tokens} (--num-draft-tokens) must be between "
                             f"K + 1 = {k + 1} "
                             f"and the {1 + self.topk + (k - 1) * self.topk ** 2} tokens a tree of topk "
                             f"{self.topk} and K {k} holds")
        return self

    @field_validator("workload")
    @classmethod
    def _some_share(cls, v):
        """Every family named (a family left out has a share of 0), at least one share positive."""
        if v is None or v == "mix":
            return v
        if not sum(v.values()) > 0:
            raise ValueError("give a positive share for at least one family")
        return {f: float(v.get(f, 0.0)) for f in FAMILIES}


class Costs(_Strict):
    extraction_usd_per_gpu_hour: Annotated[float | None, In(
        key="w_ex_price", label="Extraction $/GPU-hour", widget="special", section=PRICES, order=50)] = \
        Field(None, ge=0, le=1000)
    """extraction price in USD per GPU-hour (default: the extraction GPU preset's)"""
    training_usd_per_gpu_hour: Annotated[float | None, In(
        key="w_tr_price", label="Training $/GPU-hour", widget="special", section=PRICES, order=60)] = \
        Field(None, ge=0, le=1000)
    """training price in USD per GPU-hour (default: the training GPU preset's)"""
    # where the states are paid for (presets/hardware.yaml storage_prices); None = where the placement
    # puts them (planner/phases/costs.py storage_preset_id: the nodes' own disks, a network volume, an object store)
    # (both set by the CLI's --storage-price, assembled in planner/cli/_common.py)
    storage: Annotated[Id | None, In(key="w_storage", label="Storage", widget="special", none=BY_PLACEMENT,
                                     section=PRICES, order=10)] = None
    """where the states are paid for, a storage price preset id (planner/presets/hardware.yaml storage_prices;
    default: where the placement puts them; --storage-price takes a preset or a price)"""
    storage_usd_per_tb_month: Annotated[float | None, In(   # None = the preset's price
        key="w_tb_price", label="$/TB-month (blank = preset's)", section=PRICES, order=20)] = \
        Field(None, ge=0, le=100_000)
    """storage price in USD per TB-month (default: the storage preset's)"""
    # months the states are held; None = the plan's own timeline (first write to the last training
    # epoch) plus keep_days
    storage_months: Annotated[float | None, In(
        key="w_months", label="Months held (blank = timeline)", step=0.5, section=PRICES, order=30, col="half",
        help="blank: from the first write to the last training epoch, plus the days kept after")] = \
        Field(None, ge=0, le=120)
    """months the states are held (default: the plan's own timeline, first write to last training epoch, plus
    --keep-days)"""
    keep_days: Annotated[float, In(
        key="w_keep_days", label="Days kept after", step=1.0, section=PRICES, order=40, col="half",
        help="after the last epoch (blank months only)")] = Field(0.0, ge=0, le=3650)
    """days the states are kept after the last training epoch"""


class Scenario(_Strict):
    preset: Id = "default"
    # The mix: components with row counts, or N uniform samples; neither means the catalog's default mix.
    mix: list[MixItem] | None = Field(None, max_length=500)
    uniform: UniformMix | None = None
    model: Annotated[Id, In(key="w_model", label="Target model", widget="special", section=MODEL, order=10,
                            help="the model's name, size and source are below")] = "qwen3.6-27b"
    """target model id"""
    custom_model: Annotated[ModelSpec | None, In(widget="special", section=MODEL, order=20)] = None
    """a target model not in the presets, as a JSON object of planner.presets.specs.ModelSpec's fields (used with
    --model custom)"""
    layout: Annotated[Id, In(key="w_layout", label="Capture layout", widget="special", section=MODEL, order=30,
                             help="the pipeline whose files are planned")] = "specforge-dflash"
    """capture layout id"""
    layers: Annotated[list[int] | None, In(
        key="w_layers", label="Custom layer ids (comma-separated, overrides the rule)", widget="text", kind="layers",
        section=MODEL, order=60, parse="layers")] = \
        Field(None, min_length=1, max_length=256)
    """comma-separated layer ids to capture (overrides the layout's rule)"""
    layer_count: Annotated[int | None, In(
        key="w_layer_count", label="Layer count (0 = layout's)", none=0, section=MODEL, order=50, col="half",
        help="DFlash rule: n layers evenly spaced from 1 to L-3")] = Field(None, ge=1, le=256)
    """hidden layers captured under the layout's rule, e.g. DFlash's n layers evenly spaced from 1 to L-3 (default:
    the layout's)"""
    hidden_dtype: Annotated[Literal["bf16", "fp16", "fp8"] | None, In(
        key="w_hidden_dtype", label="Hidden dtype", widget="select", none=LAYOUT, section=MODEL, order=40, col="half",
        help="fp8 stores one byte per value plus per-token scales (speculators supports it)")] = None
    """dtype of the stored hidden states"""
    # where the layout stores the target's distribution (NeMo Automodel's offline cache): its width and top-k;
    # None: the pipeline's defaults (presets/layouts.yaml: the full target vocabulary, stored in full)
    draft_vocab_size: Annotated[int | None, In(
        key="w_draft_vocab", label="Draft vocabulary (0 = full)", none=0, section=SAMPLES, order=90, col="half",
        help="layouts that store the target's distribution (NeMo Automodel): the tokens it covers ("
        "--draft-vocab-size; its default: the target's whole vocabulary)")] = \
        Field(None, ge=1, le=10**7)
    """draft vocabulary of the stored target distribution (NeMo Automodel; default: the target's)"""
    target_probs_topk: Annotated[int | None, In(
        key="w_probs_topk", label="Target probs top-k (0 = all)", none=0, section=SAMPLES, order=91, col="half",
        help="layouts that store the target's distribution (NeMo Automodel): each token's top k probabilities "
        "(values + int32 indices) instead of the whole distribution (--target-probs-topk; its default 0: all)")] = \
        Field(None, ge=1, le=10**7)
    """top-k of the stored target distribution, values + int32 indices (NeMo Automodel; left out: stored in full, its
    default 0)"""
    # None: the layout's value (its pipeline's default, presets/layouts.yaml); "none": no cap.
    unit: Annotated[Literal["conversation", "turn"] | None, In(
        key="w_unit", label="Sample unit", widget="special", none=LAYOUT, section=SAMPLES, order=10,
        help="turn: one training row per assistant turn holding the prefix through it.")] = None
    """training row: a conversation or each assistant turn (default: the layout's)"""
    max_seq_len: Annotated[Annotated[int, Ge(16), Le(10**7)] | Literal["none"] | None, In(
        key="w_cap", label="Cap (tokens)", widget="special", kind="int", section=SAMPLES, order=20,
        parse="seq_cap")] = None
    """sequence cap in tokens, or 'none' (default: the layout's)"""
    capture_batch_size: Annotated[int | None, In(   # rows per capture batch; 1 = no padding
        key="w_capture_batch", label="Capture batch (0 = layout's)", widget="special", none=0, section=SAMPLES,
        order=30, col="half")] = Field(None, ge=1, le=4096)
    """rows per capture batch, padded to the longest where the pipeline pads; 1 = no padding (default: the layout's)"""
    sort_by_length: Annotated[bool | None, In(      # capture batches grouped by length
        key="w_sort", label="Batch order", widget="special", section=SAMPLES, order=40, col="half",
        help="length-sorted batches pad only within a band of lengths",
        mapping=((None, LAYOUT), (True, SORTED), (False, FILE_ORDER)))] = None
    """group capture batches by length, less padding (--no-sort-by-length: in file order; default: the layout's)"""
    regenerate: Annotated[bool, In(
        key="w_regen", label="Regenerate responses with the target", widget="toggle", section=SAMPLES, order=50,
        help="on-policy data (speculators' docs ask for it) costs decode time; off = prefill-only")] = True
    """regenerate the responses with the target model (--no-regenerate: keep the dataset's responses)"""
    response_multiplier: Annotated[float, In(
        key="w_resp_mult", label="Response length x", step=0.05, section=SAMPLES, order=60, col="half",
        enabled_when=("regenerate", (True,)), help="thinking models answer longer")] = Field(1.0, ge=0.1, le=100)
    """regenerated response length x this"""
    length_scale: Annotated[float, In(   # tokens per sample x this (tokenizer differences, sensitivity)
        key="w_length_scale", label="Tokens per sample x", step=0.05, section=SAMPLES, order=70, col="half",
        help="catalog lengths are ~cl100k tokens; a Qwen tokenizer differs by about +-10%")] = \
        Field(1.0, ge=0.1, le=100)
    """tokens per sample x this: catalog lengths are about cl100k tokens, a Qwen tokenizer differs by about +-10%"""
    throughput: Throughput = Field(default_factory=Throughput)
    weight_dtype: Annotated[Literal["bf16", "fp8"], In(
        key="w_weight_dtype", label="Weights", widget="radio", horizontal=True, section=HARDWARE, order=40,
        col="half")] = "bf16"
    """dtype of the target's weights"""
    kv_dtype: Annotated[Literal["bf16", "fp8"], In(   # vLLM --kv-cache-dtype (auto = the model's bf16)
        key="w_kv_dtype", label="KV cache", widget="radio", horizontal=True, section=HARDWARE, order=50, col="half",
        help="vLLM --kv-cache-dtype: fp8 halves the KV bytes per token (more sequences per batch)")] = "bf16"
    """dtype of the KV cache"""
    # how the pipeline's code runs the capture (planner/presets/capture_paths.yaml); None: the layout's
    # pipeline's own path. The choices are the preset's ids (tests/unit/planner/presets/test_capture_paths.py checks)
    capture_path: Annotated[Literal["sglang-server", "vllm-extract", "hf-loop", "prefill-server"] | None, In(
        key="w_capture_path", label="Capture path", widget="select", none=LAYOUT, section=THROUGHPUT, order=5,
        help="how the pipeline's code captures: SpecForge's SGLang engine, speculators' vLLM extract_hidden_states "
        "(a file per request), Model-Optimizer's HF loop (one conversation per forward, layers split over a "
        "replica's GPUs); the layout's own by default")] = None
    """capture path: sglang-server, vllm-extract, hf-loop or prefill-server (default: the layout's pipeline's; a
    path its pipeline does not have is refused)"""
    extraction_gpu: Annotated[Id, In(key="w_ex_gpu", label="GPU", widget="special", section=HARDWARE, order=10,
                                     col="wide")] = "rtx-pro-6000"
    """extraction GPU id"""
    extraction_gpus: Annotated[int, In(key="w_ex_gpus", label="count", section=HARDWARE, order=20, col="narrow")] = \
        Field(8, ge=1, le=100_000)
    """extraction GPU count"""
    # the extraction nodes: None = as many nodes of `gpus_per_node` as the GPUs need (the last one
    # partly filled); given, extraction_nodes x gpus_per_node must equal extraction_gpus
    extraction_nodes: Annotated[int | None, In(
        key="w_ex_nodes", label="Extraction nodes", none=0, section=NODES, order=10, col="half",
        help=_NODES_HELP + " (setting nodes sets the GPU count)")] = \
        Field(None, ge=1, le=10_000)
    """extraction nodes (sets --gpus to nodes x --gpus-per-node unless given; then they must match)"""
    gpus_per_node: Annotated[int, In(
        key="w_ex_per_node", label="GPUs per node", section=NODES, order=20, col="half",
        help="extraction nodes' GPUs; a tensor-parallel group stays within a node when it fits")] = \
        Field(8, ge=1, le=64)
    """GPUs per extraction node (default 8)"""
    custom_gpu: Annotated[GPUSpec | None, In(widget="special", section=HARDWARE, order=30)] = None
    """a GPU not in the presets, as a JSON object of planner.presets.specs.GPUSpec's fields (used with --gpu custom or
    --train-gpu custom)"""
    disk: Annotated[Id, In(key="w_disk", label="Extraction disk", widget="special", section=DISKS,
                           order=150)] = "nvme-gen4"             # each extraction node's local disk
    """each extraction node's local disk, a disk preset id (planner/presets/hardware.yaml disks)"""
    disk_capacity_tb: Annotated[float | None, In(   # per node (local placement); None: unchecked
        key="w_disk_cap", label="Disk TB per node (blank = no check)", section=DISKS, order=160,
        help="each extraction node's local disk: with local placement it holds that node's shard")] = \
        Field(30.72, ge=0.01, le=10**7)
    """each extraction node's local disk in TB (local placement)"""
    # where the hidden states live between capture and training: `local` (each capture node's disk holds
    # its shard, gathered to the training nodes over the node network) or `shared` (a network filesystem
    # whose aggregate bandwidth caps capture writes and training reads)
    placement: Annotated[Literal["local", "shared"], In(
        key="w_placement", label="Hidden states on", widget="radio", horizontal=True, section=NODES, order=60,
        labels={"local": "each node's disk", "shared": "a shared filesystem"},
        help="local: each extraction node keeps its shard, gathered to the training nodes over the node "
             "network; shared: a network filesystem whose bandwidth caps capture writes and training reads")] = "local"
    """where the hidden states live: each node's local disk (gathered to the training nodes) or a shared filesystem"""
    shared_fs_gb_s: Annotated[float, In(
        key="w_shared_gbs", label="Shared FS GB/s", step=5.0, section=NODES, order=70, col="half", shown_when=_SHARED,
        help="its aggregate bandwidth, all clients together", row="shared filesystem GB/s")] = \
        Field(default_factory=Preset("shared_fs_gb_s"), ge=0.01, le=100_000)
    """the shared filesystem's aggregate bandwidth in GB/s (caps capture writes and training reads)"""
    shared_capacity_tb: Annotated[float | None, In(   # the shared filesystem's free space
        key="w_shared_cap", label="Shared FS TB (blank = no check)", section=NODES, order=80, col="half",
        shown_when=_SHARED)] = \
        Field(None, ge=0.01, le=10**8)
    """the shared filesystem's free space in TB"""
    staging_double_write: Annotated[bool, In(   # vLLM writes to a staging path, then the file is moved
        key="w_double_write", label="Staging on another filesystem (writes twice)", widget="checkbox",
        section=DISKS, order=170, help="vLLM writes each file to a staging path, then the client moves it; across "
                                          "filesystems every byte is written twice")] = False
    """vLLM writes each file to a staging path on another filesystem, then the client moves it: every byte written
    twice (--no-staging-double-write: written once, the default)"""
    # the one per-node network figure (Gb/s per node), between the nodes of a site; transfer.link_gbps
    # stays the link between sites
    node_network_gbps: Annotated[float, In(
        key="w_node_gbps", label="Node network Gb/s", step=25.0, section=NODES, order=90, col="half",
        help="per node, between the nodes of a site: the gather and the disaggregated stream use it")] = \
        Field(default_factory=Preset("node_network_gbps"), ge=0.1, le=100_000)
    """network per node in Gb/s (between the nodes of a site)"""
    node_network: Annotated[Literal["tcp", "rdma"], In(
        key="w_node_kind", label="Transport", widget="radio", horizontal=True, section=NODES, order=100,
        col="half")] = "tcp"
    """the node network's transport"""
    disaggregated: Disaggregated = Field(default_factory=Disaggregated)
    compression: Annotated[float, In(
        key="w_compression", label="Compression x", step=0.05, section=DISKS, order=180,
        help="bf16 activations compress ~1.0-1.2x; the article assumed 1.5-2x", row="compression", unit="x",
        preset="compression")] = Field(1.0, ge=1.0, le=100)
    """compression ratio of the stored states"""
    transfer: Transfer = Field(default_factory=Transfer)
    training: Training = Field(default_factory=Training)
    costs: Costs = Field(default_factory=Costs)
    quality: Quality = Field(default_factory=Quality)

    @field_validator("layers")
    @classmethod
    def _layers_valid(cls, v: list[int] | None) -> list[int] | None:
        if v is not None:
            if any(x < 0 or x > 1024 for x in v):
                raise ValueError("layer ids must be between 0 and the model's layer count")
            if len(set(v)) != len(v):
                raise ValueError("layer ids must not repeat")
        return v

    @model_validator(mode="after")
    def _one_mix(self) -> "Scenario":
        if self.mix is not None and self.uniform is not None:
            raise ValueError("give either mix (components) or uniform (N samples of T tokens), not both")
        if self.mix is not None:
            ids = [m.id for m in self.mix]
            dup = sorted({i for i in ids if ids.count(i) > 1})
            if dup:
                raise ValueError(f"component {dup[0]!r} appears more than once in mix")
        return self

    @model_validator(mode="after")
    def _nodes_match(self) -> "Scenario":
        checks: tuple[tuple[Literal["extraction", "training"], int | None, int, int, tuple[str, str, str]], ...] = (
            ("extraction", self.extraction_nodes, self.gpus_per_node, self.extraction_gpus,
             ("extraction_nodes", "gpus_per_node", "extraction_gpus")),
            ("training", self.training.nodes, self.training.gpus_per_node, self.training.gpus,
             ("training.nodes", "training.gpus_per_node", "training.gpus")))
        for where, nodes, per, gpus, names in checks:
            if nodes is not None and (total := gpus_on_nodes(where, nodes, per)) != gpus:
                raise ValueError(f"{where}: {names[0]} {nodes} x {names[1]} {per} = {total:,} GPUs, but "
                                 f"{names[2]} is {gpus:,}; give matching values (or leave {names[0]} unset)")
        return self

    @property
    def extraction_node_count(self) -> int:
        return node_count(self.extraction_gpus, self.gpus_per_node, self.extraction_nodes)

    @property
    def training_node_count(self) -> int:
        return node_count(self.training.gpus, self.training.gpus_per_node, self.training.nodes)

    @property
    def trains_on_extraction_nodes(self) -> bool:
        """Training on the machines that captured (same site, GPU and nodes): local shards are read in place."""
        return (self.transfer.method == "none" and self.training.gpu == self.extraction_gpu
                and self.training_node_count == self.extraction_node_count
                and self.training.gpus_per_node == self.gpus_per_node)

    @property
    def gather_applies(self) -> bool:
        """Local shards move to other training nodes at the same site (planner/phases/nodes.py)."""
        return self.placement == "local" and self.transfer.method == "none" and not self.trains_on_extraction_nodes

    def with_changes(self, **changes) -> "Scenario":
        """A validated copy with top-level fields replaced."""
        data = self.model_dump()
        data.update(changes)
        return Scenario.model_validate(data)


def gpus_on_nodes(phase: Literal["extraction", "training"], nodes: int, per_node: int) -> int:
    """GPUs = nodes x GPUs per node, the one place the rule is written: the Scenario checks its node
    counts with it, the CLI's --nodes / --train-nodes and the sidebar's node controls set the GPU count
    with it. A ValueError when the product is over the most GPUs the phase's count takes (its `le`)."""
    model, name = (Scenario, "extraction_gpus") if phase == "extraction" else (Training, "gpus")
    hi = next(m.le for m in model.model_fields[name].metadata if getattr(m, "le", None) is not None)
    gpus = nodes * per_node
    if gpus > hi:
        raise ValueError(f"{nodes:,} nodes x {per_node:,} GPUs per node = {gpus:,} GPUs, over the {hi:,} a plan takes")
    return gpus


def node_count(gpus: int, gpus_per_node: int, nodes: int | None) -> int:
    """The nodes a phase runs on: as given, or as many nodes of `gpus_per_node` as `gpus` needs."""
    return nodes if nodes is not None else -(-gpus // gpus_per_node)


def default_scenario() -> Scenario:
    """The 913,786-sample mix on Qwen3.6-27B, SpecForge DFlash layout, 8 x RTX PRO 6000 for
    extraction and 8 x B200 for training, roofline throughput."""
    return Scenario()


def seed_article_scenario() -> Scenario:
    """The seed article's back-of-envelope, to the byte: 913,786 x 800 tokens, 500 generated,
    5 layers bf16 + int32 ids, 120 tok/s x 4 batching on one GPU, 1.5x compression."""
    return Scenario(
        preset="seed-article",
        uniform=UniformMix(samples=913_786, tokens=800, response_tokens=500),
        layout="seed-article", regenerate=True,
        throughput=Throughput(mode="fixed", tokens_per_s=120, batching=4),
        extraction_gpus=1, compression=1.5, disk_capacity_tb=None,
    )


PRESETS = {"default": default_scenario, "seed-article": seed_article_scenario}


@functools.cache
def _input_names() -> dict[str, str]:
    return {d.path: f"{d.input.section}: {d.input.label}" if d.input.section else d.input.label
            for d in declared(Scenario) if d.input.label}


def input_name(path: str) -> str:
    """The name a person knows a scenario input by on the page, its sidebar section and label ('Training:
    count' for `training.gpus`; issue 35: messages and Compare named inputs by their code names); a
    mix component as 'mix: <id>'; a path with no label as it is."""
    path = path.removeprefix("scenario.")
    if path.startswith("mix.") and path.count(".") == 1:
        return f"mix: {path[4:]}"
    return _input_names().get(path, path)
