"""Where the planner finds its shipped catalog and keeps what it builds.

The shipped catalog is datasets_meta/components.yaml at the top of the repository; a wheel carries
the same file as package data (pyproject maps datasets_meta/ to planner.catalog.datasets_meta).
PLANNER_HOME (built DuckDB files, the user catalog) defaults to <repo>/.planner in a source
checkout and to the user's cache directory when installed as a package.
"""
from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
_REPO = _HERE.parent.parent


def _shipped_catalog() -> Path:
    try:
        packaged = resources.files("planner.catalog").joinpath("datasets_meta", "components.yaml")
        if packaged.is_file():
            return Path(str(packaged))
    except (ModuleNotFoundError, FileNotFoundError):  # pragma: no cover - defensive
        pass
    return _REPO / "datasets_meta" / "components.yaml"


SHIPPED_CATALOG = _shipped_catalog()
IN_SOURCE_TREE = SHIPPED_CATALOG == _REPO / "datasets_meta" / "components.yaml" and (_REPO / "pyproject.toml").is_file()


def load_shipped_yaml(path: Path) -> Any:   # parsed YAML, as the file is
    """A YAML file that ships with the package (planner/presets/*.yaml, the shipped catalog, the
    pipelines' flags), never a user's: parsed by libyaml's C parser when PyYAML has it, with the safe
    loader's own constructors and resolver (the same values; tests/unit/planner/catalog/test_paths_shipped_yaml.py
    checks every shipped file), about 8x faster than the pure-Python parser (157 ms -> 19 ms for all
    of them: what the first plan waited for)."""
    import yaml
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _default_home() -> Path:
    if IN_SOURCE_TREE:
        return _REPO / ".planner"
    from platformdirs import user_cache_dir
    return Path(user_cache_dir("drafter-planner", appauthor=False))


def planner_home() -> Path:
    home = Path(os.environ.get("PLANNER_HOME") or _default_home())
    home.mkdir(parents=True, exist_ok=True)
    return home


def user_catalog_path() -> Path:
    """Profiled (measured) components live here, never in the shipped catalog."""
    return planner_home() / "user_catalog.json"
