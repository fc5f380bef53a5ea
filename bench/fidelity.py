"""Fidelity: the planner's predictions beside every published measurement it ships.

    .venv/bin/python bench/fidelity.py            # the tables (markdown), as in the README
    .venv/bin/python bench/fidelity.py --fit      # also the decode MFU and training MFU that fit best
    .venv/bin/python bench/fidelity.py --json

Inference (planner/presets/throughput.yaml): for each row, the roofline's figure in the row's own
metric (output, total or prefill tokens/s per GPU) with the row's engine caps, and the calibrated
figure when the row is left out of the table (leave-one-out: the nearest *other* row's measured /
roofline scales it). Training (planner/presets/training_throughput.yaml): samples/s over the
trainer GPUs from the drafter's FLOPs at the preset training MFU (plus the target's forward pass
for a co-located run). Ratios are predicted / measured.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from planner import Scenario, plan  # noqa: E402
from planner.calibration import MAX_DISTANCE, distance, measurements  # noqa: E402
from planner.extraction import measured_ratio  # noqa: E402
from planner.scenario import Throughput, Training, UniformMix  # noqa: E402
from planner.specs import efficiency, gpu_presets, model_presets  # noqa: E402

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


def training_rows(mfu: float | None = None) -> list[dict]:
    with open(TRAINING, encoding="utf-8") as fh:
        table = yaml.safe_load(fh)["rows"]
    out = []
    for r in table:
        tr = Training(gpu=r["gpu"], gpus=r["gpus"], epochs=1, disk="node-raid0", ttt_steps=r.get("ttt_steps"),
                      num_anchors=r.get("num_anchors"), **({"mfu": mfu} if mfu else {}))
        s = Scenario(uniform=UniformMix(samples=100_000, tokens=r["tokens"], response_tokens=r["supervised"]),
                     regenerate=False, model=r["model"], layout=r["layout"], max_seq_len="none",
                     capture_batch_size=1, unit="conversation", training=tr)
        t = plan(s).training
        hours = t.online_wall_hours if r["online"] else t.compute_hours_per_epoch
        predicted = 100_000 / (hours * 3600)
        out.append({"id": r["id"], "measured": r["samples_per_s"], "predicted": predicted,
                    "ratio": predicted / r["samples_per_s"], "flops_per_sample": t.flops_per_sample,
                    "source": r["source"], "estimates": r.get("estimates", "")})
    return out


def log_error(ratios: list[float]) -> float:
    return math.sqrt(statistics.fmean(math.log(x) ** 2 for x in ratios))


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
    lines += ["", "| training run | measured samples/s | predicted | ratio | TFLOP per sample |", "|---|---|---|---|---|"]
    for r in trn:
        lines.append(f"| {r['id']} | {r['measured']:,.1f} | {r['predicted']:,.1f} | {r['ratio']:.2f} | "
                     f"{r['flops_per_sample'] / 1e12:,.1f} |")
    rr = [r["roofline_ratio"] for r in inf]
    cr = [r["calibrated_ratio"] for r in inf if r["calibrated_ratio"]]
    tr = [r["ratio"] for r in trn]
    lines += ["", f"roofline: ratios {min(rr):.2f}-{max(rr):.2f}, rms log error {log_error(rr):.2f}, "
              f"{sum(0.5 <= x <= 2 for x in rr)}/{len(rr)} within 0.5-2x",
              f"calibrated (leave-one-out): ratios {min(cr):.2f}-{max(cr):.2f}, rms log error {log_error(cr):.2f}, "
              f"{sum(0.5 <= x <= 2 for x in cr)}/{len(cr)} within 0.5-2x",
              f"training: ratios {min(tr):.2f}-{max(tr):.2f}, rms log error {log_error(tr):.2f}, "
              f"{sum(0.5 <= x <= 2 for x in tr)}/{len(tr)} within 0.5-2x",
              f"(decode MFU {efficiency('decode_mfu'):g}, training MFU {efficiency('training_mfu'):g}, "
              "from planner/presets/hardware.yaml)"]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", action="store_true", help="print the decode MFU and training MFU that fit best")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    inf, trn = inference_rows(), training_rows()
    if a.json:
        out = {"inference": inf, "training": trn}
        if a.fit:
            out["fit"] = _fits()
        print(json.dumps(out, indent=2))
        return
    print(markdown(inf, trn))
    if a.fit:
        f = _fits()
        print(f"\nbest decode MFU {f['decode_mfu']:g} (rms log error {f['decode_error']:.3f}); "
              f"best training MFU {f['training_mfu']:g} (rms log error {f['training_error']:.3f})")


def _fits() -> dict:
    d, de = fit(inference_rows, "roofline_ratio", [x / 100 for x in range(20, 91, 5)])
    t, te = fit(training_rows, "ratio", [x / 100 for x in range(10, 61, 1)])
    return {"decode_mfu": d, "decode_error": de, "training_mfu": t, "training_error": te}


if __name__ == "__main__":
    main()
