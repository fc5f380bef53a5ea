"""The Assumptions table (planner/phases/assumptions.py): the declared rows pair the value in use with its own
source (the preset's source when the preset value is used, "yours" and the preset's value for comparison when
the scenario changed it), and `assumptions()` gathers every phase's rows, phase by phase, in one order. Each
phase's own rows are tested beside its module (test_extraction.py, test_transfer.py, test_training*.py, ...)."""
from planner import Scenario, plan
from planner.scenario import Throughput, Training
from tests.helpers import assumed, efficiency_presets

EFF = efficiency_presets()


table = assumed     # the Assumptions rows of a small uniform plan, by name (tests/helpers.py)


def test_preset_values_carry_the_preset_source():
    a = table()
    assert (a["training MFU"].value, a["training MFU"].tag) == (f"{EFF['training_mfu']['value']:g}", "estimate")
    assert a["training MFU"].source == EFF["training_mfu"]["source"]
    assert a["decode bandwidth efficiency"].value == "0.8"
    assert a["decode bandwidth efficiency"].source == EFF["decode_bandwidth"]["source"]
    assert a["tensor-parallel efficiency"].source == EFF["tensor_parallel_efficiency"]["source"]


def test_changed_values_are_yours_and_name_the_preset():
    a = table(training=Training(mfu=0.42), throughput=Throughput(decode_bandwidth_efficiency=0.65), compression=1.1)
    assert (a["training MFU"].value, a["training MFU"].tag) == ("0.42", "yours")
    assert f"the preset's {EFF['training_mfu']['value']:g}" in a["training MFU"].source
    assert (a["decode bandwidth efficiency"].value, a["decode bandwidth efficiency"].tag) == ("0.65", "yours")
    assert "the preset's 0.8" in a["decode bandwidth efficiency"].source
    assert (a["compression"].value, a["compression"].tag) == ("1.1x", "yours")


def test_the_rows_come_phase_by_phase_with_each_declared_row_beside_its_phase():
    names = [a.name for a in plan(Scenario()).assumptions]
    # the default scenario (Qwen3.6-27B, DFlash, the catalog's mix): what is stored (mix_storage.py), the hardware
    # (nodes.py, with the declared compression), the storage bill (costs.py), training (training.py, with the
    # declared training MFU) and its drafter's quality (quality.py, harness.py, serving.py) before its epochs, the
    # extraction's throughput (extraction.py, with its two declared efficiencies; throughput_calibration.py) and
    # the target's architecture, the transfer (transfer.py), then the catalog's mix statistics
    assert names == [
        "target model", "capture layout", "sample unit", "max sequence length", "capture batch", "responses",
        "tokens per sample",
        "compression", "extraction GPU", "training GPU", "nodes", "placement", "weights", "extraction disk",
        "storage price", "storage time held",
        "training MFU", "training per-sample floor and band", "drafter parameters", "DFlash anchors",
        "DFlash block size", "drafter head",
        "drafter quality curve", "transfer between families", "serving workload", "regenerated responses",
        "tau measured on", "speedup at the batch", "the cycle as served", "the band's drafter-quality term",
        "epochs",
        "prefill MFU", "decode bandwidth efficiency", "tensor-parallel efficiency", "usable GPU memory",
        "scheduler caps", "decode compute efficiency", "KV cache", "prefill calibration", "decode calibration",
        "linear-attention state", "forward parameters", "model estimate",
        "transfer",
        "mix statistics"]
    # a uniform mix has no catalog statistics: no last row
    assert "mix statistics" not in table()
