"""The sidebar alone, in the real page (AppTest) with every section open: the time of
sidebar.render over 30 reruns after a scenario change (printed, never asserted), or with --widgets
OUT every sidebar widget's kind, key, label, help, options, range, step, state and value in eleven
states of the page (fixed mode, shared placement, each transfer method, a custom model and GPU, an
EAGLE layout, set workload shares ...), written as JSON to compare two checkouts.

    .venv/bin/python bench/sidebar.py [ROOT] [--widgets OUT]   # ROOT: a checkout (default: this one),
                                                               # e.g. `git archive REV | tar -x -C DIR`
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

STATES = [{}, {"w_tp_mode": "fixed"}, {"w_placement": "shared"}, {"w_transfer": "object_store"},
          {"w_transfer": "drives"}, {"w_model": "custom"}, {"w_ex_gpu": "custom"}, {"w_layout": "specforge-eagle3"},
          {"w_wl_mode": "set"}, {"w_regen": False}, {"w_cap_mode": "cap"}]
KINDS = ("number_input", "selectbox", "radio", "toggle", "checkbox", "text_input")


def _app(root: Path, sidebar):
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(root / "app.py"), default_timeout=120)
    for key in sidebar.SECTIONS.values():
        at.session_state[key] = True
    at.run()
    return at


def _snapshot(at) -> list[dict]:
    out = []
    for kind in KINDS:
        for w in getattr(at.sidebar, kind):
            d = {"kind": kind, "key": w.key, "label": w.label, "help": getattr(w, "help", None),
                 "disabled": getattr(w, "disabled", None), "value": repr(w.value)}
            for a in ("options", "min", "max", "step"):
                if hasattr(w, a):
                    d[a] = [str(x) for x in getattr(w, a)] if a == "options" else repr(getattr(w, a))
            out.append(d)
    return sorted(out, key=lambda d: (d["kind"], str(d["key"])))


def main(argv: list[str]) -> int:
    out = argv[argv.index("--widgets") + 1] if "--widgets" in argv else None
    rest = [a for a in argv if a not in ("--widgets", out)]
    root = Path(rest[0] if rest else Path(__file__).resolve().parent.parent).resolve()
    sys.path.insert(0, str(root))
    os.chdir(root)
    os.environ["PLANNER_HOME"] = tempfile.mkdtemp(prefix="planner-sidebar-") + "/home"
    from drafter_dashboard import sidebar
    if out:
        result = {}
        for state in STATES:
            at = _app(root, sidebar)
            for key, value in state.items():
                next(w for k in ("selectbox", "radio", "toggle") for w in getattr(at.sidebar, k) if w.key == key) \
                    .set_value(value)
            at.run()
            if at.exception:
                raise SystemExit(f"{state}: {at.exception}")
            result[json.dumps(state)] = _snapshot(at)
        Path(out).write_text(json.dumps(result, indent=1, sort_keys=True), encoding="utf-8")
        print(f"{root}: {sum(map(len, result.values()))} widgets in {len(result)} states -> {out}")
        return 0
    times: list[float] = []
    render = sidebar.render

    def timed(*a, **k):
        t = time.perf_counter()
        try:
            return render(*a, **k)
        finally:
            times.append((time.perf_counter() - t) * 1000)
    sidebar.render = timed
    at = _app(root, sidebar)
    times.clear()
    for i in range(30):
        at.number_input(key="w_ex_gpus").set_value(1 + i % 7)
        at.run()
    print(f"{root}: sidebar.render {statistics.median(times):.1f} ms median, {min(times):.1f} ms fastest "
          "(30 reruns, every section open)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
