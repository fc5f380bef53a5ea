"""Issue 20, the page (AppTest wiring): undo that holds (apply, import and preset are one step each, in
a fresh session too, and the history survives a reload), the exports of every pipeline, the nodes,
compare's input differences and the delta modes."""
import pytest
from streamlit.testing.v1 import AppTest

from planner import default_scenario, plan
from planner.decisions.verdict import verdict
from planner.export.manifest import build_manifest, dump_manifest
from tests.app.test_wiring import APP, at, metric, open_tab, plain  # noqa: F401 (the fixture)


def _rows(app) -> dict:
    return {m["id"]: m["rows"] for m in app.session_state["mix_rows"]}


def test_undo_after_apply_in_a_fresh_session_restores_the_mix(at):
    before = _rows(at)
    assert at.button(key="w_undo").disabled            # nothing to undo yet
    open_tab(at, "Budget")
    at.number_input(key="w_b_storage").set_value(10.0).run()
    at.button(key="w_b_trim").click().run()
    at.button(key="w_b_apply").click().run()
    assert _rows(at) != before and not at.button(key="w_undo").disabled
    at.button(key="w_undo").click().run()
    assert _rows(at) == before
    at.button(key="w_redo").click().run()              # and redo brings the applied mix back
    assert _rows(at) != before


def test_a_preset_is_one_step_and_undo_goes_back_to_the_scenario_before_it(at):
    # the case: 4 GPUs -> load a preset -> Undo gave 8 (the step before the preset was skipped)
    at.number_input(key="w_ex_gpus").set_value(4).run()
    at.selectbox(key="w_preset_pick").set_value("seed-article").run()
    at.button(key="w_preset_load").click().run()
    assert at.session_state["w_preset"] == "seed-article"
    at.button(key="w_undo").click().run()
    assert at.number_input(key="w_ex_gpus").value == 4 and at.session_state["w_preset"] == "default"
    at.button(key="w_undo").click().run()
    assert at.number_input(key="w_ex_gpus").value == 8


def test_an_import_is_one_step(at):
    at.number_input(key="w_ex_gpus").set_value(3).run()
    s = default_scenario().with_changes(mix=[{"id": "openorca", "rows": 1000}], extraction_gpus=2)
    open_tab(at, "Export / import / profile")
    at.file_uploader(key="w_import").set_value(("m.yaml", dump_manifest(build_manifest(s)).encode(),
                                                "application/yaml")).run()
    assert _rows(at) == {"openorca": 1000} and at.number_input(key="w_ex_gpus").value == 2
    at.button(key="w_undo").click().run()
    assert at.number_input(key="w_ex_gpus").value == 3 and len(_rows(at)) > 1


def test_the_history_survives_a_reload_as_a_copy(at, tmp_path, monkeypatch):
    at.number_input(key="w_ex_gpus").set_value(4).run()
    at.number_input(key="w_ex_gpus").set_value(5).run()
    link = {k: at.query_params[k] for k in ("s", "h")}
    assert link["h"]
    # a reload is a new session with the same link
    again = AppTest.from_file(APP, default_timeout=90)
    for k, v in link.items():
        again.query_params[k] = v
    again.run()
    assert again.number_input(key="w_ex_gpus").value == 5 and not again.button(key="w_undo").disabled
    again.button(key="w_undo").click().run()
    assert again.number_input(key="w_ex_gpus").value == 4
    # the reloaded session wrote into a history of its own: the first one still has both steps
    assert again.query_params["h"] != link["h"]
    at.button(key="w_undo").click().run()
    at.button(key="w_undo").click().run()
    assert at.number_input(key="w_ex_gpus").value == 8
    # an unknown or malformed h= is ignored: nothing to undo, no error
    bad = AppTest.from_file(APP, default_timeout=90)
    bad.query_params["h"] = "../../etc/passwd"
    bad.run()
    assert not bad.exception and bad.button(key="w_undo").disabled


@pytest.fixture()
def files(monkeypatch):
    """What each download button hands the browser, by file name (AppTest keeps media in memory)."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    seen, real = {}, MemoryMediaFileStorage.load_and_get_id

    def spy(self, path_or_data, mimetype, kind, filename=None):
        seen[filename] = path_or_data.decode() if isinstance(path_or_data, bytes) else path_or_data
        return real(self, path_or_data, mimetype, kind, filename)
    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", spy)
    return seen


def test_the_export_panel_offers_specforge_commands_and_the_slurm_script_for_a_specforge_plan(at, files):
    open_tab(at, "Export / import / profile")      # the export panel is built while its tab is open
    # the default plan is blocked (its bytes do not fit the nodes' disks): the exports say so (issue 35 item 11)
    blocks = [f for f in plan(default_scenario()).findings if f.severity == "blocks"]
    warned = [w.value for w in at.warning if "cannot run as configured" in w.value]
    assert blocks and len(warned) == 1 and blocks[0].text.rstrip(".") in plain(warned[0]).replace("\u200b", "")
    # the default layout is SpecForge's DFlash: its pipeline comes first and is the one exported
    assert at.selectbox(key="w_x_format").options[0] == "specforge (this layout's)"
    labels = [b.label for b in at.download_button]
    assert "specforge commands" in labels and "Slurm script" in labels
    spec = files["specforge.sh"]
    # SpecForge's capture, with the layout's batch of 32 and cap of 2,048 (planner/presets/layouts.yaml)
    assert "scripts/prepare_hidden_states.py" in spec and "--batch-size 32" in spec and "--max-length 2048" in spec
    script = files["specforge-slurm.sh"]
    # 8 GPUs, 8 per node: one node, so one array task (0-0)
    assert script.startswith("#!/bin/bash\n# drafter planner: a Slurm array for specforge")
    assert "#SBATCH --array=0-0" in script
    at.number_input(key="w_x_nodes").set_value(4).run()
    assert "#SBATCH --array=0-3" in files["specforge-slurm.sh"]
    assert files["specforge-ranks.sh"].startswith("# specforge: capture on 4 nodes")
    # every other pipeline of the CLI is offered too
    assert set(at.selectbox(key="w_x_format").options) == {
        "specforge (this layout's)", "speculators", "modelopt", "nemo-automodel", "deepspec"}
    at.selectbox(key="w_x_format").set_value("deepspec").run()
    assert "prepare_target_cache.py" in files["deepspec.sh"] and "Slurm script" not in [
        b.label for b in at.download_button]
    # the speculators layout puts speculators first
    at.selectbox(key="w_layout").set_value("speculators").run()
    assert at.selectbox(key="w_x_format").options[0] == "speculators (this layout's)"
    # the link to copy carries the scenario but not the undo history
    link = next(c.value for c in at.code if "?s=" in c.value)
    assert "h=" not in link and at.query_params["h"]


def test_the_report_is_one_escaped_file_without_external_assets(at, files):
    evil = "<script>alert(1)</script>"
    at.number_input(key="w_ex_gpus").set_value(4).run()
    at.text_input(key="w_save_name").input(evil).run()
    at.button(key="w_save").click().run()
    at.number_input(key="w_ex_gpus").set_value(8).run()
    open_tab(at, "Export / import / profile")      # the report is built while the export tab is open
    html = files["drafter-plan.html"]
    assert evil not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    low = html.lower()
    assert "<script" not in low and "src=" not in low and "href=" not in low and "@import" not in low
    for part in ("Headline figures", "Compare", "Inputs that differ", "Assumptions", "@media print"):
        assert part in html, part
    # the saved scenario had 4 GPUs, the current one 8: the input differences table says so, naming the
    # input as the sidebar does (issue 35: not its code name, extraction_gpus)
    assert "<td>Extraction hardware: count</td><td>8</td><td>4</td>" in html and "extraction_gpus" not in html


def test_compare_shows_input_differences_bands_and_the_online_wall_clock(at):
    at.number_input(key="w_ex_gpus").set_value(4).run()
    at.button(key="w_pin").click().run()
    at.number_input(key="w_ex_gpus").set_value(8).run()
    open_tab(at, "Compare")
    frames = [df.value for df in at.dataframe]
    figures = next(f for f in frames if "figure" in f.columns)
    inputs = next(f for f in frames if "input" in f.columns)
    # only the inputs that differ: the GPU count (the nodes follow it)
    assert set(inputs["input"]) == {"Extraction hardware: count"}     # extraction_gpus, by its page name
    assert inputs.iloc[0].tolist() == ["Extraction hardware: count", "8", "4"]
    names = set(figures["figure"])
    assert {"Wall-clock online (days)", "Acceptance length (tau), 95% band low",
            "Acceptance length (tau), 95% band high"} <= names
    usd = figures[figures["figure"] == "Total offline (USD)"].iloc[0]
    assert usd["current"] == round(usd["current"])           # whole dollars, not $5,750.123
    tau = figures[figures["figure"] == "Acceptance length (tau)"].iloc[0]["current"]
    low = figures[figures["figure"] == "Acceptance length (tau), 95% band low"].iloc[0]["current"]
    high = figures[figures["figure"] == "Acceptance length (tau), 95% band high"].iloc[0]["current"]
    assert low < tau < high


def test_compare_gives_storage_in_the_pages_unit(at):
    """Compare follows the TB/TiB switch (issue 19: it used to divide by 1e12 whatever the unit)."""
    from planner import default_scenario, plan
    p = plan(default_scenario())
    at.radio(key="w_units").set_value("TiB").run()
    open_tab(at, "Compare")
    figures = next(df.value for df in at.dataframe if "figure" in df.value.columns)
    names = set(figures["figure"])
    assert "Storage (TiB)" in names and "Storage (TB)" not in names
    # bytes / 2^40, to 0.01: ~36.7e12 B is ~33.4 TiB, not the 36.7 of the TB figure
    got = figures[figures["figure"] == "Storage (TiB)"].iloc[0]["current"]
    assert got == pytest.approx(p.storage_bytes_compressed / 2**40, abs=0.006)


def test_the_report_gives_storage_in_the_pages_unit(at, files):
    """The HTML report follows the TB/TiB switch as Compare does (its build() takes the page's unit)."""
    at.radio(key="w_units").set_value("TiB").run()
    open_tab(at, "Export / import / profile")
    html = files["drafter-plan.html"]
    assert "Storage (TiB)" in html and "Storage (TB)" not in html


def test_deltas_since_my_last_change(at):
    # issue 35: the default is since my last change: 8 -> 16 GPUs halves the extraction days, so the delta
    # is minus half of the 8-GPU figure (the value shown now)
    assert at.radio(key="w_delta_mode").value == "since"
    at.number_input(key="w_ex_gpus").set_value(16).run()
    ex = next(m for m in at.metric if m.label.startswith("Extraction (days)"))
    assert ex.delta.startswith("-") and float(ex.delta[1:]) == pytest.approx(float(ex.value), abs=0.03)
    assert any("the scenario before the last change" in c.value for c in at.caption)
    # against the full mix a sidebar change moves the baseline too: no delta on extraction days
    at.radio(key="w_delta_mode").set_value("full").run()
    ex = next(m for m in at.metric if m.label.startswith("Extraction (days)"))
    assert not ex.delta


def test_a_model_change_shows_its_delta_by_default(at):
    # issue 35: with the old default (against the full mix) a model change moved the baseline too and
    # showed no delta at all; since my last change, qwen3.6-27b -> another model moves the storage
    before = next(m for m in at.metric if m.label.startswith("Storage"))
    assert not before.delta                     # nothing changed yet: the full mix, the same plan
    at.selectbox(key="w_model").set_value("qwen3-8b").run()
    after = next(m for m in at.metric if m.label.startswith("Storage"))
    # qwen3-8b's hidden width 4096 against 5120: fewer bytes per token, so the storage falls
    assert after.delta and after.delta.startswith("-") and after.value != before.value


def _nodes_table(app) -> dict:
    """The nodes panel's markdown table as {where: {column: cell}}."""
    text = next(m.value for m in app.markdown if m.value.startswith("| where |"))
    lines = [[c.strip().replace("\\", "") for c in line.strip("|").split("|")] for line in text.splitlines()]
    head, body = lines[0], lines[2:]
    return {r[0]: dict(zip(head, r, strict=False)) for r in body}


def test_nodes_show_each_training_nodes_share_against_its_disk_whatever_the_transfer(at):
    # 4 extraction nodes of 8 GPUs: each holds 82.11 / 4 = 20.53 TB, under its 30.72 TB disk; then a network
    # link to the training site (no gather is counted beside a transfer) and one training node with a 30 TB
    # disk: it receives all 82.11 TB, over its disk. The planner's finding checks the training disks only
    # without a transfer; the page shows it either way.
    at.number_input(key="w_ex_nodes").set_value(4).run()
    at.selectbox(key="w_transfer").set_value("link").run()
    at.number_input(key="w_tr_disk_cap").set_value(30.0).run()
    label = next(e.label for e in at.expander if e.label.startswith("Nodes:"))
    assert label.startswith("Nodes: 4 extraction, 1 training; no gather")
    assert "over the disk: each training node" in label
    rows = _nodes_table(at)
    assert rows["each extraction node"]["holds"] == "20.53 of 30.72 TB"
    assert rows["each extraction node"]["disk"] == "fits"
    assert rows["each training node"]["holds"] == "82.11 of 30.00 TB" and rows["each training node"]["disk"] == "over"
    assert "the transfer (link)" in rows["each training node"]["how"]
    # without a transfer the same bytes are gathered onto the training node, and the label says how long
    at.selectbox(key="w_transfer").set_value("none").run()
    label = next(e.label for e in at.expander if e.label.startswith("Nodes:"))
    assert "gather 82.11 TB in" in label and "over the disk: each training node" in label


def _shown(text: str) -> str:
    """A markdown-escaped sentence as the reader sees it (planner.text.md_escape undone)."""
    return text.replace("\\", "").replace("\u200b", "")


def test_the_page_shows_the_clis_verdict_and_leaves_the_blocked_way_out(at):
    # issue 35: the default plan's 82 TB do not fit the 30.72 TB disk: the page's verdict is the CLI's
    # sentence, which compares the ways that run (online against disaggregated), not offline's $1,956
    v = verdict(plan(default_scenario()))
    assert _shown(at.info[0].value) == v.sentence
    assert v.sentence.startswith("Offline cannot run as configured") and "online is cheapest" in v.sentence


def test_the_verdict_changes_where_the_storage_price_crosses_its_break_even(at):
    # with 100 TB disks offline runs; rent at $x per TB-month on the stored TB for the days held (the
    # timeline) makes online cheaper past planner.decisions.verdict's break-even for the page's scenario (read, not
    # hard-coded: it moves with the training and throughput model), so a price 10% below keeps offline
    # first, 10% above puts online first (both inside the bands: a tie, led by the cheaper)
    at.number_input(key="w_disk_cap").set_value(100.0).run()
    be = verdict(plan(default_scenario().with_changes(disk_capacity_tb=100.0))).breakeven["storage_usd_per_tb_month"]
    assert at.info[0].value.startswith("Offline and online tie")
    assert f"storage at ${be:,.2f}" in _shown(at.info[0].value)
    at.number_input(key="w_tb_price").set_value(round(be * 0.9, 2)).run()
    assert at.info[0].value.startswith("Offline and online tie")
    at.number_input(key="w_tb_price").set_value(round(be * 1.1, 2)).run()
    assert at.info[0].value.startswith("Online and offline tie")


def test_a_priced_store_charges_for_the_months_held(at):
    at.selectbox(key="w_storage").set_value("wasabi").run()
    before = metric(at, "Offline: store, train ($)")
    at.number_input(key="w_months").set_value(3.0).run()      # ~2.9 days of the timeline -> 3 months
    assert metric(at, "Offline: store, train ($)") > before


def test_the_article_tab_draws_both_waterfalls_ending_at_this_plan(at, files):
    open_tab(at, "Against the article")
    charts = at.get("plotly_chart")
    assert len(charts) == 2
    import json
    storage = json.loads(charts[0].proto.spec)["data"][0]
    # a waterfall: the article's 37.43 TB whole, then the causes, then this plan's 82.11 TB whole
    assert storage["measure"][0] == "absolute" and storage["measure"][-1] == "total"
    assert storage["y"][0] == pytest.approx(37.4316, abs=1e-3) and storage["y"][-1] == pytest.approx(
        metric(at, "Storage (TB)"), abs=0.006)
    # the steps between add up: the article + every change = this plan
    assert sum(storage["y"][:-1]) == pytest.approx(storage["y"][-1], rel=1e-9)
    hours = json.loads(charts[1].proto.spec)["data"][0]
    assert hours["y"][0] == pytest.approx(264.4, abs=0.1)    # 456,893,000 tokens / 480 tok/s / 3600
    # plotly draws the closing total at the running sum, not at its y: the hours' last step (the capture
    # pass, 9.96 h -> 31.93 h) is a change of its own, so the running sum reaches what the total says
    # (it stopped at 9.96 h while labelled 31.9 before issue 35)
    assert hours["x"][-2:] == ["capture pass", "this plan"] and hours["measure"][-2] == "relative"
    assert sum(hours["y"][:-1]) == pytest.approx(hours["y"][-1], rel=1e-9)
    assert hours["text"][-1] == f"{hours['y'][-1]:,.1f}"
    # the report carries both, as printable tables
    open_tab(at, "Export / import / profile")      # the report is built while the export tab is open
    html = files["drafter-plan.html"]
    assert "From the article&#39;s storage to this plan&#39;s" in html and "batch padding" in html


def test_frontier_points_on_one_spot_are_told_apart_and_sensitivity_labels_stay_off_the_names():
    from drafter_dashboard import figures
    from drafter_dashboard.charts import readable_frontier, readable_sensitivity
    # three strategies that all meet a 10 TB budget: one spot, three labels written over each other before
    pts = [("proportional", 10e12, 2.2, 1.1, 3.3), ("quality", 10e12, 2.6, 1.5, 3.5), ("full mix", 82e12, 3.9, 3.2,
                                                                                       4.1)]
    fig = readable_frontier(figures.quality_frontier(pts))
    assert all(tr.mode == "markers" and tr.showlegend for tr in fig.data)
    assert len({tr.marker.symbol for tr in fig.data}) == 3
    # each point at its own value (issue 35: a spread in data units drew 82.11 TB at 83.10 TB); the two
    # on one spot are told apart by size, the larger (drawn first, open) under the smaller
    assert [tr.x[0] for tr in fig.data] == [10.0, 10.0, 82.0]
    assert fig.data[0].marker.size > fig.data[1].marker.size and fig.data[0].marker.symbol.endswith("-open")
    from planner.decisions.sensitivity import Swing
    swing = Swing(assumption="compression", low_label="1.0x", high_label="2.0x", base={"storage_tb": 1.0},
                  low={"storage_tb": 1.0}, high={"storage_tb": 0.5})
    fig = readable_sensitivity(figures.sensitivity_chart([swing], "storage_tb"))
    low, high = fig.data
    assert low.text[0] == ""                                  # the end that moves nothing says nothing
    assert fig.layout.xaxis.range[0] <= -2 * 50               # room for the -50% label left of its bar


def test_a_proposals_tau_is_the_strategy_tables_and_the_headlines_after_apply(at):
    # one serving workload (the full mix's shares, fixed): the proposal, the table of every strategy and
    # the headline after Apply score the trimmed mix on the same workload, so they quote one number
    open_tab(at, "Budget")
    at.number_input(key="w_b_storage").set_value(10.0).run()
    at.selectbox(key="w_b_strategy").set_value("quality").run()
    at.button(key="w_b_trim").click().run()
    tau = at.session_state["_trim_result"][1].quality_after
    table = next(df.value for df in at.dataframe if "strategy" in df.value.columns)
    assert table.set_index("strategy").loc["quality", "acceptance length"] == pytest.approx(tau, abs=1e-9)
    at.button(key="w_b_apply").click().run()
    assert metric(at, "Acceptance length") == pytest.approx(round(tau, 2), abs=1e-9)


def test_a_budget_that_gives_a_slowdown_calls_it_one(at):
    # $10 buys almost no rows: the trimmed drafter is expected to slow decoding down (speedup < 1)
    open_tab(at, "Budget")
    at.number_input(key="w_b_usd").set_value(10.0).run()
    at.button(key="w_b_trim").click().run()
    r = at.session_state["_trim_result"][1]
    assert r.speedup_after < 1
    shown = plain(" ".join(m.value for m in at.markdown) + " ".join(w.value for w in at.warning)).replace("\u200b", "")
    assert f"slowdown: {r.speedup_after:.2f}x the speed without a drafter" in shown     # the proposal's totals
    table = next(df.value for df in at.dataframe if "strategy" in df.value.columns).set_index("strategy")
    assert table.loc["proportional", "speedup"].startswith("slowdown")


def test_the_reports_headline_table_carries_the_tau_band():
    from drafter_dashboard import report
    from planner import plan
    p = plan(default_scenario())
    q = p.quality
    html = report.build(p, {})
    # the acceptance length row: the figure, then its band low - high, each to 0.01
    row = f"<td>Acceptance length (tau)</td><td class=\"n\">{q.acceptance_length:.2f}</td>" \
          f"<td class=\"n\">{q.acceptance_low:.2f} - {q.acceptance_high:.2f}</td>"
    assert row in html
    assert "<h2>Compare</h2>" not in html          # nothing pinned or saved: no compare section


def test_the_report_carries_the_mix_the_blockers_readable_labels_and_the_assumptions_last_folded():
    """Issue 35: the report had no component, no row count and no blocking finding, labelled its
    break-evens with code keys and put 6,100 px of assumptions in the middle."""
    import re

    from drafter_dashboard import report
    from planner import plan
    from planner.decisions.verdict import verdict
    p = plan(default_scenario())
    html = report.build(p, {}, verdict(p))
    # the mix: a row per component with its rows selected and its training rows, then the total, whose
    # training rows are the headline's samples (913,786 selected, 913,760 after drop_last)
    openorca = next(c for c in p.components if c.id == "openorca")
    assert (f"<tr><td>openorca</td><td>{openorca.family}</td><td class=\"n\">{openorca.rows:,}</td>"
            f"<td class=\"n\">{openorca.training_rows:,.0f}</td>") in html
    assert '<tr><td>total</td><td></td><td class="n">913,786</td><td class="n">913,760</td>' in html
    # the blocking finding (82.11 TB over the node's 30.72 TB disk) with its fix
    block = next(f for f in p.findings if f.severity == "blocks")
    assert "<h2>What blocks this plan</h2>" in html and "exceeds the 30.72 TB disk" in html
    assert f"To fix: {block.fix[:40]}" in html
    # break-evens by name, not by key
    assert "<td>storage price ($ per TB-month)</td>" in html and "storage usd per tb month" not in html
    # the assumptions come last, inside a <details> that print opens
    headings = re.findall(r"<h2>([^<(]*)", html)
    assert headings[-1].strip() == "Assumptions"
    first = p.assumptions[0]
    assert html.index("<details") < html.index(f"<tr><td>{first.name}</td>")
    assert html.rstrip().endswith("</details>\n</body></html>")
    assert "details::details-content { content-visibility: visible" in html

