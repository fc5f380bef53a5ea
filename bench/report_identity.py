"""The text report (`planner estimate`, planner/export/report.py text_report) of every scenario of
bench/plan_identity.py, byte for byte: a change to how the report is written must not move a line.

    .venv/bin/python bench/report_identity.py OUT.txt        # the reports, one block per scenario
    cmp BEFORE.txt AFTER.txt                                 # byte-identical, or a report moved

Each scenario's report is written in TB and in TiB (--binary), and the default scenario's also as a
run's calibration labels it (`measured`). A scenario the planner refuses writes its message.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plan_identity import _sampled_component, scenarios  # noqa: E402  (sets PLANNER_HOME first)

from planner.catalog.stats import get_catalog  # noqa: E402
from planner.errors import PlannerInputError  # noqa: E402
from planner.export.report import text_report  # noqa: E402
from planner.planning import plan  # noqa: E402
from planner.scenario import Scenario  # noqa: E402


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    _sampled_component()
    cat = get_catalog()
    blocks = []
    for name, d in scenarios():
        try:
            p = plan(Scenario.model_validate(d), cat)
        except PlannerInputError as exc:
            blocks.append(f"=== {name}: refused: {exc}")
            continue
        blocks.append(f"=== {name} (TB)\n{text_report(p)}")
        blocks.append(f"=== {name} (TiB)\n{text_report(p, binary=True)}")
        if name == "preset-default":
            blocks.append(f"=== {name} (measured)\n{text_report(p, measured='measured: run-1')}")
    Path(sys.argv[1]).write_text("\n".join(blocks) + "\n", encoding="utf-8")
    print(f"{len(blocks)} reports -> {sys.argv[1]}")


if __name__ == "__main__":
    main()
