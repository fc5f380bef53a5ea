"""Issue 20, the planner side: storage as it is paid (where the placement puts the states, for the
time they are held), one serving workload for tau, the verdict with its break-evens and the road
from the article's bytes to this plan's. Every expected figure is worked by hand in the comments."""
import base64
import json
import os
import subprocess
import sys
import zlib

import pytest
import yaml

from planner import Scenario, plan
from planner.export.share import decode
from planner.export.versions import frozen_defaults
from planner.phases.costs import DAYS_PER_MONTH
from planner.scenario import Costs, Throughput, Training, Transfer, UniformMix
from tests.helpers import ROOT


def small(**kw):
    """1,000 samples x 1,000 tokens (500 generated) of Qwen3-8B, SpecForge EAGLE-3 layout: 8 x 4096 + 16
    = 32,784 bytes per token + 3,584 per file = 32,787,584,000 bytes = 0.032787584 TB (test_costs.py)."""
    base = dict(uniform=UniformMix(samples=1000, tokens=1000, response_tokens=500), max_seq_len="none",
                capture_batch_size=1, regenerate=True, model="qwen3-8b", layout="specforge-eagle3",
                extraction_gpu="h100-sxm", extraction_gpus=2, throughput=Throughput(mode="fixed", tokens_per_s=100,
                                                                                     batching=5),
                transfer=Transfer(method="none"), disk_capacity_tb=None,
                costs=Costs(extraction_usd_per_gpu_hour=3.0, training_usd_per_gpu_hour=2.0),
                training=Training(gpu="h100-sxm", gpus=16, epochs=3, disk="node-raid0"))
    base.update(kw)
    return Scenario(**base)


# ---------------------------------------------------------------- storage as it is paid
def test_local_placement_pays_no_rent_and_says_where():
    c = plan(small()).cost_usd
    # local placement, no transfer: the nodes' own disks, included in the node price
    assert c.storage_preset == "local" and c.storage_usd_per_tb_month == 0 and c.storage == 0


def test_shared_filesystem_and_object_store_defaults():
    # a shared filesystem is rented as a GPU cloud's network volume ($60/TB-month), an object-store
    # transfer keeps the states in S3 ($23, egress $0.09/GB)
    assert plan(small(placement="shared")).cost_usd.storage_preset == "network-volume"
    c = plan(small(transfer=Transfer(method="object_store", link_gbps=8, efficiency=0.5))).cost_usd
    assert c.storage_preset == "s3" and c.storage_usd_per_tb_month == 23.0
    # egress: 32.787584 GB x $0.09 = $2.95088256 (the object store's own)
    assert c.transfer == pytest.approx(2.95088256, rel=1e-9)


def test_rent_follows_the_time_held_and_keep_days():
    p0 = plan(small(costs=Costs(storage="s3")))
    p1 = plan(small(costs=Costs(storage="s3", keep_days=DAYS_PER_MONTH)))
    # keeping the states one more billing month (30.4375 days) adds one month of S3:
    # 0.032787584 TB x $23 = $0.754114432
    assert p1.cost_usd.storage - p0.cost_usd.storage == pytest.approx(0.754114432, rel=1e-9)
    assert p1.cost_usd.storage_months_held - p0.cost_usd.storage_months_held == pytest.approx(1.0)
    # the timeline itself: from the first write to the last epoch. In the fixed mode the capture rides
    # along the decode (capture_hours 0), so the states are written from the start: the whole wall-clock
    assert p0.extraction.capture_hours == 0
    assert p0.cost_usd.storage_days_held == pytest.approx(p0.wall_days_offline, rel=1e-12)
    # with a capture pass of its own, the regeneration before it holds nothing
    d = plan(Scenario(costs=Costs(storage="s3")))
    held_h = d.extraction.capture_hours + d.gather_hours + d.transfer_hours + d.training.offline_wall_hours
    assert d.cost_usd.storage_days_held == pytest.approx(held_h / 24, rel=1e-12)
    assert d.cost_usd.storage_days_held == pytest.approx(d.wall_days_offline - d.extraction.decode_hours / 24,
                                                         rel=1e-12)
    # --storage-months overrides it: 2 months of S3 = $1.508228864
    p2 = plan(small(costs=Costs(storage="s3", storage_months=2, keep_days=100)))
    assert p2.cost_usd.storage == pytest.approx(1.508228864, rel=1e-9)
    assert p2.cost_usd.storage_months_held == 2


def test_a_price_overrides_the_preset():
    c = plan(small(costs=Costs(storage="s3", storage_usd_per_tb_month=100, storage_months=1))).cost_usd
    # 0.032787584 TB x $100 x 1 month
    assert c.storage == pytest.approx(3.2787584, rel=1e-9)


def test_cli_storage_price_by_id_or_usd():
    from planner.cli._common import CliError, Parser, add_scenario_flags, scenario_from_args
    p = Parser()
    add_scenario_flags(p)
    s = scenario_from_args(p.parse_args(["--storage-price", "r2", "--keep-days", "7"]))
    assert s.costs.storage == "r2" and s.costs.keep_days == 7 and s.costs.storage_months is None
    s = scenario_from_args(p.parse_args(["--storage-price", "12.5"]))
    assert s.costs.storage is None and s.costs.storage_usd_per_tb_month == 12.5
    for bad in ("nowhere", "-1", "nan"):
        with pytest.raises(CliError, match="--storage-price"):
            scenario_from_args(p.parse_args(["--storage-price", bad]))


def _v5_link(scenario: dict) -> str:
    raw = json.dumps(scenario, separators=(",", ":"), sort_keys=True).encode()
    return "v5." + base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def test_a_version_5_link_keeps_its_month_of_network_volume_and_its_own_workload():
    v5 = frozen_defaults(5)["scenario"]
    s = decode(_v5_link(v5))
    assert s.costs.storage == "network-volume" and s.costs.storage_months == 1.0 and s.quality.workload == "mix"
    p = plan(s)
    # version 5 paid a network volume at $60/TB-month for one month, whatever the timeline
    assert p.cost_usd.storage == pytest.approx(p.storage_bytes_compressed / 1e12 * 60.0, rel=1e-12)
    # and scored tau on the mix's own training-token shares
    tokens = {}
    for c in p.components:
        tokens[c.family] = tokens.get(c.family, 0.0) + c.training_tokens
    total = sum(tokens.values())
    assert p.quality.workload["agentic"] == pytest.approx(tokens["agentic"] / total, rel=1e-12)


# ---------------------------------------------------------------- one serving workload
def test_dropping_any_component_never_raises_tau():
    from planner.catalog.stats import get_catalog
    cat = get_catalog()
    base = plan(Scenario(), cat, band=False)
    mix = [{"id": i, "rows": r} for i, r in cat.default_mix()]
    for m in mix:
        dropped = Scenario(mix=[dict(x, include=x["id"] != m["id"]) for x in mix])
        p = plan(dropped, cat, band=False)
        assert p.quality.workload == base.quality.workload, m["id"]     # what is served does not move
        assert p.quality.acceptance_length <= base.quality.acceptance_length + 1e-12, m["id"]


def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "planner", *args], cwd=cwd, capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def default_json(tmp_path_factory):
    """`planner estimate --json` of the default plan, run once for the tests below."""
    return json.loads(_cli("estimate", "--json", cwd=tmp_path_factory.mktemp("cli")))


def test_cli_drop_agentic_never_raises_tau(tmp_path, default_json):
    full = default_json["quality"]["acceptance_length"]
    dropped = json.loads(_cli("estimate", "--drop", "agentic", "--json", cwd=tmp_path))["quality"]
    assert dropped["acceptance_length"] < full


def test_trim_quality_quotes_the_tau_its_manifest_gives(tmp_path):
    out = json.loads(_cli("trim", "--strategy", "quality", "--budget-storage-tb", "20", "--out", "q.yaml",
                          "--json", cwd=tmp_path))
    again = json.loads(_cli("estimate", "--manifest", "q.yaml", "--json", cwd=tmp_path))
    assert out["trim"]["quality_after"] == pytest.approx(again["quality"]["acceptance_length"], rel=1e-12)


# ---------------------------------------------------------------- the verdict and its break-evens
def test_verdict_and_break_evens_worked_by_hand():
    from planner.decisions.verdict import verdict
    # S3 for one fixed month: storage 0.032787584 TB x $23 = $0.754114432. From test_costs.py: the
    # regeneration $0.833333 (both ways; capture rides along in the fixed mode), training offline at
    # EAGLE's per-step overhead floor (issue 33: 1,000 rows / 16 GPUs x 7 TTT passes x 0.030234 s =
    # 13.227375 s an epoch; the per-token floor's 15.9175 s before)
    # 3 x 13.227375 s x 16 x $2 / 3600 = $0.352730, online with the target forward 1.952762 s an epoch:
    # 3 x (13.227375 + 1.952762) x 16 x $2 / 3600 = $0.404804 ($0.0173579 more per epoch online).
    # offline $0.833333 + 0.352730 + 0.754114 = $1.940177; online 0.833333 + 0.404804 = $1.238137:
    # online is cheapest.
    # disaggregated: capture-bound 2 x 500 tok/s (the trainers' floor allows 1e6 / 13.227375 = 75,601),
    # 1e6 tokens = 1,000 s an epoch on 2 x $3 + 16 x $2:
    # 3 x 1,000 / 3600 x 38 = $31.666667 + the regeneration $0.833333 = $32.5
    p = plan(small(costs=Costs(extraction_usd_per_gpu_hour=3.0, training_usd_per_gpu_hour=2.0, storage="s3",
                               storage_months=1)))
    v = verdict(p)
    assert v.cheapest == "online"
    assert v.totals_usd["offline"] == pytest.approx(1.940177, rel=1e-6)
    assert v.totals_usd["online"] == pytest.approx(1.238137, rel=1e-5)
    assert v.totals_usd["disaggregated"] == pytest.approx(32.5, rel=1e-6)
    b = v.breakeven
    # offline wins once storage < 0.404804 - 0.352730 = $0.0520737 (the floor is paid both ways, so the
    # difference is the target forward alone: 3 x 0.0173579):
    # price 0.0520737 / 0.032787584 TB = $1.588216 per TB-month (one month)
    assert b["storage_usd_per_tb_month"] == pytest.approx(1.588216, rel=2e-5)
    # at $23: 0.0520737 / 0.754114432 = 0.0690528 months x 30.4375 = 2.10179 days
    assert b["days_held"] == pytest.approx(2.10179, rel=2e-5)
    # epochs: 0.754114432 / 0.0173579 per epoch = 43.4450 epochs (the month is fixed)
    assert b["epochs"] == pytest.approx(43.4450, rel=2e-5)
    # no transfer: the link moves nothing; the extraction GPUs only regenerate, which both ways pay
    assert b["link_gbps"] is None and b["extraction_gpu_usd_per_hour"] is None
    assert v.flips_to["storage_usd_per_tb_month"] == "offline"
    assert v.sentence.startswith("Online is cheapest: $1.24 against $1.94 offline")
    # the sentence turns when the price crosses its break-even
    below = verdict(plan(small(costs=Costs(extraction_usd_per_gpu_hour=3.0, training_usd_per_gpu_hour=2.0,
                                           storage_usd_per_tb_month=1.5, storage_months=1))))
    # offline $0.833333 + 0.352730 + 0.0327876 TB x $1.50 = $1.235 against online's $1.238137: $0.003 less, far
    # inside the training rate's band (hours x0.69-1.62 move online's 0.404804 more than offline's 0.352730): a tie
    assert below.cheapest == "offline" and below.tie and below.tied_with == ["online"]
    assert below.sentence.startswith("Offline and online tie: $1.24 against $1.24 online")


def test_estimate_text_and_json_carry_the_verdict(tmp_path, default_json):
    text = _cli("estimate", cwd=tmp_path)
    head = text.split("\n\n")[1]
    assert head.startswith("Verdict: ")
    # the blocking finding and its lossless fixes, first
    assert "  - BLOCKS: storage (82.11 TB) exceeds the 30.72 TB disk" in text
    assert "      fix: lossless first: a capture batch of 1 on 2 extraction nodes (16 GPUs): 36.7 TB" in text
    d = default_json
    v = d["verdict"]
    assert v["cheapest"] in ("offline", "online", "disaggregated")
    assert set(v["breakeven"]) == {"storage_usd_per_tb_month", "days_held", "epochs", "link_gbps",
                                   "extraction_gpu_usd_per_hour"}
    totals = {"offline": d["cost_usd"]["total_offline"], "online": d["cost_usd"]["total_online"],
              "disaggregated": d["cost_usd"]["total_disaggregated"]}
    # offline is blocked (82.11 TB on a 30.72 TB disk): the cheapest of the ways that run
    assert v["feasible"] == {"offline": False, "online": True, "disaggregated": True}
    assert v["blocked_by"]["offline"] == ["disk-capacity"]
    assert v["cheapest"] == "online" == min(("online", "disaggregated"), key=totals.get)


def test_sensitivity_sweeps_the_storage_price_and_the_time_held():
    from planner.decisions.sensitivity import sensitivity
    s = small(costs=Costs(extraction_usd_per_gpu_hour=3.0, training_usd_per_gpu_hour=2.0, storage="s3"))
    sw = {x.assumption: x for x in sensitivity(s)}
    price, held = sw["storage $/TB-month"], sw["storage time held"]
    # the presets run from $0 (local disks) to $60 (a GPU-cloud network volume)
    assert (price.low_label, price.high_label) == ("$0.00", "$60.00")
    assert price.low["usd"] < price.high["usd"]
    # one more billing month at $23: + 0.032787584 x 23 = $0.754114432
    assert held.high["usd"] - held.low["usd"] == pytest.approx(0.754114432, rel=1e-9)


# ---------------------------------------------------------------- the road from the article
def test_article_steps_worked_by_hand():
    from planner.export.report import article_hours_steps, article_steps
    p = plan(small())
    steps = {s.step: s.storage_bytes for s in article_steps(p)}
    n = 913_786
    assert steps["the article"] == n * 800 * 51_204 == 37_431_598_675_200
    # 1,000 tokens a conversation (responses regenerated at x1) at the article's 51,204 bytes
    assert steps["real lengths"] == n * 1000 * 51_204
    assert steps["the cap"] == n * 1000 * 51_204                      # no cap
    # SpecForge EAGLE-3: int64 ids and loss mask (16 bytes) beside the article's 5 x 5120 x 2 = 51,200
    assert steps["id and mask dtypes"] == n * 1000 * (51_200 + 16)
    assert steps["per-turn rows"] == steps["batch padding"] == n * 1000 * 51_216   # conversations, batch 1
    # its layers: 3 aux + last of Qwen3-8B's 4096 = 8 x 4096 + 16 = 32,784 bytes per token
    assert steps["the layout's layers"] == n * 1000 * 32_784
    # + 3,584 bytes per file, one file per conversation
    assert steps["file overhead"] == n * (1000 * 32_784 + 3_584)
    # the mix: 1,000 conversations, this plan's storage_bytes exactly
    assert steps["the mix"] == 1000 * (1000 * 32_784 + 3_584) == round(p.storage_bytes)
    hours = {s.step: s.hours for s in article_hours_steps(p)}
    assert hours["the article"] == pytest.approx(456_893_000 / 480 / 3600)          # 264.4 h
    # 1,000 x 500 generated tokens at the article's 480 tok/s, then 500 tok/s (100 x 5), then 2 GPUs
    assert hours["tokens to generate"] == pytest.approx(500_000 / 480 / 3600, rel=1e-12)
    assert hours["decode rate"] == pytest.approx(500_000 / 500 / 3600, rel=1e-12)
    assert hours["GPUs"] == pytest.approx(500_000 / 1000 / 3600, rel=1e-12)
    assert hours["capture pass"] == p.extraction.wall_hours          # it rides along in the fixed mode


def test_cli_waterfall_ends_at_storage_bytes(default_json):
    from planner.export.plan_json import plan_output
    others = [plan_output(plan(Scenario.model_validate(s))).model_dump()
              for s in ({"layout": "speculators"}, {"mix": [{"id": "sharegpt", "rows": 1000}]})]
    for d in [default_json, *others]:
        steps = d["against_article"]["steps"]
        assert steps[0]["storage_bytes"] == 37_431_598_675_200
        assert steps[-1]["storage_bytes"] == d["storage_bytes"], d["layout"]
        assert [s["step"] for s in steps] == ["the article", "real lengths", "the cap", "id and mask dtypes",
                                              "per-turn rows", "batch padding", "the layout's layers",
                                              "file overhead", "the mix"]
        assert d["against_article"]["extraction_hours_steps"][-1]["hours"] == d["extraction"]["wall_hours"]


# ---------------------------------------------------------------- blocking findings and nodes
def test_the_disk_blocker_names_its_lossless_fixes_first():
    p = plan(Scenario())
    f = next(f for f in p.findings if f.code == "disk-capacity")
    assert f.severity == "blocks"
    # issue 35: each fix is planned and checked. No batch padding leaves the rows' own tokens, 36.7 TB
    # (README: 2.24x less than the 82.1 TB padded): still over the 30.72 TB disk, so it is offered only
    # with ceil(36.71 / 30.72) = 2 extraction nodes of 8 GPUs, 36.71 / 2 = 18.36 TB on each
    assert f.fix.startswith("lossless first: a capture batch of 1 on 2 extraction nodes (16 GPUs): 36.7 TB "
                            "(from 82.1), 18.36 TB on each node, $917 offline (from $1,956)")
    # 82.11 TB over 30.72 TB disks: ceil(2.67) = 3 nodes of 8 GPUs, 82.11 / 3 = 27.37 TB on each; the
    # same GPU-hours, so the same dollars
    assert "; 3 extraction nodes (24 GPUs): 82.1 TB, 27.37 TB on each node, $1,956 offline;" in f.fix
    # a network volume at $60 per TB-month for the 4.208 days held: 82.11 x 60 x 4.208 / 30.4375 = $681.10
    # of rent on top of $1,956.25: $2,637
    assert "the states on a network volume at $60.00 per TB-month: 82.1 TB, $2,637 offline (from $1,956)" in f.fix
    # what does not clear the blocker alone says so, and what remains
    assert ("Not enough alone: a capture batch of 1 (36.7 TB: storage (36.71 TB) exceeds the 30.72 TB disk of its "
            "one node)") in f.fix
    assert f.fix.index("lossless first") < f.fix.index("Not enough alone") < f.fix.index("Otherwise: trim the mix")
    # the lossy fixes are checked too: fp8 states store 5 x 5,120 x 1 + 16 = 25,616 bytes a token against 51,216,
    # 82.11 x 25,616 / 51,216 = 41.07 TB (+ the files' overhead), still over the disk; a trim to the disk fits
    assert ("Otherwise: trim the mix in Budget to at most 30.72 TB (drops rows); fp8 hidden states (41.1 TB: "
            "storage (41.10 TB) exceeds the 30.72 TB disk of its one node); or give the real disk size") in f.fix


def test_each_training_node_share_is_checked_whatever_the_transfer():
    # 82.11 TB cross the link to one training node: its 40 TB disk blocks (before, only a gather was checked)
    p = plan(Scenario(training=Training(disk_capacity_tb=40.0)))
    assert p.transfer_method == "link"
    f = next(f for f in p.findings if f.code == "training-disk-capacity")
    assert "after the transfer (link) each of the 1 training node holds 82.11 TB, over its 40 TB disk" in f.text
    # two training nodes of 8 B200 hold 41.06 TB each: a 45 TB disk fits
    p = plan(Scenario(training=Training(gpus=16, disk_capacity_tb=45.0)))
    assert "training-disk-capacity" not in {f.code for f in p.findings}
    # no training disk given: said, as a note, when the share exceeds an extraction node's disk
    p = plan(Scenario())
    assert "training-disk-unchecked" in {f.code for f in p.findings}


# ---------------------------------------------------------------- what a trim proposal gives up
def test_trim_proposals_say_what_they_give_up():
    from planner.decisions.trim import Budget, every_strategy, trim
    s = Scenario()
    q = trim(s, Budget(storage_tb=20), "quality")
    zeroed = [c.id for c in q.changes if c.before and not c.after]
    assert zeroed and any(w.startswith(f"the quality strategy leaves {len(zeroed)} component") and
                          all(i in w for i in zeroed) for w in q.warnings)
    # the cap strategy keeps every row but shortens them: protected tool rows lose tokens, and it says so
    table = every_strategy(s, Budget(storage_tb=20), protect=["tool"])
    cap, _ = table["cap"]
    assert cap.max_seq_len_after < 2048
    assert any("cap cuts protected rows" in w and "glaive_fc" in w for w in cap.warnings)
    # protection reaches every strategy that scales rows: the tool components keep all their rows
    for k in ("proportional", "protect", "quality"):
        r, why = table[k]
        assert r is not None, why
        assert all(c.after == c.before for c in r.changes if c.id in ("glaive_fc", "qwen35_fc", "hermes_fc")), k
    # $10 leaves so few tokens that the expected speedup is below 1: called a slowdown
    small_budget = trim(s, Budget(usd=10), "proportional")
    assert small_budget.speedup_after < 1
    assert any("a slowdown" in w for w in small_budget.warnings)


def test_readme_states_the_versions_the_code_writes():
    from planner.export.versions import CURRENT
    readme = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "README.md", *(ROOT / "docs").rglob("*.md")))
    assert f"`s=v{CURRENT}.`" in readme and f"`schema_version` {CURRENT}" in readme
    assert f"links with `v{CURRENT}.`" in readme


def test_version_5_fixtures_give_the_plan_they_gave():
    """tests/fixtures/v5: a manifest and a link written by version 5's code (commit 644e52b, `git
    archive` run with this venv) for 50,000 sharegpt + 20,000 glaive_fc + 3,000 agentic rows over 4
    epochs, with the figures that code planned: a month of network volume at $60/TB-month and tau on
    the mix's own shares.

    What the version contract promises is the scenario: migrated to version 6 it is the scenario
    version 5 read (every field as written, a None workload as "mix") plus version 5's meaning for
    every input new in version 6 (tau on the paper's harness, the payback at the batch-1 speedup,
    nothing kept after the run; issue 22's training MFU default moved to 0.32, the fixture keeps
    its 0.3). The figures that scenario alone decides are kept exactly: the storage, its rent, the
    workload shares. A change of the model itself legitimately moves an old plan, and issue 22
    changed it: the per-sample overhead floor now binds this plan's training (8 x B200), the
    extraction is calibrated per phase, and the reference run's tokens are counted per family it
    covered, so the total offline cost (v5: $538.81) and tau (v5: 2.3828) are not compared."""
    from planner.export.manifest import load_manifest
    v5 = ROOT / "tests" / "fixtures" / "v5"
    fig = json.loads((v5 / "expected_figures.json").read_text())
    raw = yaml.safe_load((v5 / "manifest.yaml").read_text())["scenario"]
    # version 5's meaning of the inputs new in version 6 (planner/export/versions.py _scenario_5_to_6)
    v6_new = {"costs": {"keep_days": 0.0}, "quality": {"workload": "mix", "eval_engine": "paper", "temperature": 0.0,
                                                       "num_speculative_tokens": None, "serving_batch": 1.0,
                                                       "fleet_batch": 1.0, "points": None,
                                                       # issue 34, no version bump: a chain at TP 1, what every
                                                       # earlier version served
                                                       "topk": 1, "num_draft_tokens": None, "serving_tp": 1}}
    meant = {**raw, **{k: {**raw[k], **v} for k, v in v6_new.items()}}
    # issue 33's NeMo inputs, added without a version: None is NeMo's own default, what every older plan stored
    meant.update(draft_vocab_size=None, target_probs_topk=None)
    # issue 33's capture path, added without a version: None is the layout's pipeline's own path
    # (planner/export/versions.py says why an older link means that)
    meant.update(capture_path=None)
    for s in (load_manifest(v5 / "manifest.yaml").scenario, decode((v5 / "link.txt").read_text().strip())):
        assert s.model_dump(mode="json") == meant
        assert s.training.mfu == 0.3 and Scenario().training.mfu != 0.3
        p = plan(s)
        assert p.storage_bytes == pytest.approx(fig["storage_bytes"], rel=1e-12)
        # 7.328 TB x $60 x 1 month = $439.71
        assert p.cost_usd.storage == pytest.approx(fig["storage_bytes"] / 1e12 * 60, rel=1e-12)
        assert p.cost_usd.storage == pytest.approx(fig["storage_usd"], rel=1e-12)
        assert p.quality.workload == pytest.approx(fig["workload"], rel=1e-12)


def test_registry_carries_the_new_inputs_both_ways():
    from drafter_dashboard.registry import BY_PLACEMENT, FULL, OWN, SET, WL_MODE, from_widgets, to_widgets
    for costs, quality, mode in (({}, {}, FULL),
                                 ({"storage": "r2", "storage_months": 2.0, "keep_days": 5.0}, {"workload": "mix"}, OWN),
                                 ({"keep_days": 1.5}, {"workload": {"code": 1.0}}, SET)):
        s = Scenario.model_validate({"costs": costs, "quality": quality})
        dump = s.model_dump()
        w = to_widgets(dump)
        assert w[WL_MODE] == mode
        assert w["w_storage"] == (costs.get("storage") or BY_PLACEMENT)
        back = Scenario.model_validate({**dump, **from_widgets(w, dump)})
        assert back.costs == s.costs and back.quality.workload == s.quality.workload


def test_break_even_epochs_count_the_rent_of_each_epoch():
    from planner.decisions.verdict import verdict
    # S3 for the plan's timeline: each epoch's training wall-clock is rented too, so the closed-form
    # break-even (costs.py) and the one found on the real plan (verdict.py) are one number
    # (100 TB disks: offline runs, so it takes part in the verdict)
    p = plan(Scenario(costs=Costs(storage="s3"), disk_capacity_tb=100))
    v = verdict(p)
    assert v.cheapest == "online" and v.flips_to["epochs"] == "offline"   # more epochs favour offline
    assert p.training.breakeven_epochs == pytest.approx(v.breakeven["epochs"], rel=1e-8)
    # by hand: offline - online = fixed + E x (per-epoch offline + rent per epoch - per-epoch online)
    c, t = p.cost_usd, p.training
    rent_per_epoch = p.storage_bytes_compressed / 1e12 * 23 / (365.25 / 12) * t.offline_wall_hours / 3 / 24
    fixed = c.extraction - c.regeneration + c.transfer + c.storage - 3 * rent_per_epoch
    slope = (c.training_online - c.training_offline) / 3 - rent_per_epoch
    assert p.training.breakeven_epochs == pytest.approx(fixed / slope, rel=1e-12)


def test_cli_trim_says_what_a_proposal_changes_beyond_rows(tmp_path):
    # issue 35: the cap strategy at 20 TB cuts the sequence cap: the CLI prints it beside the rows, with the
    # share of each family's tokens it cuts (planner.decisions.trim.beyond_rows; a blocked proposal's warning:
    # tests/unit/planner/decisions/test_unblock.py)
    from planner.decisions.trim import Budget, trim
    cap = trim(Scenario(), Budget(storage_tb=20), "cap")
    out = _cli("trim", "--strategy", "cap", "--budget-storage-tb", "20", "--out", "c.yaml", cwd=tmp_path)
    assert f"  beyond rows: {cap.beyond_rows[0]}" in out.splitlines()
    assert cap.beyond_rows[0].startswith(f"cuts the sequence cap from 2,048 to {cap.max_seq_len_after:,} tokens: "
                                         "the agentic family loses")
