"""--quality-points FILE (issue 22): your own runs refit the quality estimate's levels and curve,
worked by hand; the file validated like every input (one line naming the line and column)."""
import json

import pytest

from planner.drafter import DrafterKind
from planner.quality import quality
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
    from planner.scenario import Scenario
    from planner.cli._common import quality_points
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
    # QualityPoint.drafter takes its choices from planner.drafter.DRAFTER_KINDS (no Literal to edit)
    from pydantic import ValidationError
    from planner.drafter import DRAFTER_KINDS
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
