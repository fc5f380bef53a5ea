"""The Assumptions table pairs the value in use with its own source: the preset's source when the
preset value is used, "yours" (and the preset's value for comparison) when the scenario changed it."""
from pathlib import Path

import yaml

from planner import Scenario, plan
from planner.scenario import Throughput, Training, Transfer, UniformMix

EFF = yaml.safe_load((Path(__file__).resolve().parents[4] / "planner" / "presets" / "hardware.yaml")
                     .read_text())["efficiency"]


def table(**kw) -> dict:
    s = Scenario(uniform=UniformMix(samples=10, tokens=1000, response_tokens=500), max_seq_len=None,
                 model="qwen3-8b", extraction_gpu="h100-sxm", **kw)
    return {a.name: a for a in plan(s).assumptions}


def test_preset_values_carry_the_preset_source():
    a = table()
    assert (a["training MFU"].value, a["training MFU"].tag) == (f"{EFF['training_mfu']['value']:g}", "estimate")
    assert a["training MFU"].source == EFF["training_mfu"]["source"]
    assert a["decode bandwidth efficiency"].value == "0.8"
    assert a["decode bandwidth efficiency"].source == EFF["decode_bandwidth"]["source"]
    assert a["tensor-parallel efficiency"].source == EFF["tensor_parallel_efficiency"]["source"]
    # vLLM's scheduler defaults for an 80 GB H100 (>= 70 GiB), with the line they were read from
    assert (a["scheduler caps"].value, a["scheduler caps"].tag) == \
        ("max_num_seqs 1,024, max_num_batched_tokens 16,384", "published")
    assert "vllm/engine/arg_utils.py" in a["scheduler caps"].source
    assert (a["decode compute efficiency"].value, a["decode compute efficiency"].source) == \
        (f"{EFF['decode_mfu']['value']:g}", EFF["decode_mfu"]["source"])
    # prefill MFU: the H100 SXM preset's 0.5 (gpus.yaml), with the range's source
    assert a["prefill MFU"].value == "0.5" and a["prefill MFU"].source.startswith("h100-sxm preset; ")
    assert a["transfer"].tag == "estimate"


def test_changed_values_are_yours_and_name_the_preset():
    a = table(training=Training(mfu=0.42), throughput=Throughput(decode_bandwidth_efficiency=0.65, prefill_mfu=0.42,
                                                                 max_batch=64),
              transfer=Transfer(efficiency=0.7), compression=1.1)
    assert (a["training MFU"].value, a["training MFU"].tag) == ("0.42", "yours")
    assert f"the preset's {EFF['training_mfu']['value']:g}" in a["training MFU"].source
    assert (a["scheduler caps"].value, a["scheduler caps"].tag) == \
        ("max_num_seqs 64, max_num_batched_tokens 16,384", "yours")
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
