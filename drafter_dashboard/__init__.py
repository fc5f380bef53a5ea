"""The Streamlit dashboard's widgets (app.py stays thin); everything it shows comes from planner."""
