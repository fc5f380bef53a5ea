"""plan(scenario) -> Plan: the one call the app, the CLI and the tests go through."""
from __future__ import annotations

import math

from pydantic import BaseModel

from planner import __version__
from planner.distributions import fan_out, point_mass, shortest
from planner.errors import PlannerInputError
from planner.extraction import extraction
from planner.scenario import MixItem, Scenario
from planner.specs import GPUSpec, disk_presets, gpu_presets, hardware, layout_presets, model_presets, storage_price_presets
from planner.catalog.stats import StatsCatalog, get_catalog
from planner.storage import resolve_layout, workload
from planner.training import estimate_drafter_params, training
from planner.transfer import transfer


class Assumption(BaseModel):
    name: str
    value: str
    tag: str            # published | third-party | estimate | measured | yours
    source: str


class ComponentPlan(BaseModel):
    id: str
    name: str
    family: str
    origin: str
    rows: int                   # conversations selected
    training_rows: float        # rows after fan-out (files written)
    tokens: float               # stored tokens
    truncated_share: float      # share of tokens cut by the sequence cap
    output_tokens: float
    storage_bytes: float
    share_of_rows: float
    share_of_bytes: float
    mean_tokens: float
    tokens_tag: str
    notes: list[str] = []       # the warnings that concern this component (overlap, licence, cap, rows)


class ExtractionPlan(BaseModel):
    gpu: str
    mode: str
    gpus: int
    gpus_used: int
    tensor_parallel: int
    replicas: int
    decode_batch: int
    gpu_hours: float
    wall_hours: float
    decode_hours: float
    capture_hours: float
    prefill_tokens_per_s_per_gpu: float
    decode_tokens_per_s_per_gpu: float
    bound: str
    decode_bound: str
    capture_bound: str


class TrainingPlan(BaseModel):
    gpu: str
    gpus: int
    epochs: float
    drafter_layers: int
    drafter_params: float
    flops_per_token: float
    offline_gpu_hours: float
    offline_wall_hours: float
    offline_bound: str
    online_gpu_hours: float
    online_wall_hours: float
    breakeven_epochs: float | None


class CostPlan(BaseModel):
    extraction: float
    regeneration: float
    transfer: float
    storage: float
    training_offline: float
    training_online: float
    total_offline: float
    total_online: float
    extraction_usd_per_gpu_hour: float
    training_usd_per_gpu_hour: float
    storage_usd_per_tb_month: float


class Plan(BaseModel):
    planner_version: str
    scenario: Scenario
    model: str
    layout: str
    layers: list[int]
    hidden_dtype: str
    conversations: int
    samples: float              # training rows (files); = conversations in the conversation unit
    tokens: float
    uncapped_tokens: float
    output_tokens: float
    bytes_per_token: int
    hidden_state_bytes_per_token: int
    file_overhead_bytes: float
    storage_bytes: float
    storage_bytes_compressed: float
    extraction: ExtractionPlan
    transfer_method: str
    transfer_hours: float
    training: TrainingPlan
    cost_usd: CostPlan
    wall_days_offline: float
    wall_days_online: float
    components: list[ComponentPlan]
    warnings: list[str]
    assumptions: list[Assumption]

    def to_json_dict(self) -> dict:
        """The CLI's JSON contract: bytes and hours, rounded only where they are counts."""
        e, t, c = self.extraction, self.training, self.cost_usd
        return {
            "planner_version": self.planner_version,
            "preset": self.scenario.preset,
            "model": self.model, "layout": self.layout, "layers": self.layers, "hidden_dtype": self.hidden_dtype,
            "conversations": self.conversations,
            "samples": round(self.samples),
            "tokens": round(self.tokens),
            "uncapped_tokens": round(self.uncapped_tokens),
            "bytes_per_token": self.bytes_per_token,
            "hidden_state_bytes_per_token": self.hidden_state_bytes_per_token,
            "storage_bytes": round(self.storage_bytes),
            "storage_bytes_compressed": round(self.storage_bytes_compressed),
            "compression": self.scenario.compression,
            "output_tokens": round(self.output_tokens),
            "extraction": {
                "gpu": e.gpu, "gpus": e.gpus, "gpus_used": e.gpus_used, "mode": e.mode,
                "gpu_hours": e.gpu_hours, "wall_hours": e.wall_hours,
                "decode_hours": e.decode_hours, "capture_hours": e.capture_hours,
                "prefill_tokens_per_s_per_gpu": e.prefill_tokens_per_s_per_gpu,
                "decode_tokens_per_s_per_gpu": e.decode_tokens_per_s_per_gpu,
                "decode_batch": e.decode_batch, "tensor_parallel": e.tensor_parallel, "bound": e.bound,
            },
            "transfer_method": self.transfer_method,
            "transfer_hours": self.transfer_hours,
            "training": {
                "gpu": t.gpu, "gpus": t.gpus, "epochs": t.epochs, "drafter_params": t.drafter_params,
                "offline_gpu_hours": t.offline_gpu_hours, "offline_wall_hours": t.offline_wall_hours,
                "offline_bound": t.offline_bound,
                "online_gpu_hours": t.online_gpu_hours, "online_wall_hours": t.online_wall_hours,
                "breakeven_epochs": t.breakeven_epochs,
            },
            "cost_usd": {
                "extraction": c.extraction, "regeneration": c.regeneration, "transfer": c.transfer,
                "storage": c.storage, "training_offline": c.training_offline,
                "training_online": c.training_online, "total_offline": c.total_offline,
                "total_online": c.total_online,
            },
            "wall_days_offline": self.wall_days_offline,
            "wall_days_online": self.wall_days_online,
            "components": [{"id": x.id, "rows": x.rows, "training_rows": round(x.training_rows),
                            "tokens": round(x.tokens), "storage_bytes": round(x.storage_bytes),
                            "share_of_rows": x.share_of_rows, "share_of_bytes": x.share_of_bytes,
                            "truncated_share": x.truncated_share} for x in self.components],
            "warnings": self.warnings,
            "assumptions": [a.model_dump() for a in self.assumptions],
        }


def resolve_model(s: Scenario):
    if s.model == "custom":
        if s.custom_model is None:
            raise PlannerInputError("model", "custom", "a custom model needs custom_model (hidden size, layers, heads ...)")
        return s.custom_model
    models = model_presets()
    if s.model not in models:
        raise PlannerInputError("model", s.model, f"known models: {', '.join(models)} or custom")
    return models[s.model]


def resolve_gpu(field: str, gpu_id: str, custom: GPUSpec | None) -> GPUSpec:
    if gpu_id == "custom":
        if custom is None:
            raise PlannerInputError(field, "custom", "a custom GPU needs custom_gpu (memory, bandwidth, TFLOPS)")
        return custom
    gpus = gpu_presets()
    if gpu_id not in gpus:
        raise PlannerInputError(field, gpu_id, f"known GPUs: {', '.join(gpus)} or custom")
    return gpus[gpu_id]


def _lookup(table: dict, field: str, key: str) -> dict:
    if key not in table:
        raise PlannerInputError(field, key, f"known: {', '.join(table)}")
    return table[key]


def resolved_mix(s: Scenario, cat: StatsCatalog) -> list[MixItem]:
    """The scenario's components: its own list, or the catalog's default mix when it gives none."""
    return list(s.mix) if s.mix is not None else [MixItem(id=i, rows=r) for i, r in cat.default_mix()]


def _mix_items(s: Scenario, cat: StatsCatalog):
    """[(id, name, family, origin, tag, conversations, conv atoms, turn atoms)] for the scenario's mix."""
    if s.uniform is not None:
        u = s.uniform
        conv = point_mass(u.tokens, u.response_tokens, u.turns)
        return [("uniform", f"{u.samples:,} x {u.tokens:g} tokens", "uniform", "yours", "yours", u.samples,
                 conv, fan_out(conv))]
    out = []
    for i, item in enumerate(resolved_mix(s, cat)):
        cid, rows = item.id, item.rows
        comp = cat.components.get(cid)
        if comp is None:
            raise PlannerInputError(f"mix[{i}].id", cid, f"known components: {', '.join(cat.components)}")
        conv, turn = comp.conversation, comp.turn
        if item.selection == "shortest" and rows:
            # the n shortest rows of all that exist: a truncated distribution, fanned out again
            conv = shortest(conv, min(1.0, rows / max(comp.rows_available, 1)))
            turn = fan_out(conv)
        out.append((cid, comp.name, comp.family, comp.origin, comp.value_tag("mean_tokens"), rows, conv, turn))
    return out


def plan(s: Scenario, catalog: StatsCatalog | None = None) -> Plan:
    cat = catalog or (get_catalog() if s.uniform is None else None)
    model = resolve_model(s)
    layout_spec = layout_presets().get(s.layout)
    if layout_spec is None:
        raise PlannerInputError("layout", s.layout, f"known layouts: {', '.join(layout_presets())}")
    layout = resolve_layout(layout_spec, model, s.layers, s.layer_count, s.hidden_dtype)
    ex_gpu = resolve_gpu("extraction_gpu", s.extraction_gpu, s.custom_gpu)
    tr_gpu = resolve_gpu("training.gpu", s.training.gpu, s.custom_gpu)
    disk = _lookup(disk_presets(), "disk", s.disk)
    tr_disk = _lookup(disk_presets(), "training.disk", s.training.disk)
    store = _lookup(storage_price_presets(), "costs.storage", s.costs.storage)
    warnings: list[str] = []
    notes: dict[str, list[str]] = {}

    def warn_about(ids: tuple[str, ...], text: str) -> None:
        warnings.append(text)
        for i in ids:
            notes.setdefault(i, []).append(text)

    # -- storage, per component
    items = _mix_items(s, cat)
    per, totals = [], dict(conv=0.0, rows=0.0, tokens=0.0, uncapped=0.0, output=0.0, ctx2=0.0, dctx=0.0)
    for cid, name, family, origin, tag, rows, conv, turn in items:
        w = workload(conv, turn, rows, cap=s.max_seq_len, unit=s.unit, regenerate=s.regenerate,
                     multiplier=s.response_multiplier, scale=s.length_scale)
        nbytes = w.tokens * layout.bytes_per_token + w.rows * layout.file_overhead_bytes
        per.append((cid, name, family, origin, tag, rows, w, nbytes))
        for k, v in zip(totals, (w.conversations, w.rows, w.tokens, w.uncapped_tokens, w.output_tokens,
                                 w.prefill_ctx_sum, w.decode_ctx_sum)):
            totals[k] += v
    storage_bytes = sum(p[-1] for p in per)
    compressed = storage_bytes / s.compression
    tot_rows = sum(p[5] for p in per) or 1
    components = []
    for cid, name, family, origin, tag, rows, w, nbytes in per:
        truncated = 1 - w.tokens / w.uncapped_tokens if w.uncapped_tokens else 0.0
        components.append(ComponentPlan(
            id=cid, name=name, family=family, origin=origin, rows=rows, training_rows=w.rows, tokens=w.tokens,
            truncated_share=max(0.0, truncated), output_tokens=w.output_tokens, storage_bytes=nbytes,
            share_of_rows=rows / tot_rows, share_of_bytes=nbytes / storage_bytes if storage_bytes else 0.0,
            mean_tokens=w.tokens / w.rows if w.rows else 0.0, tokens_tag=tag))
        if cat is not None and cid in cat.components and rows > cat.components[cid].rows_available:
            warn_about((cid,), f"{cid}: {rows:,} rows selected but only {cat.components[cid].rows_available:,} exist")
        if truncated > 0.2 and rows:
            warn_about((cid,), f"{cid}: the {s.max_seq_len:,}-token cap cuts {truncated:.0%} of its tokens")

    # -- extraction
    prefill_ctx = totals["ctx2"] / totals["tokens"] if totals["tokens"] else 0.0
    decode_ctx = totals["dctx"] / totals["output"] if totals["output"] else 0.0
    mfu = s.throughput.prefill_mfu or ex_gpu.prefill_mfu
    ex = extraction(model, ex_gpu, gpus=s.extraction_gpus, weight_dtype=s.weight_dtype, mode=s.throughput.mode,
                    fixed_tokens_per_s=s.throughput.tokens_per_s, fixed_batching=s.throughput.batching,
                    prefill_mfu=mfu, bandwidth_efficiency=s.throughput.decode_bandwidth_efficiency,
                    max_batch=s.throughput.max_batch, tp_efficiency=s.throughput.tensor_parallel_efficiency,
                    prefill_tokens=totals["tokens"], prefill_ctx=prefill_ctx, output_tokens=totals["output"],
                    decode_ctx=decode_ctx, write_bytes=compressed * (2 if s.staging_double_write else 1),
                    disk_write_bytes_per_s=disk["write_gb_s"] * 1e9)
    warnings += ex.warnings

    # -- transfer
    egress = s.transfer.egress_usd_per_gb
    if egress is None:
        egress = store["egress_usd_per_gb"] if s.transfer.method == "object_store" else 0.0
    tr = transfer(compressed, s.transfer.method, s.transfer.link_gbps, s.transfer.efficiency,
                  s.transfer.drive_days, egress)

    # -- training
    drafter_layers = s.training.drafter_layers or (len(layout.layers) if layout_spec.layer_rule == "dflash" else 1)
    drafter_params = s.training.drafter_params or estimate_drafter_params(model, drafter_layers, len(layout.layers))
    trn = training(model, tr_gpu, gpus=s.training.gpus, epochs=s.training.epochs, drafter_layers=drafter_layers,
                   drafter_params=drafter_params, mfu=s.training.mfu, prefill_mfu=tr_gpu.prefill_mfu,
                   tokens=totals["tokens"], prefill_ctx=prefill_ctx, bytes_on_disk=compressed,
                   disk_read_bytes_per_s=tr_disk["read_gb_s"] * 1e9)
    warnings += trn.warnings

    # -- cost
    ex_price = s.costs.extraction_usd_per_gpu_hour
    if ex_price is None:
        ex_price = ex_gpu.default_price()
        if ex_price is None:
            ex_price = 0.0
            warnings.append(f"{ex_gpu.id} has no public price: set the extraction $/GPU-hour to cost it")
    tr_price = s.costs.training_usd_per_gpu_hour
    if tr_price is None:
        tr_price = tr_gpu.default_price()
        if tr_price is None:
            tr_price = 0.0
            warnings.append(f"{tr_gpu.id} has no public price: set the training $/GPU-hour to cost it")
    tb_month = s.costs.storage_usd_per_tb_month if s.costs.storage_usd_per_tb_month is not None else store["usd_per_tb_month"]
    extraction_usd = ex.gpu_hours * ex_price
    regeneration_usd = ex.decode_hours * ex.gpus_used * ex_price
    capture_usd = extraction_usd - regeneration_usd
    storage_usd = compressed / 1e12 * tb_month * s.costs.storage_months
    train_off_usd = trn.offline_gpu_hours * tr_price
    train_on_usd = trn.online_gpu_hours * tr_price
    per_epoch_off = train_off_usd / s.training.epochs
    per_epoch_on = train_on_usd / s.training.epochs
    fixed_off = capture_usd + tr.egress_usd + storage_usd
    breakeven = fixed_off / (per_epoch_on - per_epoch_off) if per_epoch_on > per_epoch_off else None
    cost = CostPlan(extraction=extraction_usd, regeneration=regeneration_usd, transfer=tr.egress_usd,
                    storage=storage_usd, training_offline=train_off_usd, training_online=train_on_usd,
                    total_offline=extraction_usd + tr.egress_usd + storage_usd + train_off_usd,
                    total_online=regeneration_usd + train_on_usd, extraction_usd_per_gpu_hour=ex_price,
                    training_usd_per_gpu_hour=tr_price, storage_usd_per_tb_month=tb_month)

    # -- warnings on the whole plan
    if s.disk_capacity_tb and compressed > s.disk_capacity_tb * 1e12:
        warnings.append(f"storage ({compressed / 1e12:,.1f} TB) exceeds the {s.disk_capacity_tb:g} TB disk")
    if totals["rows"] > 1_000_000 and layout.file_overhead_bytes:
        warnings.append(f"{totals['rows']:,.0f} files, one per training row: plan for the inode count and "
                        f"per-file overhead of millions of small files")
    if s.compression > 1.2 and layout.hidden_dtype != "fp8":
        warnings.append(f"compression {s.compression:g}x is optimistic: bf16 activations compress about 1.0-1.2x")
    if s.throughput.mode == "fixed" and s.throughput.batching <= 8:
        warnings.append(f"fixed throughput: {s.throughput.batching:g}x batching understates batched serving "
                        f"engines by about an order of magnitude (use the roofline mode)")
    if cat is not None:
        for ids, text in overlap_warnings(cat, {c.id: c.rows for c in components}):
            warn_about(ids, text)
        for ids, text in licence_warnings(cat, [c.id for c in components if c.rows]):
            warn_about(ids, text)
    for c in components:
        c.notes = notes.get(c.id, [])

    plan_ = Plan(
        planner_version=__version__, scenario=s, model=model.id, layout=layout.id, layers=layout.layers,
        hidden_dtype=layout.hidden_dtype, conversations=int(totals["conv"]), samples=totals["rows"],
        tokens=totals["tokens"], uncapped_tokens=totals["uncapped"], output_tokens=totals["output"],
        bytes_per_token=layout.bytes_per_token, hidden_state_bytes_per_token=layout.hidden_state_bytes_per_token,
        file_overhead_bytes=layout.file_overhead_bytes, storage_bytes=storage_bytes,
        storage_bytes_compressed=compressed,
        extraction=ExtractionPlan(gpu=ex_gpu.id, mode=ex.mode, gpus=ex.gpus, gpus_used=ex.gpus_used,
                                  tensor_parallel=ex.tensor_parallel, replicas=ex.replicas,
                                  decode_batch=ex.decode_batch, gpu_hours=ex.gpu_hours, wall_hours=ex.wall_hours,
                                  decode_hours=ex.decode_hours, capture_hours=ex.capture_hours,
                                  prefill_tokens_per_s_per_gpu=ex.prefill_tokens_per_s_per_gpu,
                                  decode_tokens_per_s_per_gpu=ex.decode_tokens_per_s_per_gpu, bound=ex.bound,
                                  decode_bound=ex.decode_bound, capture_bound=ex.capture_bound),
        transfer_method=tr.method, transfer_hours=tr.hours,
        training=TrainingPlan(gpu=tr_gpu.id, gpus=trn.gpus, epochs=trn.epochs, drafter_layers=drafter_layers,
                              drafter_params=drafter_params, flops_per_token=trn.flops_per_token,
                              offline_gpu_hours=trn.offline_gpu_hours, offline_wall_hours=trn.offline_wall_hours,
                              offline_bound=trn.offline_bound, online_gpu_hours=trn.online_gpu_hours,
                              online_wall_hours=trn.online_wall_hours, breakeven_epochs=breakeven),
        cost_usd=cost,
        wall_days_offline=(ex.wall_hours + tr.hours + trn.offline_wall_hours) / 24,
        wall_days_online=(ex.decode_hours + trn.online_wall_hours) / 24,
        components=components, warnings=warnings,
        assumptions=assumptions(s, model, layout, ex_gpu, tr_gpu, disk, store, mfu, drafter_params, cat),
    )
    return plan_


def overlap_warnings(cat: StatsCatalog, rows: dict[str, int]) -> list[tuple[tuple[str, ...], str]]:
    """Expected duplicate rows under independent uniform subsampling: n_A n_B |A and B| / (|A| |B|)."""
    out = []
    for o in cat.overlaps:
        na, nb = rows.get(o.a, 0), rows.get(o.b, 0)
        if na and nb:
            A, B = cat.components[o.a].rows_available, cat.components[o.b].rows_available
            dup = na * nb * o.shared_rows / (A * B)
            out.append(((o.a, o.b), f"{o.a} and {o.b} overlap ({o.shared_rows:,} shared rows, {o.tag}): "
                                    f"expect ~{dup:,.0f} duplicate rows in this mix"))
    return out


def licence_warnings(cat: StatsCatalog, ids: list[str]) -> list[tuple[tuple[str, ...], str]]:
    return [((i,), f"{i}: {cat.components[i].licence_note}") for i in ids
            if i in cat.components and cat.components[i].licence_note]


def assumptions(s, model, layout, ex_gpu, tr_gpu, disk, store, mfu, drafter_params, cat) -> list[Assumption]:
    eff = hardware()["efficiency"]
    mine = "yours"
    A = Assumption
    out = [
        A(name="target model", value=f"{model.id}: hidden {model.hidden_size}, {model.num_layers} layers, "
          f"{model.params / 1e9:,.2f}B params", tag=model.tag, source=model.source),
        A(name="capture layout", value=f"{layout.name}; layers {layout.layers}; {layout.hidden_dtype}; "
          f"{layout.bytes_per_token:,} bytes/token + {layout.file_overhead_bytes:,.0f} bytes/file",
          tag="published", source=layout.source),
        A(name="sample unit", value=s.unit, tag=mine, source="per-turn fan-out follows speculators' preprocessing"),
        A(name="max sequence length", value=f"{s.max_seq_len:,}" if s.max_seq_len else "none", tag=mine,
          source="speculators --seq-length default 8192; SpecForge --max-length default 2048"),
        A(name="responses", value=(f"regenerated by the target, x{s.response_multiplier:g} length" if s.regenerate
                                   else "reused (prefill-only extraction)"), tag=mine,
          source="speculators' docs ask for on-policy (regenerated) responses"),
        A(name="tokens per sample", value=f"x{s.length_scale:g} the catalog's counts", tag="estimate" if s.length_scale == 1 else mine,
          source="catalog lengths are ~cl100k tokens; a Qwen tokenizer differs by about +-10%"),
        A(name="compression", value=f"{s.compression:g}x", tag="estimate",
          source="bf16 activations compress ~1.0-1.2x; the article assumed 1.5-2x"),
        A(name="extraction GPU", value=f"{s.extraction_gpus} x {ex_gpu.id} ({ex_gpu.memory_gb:g} GB, "
          f"{ex_gpu.bandwidth_tb_s:g} TB/s, {ex_gpu.bf16_tflops:g} BF16 TFLOPS)", tag="published", source=ex_gpu.source),
        A(name="training GPU", value=f"{s.training.gpus} x {tr_gpu.id}", tag="published", source=tr_gpu.source),
        A(name="weights", value=s.weight_dtype, tag=mine, source="fp8 halves the weight bytes and uses FP8 peak"),
        A(name="extraction disk", value=f"{disk['name']}: write {disk['write_gb_s']:g} GB/s", tag="estimate",
          source=disk["source"]),
        A(name="storage price", value=f"${store['usd_per_tb_month']:g}/TB-month x {s.costs.storage_months:g} months",
          tag="estimate", source=store["source"]),
        A(name="training MFU", value=f"{s.training.mfu:g}", tag="estimate", source=eff["training_mfu"]["source"]),
        A(name="drafter parameters", value=f"{drafter_params / 1e9:,.2f}B",
          tag=mine if s.training.drafter_params else "estimate",
          source="~12 H^2 per drafter layer + fusion projection (Qwen3.6-27B 5-layer DFlash drafter ~1.7B)"),
        A(name="epochs", value=f"{s.training.epochs:g}", tag=mine,
          source="DFlash recipes use 6 epochs; ~500K samples for 2-3 epochs is a maintainer's rule of thumb"),
    ]
    if s.throughput.mode == "fixed":
        out.append(A(name="throughput", value=f"fixed {s.throughput.tokens_per_s:g} tok/s x {s.throughput.batching:g} batching",
                     tag=mine, source="the article's method: 120 tok/s single stream, 4x with batching"))
    else:
        out += [
            A(name="prefill MFU", value=f"{mfu:g}", tag="estimate",
              source="0.45-0.55 on H100/H200/B200 with vLLM/SGLang/TRT-LLM; 0.30-0.45 on AMD, PCIe and consumer cards"),
            A(name="decode bandwidth efficiency", value=f"{s.throughput.decode_bandwidth_efficiency:g}", tag="estimate",
              source=eff["decode_bandwidth"]["source"]),
            A(name="usable GPU memory", value=f"{eff['memory_usable_fraction']['value']:g} x memory - "
              f"{eff['memory_runtime_gb']['value']:g} GB", tag="estimate", source=eff["memory_usable_fraction"]["source"]),
            A(name="max decode batch", value=f"{s.throughput.max_batch}", tag="published", source=eff["max_batch"]["source"]),
        ]
    if model.active_params < model.params:
        out.append(A(name="MoE decode", value="every step reads all expert weights", tag="estimate",
                     source="at large batch nearly every expert is hit; conservative for small batches"))
    if s.staging_double_write:
        out.append(A(name="staging", value="every byte written twice", tag="published",
                     source="vLLM writes to a staging path and the client moves the file; across filesystems "
                            "that is a second write"))
    if model.estimates:
        out.append(A(name="model estimate", value=model.estimates, tag="estimate", source=model.source))
    if s.transfer.method != "none":
        out.append(A(name="transfer", value=(f"{s.transfer.method}: {s.transfer.link_gbps:g} Gb/s x "
                                             f"{s.transfer.efficiency:g} efficiency" if s.transfer.method != "drives"
                                             else f"shipped drives, {s.transfer.drive_days:g} days"),
                     tag="estimate", source=hardware()["link_efficiency"]["parallel"]["source"]))
    if cat is not None and s.uniform is None:
        out.append(A(name="mix statistics", value="per-component length distributions (DuckDB catalog)",
                     tag="estimate", source="datasets_meta/components.yaml: row counts are a reconstruction of the "
                     "913,786 mix; token counts in ~cl100k (Qwen differs ~+-10%)"))
    return out


def is_finite_plan(p: Plan) -> bool:
    nums = [p.storage_bytes, p.tokens, p.output_tokens, p.extraction.gpu_hours, p.transfer_hours,
            p.training.offline_gpu_hours, p.training.online_gpu_hours, p.cost_usd.total_offline, p.cost_usd.total_online]
    return all(math.isfinite(x) and x >= 0 for x in nums)
