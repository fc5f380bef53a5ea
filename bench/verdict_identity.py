"""Every verdict's output, byte for byte, over bench/plan_identity.py's scenarios: a speed change in the
verdict's break-evens must not move one.

    .venv/bin/python bench/verdict_identity.py OUT.jsonl      # one line per scenario that plans
    cmp BEFORE.jsonl AFTER.jsonl                              # byte-identical, or a verdict moved
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import plan_identity  # noqa: E402  (sets PLANNER_HOME before the planner is imported)

from planner.decisions.verdict import verdict  # noqa: E402
from planner.errors import PlannerInputError  # noqa: E402
from planner.planning import plan  # noqa: E402
from planner.scenario import Scenario  # noqa: E402


def main() -> None:
    out, refused = [], 0
    plan_identity._sampled_component()
    for name, data in plan_identity.scenarios():
        try:
            p = plan(Scenario.model_validate(data))
            out.append(f"{name}\t{verdict(p).model_dump_json()}")
        except (PlannerInputError, ValueError):
            refused += 1
    Path(sys.argv[1]).write_text("\n".join(out) + "\n")
    print(f"{len(out)} verdicts ({refused} scenarios refused) -> {sys.argv[1]}")


if __name__ == "__main__":
    main()
