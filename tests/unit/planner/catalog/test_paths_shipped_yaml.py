"""The shipped YAML files (presets, the shipped catalog, the pipelines' flags) are parsed by
libyaml's C parser (planner/catalog/paths.py load_shipped_yaml, ~8x faster: what the first plan
waited for): it must give what PyYAML's pure-Python safe_load gives, value for value and type for
type, for every file that ships."""
from pathlib import Path

import pytest
import yaml

from planner.catalog.paths import SHIPPED_CATALOG, load_shipped_yaml

ROOT = Path(__file__).resolve().parents[4]
SHIPPED = sorted((ROOT / "planner").rglob("*.yaml")) + [SHIPPED_CATALOG]


def _typed(x):
    """x with the type of every value spelled out (1 and 1.0 and True compare equal in Python)."""
    if isinstance(x, dict):
        return {_typed(k): _typed(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_typed(v) for v in x]
    return (type(x).__name__, x)


def test_every_shipped_yaml_file_is_found():
    names = {p.name for p in SHIPPED}
    assert {"models.yaml", "gpus.yaml", "hardware.yaml", "layouts.yaml", "throughput.yaml", "quality.yaml",
            "harness.yaml", "pipeline_flags.yaml", "components.yaml"} <= names


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_the_fast_parser_gives_what_safe_load_gives(path):
    with open(path, encoding="utf-8") as fh:
        slow = yaml.safe_load(fh)
    fast = load_shipped_yaml(path)
    assert _typed(fast) == _typed(slow)
    assert repr(fast) == repr(slow)          # the keys in the same order too


def test_the_c_parser_is_the_one_used():
    # libyaml ships in PyYAML's wheels: without it the speed-up is gone (the values stay the same)
    assert hasattr(yaml, "CSafeLoader")
