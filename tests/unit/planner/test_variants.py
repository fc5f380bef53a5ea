"""The variant registries (planner/variants.py, issue 19): a drafter kind, a capture-layer rule and an
export format are each one registered object, and registering one makes it usable end to end with
no other module edited; and no phase mutates the result it is given."""
import pytest
from pydantic import ValidationError

from planner.cli.main import main
from planner.errors import PlannerInputError
from planner.export.commands import EXPORT_FORMATS, ExportFormat, quote
from planner.export.manifest import build_manifest, dump_manifest
from planner.phases.harness import harness_presets
from planner.phases.quality import payback, quality_presets
from planner.phases.stored_bytes import Workload
from planner.phases.training import disaggregated
from planner.planning import plan
from planner.presets.drafter_kinds import DRAFTER_KINDS, DrafterKind
from planner.presets.layouts import LAYER_RULES, LayoutSpec, capture_layers, layout_presets
from planner.presets.specs import gpu_presets
from planner.scenario import Disaggregated, QualityPoint, Scenario


def test_the_registered_names_are_the_choices_everywhere():
    kinds = set(DRAFTER_KINDS)
    assert kinds == {"eagle3", "dflash", "eagle1"}
    # the presets keyed by kind: the quality curve, the paper's draft depth, each engine's usual K
    h = harness_presets()
    assert set(h.paper_depth) == kinds and all(set(e.k) == kinds for e in h.engines.values())
    # a user's own quality points name a kind: the registry's names, in the schema too
    assert QualityPoint.model_json_schema()["properties"]["drafter"]["enum"] == list(DRAFTER_KINDS)
    # every shipped layout names a registered kind and rule
    assert set(quality_presets().drafters) == kinds
    assert {s.drafter for s in layout_presets().values()} <= kinds
    assert {s.layer_rule for s in layout_presets().values()} == set(LAYER_RULES)
    with pytest.raises(PlannerInputError) as e:
        DRAFTER_KINDS.lookup("medusa")
    assert e.value.field == "layout" and "eagle3, dflash, eagle1" in str(e.value)
    with pytest.raises(ValueError, match="registered twice"):
        DRAFTER_KINDS.register("dflash", DRAFTER_KINDS["dflash"])


def test_a_new_layer_rule_is_one_registration():
    base = layout_presets()["eagle1"].model_dump()
    # outside the registration a layout naming the rule is refused when the preset is read
    with pytest.raises(ValidationError, match="not a registered layer rule"):
        LayoutSpec(**{**base, "layer_rule": "every-8th"})
    with LAYER_RULES.temporarily("every-8th", lambda L, n: list(range(8, L, 8))):
        spec = LayoutSpec(**{**base, "layer_rule": "every-8th", "append_last_layer": True})
        # L = 32: 8, 16, 24, then the last layer (32) the layout appends
        assert capture_layers(spec, 32, None, None) == [8, 16, 24, 32]
    assert "every-8th" not in LAYER_RULES


def _toy_epoch(kind, shape, k, r, params_scale):
    # 7 FLOPs per stored token and one trained position per token: per token 7, by hand
    return {"toy part": 7.0 * r.tokens}, r.tokens


def test_a_new_drafter_kind_is_one_registration_one_layout_and_one_curve(monkeypatch):
    toy = DrafterKind("toy", drafts_blocks=False, layer_input=1, fc_input=None, head_trainable=False, epoch=_toy_epoch)
    layout = LayoutSpec(**{**layout_presets()["eagle1"].model_dump(), "id": "toy-layout", "drafter": "toy"})
    # its preset entries: a layout (layouts.yaml), a quality curve (quality.yaml), the paper's depth
    # and each engine's K (harness.yaml)
    monkeypatch.setitem(layout_presets(), "toy-layout", layout)
    monkeypatch.setitem(quality_presets().drafters, "toy", quality_presets().drafters["eagle1"])
    h = harness_presets()
    monkeypatch.setitem(h.paper_depth, "toy", h.paper_depth["eagle1"])
    for e in h.engines.values():
        monkeypatch.setitem(e.k, "toy", e.k["eagle1"])
    with DRAFTER_KINDS.temporarily("toy", toy):
        p = plan(Scenario(layout="toy-layout"))
    assert p.training.flops_per_token == pytest.approx(7.0)
    assert p.training.drafter == "toy" and p.quality.drafter == "toy"
    assert "toy" not in DRAFTER_KINDS
    with pytest.raises(PlannerInputError, match="not a known drafter kind"):
        plan(Scenario(layout="toy-layout"))


def test_a_new_export_format_is_one_registration(tmp_path, capsys):
    path = tmp_path / "manifest.yaml"
    path.write_text(dump_manifest(build_manifest(Scenario(layout="speculators")), "yaml"))
    fmt = ExportFormat(lambda m, mp: f"echo {quote(m.scenario.layout)} {quote(mp)}\n", "shell")
    with EXPORT_FORMATS.temporarily("toy", fmt):
        assert main(["export", str(path), "--format", "toy"]) == 0
        assert capsys.readouterr().out == f"echo speculators {path}\n"
    # unregistered, the CLI refuses it as any unknown choice (exit 2, one line naming it)
    assert main(["export", str(path), "--format", "toy"]) == 2
    assert "invalid choice: 'toy'" in capsys.readouterr().err


def test_payback_returns_a_new_plan_and_leaves_its_input():
    qp = plan(Scenario()).quality
    before = qp.model_dump()
    new = payback(qp, serving_tokens_per_day=3.6e9, decode_tokens_per_s_per_gpu=1000.0, usd_per_gpu_hour=2.0,
                  one_off_usd=1000.0, gpu="H100")
    assert qp.model_dump() == before
    # 3.6e9 tokens a day at 1000 tokens/s = 1000 GPU-hours a day; at $2 and speedup s they save
    # 2000 (1 - 1/s) dollars a day, which repay $1000 in 1000 / that days
    s = qp.payback_speedup if qp.payback_speedup is not None else qp.speedup
    assert s > 1
    assert new.saved_usd_per_day == pytest.approx(2000 * (1 - 1 / s))
    assert new.payback_days == pytest.approx(1000 / (2000 * (1 - 1 / s)))
    assert new.serving_gpu == "H100" and new.serving_decode_tokens_per_s_per_gpu == 1000.0


def test_disaggregated_returns_a_new_plan_and_leaves_its_input():
    p = plan(Scenario())
    tp = p.training
    before = tp.model_dump()
    # capture-bound by construction: 8 capture GPUs x 1 token/s = 8 tokens/s, no stream bytes (no
    # network bound), trainers far faster; 28,800 tokens / 8 per s = 3,600 s = 1 h an epoch; the
    # 16 GPU-hours of regeneration on those 8 GPUs take 2 h
    work = Workload(conversations=10, rows=10, tokens=28_800, uncapped_tokens=28_800, output_tokens=0,
                    prefill_ctx_sum=0, decode_ctx_sum=0)
    new = disaggregated(tp, Disaggregated(), work, capture_gpus=8, train_gpus=8, tensor_parallel=1,
                        capture_tokens_per_s_per_gpu=1.0, regeneration_gpu_hours=16.0,
                        train_gpu=gpu_presets()["h100-sxm"], train_mfu=0.3, stream_bytes_per_token=0.0,
                        node_network_gbps=100.0, network_efficiency=1.0, max_row_tokens=1000.0)
    assert tp.model_dump() == before
    assert new.disaggregated_bound == "capture" and new.disaggregated_hours_per_epoch == pytest.approx(1.0)
    assert new.disaggregated_regeneration_hours == pytest.approx(2.0)
    assert new.disaggregated_wall_hours == pytest.approx(2.0 + tp.epochs * 1.0)
    assert new.warnings == tp.warnings
