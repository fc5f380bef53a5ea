"""The phases of one scenario, from its presets to its costs: resolve the presets, store the mix
(planner/phases/mix_storage.py), then capture on the nodes, transfer, training and costs, each worked out
when first read (Figures). plan() composes them with quality, findings and assumptions; trim's steps
read Figures alone."""
from __future__ import annotations

import functools
from dataclasses import dataclass

from planner.catalog.stats import StatsCatalog, get_catalog
from planner.errors import PlannerInputError
from planner.phases.costs import CostPlan, costs, storage_preset_id
from planner.phases.extraction import ExtractionPlan, extraction, replicas_on_nodes, tensor_parallel_for
from planner.phases.mix_storage import StoragePhase, storage_phase
from planner.phases.nodes import NodePlan, node_plan, writing_nodes
from planner.phases.reuse import Reuse, reused
from planner.phases.stored_bytes import CaptureLayout, Workload, resolve_layout
from planner.phases.training import TrainingPlan, disaggregated, training
from planner.phases.transfer import TransferPlan, transfer
from planner.presets.capture_paths import CapturePath, held_bytes_per_token, resolve_path
from planner.presets.drafter_kinds import NO_ROWS, drafter_shape, epoch_flops, knobs, padded_row_sums, row_base
from planner.presets.drafter_kinds import drafter_params as estimated_drafter_params
from planner.presets.layouts import Effective, LayoutSpec, effective, layout_presets
from planner.presets.specs import (
    GPUSpec,
    ModelSpec,
    disk_presets,
    gpu_presets,
    model_presets,
    network_efficiency,
    storage_price_presets,
)
from planner.scenario import Scenario


def resolve_model(scenario: Scenario) -> ModelSpec:
    if scenario.model == "custom":
        if scenario.custom_model is None:
            raise PlannerInputError("model", "custom",
                                    "a custom model needs custom_model (hidden size, layers, heads ...)")
        # a snapshot: a scenario's own sub-model may be edited in place after a plan (the presets'
        # specs never are), and the plan holds what it was planned with
        return scenario.custom_model.model_copy()
    models = model_presets()
    if scenario.model not in models:
        raise PlannerInputError("model", scenario.model, f"known models: {', '.join(models)} or custom")
    return models[scenario.model]


def resolve_gpu(field: str, gpu_id: str, custom: GPUSpec | None) -> GPUSpec:
    if gpu_id == "custom":
        if custom is None:
            raise PlannerInputError(field, "custom", "a custom GPU needs custom_gpu (memory, bandwidth, TFLOPS)")
        return custom.model_copy()      # a snapshot, as resolve_model's custom model
    gpus = gpu_presets()
    if gpu_id not in gpus:
        raise PlannerInputError(field, gpu_id, f"known GPUs: {', '.join(gpus)} or custom")
    return gpus[gpu_id]


def _lookup(table: dict, field: str, key: str) -> dict:
    if key not in table:
        raise PlannerInputError(field, key, f"known: {', '.join(table)}")
    return table[key]


@dataclass(frozen=True)
class Resolved:
    """The presets a scenario names, looked up once."""

    model: ModelSpec
    spec: LayoutSpec
    layout: CaptureLayout
    ex_gpu: GPUSpec
    tr_gpu: GPUSpec
    disk: dict
    tr_disk: dict
    store: dict


def resolve(scenario: Scenario, measured=None) -> Resolved:
    model = resolve_model(scenario)
    spec = layout_presets().get(scenario.layout)
    if spec is None:
        raise PlannerInputError("layout", scenario.layout, f"known layouts: {', '.join(layout_presets())}")
    layout = resolve_layout(spec, model, scenario.layers, scenario.layer_count, scenario.hidden_dtype,
                            scenario.draft_vocab_size, scenario.target_probs_topk)
    if measured is not None:   # a run's own figures (planner/runs/calibration.py Measured): bytes and file overhead
        layout, spec = measured.apply(scenario, layout, spec)
    return Resolved(model, spec, layout, resolve_gpu("extraction_gpu", scenario.extraction_gpu, scenario.custom_gpu),
                    resolve_gpu("training.gpu", scenario.training.gpu, scenario.custom_gpu),
                    _lookup(disk_presets(), "disk", scenario.disk),
                    _lookup(disk_presets(), "training.disk", scenario.training.disk),
                     _lookup(storage_price_presets(), "costs.storage", storage_preset_id(scenario)))


def in_force(scenario: Scenario, spec: LayoutSpec) -> Effective:
    return effective(spec, unit=scenario.unit, max_seq_len=scenario.max_seq_len,
                     capture_batch_size=scenario.capture_batch_size, sort_by_length=scenario.sort_by_length)


def stored(scenario: Scenario, cat: StatsCatalog | None, resolved: Resolved, eff: Effective, end: int | None = None,
           same_rows: StoragePhase | None = None, lengths: bool = False, reuse: Reuse | None = None) -> StoragePhase:
    return storage_phase(scenario, cat, resolved.layout, resolved.spec, eff, resolved.model.hidden_size,
                         resolved.model.vocab_size, end=end, same_rows=same_rows, lengths=lengths, reuse=reuse)


def _writers(s: Scenario, r: Resolved, total: Workload) -> tuple[int, int]:
    """The extraction nodes that hold a tensor-parallel group, and the nodes the run takes. Tensor
    parallelism depends on the model, the GPU and the sequence's bytes alone, so it is known before the
    nodes are planned. A group larger than the GPUs given is raised to one group (extraction()'s
    blocking 'tp-raised' finding: "so the plan uses {tp}"): its nodes are counted (issue 35: a 32-GPU
    group on nodes of 8 said "1 x 8 GPUs")."""
    tp = tensor_parallel_for(r.model, r.ex_gpu, total, s.weight_dtype, s.kv_dtype, held(r, capture_path(s, r)))
    nodes = s.extraction_node_count
    if tp is None:       # extraction() refuses the plan, naming why
        return nodes, nodes
    replicas = replicas_on_nodes(s.extraction_gpus, s.gpus_per_node, tp)
    if not replicas:
        nodes, replicas = max(nodes, -(-tp // s.gpus_per_node)), 1
    return writing_nodes(nodes, s.gpus_per_node, tp, replicas), nodes


def capture_path(scenario: Scenario, resolved: Resolved) -> CapturePath:
    """The capture path in force: the scenario's, else its layout's pipeline's (presets/capture_paths.yaml)."""
    return resolve_path(scenario.capture_path, resolved.spec.id, resolved.spec.pipeline)


def held(resolved: Resolved, path: CapturePath) -> float:
    """Bytes per token a row holds beside its KV cache while the path captures it."""
    return held_bytes_per_token(path, num_layers=resolved.model.num_layers, hidden_size=resolved.model.hidden_size,
                                captured_bytes=resolved.layout.hidden_state_bytes_per_token)


def capture(scenario: Scenario, resolved: Resolved, storage: StoragePhase, measured=None,
            reuse: Reuse | None = None) -> tuple[NodePlan, ExtractionPlan, float]:
    """The nodes the states are written on and the extraction run that writes them (and its MFU)."""
    mfu = scenario.throughput.prefill_mfu or resolved.ex_gpu.prefill_mfu
    path = capture_path(scenario, resolved)
    writers, ex_nodes = _writers(scenario, resolved, storage.total)
    nodes = node_plan(scenario, stored_bytes=storage.compressed, writers=writers, disk=resolved.disk,
                      training_disk=resolved.tr_disk, extraction_nodes=ex_nodes)
    ex = extraction(resolved.model, resolved.ex_gpu, scenario.throughput, storage.total, gpus=scenario.extraction_gpus,
                    weight_dtype=scenario.weight_dtype,
                    prefill_mfu=mfu, write_bytes=storage.compressed * (2 if scenario.staging_double_write else 1),
                    write_bytes_per_s=nodes.capture_write_bytes_per_s, write_bound=nodes.capture_write_bound,
                    nodes=nodes.extraction_nodes, gpus_per_node=scenario.gpus_per_node, kv_dtype=scenario.kv_dtype,
                    measured_tokens_per_s=measured.tokens_per_s_per_gpu if measured is not None else None,
                    path=path, held_bytes_per_token=held(resolved, path), stored_bytes=storage.compressed, reuse=reuse)
    return nodes, ex, mfu


def _item(cached: str, i: int, doc: str) -> property:
    """A read-only figure: item `i` of the phase result `cached` (computed on first read)."""
    return property(lambda self: getattr(self, cached)[i], doc=doc)


class Figures:
    """A scenario's phases without the plan around them (no quality, findings or assumptions), each
    worked out when first read: what trim's inner steps compare against the budgets (a storage budget
    reads the storage phase alone), under the names the Plan gives the same figures. Each figure is
    worked out once for this object (a lazy attribute, not a cache: it lives and dies with the object);
    `reuse`: a search's (planner/phases/reuse.py), for the training rows' sums."""

    def __init__(self, s: Scenario, r: Resolved, st: StoragePhase, eff: Effective, measured=None,
                 reuse: Reuse | None = None):
        self.scenario, self.storage, self._r, self._eff, self._measured = s, st, r, eff, measured
        self._reuse = reuse

    @property
    def storage_bytes_compressed(self) -> float:
        return self.storage.compressed

    @property
    def samples(self) -> float:
        return self.storage.total.rows

    @property
    def conversations(self) -> int:
        return int(self.storage.total.conversations)

    @functools.cached_property
    def _capture(self) -> tuple[NodePlan, ExtractionPlan, float]:
        return capture(self.scenario, self._r, self.storage, self._measured, self._reuse)

    nodes = _item("_capture", 0, "NodePlan: the nodes")
    extraction = _item("_capture", 1, "ExtractionPlan")
    mfu = _item("_capture", 2, "the prefill MFU in force")

    @functools.cached_property
    def transfer(self) -> TransferPlan:
        s = self.scenario
        egress = s.transfer.egress_usd_per_gb
        if egress is None:
            egress = self._r.store["egress_usd_per_gb"] if s.transfer.method == "object_store" else 0.0
        return transfer(self.storage.compressed, s.transfer, egress)

    @property
    def transfer_hours(self) -> float:
        return self.transfer.hours

    @functools.cached_property
    def _training(self) -> tuple[TrainingPlan, object, float]:
        return _training(self.scenario, self._r, self.storage, self._eff, self.nodes, self.extraction, self._reuse)

    training = _item("_training", 0, "TrainingPlan")
    recipe = _item("_training", 1, "the drafter's recipe (planner.presets.drafter_kinds.knobs)")
    drafter_params = _item("_training", 2, "the drafter's parameters")

    @functools.cached_property
    def cost_usd(self) -> CostPlan:
        # the states exist from the capture pass's first write to the last training epoch; a capture
        # that rides along the decode (the fixed mode) writes from the start
        ex, trn, tr, r = self.extraction, self.training, self.transfer, self._r
        held_hours = (ex.capture_hours or ex.wall_hours) + self.nodes.gather_hours + tr.hours + trn.offline_wall_hours
        return costs(self.scenario.costs, ex, trn, tr, ex_gpu=r.ex_gpu, tr_gpu=r.tr_gpu, store=r.store,
                     stored_bytes=self.storage.compressed, timeline_days=held_hours / 24)

    def kept(self, reuse: Reuse | None = None) -> Figures:
        """The same figures with `reuse` in place of this object's (a plan keeps its figures without its call's
        reuse: planner/planning.py Plan.own_figures), the phases worked out so far carried over."""
        out = Figures(self.scenario, self._r, self.storage, self._eff, self._measured, reuse)
        for name in ("_capture", "_training", "transfer", "cost_usd"):
            if name in self.__dict__:   # functools.cached_property keeps its value in the instance's __dict__
                out.__dict__[name] = self.__dict__[name]
        return out

    def moved(self, scenario: Scenario, phase: str) -> Figures:
        """The figures of `scenario`, one that differs from this one only in inputs read by `phase`
        ("costs", "training" or "transfer") and by the costs after it: the stored rows and the other phases
        are this object's, the presets are resolved again. The caller names the phase its input feeds
        (planner/decisions/verdict.py INPUTS); tests/unit/planner/decisions/test_verdict.py checks, for every
        input there, that the totals equal figures(s)'s to the bit."""
        kept = {"costs": ("_capture", "_training", "transfer"), "training": ("_capture", "transfer"),
                "transfer": ("_capture", "_training")}[phase]
        r = resolve(scenario, self._measured)
        out = Figures(scenario, r, self.storage, self._eff, self._measured, self._reuse)
        for name in kept:       # functools.cached_property keeps its value in the instance's __dict__
            out.__dict__[name] = getattr(self, name)
        return out

    @property
    def wall_days_offline(self) -> float:
        return (self.extraction.wall_hours + self.nodes.gather_hours + self.transfer.hours
                + self.training.offline_wall_hours) / 24


def figures(scenario: Scenario, catalog: StatsCatalog | None = None, reuse: Reuse | None = None) -> Figures:
    """The phases of `scenario` from storage to costs: the figures of plan(scenario), without its quality, findings,
    assumptions and band; `reuse`: a search's (planner/phases/reuse.py)."""
    cat = catalog or (get_catalog() if scenario.uniform is None else None)
    r = resolve(scenario)
    eff = in_force(scenario, r.spec)
    return Figures(scenario, r, stored(scenario, cat, r, eff, reuse=reuse), eff, reuse=reuse)


def _mix_row_sums(st: StoragePhase, num_anchors: int | None, window: int | None, reuse: Reuse | None = None):
    """The training rows' sums over the mix (drafter.row_sums per component, in the mix's order); a
    search's `reuse` keeps each component's (and its padding-free part) for the same rows."""
    def per_component(work: Workload, unpadded: Workload, row_lengths):
        def compute():
            base = reused(reuse, "row_base", (row_lengths,), (unpadded.conversations, num_anchors), lambda: row_base(
                row_lengths.lengths, row_lengths.weights, row_lengths.supervised, unpadded.conversations, num_anchors))
            return NO_ROWS if base is None else padded_row_sums(base, row_lengths.lengths, work.tokens, window)
        return reused(reuse, "row_sums", (row_lengths,), (unpadded.conversations, work.tokens, num_anchors, window),
                      compute)

    rows = NO_ROWS
    for w, u, rl in zip(st.works, st.unpadded, st.row_lengths, strict=True):
        if u.tokens:
            rows = rows + per_component(w, u, rl)
    return rows


def _training(s: Scenario, r: Resolved, st: StoragePhase, eff: Effective, nodes: NodePlan,
              ex: ExtractionPlan, reuse: Reuse | None = None) -> tuple[TrainingPlan, object, float]:
    """The drafter's training on the stored rows: (its plan, the recipe, the drafter's parameters)."""
    recipe = knobs(r.spec, r.model, captured_layers=len(r.layout.layers),
                   draft_layers=s.training.drafter_layers or eff.draft_layers, ttt_steps=s.training.ttt_steps,
                   num_anchors=s.training.num_anchors, block_size=s.training.block_size)
    shape = drafter_shape(r.model)
    estimate = estimated_drafter_params(shape, recipe)
    drafter_params = s.training.drafter_params or estimate
    rows = _mix_row_sums(st, recipe.num_anchors, recipe.attention_window, reuse)
    flops = epoch_flops(shape, recipe, rows, params_scale=drafter_params / estimate)
    longest = max((float(x.lengths.max()) for x in st.row_lengths if len(x.lengths)), default=0.0)
    max_row = float(eff.max_seq_len or longest)
    # the memory's row: the longest stored row (capped), a packed trainer's pack
    mem_row = min(max_row, longest) if longest else max_row
    trn = training(r.model, r.tr_gpu, s.training, st.total, flops, recipe, drafter_params=drafter_params,
                   prefill_mfu=r.tr_gpu.prefill_mfu, bytes_on_disk=st.compressed,
                   read_bytes_per_s=nodes.training_read_bytes_per_s, read_bound=nodes.training_read_bound,
                   nodes=nodes.training_nodes,
                   max_row_tokens=float(recipe.pack_tokens) if recipe.scope == "pack" and recipe.pack_tokens
                   else mem_row)
    d = s.disaggregated
    layout = r.layout
    trn = disaggregated(trn, d, st.total, capture_gpus=d.capture_gpus or ex.gpus_used,
                        train_gpus=d.train_gpus or s.training.gpus,
                        tensor_parallel=ex.tensor_parallel,
                        capture_tokens_per_s_per_gpu=ex.prefill_tokens_per_s_per_gpu,
                        regeneration_gpu_hours=ex.decode_hours * ex.gpus_used, train_gpu=r.tr_gpu,
                        train_mfu=s.training.mfu,
                        stream_bytes_per_token=layout.hidden_state_bytes_per_token + layout.scale_bytes_per_token,
                        node_network_gbps=s.node_network_gbps, network_efficiency=network_efficiency(s.node_network),
                        capture_gpus_per_node=s.gpus_per_node,
                        max_row_tokens=max_row)
    return trn, recipe, drafter_params
