"""Fidelity of `--quality-points` (your own runs, planner/phases/quality.py user_model): the published points
stand in for a user's runs.

    .venv/bin/python bench/quality_points.py            # the summary
    .venv/bin/python bench/quality_points.py --rows     # and every held-out prediction

The published acceptance lengths of planner/presets/tau_points.yaml and the reference levels of
planner/presets/quality.yaml (the papers' per-family levels at their reference run, and EAGLE-3's
1x ShareGPT point, an MT-bench, general, reading) are grouped by source. Two modes:
- source: all of one source's points of a drafter kind and target are given as the user's runs;
- single: each point alone is given as the one run (the case a user with one small run is in).
Each is scored on every other point (source mode: of another source) with the same drafter kind, target and family whose
training tokens are at least 1.2x away from every given run's (another size), predicted through
planner.phases.quality.quality (the same code path as `estimate --quality-points`). A run measured at
another K or temperature than its engine's usual is carried to the paper's harness first (the
inverse of planner/phases/harness.py's rule) and given as `paper`. Reports the rms log error of the
held-out predictions and the share inside the band, and the same for the single runs scored on their
own source's other sizes (one recipe, what a user's own runs are: the other sources differ by their
recipe too, which a user's refit does not band, planner/phases/quality.py's recipe spread being 0 for it).
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402


def published() -> list[dict]:
    """Every published per-family tau with its setting, as dicts."""
    from planner.phases.quality import quality_presets, tokens_of
    with open(ROOT / "planner" / "presets" / "tau_points.yaml", encoding="utf-8") as fh:
        raw = yaml.safe_load(fh)["points"]
    out = []
    for p in raw:
        total = tokens_of(p["components_samples"], p["component"], None) if p.get("component") else \
            p["samples"] * p["tokens_per_sample"]
        out.append({"id": p["id"], "source": p["source"], "drafter": p["drafter"], "target": p["target"],
                    "target_params": p.get("target_params"), "family": p["family"], "mix": p["mix"],
                    "tokens": total, "epochs": p["epochs"], "regenerated": p["regenerated"],
                    "engine": p["engine"], "k": p["k"], "t": p["t"], "tau": p["tau"]})
    q = quality_presets()
    for kind, d in q.drafters.items():
        r = d.reference
        total = tokens_of(r.samples, r.component, r.tokens_per_sample)
        mix = {f: 1 for f in (r.families or ["general"])}    # None: the catalog components' (general)
        for f in d.domains:
            lv = d.domains[f]
            if lv.source.startswith("estimate"):
                continue
            out.append({"id": f"{kind}-reference-{f}", "source": f"{kind}-paper", "drafter": kind,
                        "target": r.target, "target_params": None, "family": f, "mix": mix, "tokens": total,
                        "epochs": r.epochs, "regenerated": r.regenerated, "engine": "paper", "k": None, "t": 0.0,
                        "tau": lv.tau})
    # EAGLE-3's 1x ShareGPT point is an MT-bench reading (general); the DFlash 100K point averages
    # three families and is left out
    e3 = q.drafters["eagle3"]
    p = e3.scaling.points[0]
    out.append({"id": "eagle3-paper-1x-sharegpt", "source": "eagle3-paper", "drafter": "eagle3",
                "target": e3.reference.target, "target_params": None, "family": "general",
                "mix": {"general": 1}, "tokens": tokens_of(p.samples, p.component, p.tokens_per_sample),
                "epochs": e3.reference.epochs, "regenerated": e3.reference.regenerated, "engine": "paper",
                "k": None, "t": 0.0, "tau": p.tau})
    return out


def as_run(p: dict):
    """A published point as one of the user's runs (planner.scenario.model.QualityPoint)."""
    from planner.phases.harness import alpha_of, chain_tau, resolve
    from planner.scenario import QualityPoint
    h = resolve(p["drafter"], p["engine"], p["t"], p["k"])
    tau = chain_tau(min(1.0, alpha_of(p["tau"], h.k) / h.factor), h.depth)
    return QualityPoint(drafter=p["drafter"], target=p["target"], family=p["family"], training_tokens=p["tokens"],
                        epochs=p["epochs"], eval_engine="paper", tau=max(tau, 1.0001))


def predict(p: dict, runs: list) -> tuple[float, float, float]:
    from planner.phases.quality import quality
    share = sum(p["mix"].values())
    tokens = {f: p["tokens"] * v / share for f, v in p["mix"].items()}
    q = quality(p["drafter"], tokens, epochs=p["epochs"], regenerated=p["regenerated"],
                workload={p["family"]: 1.0}, engine=p["engine"], temperature=p["t"], num_speculative_tokens=p["k"],
                target=p["target"], target_params=p["target_params"], points=runs)
    return q.acceptance_length, q.acceptance_low, q.acceptance_high


def scored(mode: str) -> list[dict]:
    pts = published()
    groups: dict[tuple, list[dict]] = {}
    for p in pts:
        if mode == "source":
            groups.setdefault((p["source"], p["drafter"], p["target"]), []).append(p)
        else:
            groups[(p["id"],)] = [p]
    out = []
    for given in groups.values():
        g0 = given[0]
        runs = [as_run(p) for p in given]
        for p in pts:
            if (mode == "source" and p["source"] == g0["source"]) or p["id"] in {g["id"] for g in given} \
                    or p["drafter"] != g0["drafter"] or p["target"] != g0["target"]:
                continue
            if p["family"] not in {g["family"] for g in given}:
                continue
            dist = min(abs(math.log(p["tokens"] * p["epochs"] / (g["tokens"] * g["epochs"]))) for g in given)
            if min(abs(math.log(p["tokens"] / g["tokens"])) for g in given) < math.log(1.2):
                continue
            mid, lo, hi = predict(p, runs)
            out.append({"given": ",".join(g["id"] for g in given), "held_out": p["id"], "measured": p["tau"],
                        "same_source": p["source"] == g0["source"],
                        "predicted": mid, "low": lo, "high": hi, "log_distance": dist,
                        "inside": lo <= p["tau"] <= hi})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", action="store_true")
    args = ap.parse_args()
    for mode in ("source", "single"):
        rows = scored(mode)
        rms = math.sqrt(statistics.fmean(math.log(r["predicted"] / r["measured"]) ** 2 for r in rows))
        inside = sum(r["inside"] for r in rows)
        print(f"{mode}: {len(rows)} held-out predictions, rms log error {rms:.3f}, inside the band "
              f"{inside}/{len(rows)}")
        same = [r for r in rows if r["same_source"]]
        if same:
            rms = math.sqrt(statistics.fmean(math.log(r["predicted"] / r["measured"]) ** 2 for r in same))
            print(f"  of which the same source (one recipe) at another size: {len(same)}, rms log error {rms:.3f}, "
                  f"inside the band {sum(r['inside'] for r in same)}/{len(same)}")
        if args.rows:
            for r in rows:
                print(f"  {r['given']:60s} -> {r['held_out']:28s} measured {r['measured']:.2f} predicted "
                      f"{r['predicted']:.2f} ({r['low']:.2f}-{r['high']:.2f}) dist {r['log_distance']:.2f}"
                      f"{'' if r['inside'] else '  OUTSIDE'}")


if __name__ == "__main__":
    main()
