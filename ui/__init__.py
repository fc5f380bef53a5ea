"""Streamlit widgets of the dashboard. Logic lives in `planner`; this package only shows it."""
