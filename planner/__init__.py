"""drafter data planner: what a speculative-decoding drafter's training data will cost.

The package never imports streamlit: the dashboard, the CLI and the tests all call `plan()`.
"""
__version__ = "0.1.0"

from planner.errors import PlannerInputError  # noqa: E402
from planner.plan import Plan, plan  # noqa: E402
from planner.scenario import Scenario, default_scenario, seed_article_scenario  # noqa: E402

__all__ = ["Plan", "PlannerInputError", "Scenario", "default_scenario", "plan", "seed_article_scenario", "__version__"]
