"""Fidelity: the planner's predictions beside every published measurement it ships.

    .venv/bin/python bench/fidelity.py            # the tables (markdown), as in the README
    .venv/bin/python bench/fidelity.py --fit      # also the decode MFU and training MFU that fit best
    .venv/bin/python bench/fidelity.py --json
    .venv/bin/python bench/fidelity.py --users     # only the users' reports tables (speedups, training, disk)

Inference (planner/presets/throughput.yaml): for each row, the roofline's figure in the row's own
metric (output, total or prefill tokens/s per GPU) with the row's engine caps, and the calibrated
figure when the row is left out of the table (leave-one-out: the nearest *other* row's measured /
roofline scales it). Training (planner/presets/training_throughput.yaml): end-to-end samples/s,
the slowest of the trainers' compute (drafter FLOPs at the training MFU), the per-sample overhead
floor, the capture supply and the stream's network (disaggregated rows), the target's forward taking
turns with the drafter (co-located), as planner/phases/training.py paces them; held out by publication, the
floor is refitted on the other publications' runs, the capture supply is calibrated without that
publication's throughput rows, and the band is the planner's own (its 90% prediction interval) from
the other publications' residuals. Ratios are predicted / measured.

Per area (issue 22: tau, speedup, prefill, decode, training) the summary gives the rms log error of
the held-out predictions and the share of held-out points inside the band made without their
source (leave one source out; the speedup sweeps leave one series out, SpecDecode-Bench's seven
series being one figure), and lists the points outside it. Prefill and decode are scored through the
plan's own planner.phases.extraction.calibrate with the row's publication held out (exclude_sources) and the
decode MFU refitted without it (planner.phases.extraction.fit_decode_mfu, passed as decode_mfu): the prediction
and the band a user would get if that publication did not exist.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from planner import Scenario, plan  # noqa: E402
from planner.phases.extraction import _preset_roofline, measured_ratio, source_key  # noqa: E402
from planner.phases.harness import held_out_speedup, held_out_tau  # noqa: E402
from planner.phases.throughput_calibration import MAX_DISTANCE, distance, measurements  # noqa: E402
from planner.presets.specs import efficiency, gpu_presets, model_presets  # noqa: E402
from planner.scenario import Disaggregated, Throughput, Training, UniformMix  # noqa: E402

TRAINING = ROOT / "planner" / "presets" / "training_throughput.yaml"


def inference_rows(decode_mfu: float | None = None) -> list[dict]:
    models, gpus = model_presets(), gpu_presets()
    t = Throughput(mode="roofline", decode_mfu=decode_mfu)
    rows = measurements().rows
    roof = {r.id: measured_ratio(r, models, gpus, t)[0] for r in rows}
    out = []
    for r in rows:
        others = [(distance(o, models[o.model], models[r.model], r.gpu, r.weight_dtype, r.isl, r.osl), o)
                  for o in rows if o.id != r.id]
        d, near = min(others, key=lambda x: x[0])
        calibrated = roof[r.id] * near.value / roof[near.id] if d <= MAX_DISTANCE else None
        out.append({"id": r.id, "metric": r.metric, "measured": r.value, "roofline": roof[r.id],
                    "roofline_ratio": roof[r.id] / r.value, "nearest_other": near.id if calibrated else None,
                    "calibrated": calibrated, "calibrated_ratio": calibrated / r.value if calibrated else None,
                    "source": r.source})
    return out


def _source(r: dict) -> str:
    """A run's publication: the key its `source` opens with (SFDOM, TSRES, NEMO)."""
    return re.match(r"[A-Z0-9]+", r["source"]).group()


def training_rows(mfu: float | None = None, overhead: float | None = None, held_out: str = "",
                  step_overhead: float | None = None) -> list[dict]:
    """Each published run's end-to-end samples/s as the planner predicts it: the trainers' compute,
    the capture supply and the stream's network (disaggregated), the target's forward (co-located),
    never faster than the per-sample overhead floor `overhead` (s per token; None: the preset's).
    `held_out`: a publication whose throughput rows do not calibrate the capture supply (a run's own
    publication may also publish its capture rate: SFDOM's specforge-q8b-h200-capture)."""
    from planner.phases.extraction import calibrate
    from planner.phases.training import online_pace, overhead_s_per_token, pace, step_overhead_s_per_pass
    models, gpus = model_presets(), gpu_presets()
    with open(TRAINING, encoding="utf-8") as fh:
        table = yaml.safe_load(fh)["rows"]
    floor, step = overhead_s_per_token(), step_overhead_s_per_pass()
    out = []
    for r in table:
        tr = Training(gpu=r["gpu"], gpus=r["gpus"], epochs=1, disk="node-raid0", ttt_steps=r.get("ttt_steps"),
                      num_anchors=r.get("num_anchors"), **({"mfu": mfu} if mfu else {}))
        dis = Disaggregated(capture_gpus=r["capture_gpus"], train_gpus=r["gpus"]) if r.get("capture_gpus") \
            else Disaggregated()
        s = Scenario(uniform=UniformMix(samples=100_000, tokens=r["tokens"], response_tokens=r["supervised"]),
                     regenerate=False, model=r["model"], layout=r["layout"], max_seq_len="none",
                     capture_batch_size=1, unit="conversation", training=tr, extraction_gpu=r["gpu"],
                     extraction_gpus=r.get("capture_gpus") or 1, disaggregated=dis, node_network_gbps=400)
        p = plan(s)
        t = p.training
        # the run's mode: disaggregated (a capture supply), co-located (the target's forward), else the
        # trainers reading stored states (the bench's reader is a fast RAID: compute or the floor binds)
        mode = "disaggregated" if r.get("capture_gpus") else "online" if r["online"] else "offline"
        rates = dict(t.stage_rates[mode])
        pcal = p.extraction.prefill_calibration
        if held_out and mode == "disaggregated" and pcal is not None:
            # the capture supply as the plan's calibrate gives it without the held-out publication's rows
            # (the plan's isl and osl: planner/phases/extraction.py extraction)
            isl, osl = max(p.tokens - p.output_tokens, 0.0) / p.conversations, p.output_tokens / p.conversations
            held = calibrate(models[r["model"]], gpus[r["gpu"]], weight_dtype=s.weight_dtype, isl=max(isl, 1.0),
                             osl=osl, phase="prefill", exclude_sources=frozenset({held_out}))
            rates["supply"] *= held.factor / pcal.factor
        # the floors refitted without the held-out source: the rate scales 1 / s per token (DFlash) or 1 / s
        # per step x pass (EAGLE, t.overhead_term); step_overhead 0: no EAGLE run left to fit it, so the
        # per-token floor of the other trainers stands in (the planner's floor before issue 33)
        if t.overhead_term == "per token":
            if overhead is not None:
                rates["overhead"] *= floor / overhead
        elif step_overhead == 0:
            rates["overhead"] = t.gpus / (overhead or floor) if mode != "disaggregated" else \
                r["gpus"] / (overhead or floor)
        elif step_overhead is not None:
            rates["overhead"] *= step / step_overhead
        rate, bound = online_pace(**rates) if mode == "online" else pace(**rates)
        predicted = rate / r["tokens"]
        out.append({"id": r["id"], "measured": r["samples_per_s"], "predicted": predicted,
                    "ratio": predicted / r["samples_per_s"], "flops_per_sample": t.flops_per_sample,
                    "mode": mode, "bound": bound, "source": r["source"], "estimates": r.get("estimates", "")})
    return out


def _training_band_line() -> str:
    """The band the planner gives (every run) and the one each held-out publication was scored with."""
    held = {}
    for r in training_area():
        held[r["source"]] = (r["low"] / r["predicted"], r["high"] / r["predicted"])
    lo, hi = training_band()
    return (f"band x{lo:.2f}-{hi:.2f} (every run); held out: "
            + ", ".join(f"{k} x{a:.2f}-{b:.2f}" for k, (a, b) in sorted(held.items())))


def training_band() -> tuple[float, float]:
    """The planner's training band refitted on every published run (training_throughput.yaml `band`)."""
    from planner.distributions import band_from_residuals
    return band_from_residuals([math.log(r["measured"] / r["predicted"]) for r in training_rows()])


# ---------------------------------------------------------------- per area, held out by source
def _inside(rows: list[dict]) -> list[dict]:
    for r in rows:
        r["inside"] = bool(r["low"] <= r["measured"] <= r["high"])
    return rows


def phase_area(phase: str) -> list[dict]:
    """Each row of `phase` predicted as the plan predicts (planner.phases.extraction.calibrate, the same code
    path) with its own publication held out: the nearest row of another publication scales the roofline
    or not, and the band, as the held-out transfers of the other publications decide (nested: the held-out
    publication's rows are neither calibrated nor calibrating there). The decode MFU, the roofline's one
    fitted constant, is refitted without the held-out publication (planner.phases.extraction.fit_decode_mfu)
    and the whole prediction (the row's phase, regime, roofline, calibration and band) takes it."""
    from planner.phases.extraction import ENGINE_FAMILY, calibrate, fit_decode_mfu, row_phase, row_regime
    models, gpus = model_presets(), gpu_presets()
    out = []
    for r in measurements().rows:
        own = source_key(r)
        mfu = fit_decode_mfu(frozenset({own}))[0]
        if r.model not in models or row_phase(r.id, mfu) != phase:
            continue
        c = calibrate(models[r.model], gpus[r.gpu], weight_dtype=r.weight_dtype, isl=r.isl, osl=r.osl, phase=phase,
                      engine=ENGINE_FAMILY[r.engine], regime=row_regime(r.id, mfu), exclude_sources=frozenset({own}),
                      decode_mfu=mfu)
        roofline, measured = _preset_roofline(r.id, mfu)
        predicted = roofline * c.factor
        # the band is on the rate: rate x exp(-hi) .. rate x exp(-lo) brackets the measurement
        out.append({"id": r.id, "source": own, "measured": measured, "predicted": predicted,
                    "low": predicted * math.exp(-c.band[1]), "high": predicted * math.exp(-c.band[0]),
                    "ratio": predicted / measured, "basis": c.row or "roofline", "extrapolated": c.extrapolated,
                    "decode_mfu": mfu})
    return _inside(out)


def training_area(rows: list[dict] | None = None) -> list[dict]:
    """Each published run held out with its whole publication: the per-sample overhead floor refitted
    on the other publications' floor runs, the capture supply calibrated without its throughput rows, and the band
    the planner would give (planner/phases/training.py band_from_residuals) from the other publications' residuals under
    that floor. `rows` is ignored
    (the area re-predicts every run per held-out source)."""
    from planner.distributions import band_from_residuals
    from planner.phases.training import fit_overhead, fit_step_overhead
    with open(TRAINING, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    by_id = {r["id"]: r for r in data["rows"]}
    out = []
    for src in sorted({_source(r) for r in data["rows"]}):
        floor_runs = [by_id[i] for i in data["overhead"]["rows"] if _source(by_id[i]) != src]
        step_runs = [by_id[i] for i in data["step_overhead"]["rows"] if _source(by_id[i]) != src]
        rows = training_rows(overhead=fit_overhead(floor_runs) if floor_runs else None, held_out=src,
                             step_overhead=fit_step_overhead(step_runs) if step_runs else 0)
        lo, hi = band_from_residuals([math.log(o["measured"] / o["predicted"]) for o in rows if _source(o) != src])
        out += [{"id": r["id"], "source": src, "measured": r["measured"], "predicted": r["predicted"],
                 "low": r["predicted"] * lo, "high": r["predicted"] * hi, "ratio": r["ratio"], "bound": r["bound"]}
                for r in rows if _source(r) == src]
    return _inside(out)


TAU_POINTS = ROOT / "planner" / "presets" / "tau_points.yaml"


def absolute_tau() -> list[dict]:
    """Each published point of planner/presets/tau_points.yaml through the whole quality model (the
    data curve, the levels, the harness, the target's size) for its benchmark's family, against the
    model's band; the target-size term is fitted without the point's own publication's series."""
    from planner.phases.quality import quality, tokens_of
    with open(TAU_POINTS, encoding="utf-8") as fh:
        points = yaml.safe_load(fh)["points"]
    out = []
    for p in points:
        total = tokens_of(p["components_samples"], p["component"], None) if p.get("component") else \
            p["samples"] * p["tokens_per_sample"]
        share = sum(p["mix"].values())
        tokens = {f: total * v / share for f, v in p["mix"].items()}
        q = quality(p["drafter"], tokens, epochs=p["epochs"], regenerated=p["regenerated"],
                    workload={p["family"]: 1.0}, engine=p["engine"], temperature=p["t"], num_speculative_tokens=p["k"],
                    target=p["target"], target_params=p.get("target_params"), target_leave_out=(p["source"],))
        out.append({"id": p["id"], "source": p["source"], "measured": p["tau"], "predicted": q.acceptance_length,
                    "low": q.acceptance_low, "high": q.acceptance_high, "ratio": q.acceptance_length / p["tau"]})
    return _inside(out)


USERS = ROOT / "bench" / "users_reports.yaml"


def _draft_params(kind: str, model) -> float:
    """The draft's parameters as the plan counts them (planner/presets/drafter_kinds.py drafter_params, one decoder
    layer, three captured layers, a 32K draft head for EAGLE-3), as the plan passes them to
    planner/phases/serving.py."""
    from planner.presets.drafter_kinds import DrafterKnobs, drafter_params, drafter_shape
    k = DrafterKnobs(kind=kind, layers=1, n_aux=3, ttt_steps=7, num_anchors=None, block_size=None, scope="row",
                     pack_tokens=None, head_vocab=32000 if kind == "eagle3" else model.vocab_size,
                     head_passes=3 if kind == "eagle3" else 1, teacher_vocab=0, attention_window=None)
    return drafter_params(drafter_shape(model), k)


def users_data() -> dict:
    """bench/users_reports.yaml, its split checked: every source in exactly one of `fit` and `score`, and the
    fit sources those quality.yaml's drafter_spread names."""
    from planner.phases.quality import quality_presets
    with open(USERS, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    fit, score = set(data["split"]["fit"]), set(data["split"]["score"])
    if fit & score or fit | score != set(data["sources"]):
        raise ValueError(f"users_reports.yaml split: fit {sorted(fit)} and score {sorted(score)} must part the "
                         f"sources {sorted(data['sources'])}")
    if fit != set(quality_presets().drafter_spread.fit_sources):
        raise ValueError(f"users_reports.yaml split.fit {sorted(fit)} is not quality.yaml drafter_spread.fit_sources")
    return data


def _predict(r: dict, spread: float | None = None):
    """The planner's quality plan and served cost for one report or fit point: a drafter trained like the
    kind's reference run, on its target, engine, K / topk / draft tokens, batch, GPU and TP."""
    from planner.phases.quality import pairs_target, quality, quality_presets, reference_tokens
    from planner.phases.serving import served_cost
    ref = quality_presets().drafters[r["drafter"]].reference
    model = model_presets()[r["target"]]
    tree = r.get("topk", 1) > 1
    sv = None
    if "gpu" in r:
        sv = served_cost(model, gpu_presets()[r["gpu"]], pairs_target=pairs_target(r["drafter"]), batch=r["batch"],
                         n_verify=r["n"],
                         draft_steps=r["k"], draft_tokens=r["topk"],
                         draft_layer_params=_draft_params(r["drafter"], model), tensor_parallel=r["tp"])
    q = quality(r["drafter"], reference_tokens(r["drafter"]), epochs=ref.epochs, regenerated=ref.regenerated,
                workload={r["family"]: 1.0}, engine=r["engine"], num_speculative_tokens=r.get("k"),
                topk=r.get("topk", 1), num_draft_tokens=r["n"] if tree else None, serving_batch=r.get("batch", 1),
                fleet_batch=r.get("batch", 1), target=r["target"],
                target_params=float(r["target_params"]) if "target_params" in r else None,
                served=sv, fleet_served=sv, drafter_spread=spread)
    return q, sv


def spread_points(data: dict | None = None) -> list[dict]:
    """The fit sources' acceptance lengths against the reference-trained centre: their reports with an AL and
    `fit_points` (a reference_al measured on the same harness stands for the centre). q = (al - 1) / (centre - 1)."""
    data = data or users_data()
    fit = set(data["split"]["fit"])
    out = []
    for r in [x for x in data["reports"] if x["source"] in fit and "al" in x] + data["fit_points"]:
        centre = r.get("reference_al") or _predict(r)[0].acceptance_length
        out.append({"id": r["id"], "source": r["source"], "al": r["al"], "centre": centre,
                    "q": (r["al"] - 1) / (centre - 1), "row": r})
    return out


def fit_drafter_spread(points: list[dict]) -> float:
    """quality.yaml drafter_spread: 1 - the least q over `points` (the band's low side reaches the lowest
    fit drafter, no lower: no wider than the evidence requires)."""
    return 1 - min(p["q"] for p in points)


def spread_loso(points: list[dict] | None = None) -> list[dict]:
    """Each fit source left out: the term refitted on the others, and how many of its points' acceptance
    lengths the planner's band (with that term) holds."""
    points = points or spread_points()
    out = []
    for src in dict.fromkeys(p["source"] for p in points):
        s = fit_drafter_spread([p for p in points if p["source"] != src])
        mine = [p for p in points if p["source"] == src]
        inside = 0
        for p in mine:
            if "reference_al" in p["row"]:
                inside += p["q"] >= 1 - s - 1e-12
            else:
                q = _predict(p["row"], s)[0]
                inside += q.acceptance_low <= p["al"] <= q.acceptance_high
        out.append({"source": src, "spread": s, "inside": inside, "points": len(mine)})
    return out


def users_reports() -> list[dict]:
    """Each scored report of bench/users_reports.yaml (split.score; the fit sources are never scored) against
    the planner's speedup and acceptance length for a drafter trained like the kind's reference run, on the
    report's target, engine, tree, batch, GPU and TP (planner/phases/serving.py prices the cycle), with the band the
    planner prints, its drafter-quality term fitted on the fit sources alone."""
    from planner.phases.quality import served_speedup
    data = users_data()
    score = set(data["split"]["score"])
    out = []
    for r in (x for x in data["reports"] if x["source"] in score):
        q, sv = _predict(r)
        row = {"id": r["id"], "source": r["source"], "moe": r["moe"], "engine": r["engine"], "batch": r["batch"],
               "tp": r["tp"], "measured": r["speedup"], "predicted": q.speedup, "low": q.speedup_low,
               "high": q.speedup_high, "ratio": q.speedup / r["speedup"], "served_cost": sv.factor,
               "al": r.get("al"), "al_predicted": q.acceptance_length, "al_low": q.acceptance_low,
               "al_high": q.acceptance_high, "url": data["sources"][r["source"]]["url"],
               "date": str(data["sources"][r["source"]]["date"]), "assumed": r.get("assumed", "")}
        row["al_inside"] = None if row["al"] is None else bool(row["al_low"] <= row["al"] <= row["al_high"])
        if row["al"] is not None:
            # the serving side alone: the speedup the planner gives that acceptance length as served
            g = served_speedup(r["drafter"], (row["al"],) * 3, r["batch"], r["n"], sv)
            row.update(given_al=g[0], given_al_low=g[1], given_al_high=g[2],
                       given_al_inside=bool(g[1] <= row["measured"] <= g[2]))
        out.append(row)
    return _inside(out)


def training_user_rows() -> list[dict]:
    """Each training report of bench/users_reports.yaml (`training_reports`, all scored: none is a row the
    training floors or band were fitted on) against the planner: hours (its seconds and the rate band's
    ends; `online-cached`: the disaggregated epoch 0 plus the offline epochs that read its cache) or memory
    (its GiB per GPU with the activations' band, against the GPU's usable memory: `outcome` oom is in when
    the band's high end is above it, fits when the low end is below it)."""
    from planner import Scenario, plan
    from planner.scenario import Disaggregated, Training, UniformMix
    data = users_data()
    out = []
    for r in data.get("training_reports", []):
        cap = r.get("capture_gpus", 0)
        kw = {k: r[k] for k in ("block_size", "num_anchors", "ttt_steps") if k in r}
        s = Scenario(uniform=UniformMix(samples=r["samples"], tokens=r["tokens"],
                                        response_tokens=round(r["tokens"] * r["response_share"])),
                     regenerate=False, model=r["model"], layout=r["layout"], max_seq_len=r["cap"], unit="conversation",
                     training=Training(gpu=r["gpu"], gpus=r["gpus"], epochs=r.get("epochs", 1), disk="node-raid0",
                                       **kw),
                     extraction_gpu=r["gpu"], extraction_gpus=cap or 1,
                     disaggregated=Disaggregated(capture_gpus=cap, train_gpus=r["gpus"]) if cap else Disaggregated())
        t = plan(s).training
        src = data["training_sources"][r["source"]]
        row = {"id": r["id"], "source": r["source"], "kind": r["kind"], "url": src["url"], "date": str(src["date"]),
               "fit_or_scored": r["fit_or_scored"], "assumed": r.get("assumed", ""), "bound": t.bound}
        if r["kind"] == "hours":
            epoch_off = t.offline_wall_hours / t.epochs * 3600
            sec = (t.disaggregated_hours_per_epoch * 3600 + (t.epochs - 1) * epoch_off
                   if r["mode"] == "online-cached" else t.epochs * epoch_off)
            row.update(measured=float(r["seconds"]), predicted=sec, low=sec / t.rate_high, high=sec / t.rate_low,
                       ratio=sec / r["seconds"], unit="s")
            row["inside"] = bool(row["low"] <= row["measured"] <= row["high"])
        else:
            cap_gib = t.memory_capacity_gib
            row.update(measured=r["outcome"], predicted=t.memory_gib_per_gpu, low=t.memory_gib_per_gpu_low,
                       high=t.memory_gib_per_gpu_high, capacity=cap_gib, unit="GiB", ratio=None)
            row["inside"] = bool(row["high"] > cap_gib) if r["outcome"] == "oom" else bool(row["low"] <= cap_gib)
            row["centre_agrees"] = (t.memory_gib_per_gpu > cap_gib) == (r["outcome"] == "oom")
        out.append(row)
    return out


def training_users_markdown(rows: list[dict]) -> str:
    """The users' training reports: each report, its figure, the planner's with its band, in or out."""
    lines = ["| training report (source, date) | kind | reported | planner (band) | binds | in |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        if r["kind"] == "hours":
            rep, pl = f"{r['measured']:,.0f} s", f"{r['predicted']:,.0f} s ({r['low']:,.0f}-{r['high']:,.0f})"
        else:
            rep = r["measured"]
            pl = (f"{r['predicted']:,.1f} GiB ({r['low']:,.1f}-{r['high']:,.1f}) of {r['capacity']:,.1f} usable"
                  + ("" if r["centre_agrees"] else "; the centre says the other"))
        lines.append(f"| [{r['id']}]({r['url']}) {r['date']} | {r['kind']}, {r['fit_or_scored']} | {rep} | {pl} | "
                     f"{r['bound']} | {'in' if r['inside'] else 'out'} |")
    inside = sum(r["inside"] for r in rows)
    lines.append(f"\nusers' training reports: {inside}/{len(rows)} inside the band (all scored)")
    return "\n".join(lines)


_UNITS = {"MB": (1e6, 2 ** 20), "GB": (1e9, 2 ** 30), "TB": (1e12, 2 ** 40)}


def reported_interval(r: dict) -> tuple[float, float]:
    """A disk report's figure as bytes: from its decimal to its binary value (a "GB" that does not say which),
    widened by `approx` (half its last digit: the source's own rounding of an "about" figure)."""
    dec, binary = _UNITS[r["unit"]]
    a = r.get("approx", 0)
    return (r["reported"] - a) * dec, (r["reported"] + a) * binary


def disk_user_rows() -> list[dict]:
    """Each disk report of bench/users_reports.yaml (`disk_reports`) against the planner's storage_bytes and its
    band: a mix of catalog components planned as is (the catalog's lengths and band); a report with lengths not
    stated planned at `tokens` with its band from the plans at `tokens_low` and `tokens_high`. `per_sample`:
    bytes per sample. In when the band meets the reported interval. FIT sources are shown, never scored."""
    from planner import Scenario, plan
    from planner.catalog.stats import get_catalog
    from planner.scenario import MixItem, UniformMix
    data = users_data()
    out = []
    for r in data.get("disk_reports", []):
        kw = {k: r[k] for k in ("draft_vocab_size", "capture_batch_size") if k in r}
        base = {"model": r["model"], "layout": r["layout"], "regenerate": False, **kw}
        if "mix" in r:
            p = plan(Scenario(mix=[MixItem(**m) for m in r["mix"]], **base), get_catalog())
            centre, low, high = p.storage_bytes, p.storage_bytes_low, p.storage_bytes_high
        else:
            p, p_low, p_high = (plan(Scenario(uniform=UniformMix(samples=r["samples"], tokens=t,
                                                                 response_tokens=round(t * r["response_share"])),
                                              max_seq_len=r["cap"], **base))
                                for t in (r["tokens"], r["tokens_low"], r["tokens_high"]))
            centre, low, high = p.storage_bytes, p_low.storage_bytes, p_high.storage_bytes
        per = p.samples if r.get("per_sample") else 1.0
        lo_r, hi_r = reported_interval(r)
        src = data["disk_sources"][r["source"]]
        row = {"id": r["id"], "source": r["source"], "url": src["url"], "date": str(src["date"]),
               "fit_or_scored": r["fit_or_scored"], "assumed": r.get("assumed", ""), "layout": r["layout"],
               "model": r["model"], "per_sample": bool(r.get("per_sample")),
               "reported": f"{r['reported']:g} {r['unit']}",
               "reported_low": lo_r, "reported_high": hi_r, "bytes_per_token": p.bytes_per_token,
               "predicted": centre / per, "low": low / per, "high": high / per}
        row["ratio"] = row["predicted"] / ((lo_r + hi_r) / 2)
        row["inside"] = bool(row["low"] <= hi_r and row["high"] >= lo_r)
        out.append(row)
    return out


def _bytes(b: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if b >= scale:
            return f"{b / scale:,.{0 if b >= 100 * scale else 1 if b >= 10 * scale else 2}f} {unit}"
    return f"{b:,.0f} B"


def disk_users_markdown(rows: list[dict]) -> str:
    """The users' disk reports: each report, its figure, the planner's with its band, in or out."""
    lines = ["| disk report (source, date) | layout, target | fit or scored | reported | planner (band) | ratio | in |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        each = " a sample" if r["per_sample"] else ""
        lines.append(f"| [{r['id']}]({r['url']}) {r['date']} | {r['layout']}, {r['model']} | {r['fit_or_scored']} | "
                     f"{r['reported']}{each} | {_bytes(r['predicted'])} ({_bytes(r['low'])}-{_bytes(r['high'])}) | "
                     f"{r['ratio']:.2f} | {'in' if r['inside'] else 'out'} |")
    scored = [r for r in rows if r["fit_or_scored"] == "SCORED"]
    fit = [r for r in rows if r["fit_or_scored"] != "SCORED"]
    lines.append(f"\nusers' disk reports: {sum(r['inside'] for r in scored)}/{len(scored)} scored inside the band; "
                 f"the fit sources (not scored) {sum(r['inside'] for r in fit)}/{len(fit)}")
    return "\n".join(lines)


def spread_line() -> str:
    """The drafter-quality term: what the planner ships, the refit on the fit sources, leave one fit source out."""
    from planner.phases.quality import quality_presets
    pts = spread_points()
    loso = spread_loso(pts)
    held = ", ".join(f"{r['source']} term {r['spread']:.3f}, its acceptance lengths inside {r['inside']}/{r['points']}"
                     for r in loso)
    value = quality_presets().drafter_spread.value
    return (f"drafter-quality term (quality.yaml drafter_spread {value:g}, refit {fit_drafter_spread(pts):.4f}): the "
            f"band's low side reaches tau - 1 x {1 - value:.3f} of the served centre, fitted on "
            + ", ".join(sorted({p['source'] for p in pts})) + " (never scored), least q at "
            + min(pts, key=lambda p: p["q"])["id"] + "; leave one fit source out: " + held)


def users_markdown(rows: list[dict]) -> str:
    """The users' reports table: each report, its figure, the planner's with its band, in or out; where the
    user printed the acceptance length, the planner's AL and the speedup it gives that AL as served."""
    lines = ["| report (source, date) | target | engine, batch, TP | speedup reported | planner (band) | in | "
             "AL reported | planner AL (band) | in | planner at the reported AL (band) | in |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        al = ["-"] * 5 if r["al"] is None else [
            f"{r['al']:.2f}", f"{r['al_predicted']:.2f} ({r['al_low']:.2f}-{r['al_high']:.2f})",
            "in" if r["al_inside"] else "out",
            f"{r['given_al']:.2f}x ({r['given_al_low']:.2f}-{r['given_al_high']:.2f})",
            "in" if r["given_al_inside"] else "out"]
        lines.append(f"| [{r['id']}]({r['url']}) {r['date']} | {'MoE' if r['moe'] else 'dense'} | {r['engine']}, "
                     f"{r['batch']:g}, {r['tp']} | {r['measured']:.2f}x | {r['predicted']:.2f}x "
                     f"({r['low']:.2f}-{r['high']:.2f}) | {'in' if r['inside'] else 'out'} | " + " | ".join(al) + " |")
    lines.append("")
    for label, pick in (("all", lambda r: True), ("MoE", lambda r: r["moe"]), ("dense", lambda r: not r["moe"])):
        sel = [r for r in rows if pick(r)]
        als = [r for r in sel if r["al"] is not None]
        lines.append(f"users' reports, {label}: speedup inside the band {sum(r['inside'] for r in sel)}/{len(sel)}"
                     f" = {sum(r['inside'] for r in sel) / len(sel):.0%}, rms log error "
                     f"{log_error([r['ratio'] for r in sel]):.2f}; acceptance length inside "
                     f"{sum(r['al_inside'] for r in als)}/{len(als)}; at the reported AL, speedup inside "
                     f"{sum(r['given_al_inside'] for r in als)}/{len(als)}")
    return "\n".join(lines)


def capture_reports(data: dict | None = None) -> list[dict]:
    """Each scored capture report (bench/users_reports.yaml `capture`, issue 33 item 1) against the plan's
    capture hours and band: the report's layout (so its pipeline's capture path), target, GPUs and rows, no
    regeneration (the reports time the capture pass alone)."""
    from planner import plan
    from planner.scenario import MixItem, Scenario, UniformMix
    cap = (data or users_data())["capture"]
    score = set(cap["split"]["score"])
    if set(cap["split"]["fit"]) & score or set(cap["split"]["fit"]) | score != set(cap["sources"]):
        raise ValueError("users_reports.yaml capture.split must part capture.sources")
    out = []
    for r in cap["reports"]:
        kw = dict(layout=r["layout"], model=r["model"], extraction_gpu=r["gpu"], extraction_gpus=r["gpus"],
                  regenerate=False)
        if "component" in r:
            from planner.catalog.stats import get_catalog
            rows = get_catalog().components[r["component"]].rows_available
            kw["mix"] = [MixItem(id=r["component"], rows=rows)]
        else:
            kw["uniform"] = UniformMix(samples=r["samples"], tokens=r["tokens"], response_tokens=0)
        e = plan(Scenario(**kw)).extraction
        low, high = e.wall_hours_low, e.wall_hours_high
        src = cap["sources"][r["source"]]
        out.append({"id": r["id"], "source": r["source"], "url": src["url"], "date": str(src["date"]),
                    "path": e.capture_path, "setup": f"{r['model']}, {r['gpus']} x {r['gpu']}, "
                    f"{e.replicas} x {e.tp_per_replica} ({e.capture_split})", "measured": r["hours"],
                    "predicted": e.capture_hours, "low": low, "high": high, "ratio": e.capture_hours / r["hours"],
                    "inside": low is not None and low <= r["hours"] <= high, "assumed": r.get("assumed", ""),
                    "scored": r["source"] in score})
    return out


def capture_markdown(rows: list[dict]) -> str:
    """The capture reports' table: each report, FIT (a source something in the planner is fitted on: shown, never
    scored) or SCORED, its hours, the plan's capture hours with its band, in or out; the tally over the scored."""
    lines = [("| capture report (source, date) | path | setup (replicas x GPUs each) | fit or scored | "
              "hours reported | planner (band) | in |"), "|---|---|---|---|---|---|---|"]
    for r in rows:
        band = "no band" if r["low"] is None else f"{r['low']:.2f}-{r['high']:.2f}"
        lines.append(f"| [{r['id']}]({r['url']}) {r['date']} | {r['path']} | {r['setup']} | "
                     f"{'SCORED' if r['scored'] else 'FIT'} | {r['measured']:.2f} | "
                     f"{r['predicted']:.2f} ({band}) | {'in' if r['inside'] else 'out'} |")
    sc = [r for r in rows if r["scored"]]
    lines.append(f"\ncapture reports: {sum(r['inside'] for r in sc)}/{len(sc)} scored inside the band, rms log error "
                 f"{log_error([r['ratio'] for r in sc]):.2f}; the fit sources (not scored) "
                 f"{sum(r['inside'] for r in rows if not r['scored'])}/{len(rows) - len(sc)}")
    return "\n".join(lines)


def target_size_line() -> str:
    """The target-size term per drafter kind (planner/phases/quality.py target_term): beta from its T = 0
    series and the slopes its band spans."""
    from planner.phases.quality import quality_presets, size_fit
    parts = []
    for kind in quality_presets().drafters:
        beta, below, above, sizes, whose = size_fit(kind)
        parts.append(f"{kind} beta {beta:+.4f} ({whose}, {min(sizes):g}-{max(sizes):g}B; band slopes "
                     f"{beta - below:+.4f} to {beta + above:+.4f})")
    return "tau target size, tau x (P / P_ref)^beta: " + "; ".join(parts)


def areas(trn: list[dict]) -> dict[str, list[dict]]:
    return {"tau (harness pairs)": held_out_tau(), "tau (absolute)": absolute_tau(), "speedup": held_out_speedup(),
            "prefill": phase_area("prefill"), "decode": phase_area("decode"), "training": training_area(trn)}


def area_markdown(by_area: dict[str, list[dict]]) -> str:
    lines = ["| area | held-out points | sources | rms log error | inside the band (leave one source out) |",
             "|---|---|---|---|---|"]
    for name, rows in by_area.items():
        cover = sum(r["inside"] for r in rows)
        lines.append(f"| {name} | {len(rows)} | {len({r['source'] for r in rows})} | "
                     f"{log_error([r['ratio'] for r in rows]):.2f} | {cover}/{len(rows)} = {cover / len(rows):.0%} |")
    lines.append("")
    for name, rows in by_area.items():
        out = [r for r in rows if not r["inside"]]
        if out:
            lines.append(f"{name}, outside the band: " + "; ".join(
                f"{r['id']} measured {r['measured']:,.3g}, predicted {r['predicted']:,.3g} "
                f"({r['low']:,.3g}-{r['high']:,.3g})" for r in out))
    return "\n".join(lines)


def log_error(ratios: list[float]) -> float:
    return math.sqrt(statistics.fmean(math.log(x) ** 2 for x in ratios))


def decode_mfu_line() -> str:
    """The decode MFU refitted without each publication (the held-out prefill and decode areas use it)."""
    from planner.phases.extraction import fit_decode_mfu
    keys = sorted({source_key(r) for r in measurements().rows})
    return "decode MFU refitted per held-out source: " + ", ".join(
        f"{k} {fit_decode_mfu(frozenset({k}))[0]:g}" for k in keys) + f" (every row: {fit_decode_mfu()[0]:g})"


def fit(fn, key: str, grid: list[float]) -> tuple[float, float]:
    """The grid value whose ratios are nearest 1 (root mean square of log ratio)."""
    return min(((v, log_error([r[key] for r in fn(v)])) for v in grid), key=lambda x: x[1])


def markdown(inf: list[dict], trn: list[dict]) -> str:
    lines = ["| measurement | metric | measured tok/s/GPU | roofline | ratio | calibrated (leave-one-out) | ratio |",
             "|---|---|---|---|---|---|---|"]
    for r in inf:
        cal = f"{r['calibrated']:,.0f} (from {r['nearest_other']})" if r["calibrated"] else "no other row near"
        ratio = f"{r['calibrated_ratio']:.2f}" if r["calibrated_ratio"] else "-"
        lines.append(f"| {r['id']} | {r['metric']} | {r['measured']:,.0f} | {r['roofline']:,.0f} | "
                     f"{r['roofline_ratio']:.2f} | {cal} | {ratio} |")
    lines += ["", "| training run | mode | bound | measured samples/s | predicted | ratio | TFLOP per sample |",
              "|---|---|---|---|---|---|---|"]
    for r in trn:
        lines.append(f"| {r['id']} | {r['mode']} | {r['bound']} | {r['measured']:,.1f} | {r['predicted']:,.1f} | "
                     f"{r['ratio']:.2f} | {r['flops_per_sample'] / 1e12:,.1f} |")
    rr = [r["roofline_ratio"] for r in inf]
    cr = [r["calibrated_ratio"] for r in inf if r["calibrated_ratio"]]
    tr = [r["ratio"] for r in trn]
    lines += ["", f"roofline: ratios {min(rr):.2f}-{max(rr):.2f}, rms log error {log_error(rr):.2f}, "
              f"{sum(0.5 <= x <= 2 for x in rr)}/{len(rr)} within 0.5-2x",
              f"calibrated (leave-one-out): ratios {min(cr):.2f}-{max(cr):.2f}, rms log error {log_error(cr):.2f}, "
              f"{sum(0.5 <= x <= 2 for x in cr)}/{len(cr)} within 0.5-2x",
              f"training: ratios {min(tr):.2f}-{max(tr):.2f}, rms log error {log_error(tr):.2f}, "
              f"{sum(0.5 <= x <= 2 for x in tr)}/{len(tr)} within 0.5-2x; " + _training_band_line(),
              f"(decode MFU {efficiency('decode_mfu'):g}, training MFU {efficiency('training_mfu'):g}, "
              "from planner/presets/hardware.yaml)"]
    return "\n".join(lines)


def _users_tables() -> str:
    """The users' reports (speedups, the drafter-quality line, capture, training, disk), as `--users` prints them."""
    return "\n".join([users_markdown(users_reports()), spread_line(), "",
                      capture_markdown(capture_reports()), "", training_users_markdown(training_user_rows()), "",
                      disk_users_markdown(disk_user_rows())])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", action="store_true", help="print the decode MFU and training MFU that fit best")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--users", action="store_true", help="only the users' reports table")
    a = ap.parse_args()
    if a.users:
        print(_users_tables())
        return
    inf, trn = inference_rows(), training_rows()
    by_area = areas(trn)
    if a.json:
        out = {"inference": inf, "training": trn, "areas": by_area, "users_reports": users_reports(),
               "capture_reports": capture_reports(),
               "users_training_reports": training_user_rows(), "users_disk_reports": disk_user_rows()}
        if a.fit:
            out["fit"] = _fits()
        print(json.dumps(out, indent=2))
        return
    print(area_markdown(by_area))
    print(decode_mfu_line())
    print(target_size_line())
    print()
    print(_users_tables())
    print()
    print(markdown(inf, trn))
    if a.fit:
        f = _fits()
        print(f"\nbest decode MFU {f['decode_mfu']:g} (rms log error {f['decode_error']:.3f}); "
              f"best training MFU {f['training_mfu']:g} (rms log error {f['training_error']:.3f}); "
              f"training band x{f['training_band'][0]:.3f}-{f['training_band'][1]:.3f} (training_throughput.yaml band)")


def _fits() -> dict:
    from planner.phases.extraction import fit_decode_mfu
    d, de = fit_decode_mfu()
    t, te = fit(training_rows, "ratio", [x / 100 for x in range(10, 61, 1)])
    lo, hi = training_band()
    return {"decode_mfu": d, "decode_error": de, "training_mfu": t, "training_error": te,
            "training_band": [lo, hi]}


if __name__ == "__main__":
    main()
