"""Where tau is measured and the batch the speedup is given at (planner/phases/harness.py,
planner/presets/harness.yaml): the chain rule by hand, the fits recovering known factors, the paper
harness returning the reference levels, the engine defaults, the batch rule by hand, and the plan,
CLI and manifest wiring (issue 22)."""
import json

import pytest

from planner import default_scenario, plan
from planner.export.plan_json import to_json_dict
from planner.phases.harness import (
    ENGINES,
    EnginePair,
    Sweep,
    alpha_of,
    chain_tau,
    fit_batch,
    fit_engine,
    fitted,
    harness_presets,
    interpolator,
    kept,
    resolve,
    served_tau,
    speedup_at,
)
from planner.phases.quality import quality, reference_tokens, tau_function
from planner.scenario import Quality
from tests.helpers import assumed


def test_the_chain_rule_by_hand():
    # alpha 0.5, K 2: 1 + 0.5 + 0.25 = 1.75; alpha 1 commits all K + 1
    assert chain_tau(0.5, 2) == pytest.approx(1.75)
    assert chain_tau(1.0, 7) == 8.0
    # alpha 0.9, depth 7: (1 - 0.9^8) / 0.1 = (1 - 0.43046721) / 0.1 = 5.6953279
    assert alpha_of(5.6953279, 7) == pytest.approx(0.9, abs=1e-9)
    # served at factor 0.8 and K 3: alpha 0.72 -> 1 + 0.72 + 0.5184 + 0.373248 = 2.611648
    assert served_tau(5.6953279, 7, factor=0.8, k=3) == pytest.approx(2.611648, rel=1e-9)


def test_alpha_of_is_the_bisection_on_the_chain_rule_to_the_bit():
    """alpha_of writes chain_tau out in its loop (speed): the same 60 halvings on chain_tau itself give
    the same float, near alpha 1 too."""
    import math
    import random

    def bisect_on_chain_tau(tau, depth):
        if tau >= depth + 1:
            return 1.0
        if tau <= 1:
            return 0.0
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if chain_tau(mid, depth) < tau else (lo, mid)
        return (lo + hi) / 2
    rng = random.Random(3)
    cases = [(rng.uniform(0.5, d + 1.5), d) for d in range(1, 17) for _ in range(150)]
    cases += [(d + 1 - rng.random() * 1e-12, d) for d in range(1, 17)]     # alpha within 1e-13 of 1
    cases += [(math.nextafter(d + 1.0, 0), d) for d in range(1, 17)]     # tau one ulp under K + 1
    for tau, depth in cases:
        assert alpha_of(tau, depth) == bisect_on_chain_tau(tau, depth), (tau, depth)


def test_the_trims_interpolation_is_numpys_to_the_bit():
    """Harness.table's interpolator is np.interp for one float (left and right of the knots, on a
    knot, between them), without its array round trip."""
    import math
    import random

    import numpy as np
    xs = np.linspace(1.0, 7.3, 512)
    ys = np.array([1.7 * math.sqrt(x) + math.sin(3 * x) for x in xs])
    f = interpolator(xs.tolist(), ys.tolist())
    rng = random.Random(5)
    for x in [rng.uniform(0.5, 8.0) for _ in range(20_000)] + list(xs) + [0.0, 1.0, 7.3, 9.0]:
        assert f(x) == float(np.interp(x, xs, ys)), x
    assert math.isnan(f(float("nan")))
    h = resolve("dflash", "vllm", 0.4, None)
    t = h.table(6.0)
    # the table is the harness's rule at the knots: tau(1) at the first, tau(6) at the last
    assert t(1.0) == h.tau(1.0) and t(6.0) == h.tau(6.0) and t(7.0) == h.tau(6.0)


def test_the_engine_fit_recovers_a_known_factor():
    # pairs made at c = 0.8 (alpha 0.9 at depth 7, tau 5.6953279): K 3 -> 2.611648 (above);
    # K 2: 1 + 0.72 + 0.5184 = 2.2384
    pairs = [EnginePair(id=f"k{k}", source=f"s{k}", drafter="eagle3", target="t", bench="b", ref=5.6953279, d=7,
                        engine="vllm", k=k, t=0, tau=tau) for k, tau in ((3, 2.611648), (2, 2.2384))]
    assert fit_engine(pairs) == pytest.approx(0.8, abs=1e-6)


@pytest.mark.parametrize("kind", ["eagle3", "eagle1", "dflash"])
def test_the_papers_harness_returns_the_reference_levels(kind):
    h = resolve(kind, "paper", 0.0, None)
    assert h.k == harness_presets().paper_depth[kind].value and h.factor == 1.0
    for tau in (2.0, 4.24, 6.13):
        assert h.tau(tau) == pytest.approx(tau, rel=1e-9)


def test_engines_lower_tau_as_the_published_pairs_do():
    f = fitted()
    h = harness_presets()
    assert len(h.engine_pairs) >= 8 and all(p.source for p in h.engine_pairs)
    # every serving engine accepts less per position than the paper's harness (the pairs' ratios are
    # 0.39-0.99); temperature lowers it (AngelSlim T=1 / T=0: 0.72-0.91)
    for key, c in f.engine_factor.items():
        assert (c == 1.0) if key.startswith("paper") else (0.6 < c < 1.0), key
    assert 0.7 < f.temperature_factor < 1.0
    # the usual K: vLLM drafts EAGLE in a chain of 3, DFlash its block of 16 (15 drafted)
    assert resolve("eagle3", "vllm", 0, None).k == 3 and resolve("dflash", "vllm", 0, None).k == 15
    hot, cold = resolve("dflash", "vllm", 1.0, None), resolve("dflash", "vllm", 0.0, None)
    assert hot.tau(6.0) < cold.tau(6.0) < 6.0
    # the pair the issue quotes: EAGLE-3 on vLLM, K 7, 6.13 -> 3.53-3.54 measured; the band holds it
    v = resolve("eagle3", "vllm", 0.0, 7)
    import math
    assert v.tau(6.13) * math.exp(v.log_low) <= 3.53 <= v.tau(6.13) * math.exp(v.log_high)


def test_the_batch_rule_by_hand():
    # x_half 300, p 3, K 3: r(x) = 1 / (1 + (x / 300)^3); r(4) = 1 / (1 + 2.370e-6) = 0.99999763,
    # r(128) = 1 / (1 + 0.0776723) = 0.9279244; kept = 0.9279266; S(32) = 1 + 1 x 0.9279266
    assert kept(1, 3, 300, 3) == 1.0
    assert speedup_at(2.0, 32, 3, 300, 3) == pytest.approx(1.9279266, rel=1e-6)
    # synthetic sweeps made with x_half 300, p 3 are fitted back (grid step about 11% in x_half)
    sweeps = [Sweep(series=f"s{k}", source="x", engine="vllm", k=k,
                    points=[(1, 2.0)] + [(b, speedup_at(2.0, b, k, 300, 3)) for b in (16, 64, 128)]) for k in (3, 15)]
    xh, p = fit_batch(sweeps)
    assert xh == pytest.approx(300, rel=0.03) and p == pytest.approx(3, abs=0.1)


def test_the_plan_serves_where_it_is_told():
    s = default_scenario()
    served = plan(s).quality
    paper = plan(s.with_changes(quality={"eval_engine": "paper"})).quality
    # the default plan: vLLM, T 0, DFlash's usual K 15
    assert (served.eval_engine, served.temperature, served.num_speculative_tokens) == ("vllm", 0.0, 15)
    assert served.acceptance_length < paper.acceptance_length
    assert served.acceptance_low < served.acceptance_length < served.acceptance_high
    # the speedup at batch 1 (the papers') and at the fleet's 32 for the payback: lower
    assert served.serving_batch == 1 and served.fleet_batch == 32
    assert 1 < served.payback_speedup < served.speedup
    busy = plan(s.with_changes(quality={"serving_batch": 32})).quality
    assert busy.speedup == pytest.approx(served.payback_speedup, rel=1e-12)
    d = to_json_dict(plan(s))["quality"]
    assert d["eval_engine"] == "vllm" and d["num_speculative_tokens"] == 15 and d["payback_speedup"] > 1


def test_the_trims_fast_tau_is_quality_on_the_same_harness():
    tokens = {"general": 3e8, "code": 1e8, "math": 5e7}
    kw = dict(epochs=3, regenerated=True, workload={"general": 0.5, "code": 0.3, "math": 0.2}, engine="sglang",
              temperature=0.5, k=5, reference=reference_tokens("eagle3"))
    fast = tau_function("eagle3", **kw)(tokens)
    assert fast == pytest.approx(quality("eagle3", tokens, **kw).acceptance_length, rel=1e-4)


def _cli(capsys, *args):
    from planner.cli.main import main
    code = main(["estimate", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_flags_and_their_refusals(capsys):
    code, out, _ = _cli(capsys, "--eval-engine", "sglang", "--temperature", "0.5", "--num-speculative-tokens", "4",
                        "--serving-batch", "8", "--fleet-batch", "64", "--json")
    q = json.loads(out)["quality"]
    assert code == 0 and (q["eval_engine"], q["temperature"], q["num_speculative_tokens"], q["serving_batch"],
                          q["fleet_batch"]) == ("sglang", 0.5, 4, 8, 64)
    for args, text in ((("--eval-engine", "tgi"), "--eval-engine"), (("--temperature", "3"), "--temperature"),
                       (("--num-speculative-tokens", "0"), "--num-speculative-tokens"),
                       (("--fleet-batch", "0.5"), "--fleet-batch")):
        code, _, err = _cli(capsys, *args)
        assert code == 2 and text in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1


def test_a_version_5_manifest_keeps_the_papers_harness():
    from planner.export.versions import migrate_manifest
    m = migrate_manifest({"schema_version": 5, "scenario": {"quality": {}}})
    assert m["scenario"]["quality"]["eval_engine"] == "paper" and m["scenario"]["quality"]["fleet_batch"] == 1
    assert tuple(harness_presets().engines) == ENGINES


def test_the_written_constants_are_the_fit_of_the_pairs():
    from planner.phases.harness import refit
    new, old = refit(), fitted()
    for key, c in old.engine_factor.items():
        assert new.engine_factor[key] == pytest.approx(c, abs=1e-4), key
    assert new.temperature_factor == pytest.approx(old.temperature_factor, abs=1e-4)
    assert new.tau_band == pytest.approx(old.tau_band, abs=1e-4)
    assert (new.batch_x_half, new.batch_p) == pytest.approx((old.batch_x_half, old.batch_p), abs=1e-3)
    assert new.batch_band == pytest.approx(old.batch_band, abs=1e-4)


def test_another_target_moves_tau_by_its_size_and_says_why():
    # issue 22: the target-size term (tests/test_target_size.py works its numbers by hand) replaces
    # the low-side-only widening: the reference's target keeps its level, another moves it
    from planner.phases.quality import target_term
    ref = reference_tokens("eagle3")
    kw = dict(epochs=40, regenerated=True, workload={"general": 1}, engine="paper", reference=ref)
    same = quality("eagle3", ref, target="llama-3.1-8b", **kw)
    other = quality("eagle3", ref, target="qwen3.6-27b", **kw)
    tt = target_term("eagle3", "qwen3.6-27b")
    assert same.acceptance_length == pytest.approx(6.057, rel=1e-12)
    assert other.acceptance_length == pytest.approx(6.057 * tt.factor, rel=1e-12) and tt.factor < 1
    assert other.acceptance_low < other.acceptance_length < other.acceptance_high
    assert any(w.code == "quality-extrapolated" and "qwen3.6-27b" in w.text and "beta" in w.text
               for w in other.warnings)
    assert not any("beta" in w.text for w in same.warnings)


def test_the_harness_rows_name_the_engine_factor_and_the_batches():
    f = fitted()
    a = assumed()          # Qwen3-8B's default layout: a DFlash drafter, measured on vLLM at K 15, T 0
    assert a["tau measured on"].value == f"vLLM (chain drafting), K=15, T=0: acceptance x " \
        f"{f.engine_factor['vllm/block']:.3f} x {f.temperature_factor:.3f}^T"
    assert a["tau measured on"].tag == "estimate"
    assert a["speedup at the batch"].value.startswith("speedup given at batch 1; payback at the fleet's batch 32 ")
    a = assumed(quality=Quality(eval_engine="sglang", fleet_batch=64))
    sglang = f.engine_factor["sglang/block"]
    assert a["tau measured on"].value.startswith(f"SGLang, K=15, T=0: acceptance x {sglang:.3f}")
    # the engine and the fleet's batch changed from their defaults: yours
    assert (a["tau measured on"].tag, a["speedup at the batch"].tag) == ("yours", "yours")
