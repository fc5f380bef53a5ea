"""Bad input everywhere: clear messages naming the field and the value, no traceback, no change."""
import base64
import json
import math
import zlib

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from planner import PlannerInputError, Scenario, plan
from planner.cli.main import main
from planner.export.plan_json import to_json_dict
from planner.export.share import MAX_PARAM_CHARS, ShareError, decode, encode
from planner.planning import is_finite_plan
from planner.presets.specs import gpu_presets, layout_presets, model_presets
from tests.helpers import run_cli


# ---------------------------------------------------------------- URL state
def _pack(obj) -> str:
    return "v1." + base64.urlsafe_b64encode(zlib.compress(json.dumps(obj).encode())).decode().rstrip("=")


@pytest.mark.parametrize("text, message", [
    ("", "no scenario"),
    ("garbage", "not in a format"),
    ("v1.@@@@", "damaged"),
    ("v1." + "A" * (MAX_PARAM_CHARS + 10), "limit"),
    ("v1." + base64.urlsafe_b64encode(b"not zlib").decode(), "damaged"),
    (_pack([1, 2, 3]), "JSON object"),
    (_pack({"extraction_gpus": "many"}), "scenario.extraction_gpus"),
    (_pack({"mix": [{"id": "openorca", "rows": -1}]}), "scenario.mix.0.rows"),
    (_pack({"compression": 0.1}), "scenario.compression"),
    ("v1." + base64.urlsafe_b64encode(zlib.compress(b'{"compression": NaN}')).decode(), "NaN"),
])
def test_bad_links(text, message):
    with pytest.raises(ShareError) as e:
        decode(text)
    assert message in str(e.value)


def test_zip_bomb_link_is_refused():
    bomb = "v1." + base64.urlsafe_b64encode(zlib.compress(b"{" + b" " * 5_000_000 + b"}", 9)).decode()
    assert len(bomb) < MAX_PARAM_CHARS
    with pytest.raises(ShareError, match="size limit"):
        decode(bomb)


def test_link_round_trip():
    s = Scenario(mix=[{"id": "agentic", "rows": 7}], unit="turn", max_seq_len=None, compression=1.3)
    assert decode(encode(s)) == s
    # a link carries the whole scenario (a later default change cannot change its meaning); the
    # default mix spelled out (10 components) still fits far below the 8,000-character limit
    from planner.catalog.stats import get_catalog
    full = Scenario(mix=[{"id": i, "rows": r} for i, r in get_catalog().default_mix()])
    from planner.export.versions import CURRENT
    assert encode(full).startswith(f"v{CURRENT}.") and len(encode(full)) < 1500


# ---------------------------------------------------------------- CLI flags
@pytest.mark.parametrize("args, needle", [
    (["estimate", "--unit", "sentence"], "--unit"),
    (["estimate", "--max-seq-len", "-1"], "--max-seq-len"),
    (["estimate", "--max-seq-len", "8"], "--max-seq-len"),
    (["estimate", "--layers", "1,x"], "--layers"),
    (["estimate", "--layers", "1,999"], "layers"),
    (["estimate", "--link-gbps", "0"], "--link-gbps"),
    (["estimate", "--layout", "nosuch"], "--layout"),
    (["estimate", "--response-multiplier", "-2"], "--response-multiplier"),
    (["estimate", "--samples", "1e400", "--tokens", "5"], "--samples"),
    (["estimate", "--tokens", "5"], "--samples and --tokens"),
    (["nosuchcommand"], "invalid choice"),
    (["trim", "--budget-usd", "abc", "--out", "/tmp/x.yaml"], "--budget-usd"),
    (["trim", "--budget-usd", "10", "--strategy", "protect", "--protect", "nosuch", "--out", "/tmp/x.yaml"],
     "protect"),
    (["export", "/nonexistent.yaml", "--format", "speculators"], "cannot be read"),
])
def test_cli_flags(args, needle, capsys):
    # the CLI's main() in this process (a Python start a case less): the same exit code, message and one
    # line; an uncaught exception would propagate here and fail the case.
    # test_cli_flags_through_python_m_planner keeps one case on the `python -m planner` path.
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_cli_flags_through_python_m_planner():
    r = run_cli("estimate", "--layers", "1,x")
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "--layers" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- fuzzing valid scenarios
MODELS = [m for m in model_presets() if m != "deepseek-v3"]
GPUS = list(gpu_presets())


@st.composite
def scenarios(draw):
    model = draw(st.sampled_from(MODELS))
    L = model_presets()[model].num_layers
    mix = draw(st.one_of(
        st.none(),
        st.lists(st.tuples(st.sampled_from(["openorca", "sharegpt", "agentic", "glaive_fc", "code_alpaca",
                                            "magpie_pro", "gsm8k"]), st.integers(0, 10**7)),
                 min_size=1, max_size=7, unique_by=lambda t: t[0]).map(
            lambda xs: [{"id": i, "rows": r} for i, r in xs])))
    uniform = None
    if mix is None and draw(st.booleans()):
        tokens = draw(st.floats(1, 200_000))
        uniform = {"samples": draw(st.integers(1, 10**9)), "tokens": tokens,
                   "response_tokens": draw(st.floats(0, 1)) * tokens, "turns": draw(st.integers(1, 200))}
    return Scenario.model_validate({
        "mix": mix, "uniform": uniform, "model": model,
        "layout": draw(st.sampled_from(list(layout_presets()))),
        "layers": draw(st.one_of(st.none(), st.lists(st.integers(0, L), min_size=1, max_size=8, unique=True))),
        "hidden_dtype": draw(st.sampled_from([None, "bf16", "fp8"])),
        "unit": draw(st.sampled_from(["conversation", "turn"])),
        "max_seq_len": draw(st.one_of(st.none(), st.integers(16, 1_000_000))),
        "regenerate": draw(st.booleans()),
        "response_multiplier": draw(st.floats(0.1, 10)),
        "length_scale": draw(st.floats(0.1, 5)),
        "throughput": {"mode": draw(st.sampled_from(["roofline", "fixed"])),
                       "tokens_per_s": draw(st.floats(1, 1e5)), "batching": draw(st.floats(0.5, 1000)),
                       "max_batch": draw(st.integers(1, 4096))},
        "weight_dtype": draw(st.sampled_from(["bf16", "fp8"])),
        "extraction_gpu": draw(st.sampled_from(GPUS)), "extraction_gpus": draw(st.integers(1, 512)),
        "compression": draw(st.floats(1, 3)),
        "transfer": {"method": draw(st.sampled_from(["none", "link", "object_store", "drives"])),
                     "link_gbps": draw(st.floats(0.1, 800)), "efficiency": draw(st.floats(0.01, 1))},
        "training": {"gpu": draw(st.sampled_from(GPUS)), "gpus": draw(st.integers(1, 256)),
                     "epochs": draw(st.floats(0.1, 50))},
        "costs": {"storage_months": draw(st.floats(0, 24))},
    })


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=scenarios())
def test_plan_never_raises_nan_inf_or_negative(s):
    try:
        p = plan(s)
    except PlannerInputError as exc:
        # the one planned refusal: weights that fit no tensor-parallel group of this GPU
        assert exc.field == "extraction_gpu", exc
        assume(False)
    assert is_finite_plan(p)
    d = to_json_dict(p)

    def walk(x):
        if isinstance(x, float):
            assert math.isfinite(x) and x >= 0, x
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk({k: v for k, v in d.items() if k not in ("assumptions", "warnings")})
    json.dumps(d, allow_nan=False)


def test_a_link_with_more_saved_scenarios_than_a_session_holds_is_refused():
    # five identical scenarios compress into a short link, but a session keeps at most four: refused
    # before any of them is validated, in one sentence
    from planner.export.share import MAX_SAVED, ShareError, decode_set, encode_set
    from planner.scenario import Scenario
    s = Scenario()
    assert MAX_SAVED == 4
    pinned, saved = decode_set(encode_set(s, {f"s{i}": s for i in range(4)}))
    assert pinned == s and list(saved) == ["s0", "s1", "s2", "s3"]
    with pytest.raises(ShareError, match="the link holds 5 saved scenarios; at most 4"):
        decode_set(encode_set(None, {f"s{i}": s for i in range(5)}))
    with pytest.raises(ShareError, match="the link's saved scenarios are damaged"):
        decode_set("v5.!!!")
    with pytest.raises(ShareError, match="the link's scenario is not valid JSON"):
        import base64
        import zlib

        from planner.export.share import PREFIX, decode
        decode(PREFIX + base64.urlsafe_b64encode(zlib.compress(b"{nope")).decode().rstrip("="))


@pytest.mark.parametrize("name, needle", [
    ("pinned", "cannot be named 'pinned'"), (" Current ", "cannot be named 'Current'"),
    ("a\nb", "without control characters"), ("x" * 41, "1-40 characters"), ("", "1-40 characters"),
])
def test_saved_names_follow_one_rule_in_links_and_the_session(name, needle):
    from planner.export.share import ShareError, decode_set, encode_set, saved_name_problem
    from planner.scenario import Scenario
    assert needle in saved_name_problem(name)
    with pytest.raises(ShareError, match=needle.replace("(", r"\(")):
        decode_set(encode_set(None, {name: Scenario()}))
    assert saved_name_problem("[click](https://evil.example) <b>x</b>") is None   # allowed, shown escaped


def test_scenario_names_reach_the_compare_chart_escaped():
    from drafter_dashboard.figures import cost_breakdown
    from planner import plan
    from planner.scenario import Scenario
    p = plan(Scenario())
    fig = cost_breakdown({"current": p, "<a href='https://evil.example'>x</a>": p})
    assert list(fig.data[0].x) == ["current", "&lt;a href=&#x27;https://evil.example&#x27;&gt;x&lt;/a&gt;"]
