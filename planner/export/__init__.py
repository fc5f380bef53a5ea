"""What leaves the planner: manifests, shared links, pipeline commands and materialized rows."""
