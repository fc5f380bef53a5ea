"""Every trim strategy's answer over several budgets, byte for byte: a refactor of planner/decisions/trim.py
(or of the searches it shares) must not move one.

    .venv/bin/python bench/trim_identity.py OUT.jsonl        # one line per (scenario, budget, strategy)
    cmp BEFORE.jsonl AFTER.jsonl                             # byte-identical, or an answer moved

bench/plan_identity.py covers every strategy at a 20 TB storage budget; this adds the other budgets
(dollars, days, GPU-days, TiB, two budgets at once), the guardrails (min_cap, a family minimum,
weights, protection under every strategy) and the every_strategy table with its not-distinguishable
marks. A budget a strategy cannot meet writes its one-line message.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plan_identity import _sampled_component  # noqa: E402  (sets PLANNER_HOME first)

from planner.catalog.stats import get_catalog  # noqa: E402
from planner.errors import PlannerInputError  # noqa: E402
from planner.decisions.trim import STRATEGIES, Budget, every_strategy, not_distinguishable, trim  # noqa: E402
from planner.scenario import default_scenario  # noqa: E402

SCENARIOS = (("default", {}), ("speculators-h100", {"layout": "speculators", "extraction_gpu": "h100-sxm"}),
             ("modelopt", {"layout": "modelopt-eagle3"}), ("turn-batch", {"unit": "turn", "capture_batch_size": 8}),
             ("uniform", {"uniform": {"samples": 100_000, "tokens": 1200, "response_tokens": 500}}))
BUDGETS = (("tb10", {"storage_tb": 10}), ("tib30", {"storage_tib": 30}), ("usd1500", {"usd": 1500}),
           ("days3", {"days": 3}), ("gpudays5", {"gpu_days": 5}), ("tb40-usd1800", {"storage_tb": 40, "usd": 1800}),
           ("tb0.001", {"storage_tb": 0.001}))
OPTIONS = (("plain", {}), ("mincap", {"min_cap": 2048}), ("family", {"min_family_share": {"code": 0.5}}),
           ("protect", {"protect": ["tool"]}), ("weights", {"weights": {"sharegpt": 3.0}}))


def _line(r) -> str:
    return r.model_dump_json()


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    _sampled_component()
    cat = get_catalog()
    lines = []
    for sname, changes in SCENARIOS:
        try:
            s = default_scenario().with_changes(**changes)
        except Exception as exc:  # noqa: BLE001  (a scenario this tree refuses is written, not fatal)
            lines.append(f"{sname}\tscenario refused: {exc}")
            continue
        for bname, b in BUDGETS:
            budget = Budget(**b)
            for oname, opt in OPTIONS:
                for strategy in STRATEGIES:
                    key = f"{sname}-{bname}-{oname}-{strategy}"
                    try:
                        lines.append(f"{key}\t{_line(trim(s, budget, strategy, catalog=cat, **opt))}")
                    except PlannerInputError as exc:
                        lines.append(f"{key}\trefused: {exc}")
            every = every_strategy(s, budget, protect=["tool"], catalog=cat)
            table = {k: (r.model_dump(mode="json", exclude={"scenario"}) if r else None, why)
                     for k, (r, why) in every.items()}
            marks = not_distinguishable({k: r for k, (r, _) in every.items()})
            lines.append(f"{sname}-{bname}-every\t{json.dumps([table, marks], sort_keys=True)}")
    Path(sys.argv[1]).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} lines -> {sys.argv[1]}")


if __name__ == "__main__":
    main()
