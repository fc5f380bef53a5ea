"""The Assumptions table: every number the plan used, with its tag and the source of that very value
(the preset's source when the preset value is in use, "yours" when the scenario changed it)."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel

from planner.phases.nodes import nodes_text
from planner.phases.stored_bytes import CaptureLayout
from planner.presets.drafter_kinds import DRAFTER_KINDS, DrafterKnobs
from planner.presets.layouts import Effective
from planner.presets.specs import GPUSpec, ModelSpec, efficiency, efficiency_source, link_efficiency
from planner.scenario import Scenario
from planner.scenario.inputs import declared, preset_of, shown_value, value_at

if TYPE_CHECKING:   # the plans this context carries (their phases import this module)
    from planner.phases.extraction import ExtractionPlan
    from planner.phases.quality import QualityPlan
    from planner.phases.training import TrainingPlan


class Assumption(BaseModel):
    name: str
    value: str
    tag: str            # published | third-party | estimate | measured | yours
    source: str


@dataclass(frozen=True)
class AssumptionContext:
    """What the plan resolved from the scenario: the presets in use and the derived values."""

    scenario: Scenario
    model: ModelSpec
    layout: CaptureLayout
    extraction_gpu: GPUSpec
    training_gpu: GPUSpec
    disk: dict                  # hardware.yaml disks entry
    store: dict                 # hardware.yaml storage_prices entry
    prefill_mfu: float          # in use: the scenario's or the extraction GPU's preset
    drafter_params: float
    catalog_mix: bool           # per-component statistics from the catalog (not a uniform mix)
    effective: Effective | None = None   # the pipeline values in force (scenario's or layout's)
    recipe: DrafterKnobs | None = None    # the trainer's recipe in force
    extraction: ExtractionPlan | None = None   # the ExtractionPlan (scheduler caps and calibration in force)
    quality: QualityPlan | None = None
    training: TrainingPlan | None = None     # its bounds and band


def _recipe_row(c: AssumptionContext, r: DrafterKnobs, name: str, key: str, value: str, default) -> Assumption:
    """One recipe value of the recipe `r` in force (c.recipe, set): published (or an estimate) from the layout's
    pipeline, SpecForge's where the pipeline has no default, or yours."""
    if key in r.from_layout and default is not None:
        return Assumption(name=name, value=value, tag="estimate" if default.source.startswith("estimate")
                          else "published", source=f"{c.layout.name}: {default.source}")
    if default is None and key not in r.from_layout and getattr(c.scenario.training, key) is None:
        return Assumption(name=name, value=value, tag="estimate", source="no pipeline default: SpecForge's")
    return Assumption(name=name, value=value, tag="yours",
                      source="set in the scenario" + (f"; the layout's default: {default.source}"
                                                      if default is not None else ""))


def _recipe(c: AssumptionContext) -> list[Assumption]:
    """The trainer's recipe (TTT steps, anchors, block): published with the pipeline's code line when
    the layout supplies it, yours when the scenario sets it."""
    r, t = c.recipe, c.layout.spec.training
    if r is None:
        return []
    shown = []
    if not DRAFTER_KINDS.lookup(r.kind).drafts_blocks:
        shown.append(("training-time-test steps", "ttt_steps", f"{r.ttt_steps}", t.ttt_steps))
    else:
        shown.append(("DFlash anchors", "num_anchors",
                      f"{r.num_anchors} per {'pack' if r.scope == 'pack' else 'sample'}",
                      t.num_anchors))
        shown.append(("DFlash block size", "block_size", f"{r.block_size}", t.block_size))
    out = [_recipe_row(c, r, *row) for row in shown]
    head = "the full vocabulary" if r.head_vocab == c.model.vocab_size else f"a {r.head_vocab:,}-token draft vocabulary"
    out.append(Assumption(name="drafter head", value=f"{head}, {r.head_passes} passes"
                          + ("" if not r.teacher_vocab else f"; teacher pass over {r.teacher_vocab:,} tokens"),
                          tag="estimate" if t.head_vocab.source.startswith("estimate") else "published",
                          source=f"{c.layout.name}: {t.head_vocab.source}; {t.head_passes.source}; {t.teacher.source}"))
    if r.scope == "pack":
        out.append(Assumption(name="training rows", value=f"packed into {r.pack_tokens:,}-token sequences, each padded "
                              "to it", tag="published", source=f"{c.layout.name}: {t.scope.source}"))
    return out


def _paired(name: str, value: float, preset: float, source: str, tag: str = "estimate",
            shown: str | None = None) -> Assumption:
    """The value in use (`shown` as text) with its own source: the preset's, or the user's when it differs."""
    shown = f"{value:g}" if shown is None else shown
    if value == preset:
        return Assumption(name=name, value=shown, tag=tag, source=source)
    return Assumption(name=name, value=shown, tag="yours",
                      source=f"set in the scenario; the preset's {preset:g}: {source}")


def declared_rows(s: Scenario) -> dict[str, Assumption]:
    """The plain rows, one for each input that names a `row` (planner/scenario/inputs.py) and is in force for
    this scenario (its shown rule holds), by path: the value in use against the preset's."""
    out = {}
    for d, preset, source in _row_inputs(type(s)):
        i = d.input
        if i.shown_when and value_at(s, i.shown_when[0]) not in i.shown_when[1]:
            continue
        value = value_at(s, d.path)
        out[d.path] = _paired(i.row, value, preset, source, shown=shown_value(i, value))
    return out


@functools.cache
def _row_inputs(model: type) -> tuple:
    """The inputs that name a `row`, each with the preset value and source it is compared with (the
    declarations and the presets ship with the package: walked once per process, not per plan)."""
    return tuple((d, *preset_of(d)) for d in declared(model) if d.input.row is not None)


def _pipeline_values(c: AssumptionContext) -> list[Assumption]:
    """Sample unit, cap, capture batch and padding: tagged published with the pipeline's code line
    when they come from the layout, yours when the scenario sets them."""
    e = c.effective
    if e is None:
        return []
    d = c.layout.spec.defaults
    shown = {
        "sample unit": ("unit", "one row per assistant turn (the prefix through it)" if e.unit == "turn"
                        else "one row per conversation", d.unit.source),
        "max sequence length": ("max_seq_len", (f"{e.max_seq_len:,} tokens" if e.max_seq_len else "none") +
                                (", longer rows skipped" if e.overflow == "skip" else ""), d.max_seq_len.source),
        "capture batch": ("capture_batch_size", f"{e.capture_batch_size} rows" + (
            {"batch": ", padded to the batch's longest row", "max_length": ", every row padded to the cap",
             "none": ", each row stored at its own length"}[e.padding]), d.capture_batch_size.source
            + ("; " + d.padding.source if e.padding != "none" else "")),
    }
    out = []
    for name, (key, value, source) in shown.items():
        if key in e.from_layout:
            out.append(Assumption(name=name, value=value, tag="published", source=f"{c.layout.name}: {source}"))
        else:
            out.append(Assumption(name=name, value=value, tag="yours", source=f"set in the scenario; the layout's "
                                  f"default: {source}"))
    return out


def _quality(c: AssumptionContext) -> list[Assumption]:
    """The quality estimate's inputs: the curve and its reference, the transfer between families,
    the serving workload, the regeneration gain (planner/presets/quality.yaml)."""
    from planner.phases.quality import quality_presets
    qp, s = c.quality, c.scenario
    if qp is None:
        return []
    q = quality_presets()
    d = q.drafters[qp.drafter]
    transfer = s.quality.domain_transfer
    shares = ", ".join(f"{f} {v:.0%}" for f, v in qp.workload.items() if v > 0)
    return [
        Assumption(name="drafter quality curve", value=f"{d.name}: tau = 1 + A D / (D + D_half), D_half "
                   f"{d.scaling.fitted['d_half_tokens'] / 1e6:,.1f}M tokens; levels from {d.reference.label}",
                   tag="estimate", source=f"{d.scaling.source}; planner/presets/quality.yaml"),
        _paired("transfer between families", transfer if transfer is not None else q.transfer.value, q.transfer.value,
                q.transfer.source),
        Assumption(name="serving workload", value=shares, tag="yours" if isinstance(s.quality.workload, dict)
                   else "estimate",
                   source="set in the scenario" if isinstance(s.quality.workload, dict) else
                   "the mix's own training-token shares per family" if s.quality.workload == "mix" or s.uniform
                   else "the full mix's family shares (the catalog's default mix at its measured lengths): fixed, "
                        "so trimming or dropping a component never changes what is served"),
        Assumption(name="regenerated responses", value="regenerated, as the reference runs were" if s.regenerate
                   else f"reused: tau / {1 + q.regeneration.value:g} (low end / {1 + q.regeneration.range[1]:g})",
                   tag="published", source=q.regeneration.source),
        *_harness(qp, s),
    ]


def _harness(qp, s) -> list[Assumption]:
    """Where tau is measured, the batches the speedup is given at (planner/presets/harness.yaml) and
    your own runs when given."""
    from planner.phases.harness import fitted, group_of, harness_presets
    h, f = harness_presets(), fitted()
    g = group_of(qp.drafter)
    sq = s.quality
    mine = lambda v, d: "yours" if v != d else "estimate"  # noqa: E731
    fields = type(sq).model_fields
    n_pairs = len(h.engine_pairs)
    return [
        Assumption(name="tau measured on", value=f"{qp.harness}: acceptance x "
                   f"{f.engine_factor[f'{qp.eval_engine}/{g}']:.3f} x {f.temperature_factor:.3f}^T",
                   tag=mine(sq.eval_engine, fields["eval_engine"].default),
                   source=f"fitted on {n_pairs} published pairs of one drafter on two harnesses and "
                          f"{len(h.temperature_pairs)} temperature pairs; K: {h.engines[qp.eval_engine].source}; "
                          "planner/presets/harness.yaml"),
        Assumption(name="speedup at the batch", value=f"speedup given at batch {qp.serving_batch:g}; payback at the "
                   f"fleet's batch {qp.fleet_batch:g} (x_half {f.batch_x_half:.0f} tokens a step, p {f.batch_p:.2f})",
                   tag=mine((sq.serving_batch, sq.fleet_batch), (fields["serving_batch"].default,
                                                                    fields["fleet_batch"].default)),
                   source=f"fitted on {len(h.batch_sweeps)} published speedup-vs-batch sweeps "
                          "(planner/presets/harness.yaml)"),
        _served(qp, sq, mine, fields),
        _drafter_spread(qp, sq),
    ] + ([Assumption(name="your own runs", value=f"{len(sq.points)} point(s): the levels and curve refitted on "
                     "those of this drafter kind", tag="yours", source="set in the scenario (--quality-points)")]
         if sq.points else [])


def _drafter_spread(qp, sq) -> Assumption:
    """The acceptance band's drafter-quality term (quality.yaml drafter_spread): its basis, in the band's text."""
    from planner.phases.quality import quality_presets
    d = quality_presets().drafter_spread
    keep = 1 - (0.0 if sq.points else d.value)
    value = ("none: your own runs set the levels" if sq.points else
             f"the acceptance band's low end reaches tau - 1 x {keep:.3f} of the served centre "
             f"(tau {qp.acceptance_length:.2f}, band {qp.acceptance_low:.2f}-{qp.acceptance_high:.2f}): the drafters "
             "users train and serve land up to that far below one trained like the reference run")
    return Assumption(name="the band's drafter-quality term", value=value, tag="yours" if sq.points else "third-party",
                      source=f"fitted on {', '.join(d.fit_sources)} only (bench/users_reports.yaml split.fit; the "
                             "scored reports never); planner/presets/quality.yaml drafter_spread")


def _served(qp, sq, mine, fields) -> Assumption:
    """The speculative cycle as served (planner/phases/serving.py, planner/presets/serving.yaml)."""
    from planner.phases.serving import serving_presets
    p = serving_presets()
    tree = f"SGLang tree topk {qp.topk}, {qp.num_draft_tokens} tokens verified" if qp.topk > 1 else \
        f"a chain, {qp.num_draft_tokens} tokens verified"
    return Assumption(name="the cycle as served", value=f"{tree}, TP {qp.serving_tp}: the cycle costs "
                      f"x{qp.served_cost:.2f} the speedup pairs' (dense 8B, TP 1)",
                      tag=mine((sq.topk, sq.num_draft_tokens, sq.serving_tp), tuple(
                          fields[k].default for k in ("topk", "num_draft_tokens", "serving_tp"))),
                      source=f"planner/phases/serving.py, a roofline of each step; MoE experts E (1 - (1 - k/E)^n) "
                             f"(arXiv 2505.19645); estimates: {p['forward_overhead_us']['value']} us a forward, "
                             f"all-reduce {p['interconnect']['nvlink']['allreduce_us']} us on NVLink and "
                             f"{p['interconnect']['pcie']['allreduce_us']} us on PCIe, routing overlap "
                             f"{p['routing_overlap']['range'][0]}-{p['routing_overlap']['range'][1]} "
                             "(planner/presets/serving.yaml)")


_BOUND_NAMES = {"compute": "the trainers' compute (FLOPs at the training MFU)", "supply": "the capture supply",
                "io": "the reader's I/O", "overhead": "the per-sample overhead floor"}


def _training_basis(c: AssumptionContext) -> list[Assumption]:
    """The training rate's basis: the per-sample overhead floor (its value, the runs it is fitted on),
    which bound binds each mode, and the band on the hours (planner/phases/training.py)."""
    from planner.phases.training import floor_extrapolation, overhead_s_per_token, step_overhead_s_per_pass
    t = c.training
    if t is None:
        return []
    binds = "; ".join(f"{mode}: {_BOUND_NAMES.get(b, b)}" for mode, b in t.bounds.items())
    if t.overhead_term in ("", "per token"):
        floor = overhead_s_per_token()
        head = (f"{floor:.4g} s per training token per trainer GPU ({t.gpus} x {t.gpu}: at most "
                f"{t.gpus / floor:,.0f} tok/s)")
    else:   # issue 33: EAGLE's floor per optimizer step x TTT step, a packed DFlash trainer's per step
        passes = f" x {t.ttt_steps or 1} TTT passes" if "TTT" in t.overhead_term else ""
        head = (f"{step_overhead_s_per_pass():.4g} s {t.overhead_term} per trainer GPU "
                f"({t.optimizer_steps_per_epoch:,.0f} steps{passes} an epoch on {t.gpus} x {t.gpu}: at most "
                f"{t.stage_rates.get('offline', {}).get('overhead', 0.0):,.0f} tok/s)")
    value = (f"{head}; bound by {binds}; band: rate x{t.rate_low:.2f}-{t.rate_high:.2f}, "
             f"hours x{1 / t.rate_high:.2f}-{1 / t.rate_low:.2f} "
             f"(offline {t.offline_wall_hours_low:,.1f}-{t.offline_wall_hours_high:,.1f} h)")
    if t.bounds.get("offline") != "compute":
        value += "; the training MFU does not set the offline hours"
    extra = floor_extrapolation(t.gpu) if t.overhead_term in ("", "per token") else ""
    if extra:
        value += f"; {extra}"
    return [Assumption(name="training per-sample floor and band", value=value, tag="estimate",
                       source=_training_source())]


@functools.cache
def _training_source() -> str:
    """The floor's and the band's source, from the preset (read once per process)."""
    from planner.presets.specs import load_preset
    preset = load_preset("training_throughput.yaml")
    step = preset["step_overhead"]
    return (f"the per-token floor (DFlash by rows) fitted on {', '.join(preset['overhead']['rows'])}: "
            f"{preset['overhead']['source']}; the per-step floor (EAGLE, packed trainers) fitted on "
            f"{', '.join(step['rows'])}: {step['source']}; the band: "
            f"90% prediction interval of the {len(preset['rows'])} published runs' log(measured / "
            "predicted) (planner/presets/training_throughput.yaml)")


def _engine_caps(c: AssumptionContext) -> Assumption:
    """The scheduler caps on the decode batch: the engine's defaults for the GPU's memory, or the user's."""
    from planner.presets.specs import engine_defaults
    t = c.scenario.throughput
    seqs, tokens, source = engine_defaults(c.extraction_gpu)
    value = f"max_num_seqs {t.max_batch or seqs:,}, max_num_batched_tokens {t.max_batched_tokens or tokens:,}"
    if t.max_batch is None and t.max_batched_tokens is None:
        return Assumption(name="scheduler caps", value=value, tag="published", source=source)
    return Assumption(name="scheduler caps", value=value, tag="yours", source=f"set in the scenario; the engine's "
                      f"default for {c.extraction_gpu.id}: {seqs:,} / {tokens:,} ({source})")


def _take(plain: dict[str, Assumption], path: str) -> list[Assumption]:
    """The declared row of `path` (planner/scenario/inputs.py), placed here and taken from those placed last."""
    return [plain.pop(path)] if path in plain else []


def _model_layout_rows(c: AssumptionContext) -> list[Assumption]:
    """The target model, the capture layout and the pipeline's values in force, the responses, the lengths."""
    s, model, layout = c.scenario, c.model, c.layout
    A = Assumption
    return [
        A(name="target model", value=f"{model.id}: hidden {model.hidden_size}, {model.num_layers} layers, "
          f"{model.params / 1e9:,.2f}B params", tag=model.tag, source=model.source),
        A(name="capture layout", value=f"{layout.name}; layers {layout.layers}; {layout.hidden_dtype}; "
          f"{layout.bytes_per_token:,} bytes/token + {layout.file_overhead_bytes:,.0f} bytes/file",
          tag="published", source=layout.source),
        *_pipeline_values(c),
        A(name="responses", value=(f"regenerated by the target, x{s.response_multiplier:g} length" if s.regenerate
                                   else "reused (prefill-only extraction)"), tag="yours",
          source="speculators' docs ask for on-policy (regenerated) responses"),
        A(name="tokens per sample", value=f"x{s.length_scale:g} the catalog's counts",
          tag="estimate" if s.length_scale == 1 else "yours",
          source="catalog lengths are ~cl100k tokens; a Qwen tokenizer differs by about +-10%"),
    ]


def _hardware_rows(c: AssumptionContext, plain: dict[str, Assumption]) -> list[Assumption]:
    """The GPUs, nodes, placement, weights' dtype and the extraction disk (planner/phases/nodes.py)."""
    s, ex_gpu, tr_gpu, mine = c.scenario, c.extraction_gpu, c.training_gpu, "yours"
    A = Assumption
    return [
        *_take(plain, "compression"),
        A(name="extraction GPU", value=f"{s.extraction_gpus} x {ex_gpu.id} ({ex_gpu.memory_gb:g} GB, "
          f"{ex_gpu.bandwidth_tb_s:g} TB/s, {ex_gpu.bf16_tflops:g} BF16 TFLOPS)", tag="published",
          source=ex_gpu.source),
        A(name="training GPU", value=f"{s.training.gpus} x {tr_gpu.id}", tag="published", source=tr_gpu.source),
        A(name="nodes", value=f"extraction {nodes_text(s.extraction_node_count, s.gpus_per_node, s.extraction_gpus)}, "
          f"training {nodes_text(s.training_node_count, s.training.gpus_per_node, s.training.gpus)}",
          tag=mine if s.extraction_nodes or
          s.training.nodes else "estimate",
          source="as given; unset, as many nodes of the GPUs per node (8, a typical GPU server) as the GPUs need"),
        A(name="placement", value=("each node's local disk, a fixed per-node split gathered to the training nodes"
                                   if s.placement == "local" else "a shared filesystem"), tag=mine,
          source="planner/phases/nodes.py: a global shuffle every epoch would need each training node to hold "
                 "every byte"),
        *_take(plain, "shared_fs_gb_s"),
        A(name="weights", value=s.weight_dtype, tag=mine, source="fp8 halves the weight bytes and uses FP8 peak"),
        A(name="extraction disk", value=f"{c.disk['name']}: write {c.disk['write_gb_s']:g} GB/s", tag="estimate",
          source=c.disk["source"]),
    ]


def _price(s: Scenario, c: AssumptionContext) -> float:
    """The storage price in use: the scenario's, else its store preset's."""
    price = s.costs.storage_usd_per_tb_month
    return price if price is not None else c.store["usd_per_tb_month"]


def _storage_rows(c: AssumptionContext) -> list[Assumption]:
    """The storage price and how long the states are held (planner/phases/costs.py)."""
    s, mine = c.scenario, "yours"
    A = Assumption
    return [
        A(name="storage price", value=f"{c.store['name']} ({c.store['id']}): "
          f"${_price(s, c):g}/TB-month",
          tag=mine if s.costs.storage_usd_per_tb_month is not None or s.costs.storage else "estimate",
          source=c.store["source"] + ("" if s.costs.storage else "; unset: where the placement puts the states "
                                      "(local disks, a shared filesystem's network volume, "
                                      "the transfer's object store)")),
        A(name="storage time held", value=f"{s.costs.storage_months:g} months" if s.costs.storage_months is not None
          else f"the plan's timeline + {s.costs.keep_days:g} days kept", tag=mine,
          source="as given" if s.costs.storage_months is not None else "from the capture pass's first write to the "
          "last training epoch (extraction capture, gather, transfer, offline training), plus keep_days; "
          "a billing month is 30.44 days"),
    ]


def _training_rows(c: AssumptionContext, plain: dict[str, Assumption]) -> list[Assumption]:
    """The trainer's efficiency and basis, the drafter's size, its recipe, quality and epochs
    (planner/phases/training.py, planner/presets/drafter_kinds.py, planner/phases/quality.py)."""
    s, mine = c.scenario, "yours"
    A = Assumption
    return [
        *_take(plain, "training.mfu"),
        *_training_basis(c),
        A(name="drafter parameters", value=f"{c.drafter_params / 1e9:,.2f}B",
          tag=mine if s.training.drafter_params else "estimate",
          source="the draft layers at the target's width, heads and MLP width, plus the fc from the captured "
                 "layers (planner/presets/drafter_kinds.py); the Qwen3.6-27B 5-layer DFlash drafter comes to ~1.8B"),
        *_recipe(c),
        *_quality(c),
        A(name="epochs", value=f"{s.training.epochs:g}", tag=mine,
          source="DFlash recipes use 6 epochs; ~500K samples for 2-3 epochs is a maintainer's rule of thumb"),
    ]


def _throughput_rows(c: AssumptionContext, plain: dict[str, Assumption]) -> list[Assumption]:
    """The extraction's throughput: the article's fixed rate, or the roofline's efficiencies, the
    engine's caps and the calibrations (planner/phases/extraction.py)."""
    s, ex_gpu, A = c.scenario, c.extraction_gpu, Assumption
    t = s.throughput
    if t.mode == "fixed":
        preset = (efficiency("fixed_tokens_per_s"), efficiency("fixed_batching"))
        return [A(name="throughput", value=f"fixed {t.tokens_per_s:g} tok/s x {t.batching:g} batching",
                  tag="yours", source=(efficiency_source("fixed_tokens_per_s") if (t.tokens_per_s, t.batching) == preset
                                       else f"set in the scenario; the preset's {preset[0]:g} tok/s x {preset[1]:g}: "
                                            f"{efficiency_source('fixed_tokens_per_s')}"))]
    return [
        _paired("prefill MFU", c.prefill_mfu, ex_gpu.prefill_mfu,
                f"{ex_gpu.id} preset; {efficiency_source('prefill_mfu')}"),
        *_take(plain, "throughput.decode_bandwidth_efficiency"),
        *_take(plain, "throughput.tensor_parallel_efficiency"),
        A(name="usable GPU memory", value=f"{efficiency('memory_usable_fraction'):g} x memory - "
          f"{efficiency('memory_runtime_gb'):g} GB", tag="estimate",
          source=efficiency_source("memory_usable_fraction")),
        _engine_caps(c),
        _paired("decode compute efficiency", t.decode_mfu or efficiency("decode_mfu"), efficiency("decode_mfu"),
                efficiency_source("decode_mfu")),
        A(name="KV cache", value=s.kv_dtype, tag="estimate" if s.kv_dtype == "bf16" else "yours",
          source="vLLM --kv-cache-dtype auto keeps the model's bf16; fp8 halves the KV bytes per token"),
        *_calibration_rows(c),
    ]


def _calibration_rows(c: AssumptionContext) -> list[Assumption]:
    """issue 22: one row per phase when the phases are calibrated apart."""
    cals = [x for x in (getattr(c.extraction, "prefill_calibration", None),
                        getattr(c.extraction, "decode_calibration", None)) if x is not None] \
        or [x for x in (getattr(c.extraction, "calibration", None),) if x is not None]
    out = []
    for cal in cals:
        name = f"{cal.phase} calibration" if cal.phase else "calibration"
        value = (f"{cal.row}: measured {cal.measured:,.0f} / roofline {cal.roofline:,.0f} {cal.metric} tok/s "
                 f"per GPU = x{cal.factor:.2f}") if cal.row else cal.note
        if cal.extrapolated and cal.band[1]:   # a transfer, or the roofline alone: its band too
            value += (f"{'; ' + cal.note if cal.row else ''}, "
                      f"the hours x{math.exp(cal.band[0]):.2f}-{math.exp(cal.band[1]):.2f}")
        out.append(Assumption(name=name, value=value, tag="third-party" if cal.row and not cal.extrapolated
                              else "estimate", source=f"{cal.source} ({cal.date}); planner/presets/throughput.yaml"
                              if cal.row else "planner/presets/throughput.yaml"))
    return out


def _model_rows(c: AssumptionContext) -> list[Assumption]:
    """What the target's architecture adds: linear attention's state, the forward's parameters, MoE
    decode, vLLM's staging write and the model's own estimates (planner/presets/specs.py)."""
    s, model, A, out = c.scenario, c.model, Assumption, []
    if model.linear_attention_layers:
        out.append(A(name="linear-attention state", value=f"{model.linear_state_bytes_each():,} bytes per layer and "
                     f"sequence x {model.linear_attention_layers} layers", tag=model.tag if not
                     model.linear_state_bytes_per_layer else "yours",
                     source="conv (kernel-1) x (2 key + value dims) in bf16 + value heads x value dim x key dim in "
                            f"{model.linear_state_dtype} (vLLM gated_delta_net_state_shape; {model.source})"))
    if model.vision_params or model.mtp_params or not model.tied_embeddings:
        out.append(A(name="forward parameters",
                     value=f"{model.forward_params() / 1e9:,.2f}B of {model.params / 1e9:,.2f}B "
                     f"(without vision {model.vision_params / 1e9:,.2f}B, MTP {model.mtp_params / 1e9:,.2f}B, input "
                     f"embedding {model.embedding_params() / 1e9:,.2f}B)",
                     tag="estimate" if model.estimates else model.tag,
                     source="a text forward runs neither the vision tower nor the MTP head; an untied embedding is a "
                            "lookup" + (f"; {model.estimates}" if model.estimates else "")))
    if model.active_params < model.params:
        out.append(A(name="MoE decode", value="every step reads all expert weights", tag="estimate",
                     source="at large batch nearly every expert is hit; conservative for small batches"))
    if s.staging_double_write:
        out.append(A(name="staging", value="every byte written twice", tag="published",
                     source="vLLM writes to a staging path and the client moves the file; across filesystems "
                            "that is a second write"))
    if model.estimates:
        out.append(A(name="model estimate", value=model.estimates, tag="estimate", source=model.source))
    return out


def _transfer_rows(c: AssumptionContext) -> list[Assumption]:
    """The transfer to the training site: shipped drives or a link at its efficiency (planner/phases/transfer.py)."""
    tr = c.scenario.transfer
    if tr.method == "drives":
        return [Assumption(name="transfer", value=f"shipped drives, {tr.drive_days:g} days", tag="yours",
                           source="the days you gave for shipping the drives")]
    if tr.method != "none":
        link = link_efficiency()
        return [_paired("transfer", tr.efficiency, float(link["value"]), link["source"],
                        shown=f"{tr.method}: {tr.link_gbps:g} Gb/s x {tr.efficiency:g} efficiency")]
    return []


def assumptions(c: AssumptionContext) -> list[Assumption]:
    """Every row of the Assumptions table, phase by phase; the declared rows (planner/scenario/inputs.py) not
    placed beside their phase's come last, then the catalog's."""
    plain = declared_rows(c.scenario)      # placed below where they were; any other declared row goes last
    out = [*_model_layout_rows(c), *_hardware_rows(c, plain), *_storage_rows(c), *_training_rows(c, plain),
           *_throughput_rows(c, plain), *_model_rows(c), *_transfer_rows(c), *plain.values()]
    if c.catalog_mix:
        out.append(Assumption(name="mix statistics", value="per-component length distributions (DuckDB catalog)",
                              tag="estimate", source="datasets_meta/components.yaml: row counts are a reconstruction "
                              "of the 913,786 mix; token counts in ~cl100k (Qwen differs ~+-10%)"))
    return out
