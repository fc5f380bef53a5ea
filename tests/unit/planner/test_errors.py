"""Issue 35: an error message names the input as a person knows it, says a too-small value is too small
(and what to give), and never prints a whole model as the bad value."""
import pytest
from pydantic import ValidationError

from planner.errors import describe_validation_error
from planner.scenario import Scenario, input_name


def _message(data: dict, **kw) -> str:
    with pytest.raises(ValidationError) as exc:
        Scenario.model_validate(data)
    return describe_validation_error(exc.value, prefix="scenario", **kw)


def test_a_value_past_a_bound_says_too_small_or_too_large_and_what_to_give():
    # scenario.py: compression ge=1, transfer.efficiency le=1, training.gpus ge=1
    assert _message({"compression": 0.5}) == "scenario.compression: 0.5 is too small; give 1 or more"
    assert _message({"transfer": {"efficiency": 5}}) == "scenario.transfer.efficiency: 5 is too large; give at most 1"
    assert _message({"training": {"gpus": 0}}, name=input_name) == "Training: count: 0 is too small; give 1 or more"
    # the flag already names it (the CLI): the path is not said twice
    assert _message({"compression": 0.5}, name=lambda _: "") == "0.5 is too small; give 1 or more"


def test_a_part_given_whole_is_named_not_dumped():
    # a cross-field check fails with the whole model as its input: its message, never the dict
    text = _message({"extraction_nodes": 3, "extraction_gpus": 8})
    assert "{" not in text and "extraction_nodes 3 x gpus_per_node 8 = 24 GPUs" in text
    with pytest.raises(ValidationError) as exc:
        Scenario.model_validate({"training": {"gpus": 2, "gpu": "b200", "epochs": [1, 2]}})
    assert "[1, 2]" not in describe_validation_error(exc.value)


def test_inputs_are_named_by_their_section_and_label():
    assert input_name("training.gpus") == "Training: count"
    assert input_name("scenario.extraction_gpus") == "Extraction hardware: count"
    assert input_name("costs.storage_usd_per_tb_month") == "Prices: $/TB-month (blank = preset's)"
    assert input_name("mix.openorca") == "mix: openorca"
    assert input_name("uniform.samples") == "uniform.samples"      # no label: the path, as it is


def test_cli_says_the_flag_once(capsys):
    from planner.cli.main import main
    assert main(["estimate", "--compression", "0.5"]) != 0
    assert capsys.readouterr().err.strip().splitlines()[-1] == \
        "planner: error: --compression: 0.5 is too small; give 1 or more"
