"""Names a person gives (a pinned or linked scenario's) reach HTML in the printable report and in the
cost chart's labels (plotly draws them as HTML): escaped for HTML and, as everywhere third-party text is
shown, with newlines and bidi controls written out (planner.text.html_escape; issue 36, item 6)."""
from drafter_dashboard import figures, report
from planner import default_scenario, plan

NAME = "mine\u202e<b>x</b>\n\u2066y"
SHOWN = "mine\\u202e&lt;b&gt;x&lt;/b&gt;\\x0a\\u2066y"


def test_the_report_and_the_cost_chart_show_a_hostile_name_escaped():
    p = plan(default_scenario())
    html = report.build(p, {NAME: p})
    assert SHOWN in html and "\u202e" not in html and "\u2066" not in html and "<b>x" not in html
    fig = figures.cost_breakdown({NAME: p})
    labels = [str(x) for trace in fig.data for x in trace.x]
    assert SHOWN in labels and not any("\u202e" in x or "\n" in x for x in labels)
