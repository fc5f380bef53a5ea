"""The planner's version, in a module of its own: what imports it loads nothing else."""
__version__ = "0.1.0"
