"""--quality-points FILE (issue 22): your own runs refit the quality estimate's levels and curve,
worked by hand; the file validated like every input (one line naming the line and column)."""
import json

import pytest

from planner.phases.quality import quality
from planner.presets.drafter_kinds import DrafterKind
from planner.scenario import QualityPoint


def _p(tokens, tau, family="general"):
    return QualityPoint(drafter="eagle3", target="llama-3.1-8b", family=family, training_tokens=tokens, epochs=1,
                        eval_engine="paper", tau=tau)


def test_two_runs_give_their_own_curve_and_levels():
    # general: tau 3 at 1e8 tokens and 4 at 4e8 (one epoch: g(1) = 1; the paper's harness: as measured)
    #   y1 2, y2 3, x 4, r 1.5: D_half = 4 (1 - 1.5) / (1.5 - 4) x 1e8 = 0.8e8
    #   the level at the largest run (4e8): from it 4; from the 1e8 run 1 + 2 x (4 / 4.8) / (1 / 1.8) = 4
    pts = [_p(1e8, 3.0), _p(4e8, 4.0)]
    kw = dict(epochs=1, regenerated=True, workload={"general": 1}, engine="paper", points=pts)
    assert quality("eagle3", {"general": 4e8}, **kw).acceptance_length == pytest.approx(4.0, rel=1e-9)
    assert quality("eagle3", {"general": 1e8}, **kw).acceptance_length == pytest.approx(3.0, rel=1e-9)
    # code, not measured: the preset level 6.74 moved by the measured mean ratio 4 / 6.057 -> 4.45105;
    # with general data only it sees 0.5 x 4e8 = 2e8 tokens: 1 + 3.45105 x (2 / 2.8) / (4 / 4.8) = 3.95804
    code = quality("eagle3", {"general": 4e8}, epochs=1, regenerated=True, workload={"code": 1}, engine="paper",
                   points=pts)
    assert code.acceptance_length == pytest.approx(1 + (6.74 * 4 / 6.057 - 1) * (2 / 2.8) / (4 / 4.8), rel=1e-9)
    assert any("refitted on your 2 point(s)" in w.text for w in code.warnings)
    # another drafter kind's runs change nothing
    assert quality("dflash", {"general": 4e8}, epochs=1, regenerated=True, workload={"general": 1},
                   points=pts).acceptance_length == \
        quality("dflash", {"general": 4e8}, epochs=1, regenerated=True, workload={"general": 1}).acceptance_length


def _cli(capsys, *args):
    from planner.cli.main import main
    code = main(["estimate", *args])
    out, err = capsys.readouterr()
    return code, out, err


HEADER = "drafter,target,family,training_tokens,epochs,eval_engine,tau\n"


def test_the_cli_reads_the_file_and_the_manifest_keeps_it(capsys, tmp_path):
    f = tmp_path / "runs.csv"
    f.write_text(HEADER + "dflash,qwen3.6-27b,general,2e8,3,vllm,2.4\ndflash,qwen3.6-27b,general,8e8,3,vllm,2.9\n")
    code, out, _ = _cli(capsys, "--quality-points", str(f), "--json")
    base_code, base, _ = _cli(capsys, "--json")
    assert code == base_code == 0
    assert json.loads(out)["quality"]["acceptance_length"] != json.loads(base)["quality"]["acceptance_length"]
    # the runs are part of the scenario, so a manifest or a link carries them
    from planner.cli._common import quality_points
    from planner.scenario import Scenario
    pts = quality_points("--quality-points", str(f))
    s = Scenario(quality={"points": pts})
    assert Scenario(**s.model_dump(mode="json")).quality.points[1].tau == 2.9


@pytest.mark.parametrize("body,needle", [
    ("a,b\n1,2\n", "the header must be"),
    (HEADER, "holds no rows"),
    (HEADER + "dflash,x,general,1e8,3,vllm,0.5\n", "line 2: tau"),
    (HEADER + "medusa,x,general,1e8,3,vllm,2\n", "line 2: drafter"),
    (HEADER + "dflash,x,general,lots,3,vllm,2\n", "line 2: training_tokens"),
    (HEADER + "dflash,x,general,1e8,3,tgi,2\n", "line 2: eval_engine"),
    # a run of 1e-300 tokens x 1e-300 epochs divided by zero in the curve fit (a traceback before)
    (HEADER + "dflash,x,general,1e-300,3,vllm,3\n", "line 2: training_tokens"),
    (HEADER + "dflash,x,general,1e8,1e-300,vllm,3\n", "line 2: epochs"),
    (HEADER + "dflash,x,general,1e8,3\n", "line 2 has 5 columns"),
    (HEADER + "dflash,x,general,1e8,3,vllm,2\n" * 1001, "more than 1000 rows"),
])
def test_a_bad_file_is_refused_in_one_line(capsys, tmp_path, body, needle):
    f = tmp_path / "runs.csv"
    f.write_text(body)
    code, _, err = _cli(capsys, "--quality-points", str(f))
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_special_files_and_binary_are_refused(capsys, tmp_path):
    (tmp_path / "bin.csv").write_bytes(b"\xff\xfe\x00garbage")
    for path, needle in (("/dev/zero", "character device"), (str(tmp_path), "directory"),
                         (str(tmp_path / "bin.csv"), "not UTF-8")):
        code, _, err = _cli(capsys, "--quality-points", path)
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_the_dashboard_keeps_the_runs_a_manifest_or_link_brings():
    # the runs have no control; the widgets' scenario keeps those of the scenario they were loaded from
    # (checked in a browser-free AppTest by hand: a link with two runs shows tau 2.80 against 3.19)
    from drafter_dashboard import registry
    from planner.scenario import Scenario
    s = Scenario(quality={"points": [_p(1e8, 3.0).model_dump(), _p(4e8, 4.0).model_dump()]})
    back = Scenario(**registry.from_widgets(registry.to_widgets(s.model_dump(mode="json")), s.model_dump()))
    assert back.quality.points == s.quality.points
    assert Scenario(**registry.from_widgets(registry.to_widgets(Scenario().model_dump(mode="json")),
                                            Scenario().model_dump())).quality.points is None


def test_a_drafter_kind_registered_once_is_a_valid_points_drafter():
    # QualityPoint.drafter takes its choices from planner.presets.drafter_kinds.DRAFTER_KINDS (no Literal to edit)
    from pydantic import ValidationError

    from planner.presets.drafter_kinds import DRAFTER_KINDS
    toy = DrafterKind("toy", drafts_blocks=False, layer_input=1, fc_input=None, head_trainable=False,
                      epoch=DRAFTER_KINDS["eagle1"].epoch)
    row = dict(target="llama-3.1-8b", family="general", training_tokens=1e8, epochs=1, eval_engine="paper", tau=3.0)
    with pytest.raises(ValidationError, match=r"Input should be 'eagle3', 'dflash' or 'eagle1'"):
        QualityPoint(drafter="toy", **row)
    with DRAFTER_KINDS.temporarily("toy", toy):
        assert QualityPoint(drafter="toy", **row).drafter == "toy"
        # the schema written now lists it, and the message names it among the choices
        assert QualityPoint.model_json_schema()["properties"]["drafter"]["enum"] == ["eagle3", "dflash", "eagle1",
                                                                                    "toy"]
        with pytest.raises(ValidationError, match=r"Input should be 'eagle3', 'dflash', 'eagle1' or 'toy'"):
            QualityPoint(drafter="medusa", **row)
    with pytest.raises(ValidationError):
        QualityPoint(drafter="toy", **row)


# One small run far below the plan's size (the bug: a run measuring a low tau raised the forecast
# threefold). DFlash's published shape (quality.yaml): 1.5e8 tokens tau 4.767 and 1.2e9 tokens tau
# 6.203, D_half 69,113,223; s(D) = D / (D + D_half).
#   s(1.2e9) = 1.2e9 / 1.269113e9 = 0.945542, s(1.5e8) = 1.5e8 / 2.191132e8 = 0.684580,
#   s(2e6) = 2e6 / 7.111322e7 = 0.028124
# The run: 2e6 tokens, one epoch, tau 2.1 on the paper's harness (what it measures is what it gives).
# Before: its level 2.1 was carried to a 1.2e9-token plan by s(1.2e9) / s(2e6) = 33.62:
#   1 + 1.1 x 33.62 = 38, clipped to the chain's ceiling 16 (K 15) -- far above the published 4-5.
# Now the shape carries tau - 1 at most the rise it was measured over,
#   cap = s(1.2e9) / s(1.5e8) = 0.945542 / 0.684580 = 1.38120: 1 + 1.1 x 1.38120 = 2.5193,
# above the run's own 2.1 (more data) and below the published forecast for the same setting.
DF_D_HALF = 69113223.0


def _df(tokens, tau, family="general", engine="paper"):
    return QualityPoint(drafter="dflash", target="qwen3-8b", family=family, training_tokens=tokens, epochs=1,
                        eval_engine=engine, tau=tau)


def _s(d):
    return d / (d + DF_D_HALF)


def _plan(tokens, pts, engine="paper"):
    return quality("dflash", {"general": tokens}, epochs=1, regenerated=True, workload={"general": 1},
                   engine=engine, points=pts)


def test_one_small_run_moves_the_estimate_the_way_it_points():
    cap = _s(1.2e9) / _s(1.5e8)
    assert cap == pytest.approx(1.38120, rel=1e-5)
    q = _plan(1.2e9, [_df(2e6, 2.1)])
    assert q.acceptance_length == pytest.approx(1 + 1.1 * cap, rel=1e-6)          # 2.5193
    published = _plan(1.2e9, None).acceptance_length
    assert 2.1 < q.acceptance_length < published
    # the band: above the run, its floor is the run's own level kept flat (2.1); its top the shape's
    # uncapped carry (38), clipped at the chain's ceiling 16, so it covers the published forecast too
    assert q.acceptance_low == pytest.approx(2.1, rel=1e-9)
    assert q.acceptance_high == pytest.approx(16.0, rel=1e-9)
    assert q.acceptance_low < published < q.acceptance_high


def test_the_brief_s_vllm_run_lowers_the_default_plan(capsys, tmp_path):
    # the bug report: one run of 2M tokens measuring tau 2.1 on vLLM took the default plan from 3.16 to
    # 8.91; it must now stay between the run's own 2.1 and the published 3.16
    f = tmp_path / "runs.csv"
    f.write_text(HEADER + "dflash,qwen3-8b,general,2000000,1,vllm,2.1\n")
    _, out, _ = _cli(capsys, "--quality-points", str(f), "--json")
    _, base, _ = _cli(capsys, "--json")
    mine, pub = json.loads(out)["quality"], json.loads(base)["quality"]
    assert 2.1 < mine["acceptance_length"] < pub["acceptance_length"]
    assert mine["acceptance_low"] < 2.1 and mine["acceptance_high"] > pub["acceptance_length"]


def test_a_run_at_the_plan_s_own_size_gives_its_own_tau():
    # carry factor s(D) / s(D) = 1: the level is the run's tau, the band closes on it (paper's harness)
    q = _plan(1.2e9, [_df(1.2e9, 3.0)])
    assert (q.acceptance_length, q.acceptance_low, q.acceptance_high) == pytest.approx((3.0, 3.0, 3.0), rel=1e-9)
    # measured on vLLM, served on vLLM: carried to the paper's harness and back, the same 2.1
    assert _plan(1.2e9, [_df(1.2e9, 2.1, engine="vllm")], engine="vllm").acceptance_length == \
        pytest.approx(2.1, rel=1e-6)


def test_two_runs_that_rise_keep_their_own_curve_uncapped():
    # 2e6 tokens tau 2.1, 2e7 tau 2.6 (paper's harness): y1 1.1, y2 1.6, x 10, r 1.454545:
    #   D_half = 10 (1 - r) / (r - 10) x 2e6 = 1.063830e6; their cap is r itself (the curve passes both)
    #   to 1.2e9: s(1.2e9) / s(2e7) = 0.999114 / 0.949495 = 1.052258 < cap: 1 + 1.6 x 1.052258 = 2.68361,
    # the same as before the cap (which binds only past the rise the runs measured)
    h = 10 * (1 - 1.6 / 1.1) / (1.6 / 1.1 - 10) * 2e6
    s = lambda d: d / (d + h)  # noqa: E731
    q = _plan(1.2e9, [_df(2e6, 2.1), _df(2e7, 2.6)])
    assert q.acceptance_length == pytest.approx(1 + 1.6 * s(1.2e9) / s(2e7), rel=1e-9)
    assert q.acceptance_length == pytest.approx(2.68361, rel=1e-5)


def test_the_band_widens_with_the_distance_from_the_runs():
    pts = [_df(2e6, 2.1)]
    # the top follows the shape's uncapped carry from 2e6, widened by 1 + ln(D / 2e6): at 4e6
    # 1 + 1.1 x s(4e6) / s(2e6) = 1 + 1.1 x 1.946 = 3.14 at least; it reaches the chain's ceiling (16)
    # by 2e8 and stays there
    qs = [_plan(d, pts) for d in (2e6, 4e6, 8e6, 2e7, 2e8, 1.2e9)]
    widths = [q.acceptance_high - q.acceptance_low for q in qs]
    assert widths[0] == pytest.approx(0.0, abs=1e-9)          # at the run itself: its own tau
    # measured from your runs, not from the published points' 150M-1,200M (which hold 1.2e9)
    assert qs[5].extrapolated and any("runs you measured for DFlash (2M-2M tokens)" in w.text for w in qs[5].warnings)
    assert all(b > a for a, b in zip(widths[:4], widths[1:4], strict=False))
    assert qs[1].acceptance_high >= 1 + 1.1 * _s(4e6) / _s(2e6)
    assert qs[4].acceptance_high == qs[5].acceptance_high == pytest.approx(16.0)
    # and the trim's fast tau function gives the capped estimate too
    from planner.phases.quality import tau_function
    f = tau_function("dflash", epochs=1, regenerated=True, workload={"general": 1}, engine="paper", points=pts)
    assert f({"general": 1.2e9}) == pytest.approx(_plan(1.2e9, pts).acceptance_length, rel=1e-3)
