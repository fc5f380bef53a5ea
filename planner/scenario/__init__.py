"""The scenario: every input, its default and its bounds (model.py), each input's declaration
(inputs.py) and the user's quality-points CSV (quality_csv.py).

`from planner.scenario import Scenario` is the public path: the public names of model.py are
re-exported here (importing this package loads model.py)."""
from __future__ import annotations

from planner.scenario.model import (
    Costs,
    Disaggregated,
    MixItem,
    Quality,
    QualityPoint,
    Scenario,
    Throughput,
    Training,
    Transfer,
    UniformMix,
    WorkloadShares,
    default_scenario,
    gpus_on_nodes,
    input_name,
    node_count,
    seed_article_scenario,
)

__all__ = ["Costs", "Disaggregated", "MixItem", "Quality", "QualityPoint", "Scenario", "Throughput",
           "Training", "Transfer", "UniformMix", "WorkloadShares", "default_scenario", "gpus_on_nodes",
           "input_name", "node_count", "seed_article_scenario"]
