"""Every plan's output, byte for byte, over a wide set of scenarios: a speed change must not move one.

    .venv/bin/python bench/plan_identity.py OUT.jsonl          # write one line per scenario
    cmp BEFORE.jsonl AFTER.jsonl                              # byte-identical, or a plan moved

Each line is the scenario's name, `planner estimate --json`'s output model (planner/export/plan_json.py
to_json_dict) of its plan with sort_keys, and the Plan's own model_dump_json (unrounded, typed); the
trims (every strategy on a few scenarios) write their TrimResult beside the trimmed plan's JSON, as
`planner trim --json` does. The scenarios: each preset of planner.scenario.model.PRESETS; every layout x
every GPU preset, calibrated and roofline; every model; uniform and mixed; nodes (extraction and
training), shared placement, a quality serving GPU with served tokens, fp8 dtypes, the turn unit,
caps, capture batches (lossless fixes of a blocking disk finding), a custom mix, empty mixes, a
workload, your own quality points, a custom model and GPU, fixed throughput, a transfer link; and a
profiled component from a sample (the storage band) in a throw-away user catalog. Each scenario is
planned twice (the second plan of the same scenario is what the page's rerun asks; caches must give
the same bytes).
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["PLANNER_HOME"] = tempfile.mkdtemp(prefix="planner-identity-")

import numpy as np  # noqa: E402

from planner.catalog.paths import user_catalog_path  # noqa: E402
from planner.catalog.profile import measured_component  # noqa: E402
from planner.catalog.stats import get_catalog  # noqa: E402
from planner.catalog.user_catalog import write_component  # noqa: E402
from planner.decisions.trim import STRATEGIES, Budget, trim  # noqa: E402
from planner.distributions import aggregate, fan_out  # noqa: E402
from planner.errors import PlannerInputError  # noqa: E402
from planner.export.plan_json import to_json_dict  # noqa: E402
from planner.planning import plan  # noqa: E402
from planner.presets.layouts import layout_presets  # noqa: E402
from planner.presets.specs import gpu_presets, model_presets  # noqa: E402
from planner.scenario import Scenario, default_scenario  # noqa: E402
from planner.scenario.model import PRESETS  # noqa: E402


def _sampled_component() -> None:
    """A 20,000-row profile measured on a sample of 2,000 (its 95% intervals give the plan's band)."""
    rng = np.random.default_rng(1)
    tokens = np.exp(rng.normal(np.log(900), 0.9, 2_000))
    turns = np.clip(np.rint(tokens / 400), 1, 64)
    conv = aggregate(np.full(tokens.size, 1 / tokens.size), tokens, tokens * 0.6, turns)
    comp = measured_component("sampled_2k", conv, fan_out(conv), 20_000, "identity sample (benchmark)")
    for prov in comp["provenance"].values():     # the profile's time stamp out: the same bytes every run
        prov["source"] = prov["source"].split(" on ", 1)[0]
    mean = comp["mean_tokens"]
    comp["sampled"] = {"rows_sampled": 2_000, "rows_total": 20_000, "seed": 1,
                       "mean_tokens_ci": [mean * 0.96, mean * 1.05],
                       "mean_turn_tokens_ci": [mean * 0.4, mean * 0.45]}
    write_component(user_catalog_path(), comp, replace=True)


def scenarios() -> list[tuple[str, dict]]:
    """(name, changes to the default scenario's JSON) of every scenario planned."""
    out: list[tuple[str, dict]] = [(f"preset-{k}", PRESETS[k]().model_dump(mode="json")) for k in PRESETS]
    base = default_scenario().model_dump(mode="json")

    def add(name: str, **changes) -> None:
        d = json.loads(json.dumps(base))
        for k, v in changes.items():
            if "__" in k:
                outer, inner = k.split("__", 1)
                d[outer][inner] = v
            else:
                d[k] = v
        out.append((name, d))

    for layout in layout_presets():
        for gpu in gpu_presets():
            for mode in ("calibrated", "roofline"):
                add(f"layout-{layout}-gpu-{gpu}-{mode}", layout=layout, extraction_gpu=gpu, throughput__mode=mode)
        add(f"layout-{layout}-uniform", layout=layout,
            uniform={"samples": 100_000, "tokens": 1200, "response_tokens": 500})
        add(f"layout-{layout}-turn", layout=layout, unit="turn")
        add(f"layout-{layout}-batch16-sorted", layout=layout, capture_batch_size=16, sort_by_length=True)
        add(f"layout-{layout}-batch32-unsorted", layout=layout, capture_batch_size=32, sort_by_length=False)
    for model in model_presets():
        for gpu in ("b200", "h100-sxm", "mi300x"):
            add(f"model-{model}-gpu-{gpu}", model=model, extraction_gpu=gpu, extraction_gpus=16)
    add("fixed", throughput__mode="fixed", throughput__tokens_per_s=300, throughput__batching=6)
    add("nodes", extraction_nodes=4, extraction_gpus=32, gpus_per_node=8, training__gpus=16, training__nodes=2)
    add("nodes-shared", extraction_gpus=16, placement="shared", shared_capacity_tb=50)
    add("nodes-small-disk", extraction_gpus=16, gpus_per_node=4, disk_capacity_tb=5)
    add("no-disk-check", disk_capacity_tb=None)
    add("quality-serving", quality__serving_gpu="h200", quality__serving_tokens_per_day=5e10)
    add("quality-serving-tokens", quality__serving_tokens_per_day=2e9, costs__extraction_usd_per_gpu_hour=3.5)
    add("quality-workload", quality__workload={"general": 0.5, "code": 0.3, "tool": 0.3},
        quality__eval_engine="sglang", quality__temperature=0.7, quality__num_speculative_tokens=5)
    add("quality-mix", quality__workload="mix", quality__domain_transfer=0.2, quality__serving_batch=8)
    add("fp8", hidden_dtype="fp8", weight_dtype="fp8", kv_dtype="fp8", compression=1.3)
    add("cap-none", max_seq_len="none")
    add("cap-2048-split", max_seq_len=2048, layer_count=5, length_scale=1.1, response_multiplier=1.7)
    add("no-regenerate", regenerate=False)
    add("layers", layers=[1, 10, 20, 30])
    add("transfer-link", transfer__method="link", transfer__link_gbps=10)
    add("custom-mix", mix=[{"id": "openorca", "rows": 5000}, {"id": "sharegpt", "rows": 12_345},
                           {"id": "ultrachat", "rows": 1, "include": False}])
    add("sampled", mix=[{"id": "openorca", "rows": 50_000}, {"id": "sampled_2k", "rows": 20_000}])
    add("sampled-turn", unit="turn", capture_batch_size=8,
        mix=[{"id": "sampled_2k", "rows": 20_000}, {"id": "sharegpt", "rows": 3000}])
    add("mix-unchecked", mix=[{"id": "openorca", "rows": 5, "include": False}])     # nothing planned
    add("mix-zero-rows", mix=[{"id": "openorca", "rows": 0}])
    add("mix-empty", mix=[])
    add("uniform-fixed", uniform={"samples": 5000, "tokens": 300, "response_tokens": 100},
        throughput__mode="fixed")
    pts = [{"drafter": "dflash", "target": "qwen3-8b", "family": fam, "training_tokens": tok, "epochs": ep,
            "eval_engine": "vllm", "tau": tau}
           for fam, tok, ep, tau in (("general", 1e8, 1, 3.1), ("general", 4e8, 2, 4.2), ("code", 2e8, 3, 3.9))]
    add("quality-points", quality__points=pts)
    add("quality-points-eagle3", layout="specforge-eagle3", quality__points=pts[:1])
    custom_model = {**model_presets()["qwen3-8b"].model_dump(mode="json"), "id": "my-8b", "name": "my 8B"}
    custom_gpu = {**gpu_presets()["h100-sxm"].model_dump(mode="json"), "id": "my-gpu", "name": "my GPU"}
    add("custom-model-gpu", model="custom", custom_model=custom_model, extraction_gpu="custom", custom_gpu=custom_gpu,
        training__gpu="custom")
    return out


def _both(p) -> str:
    """The CLI's JSON and, stricter (no rounding, every field's type: 1 and 1.0 differ), the Plan's own."""
    return json.dumps(to_json_dict(p), sort_keys=True) + "\t" + p.model_dump_json()


TRIMS = (("default", {}), ("custom", {"layout": "speculators", "extraction_gpu": "h100-sxm"}),
         ("turn-batch", {"unit": "turn", "capture_batch_size": 8}))


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    _sampled_component()
    cat = get_catalog()
    lines, refused = [], 0
    for name, d in scenarios():
        try:
            s = Scenario.model_validate(d)
            first, again = (_both(plan(x, cat)) for x in (s, Scenario.model_validate(d)))
        except PlannerInputError as exc:
            refused += 1
            lines.append(f"{name}\trefused: {exc}")
            continue
        assert first == again, f"{name}: planned again, the plan moved"
        lines.append(f"{name}\t{first}")
    for name, changes in TRIMS:
        s = default_scenario().with_changes(**changes)
        for strategy in STRATEGIES:
            kw = {"protect": ["tool"]} if strategy == "protect" else {}
            try:
                r = trim(s, Budget(storage_tb=20), strategy, catalog=cat, **kw)
            except PlannerInputError as exc:
                lines.append(f"trim-{name}-{strategy}\trefused: {exc}")
                continue
            d = to_json_dict(plan(r.scenario, cat))
            d["trim"] = json.loads(r.model_dump_json(exclude={"scenario"}))
            lines.append(f"trim-{name}-{strategy}\t{json.dumps(d, sort_keys=True)}")
    Path(sys.argv[1]).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} lines ({len(lines) - refused} planned or trimmed, {refused} refused) -> {sys.argv[1]}")


if __name__ == "__main__":
    main()
