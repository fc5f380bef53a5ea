"""The Assumptions table pairs the value in use with its own source: the preset's source when the
preset value is used, "yours" (and the preset's value for comparison) when the scenario changed it."""
from pathlib import Path

import yaml

from planner import Scenario, plan
from planner.scenario import Throughput, Training, Transfer, UniformMix

EFF = yaml.safe_load((Path(__file__).resolve().parent.parent / "planner" / "presets" / "hardware.yaml")
                     .read_text())["efficiency"]


def table(**kw) -> dict:
    s = Scenario(uniform=UniformMix(samples=10, tokens=1000, response_tokens=500), max_seq_len=None,
                 model="qwen3-8b", extraction_gpu="h100-sxm", **kw)
    return {a.name: a for a in plan(s).assumptions}


def test_preset_values_carry_the_preset_source():
    a = table()
    assert (a["training MFU"].value, a["training MFU"].tag) == ("0.35", "estimate")
    assert a["training MFU"].source == EFF["training_mfu"]["source"]
    assert a["decode bandwidth efficiency"].value == "0.8"
    assert a["decode bandwidth efficiency"].source == EFF["decode_bandwidth"]["source"]
    assert a["tensor-parallel efficiency"].source == EFF["tensor_parallel_efficiency"]["source"]
    assert (a["max decode batch"].value, a["max decode batch"].tag) == ("256", "published")
    # prefill MFU: the H100 SXM preset's 0.5 (gpus.yaml), with the range's source
    assert a["prefill MFU"].value == "0.5" and a["prefill MFU"].source.startswith("h100-sxm preset; ")
    assert a["transfer"].tag == "estimate"


def test_changed_values_are_yours_and_name_the_preset():
    a = table(training=Training(mfu=0.3), throughput=Throughput(decode_bandwidth_efficiency=0.65, prefill_mfu=0.42),
              transfer=Transfer(efficiency=0.7), compression=1.1)
    assert (a["training MFU"].value, a["training MFU"].tag) == ("0.3", "yours")
    assert "the preset's 0.35" in a["training MFU"].source
    assert (a["decode bandwidth efficiency"].value, a["decode bandwidth efficiency"].tag) == ("0.65", "yours")
    assert "the preset's 0.8" in a["decode bandwidth efficiency"].source
    assert (a["prefill MFU"].value, a["prefill MFU"].tag) == ("0.42", "yours")
    assert "the preset's 0.5" in a["prefill MFU"].source
    assert a["transfer"].tag == "yours" and "0.7 efficiency" in a["transfer"].value
    assert (a["compression"].value, a["compression"].tag) == ("1.1x", "yours")


def test_fixed_mode_lists_the_rate_not_the_roofline():
    a = table(throughput=Throughput(mode="fixed", tokens_per_s=90, batching=2))
    assert a["throughput"].value == "fixed 90 tok/s x 2 batching"
    assert "the preset's 120 tok/s x 4" in a["throughput"].source
    assert "prefill MFU" not in a and "decode bandwidth efficiency" not in a
