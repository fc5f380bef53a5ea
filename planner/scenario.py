"""The Scenario: everything a user can set, in one validated pydantic model.

It is what the dashboard edits, what the CLI builds from flags, what a manifest stores and what a
shared link encodes. Defaults are the `default` preset (efficiencies, batch and rates read from
planner/presets/hardware.yaml); `seed_article()` is the article's. Ids are strict (planner/ids.py).
"""
from __future__ import annotations

from typing import Annotated, Literal

from annotated_types import Ge, Le
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from planner.ids import FAMILIES
from planner.specs import GPUSpec, Id, ModelSpec, efficiency, link_efficiency

Family = Literal[FAMILIES]  # type: ignore[valid-type]

# Bounds: every numeric field has realistic bounds, defined here once (the dashboard reads them from
# `model_fields[...]` for its widgets). Any value inside them plans to finite figures; rates and
# efficiencies stay well above zero (efficiencies >= 0.01) so no division can blow up.


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, validate_assignment=False)


class MixItem(_Strict):
    id: Id
    rows: int = Field(ge=0, le=10**10)
    include: bool = True        # an unchecked component stays in the scenario (and its manifest and link), unplanned
    selection: Literal["uniform", "first", "shortest"] = "uniform"   # shortest: the n shortest of those available
    seed: int = Field(0, ge=0, le=2**32 - 1)


class UniformMix(_Strict):
    """N identical samples of `tokens` tokens, `response_tokens` of them generated (the article's method)."""

    samples: int = Field(gt=0, le=10**10)
    tokens: float = Field(ge=1, le=10**7)
    response_tokens: float = Field(0, ge=0, le=10**7)
    turns: int = Field(1, ge=1, le=10_000)

    @model_validator(mode="after")
    def _response_within(self) -> "UniformMix":
        if self.response_tokens > self.tokens:
            raise ValueError(f"response_tokens ({self.response_tokens:g}) cannot exceed tokens ({self.tokens:g})")
        return self


class Throughput(_Strict):
    # calibrated: the roofline scaled by the nearest published measurement (presets/throughput.yaml);
    # roofline: compute and bandwidth bounds alone; fixed: the article's tok/s x batching
    mode: Literal["calibrated", "roofline", "fixed"] = "calibrated"
    # fixed mode: single-GPU generation speed (1 tok/s, a CPU-class rate, up to 100k) and batching multiplier
    tokens_per_s: float = Field(default_factory=lambda: efficiency("fixed_tokens_per_s"), ge=1, le=100_000)
    batching: float = Field(default_factory=lambda: efficiency("fixed_batching"), ge=0.1, le=100_000)
    prefill_mfu: float | None = Field(None, ge=0.01, le=1)     # roofline: None = the GPU preset's default
    decode_mfu: float | None = Field(None, ge=0.01, le=1)      # decode's own compute efficiency; None = the preset's
    decode_bandwidth_efficiency: float = Field(default_factory=lambda: efficiency("decode_bandwidth"), ge=0.01, le=1)
    # the engine's scheduler caps (vLLM max_num_seqs, max_num_batched_tokens); None = its default for the GPU
    max_batch: int | None = Field(None, ge=1, le=65536)
    max_batched_tokens: int | None = Field(None, ge=16, le=10**7)
    tensor_parallel_efficiency: float = Field(default_factory=lambda: efficiency("tensor_parallel_efficiency"),
                                              ge=0.01, le=1)


class Transfer(_Strict):
    method: Literal["none", "link", "object_store", "drives"] = "link"
    link_gbps: float = Field(10.0, ge=0.01, le=100_000)         # 10 Mb/s up to 100 Tb/s
    efficiency: float = Field(default_factory=lambda: float(link_efficiency()["value"]), ge=0.01, le=1)
    drive_days: float = Field(3.0, ge=0.01, le=365)
    egress_usd_per_gb: float | None = Field(None, ge=0, le=100)


class Training(_Strict):
    gpu: Id = "b200"
    gpus: int = Field(8, ge=1, le=100_000)
    epochs: float = Field(3.0, ge=0.01, le=1000)
    drafter_params: float | None = Field(None, ge=1e6, le=1e12)  # None = estimate from the model and layout
    drafter_layers: int | None = Field(None, ge=1, le=64)       # None = the layout's rule (DFlash: capture count, EAGLE: 1)
    mfu: float = Field(default_factory=lambda: efficiency("training_mfu"), ge=0.01, le=1)
    # the training nodes: None = as many nodes of `gpus_per_node` as `gpus` needs (the last one partly
    # filled); given, nodes x gpus_per_node must equal gpus
    nodes: int | None = Field(None, ge=1, le=10_000)
    gpus_per_node: int = Field(8, ge=1, le=64)
    disk: Id = "node-raid0"                                      # each training node's local disk
    disk_capacity_tb: float | None = Field(None, ge=0.01, le=10**7)   # per training node, after a gather; None: unchecked
    # the trainer's recipe; None = the layout's pipeline default (presets/layouts.yaml `training`)
    ttt_steps: int | None = Field(None, ge=1, le=64)             # EAGLE-3 training-time-test steps
    num_anchors: int | None = Field(None, ge=1, le=65536)        # DFlash anchors per sample (or pack)
    block_size: int | None = Field(None, ge=2, le=256)           # DFlash draft block


class Disaggregated(_Strict):
    """Capture servers stream hidden states to trainers over the network every epoch (SpecForge with
    Mooncake, speculators' hidden-state connectors, TorchSpec's Ray actors): nothing on disk but a
    buffer. None = the extraction GPUs capture and the training GPUs train."""

    capture_gpus: int | None = Field(None, ge=1, le=100_000)   # of the extraction GPU
    train_gpus: int | None = Field(None, ge=1, le=100_000)     # of the training GPU
    stream_buffer_gb: float = Field(default_factory=lambda: efficiency("stream_buffer_gb"), ge=0.01, le=100_000)


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


class QualityPoint(_Strict):
    """One of your own runs (--quality-points FILE, a CSV of these columns): the drafter kind, the
    target, the benchmark's family, its training tokens and epochs, where tau was measured (at the
    engine's usual K, temperature 0) and tau."""

    drafter: Literal["eagle3", "dflash", "eagle1"]
    target: Id
    family: Family
    training_tokens: float = Field(gt=0, le=1e13)
    epochs: float = Field(gt=0, le=1000)
    eval_engine: Literal["paper", "vllm", "sglang"]
    tau: float = Field(gt=1, le=65)


class Quality(_Strict):
    """The serving side of the quality estimate (planner/quality.py)."""

    # serving workload: shares per family (normalised, with a warning if they do not sum to 1);
    # None = the full mix's family shares (the catalog's default mix, fixed: trimming or dropping a
    # component never changes what is served); "mix" = the scenario's own training-token shares (what
    # a version-5 scenario meant by None; planner/export/versions.py)
    workload: dict[Family, Share] | Literal["mix"] | None = None
    domain_transfer: float | None = Field(None, ge=0, le=1)      # None = the preset's (quality.yaml transfer)
    serving_tokens_per_day: float | None = Field(None, gt=0, le=1e18)
    serving_gpu: Id | None = None                                 # None = the extraction GPU
    # where tau is measured (planner/harness.py): the engine, its sampling temperature, and the drafted
    # tokens a step (None = the engine's usual value for the drafter kind, presets/harness.yaml)
    eval_engine: Literal["paper", "vllm", "sglang"] = "vllm"
    temperature: float = Field(0.0, ge=0, le=2)
    num_speculative_tokens: int | None = Field(None, ge=1, le=64)
    serving_batch: float = Field(1.0, ge=1, le=4096)   # the batch quality.speedup is given at (1: the papers')
    fleet_batch: float = Field(32.0, ge=1, le=4096)    # the serving fleet's batch, for the payback
    points: list[QualityPoint] | None = Field(None, max_length=1000)   # your own runs: refit the levels and curve

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
    extraction_usd_per_gpu_hour: float | None = Field(None, ge=0, le=1000)
    training_usd_per_gpu_hour: float | None = Field(None, ge=0, le=1000)
    # where the states are paid for (presets/hardware.yaml storage_prices); None = where the placement
    # puts them (planner/costs.py storage_preset_id: the nodes' own disks, a network volume, an object store)
    storage: Id | None = None
    storage_usd_per_tb_month: float | None = Field(None, ge=0, le=100_000)   # None = the preset's price
    # months the states are held; None = the plan's own timeline (first write to the last training
    # epoch) plus keep_days
    storage_months: float | None = Field(None, ge=0, le=120)
    keep_days: float = Field(0.0, ge=0, le=3650)


class Scenario(_Strict):
    preset: Id = "default"
    # The mix: components with row counts, or N uniform samples; neither means the catalog's default mix.
    mix: list[MixItem] | None = Field(None, max_length=500)
    uniform: UniformMix | None = None
    model: Id = "qwen3.6-27b"
    custom_model: ModelSpec | None = None
    layout: Id = "specforge-dflash"
    layers: list[int] | None = Field(None, min_length=1, max_length=256)
    layer_count: int | None = Field(None, ge=1, le=256)
    hidden_dtype: Literal["bf16", "fp16", "fp8"] | None = None
    # None: the layout's value (its pipeline's default, presets/layouts.yaml); "none": no cap.
    unit: Literal["conversation", "turn"] | None = None
    max_seq_len: Annotated[int, Ge(16), Le(10**7)] | Literal["none"] | None = None
    capture_batch_size: int | None = Field(None, ge=1, le=4096)   # rows per capture batch; 1 = no padding
    sort_by_length: bool | None = None                            # capture batches grouped by length
    regenerate: bool = True
    response_multiplier: float = Field(1.0, ge=0.1, le=100)
    length_scale: float = Field(1.0, ge=0.1, le=100)   # tokens per sample x this (tokenizer differences, sensitivity)
    throughput: Throughput = Field(default_factory=Throughput)
    weight_dtype: Literal["bf16", "fp8"] = "bf16"
    kv_dtype: Literal["bf16", "fp8"] = "bf16"          # vLLM --kv-cache-dtype (auto = the model's bf16)
    extraction_gpu: Id = "rtx-pro-6000"
    extraction_gpus: int = Field(8, ge=1, le=100_000)
    # the extraction nodes: None = as many nodes of `gpus_per_node` as the GPUs need (the last one
    # partly filled); given, extraction_nodes x gpus_per_node must equal extraction_gpus
    extraction_nodes: int | None = Field(None, ge=1, le=10_000)
    gpus_per_node: int = Field(8, ge=1, le=64)
    custom_gpu: GPUSpec | None = None
    disk: Id = "nvme-gen4"                                       # each extraction node's local disk
    disk_capacity_tb: float | None = Field(30.72, ge=0.01, le=10**7)   # per node (local placement); None: unchecked
    # where the hidden states live between capture and training: `local` (each capture node's disk holds
    # its shard, gathered to the training nodes over the node network) or `shared` (a network filesystem
    # whose aggregate bandwidth caps capture writes and training reads)
    placement: Literal["local", "shared"] = "local"
    shared_fs_gb_s: float = Field(default_factory=lambda: efficiency("shared_fs_gb_s"), ge=0.01, le=100_000)
    shared_capacity_tb: float | None = Field(None, ge=0.01, le=10**8)   # the shared filesystem's free space
    staging_double_write: bool = False   # vLLM writes to a staging path, then the file is moved across filesystems
    # the one per-node network figure (Gb/s per node), between the nodes of a site; transfer.link_gbps
    # stays the link between sites
    node_network_gbps: float = Field(default_factory=lambda: efficiency("node_network_gbps"), ge=0.1, le=100_000)
    node_network: Literal["tcp", "rdma"] = "tcp"
    disaggregated: Disaggregated = Field(default_factory=Disaggregated)
    compression: float = Field(1.0, ge=1.0, le=100)
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
        for where, nodes, per, gpus, names in (
                ("extraction", self.extraction_nodes, self.gpus_per_node, self.extraction_gpus,
                 ("extraction_nodes", "gpus_per_node", "extraction_gpus")),
                ("training", self.training.nodes, self.training.gpus_per_node, self.training.gpus,
                 ("training.nodes", "training.gpus_per_node", "training.gpus"))):
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
        """Local shards move to other training nodes at the same site (planner/nodes.py)."""
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
