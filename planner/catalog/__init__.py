"""The dataset catalog: the shipped component statistics (datasets_meta/components.yaml), the
user's profiled components, the DuckDB build, and the profiler that measures local files."""
