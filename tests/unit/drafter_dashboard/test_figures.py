"""Figure builders are pure functions of a Plan: their data is checked without a browser."""
import pytest

from drafter_dashboard.figures import (
    phase_timeline,
    rows_vs_bytes,
    sensitivity_chart,
    storage_by_component,
    storage_vs_rows,
)
from planner import default_scenario, plan
from planner.decisions.sensitivity import sensitivity


@pytest.fixture(scope="module")
def p():
    return plan(default_scenario())


def test_storage_by_component_sums_to_the_plan(p):
    fig = storage_by_component(p)
    total = sum(sum(t.y) for t in fig.data)
    assert total == pytest.approx(p.storage_bytes_compressed / 1e12)
    assert {t.name for t in fig.data} == {"general", "code", "agentic", "tool"}
    tib = storage_by_component(p, binary=True)
    assert sum(sum(t.y) for t in tib.data) == pytest.approx(p.storage_bytes_compressed / 2**40)


def test_rows_vs_bytes_shares(p):
    rows, nbytes = rows_vs_bytes(p).data
    assert sum(rows.y) == pytest.approx(100) and sum(nbytes.y) == pytest.approx(100)
    agentic = list(rows.x).index("agentic")
    # ~1.6% of rows; its bytes share is larger, even capped at 2,048 tokens (unpadded rows: with
    # SpecForge's batch padding every short component is stored near the cap too)
    q = plan(p.scenario.with_changes(capture_batch_size=1))
    rows, nbytes = rows_vs_bytes(q).data
    assert rows.y[agentic] < 2 and nbytes.y[agentic] > 2 * rows.y[agentic]


def test_timeline_adds_up(p):
    fig = phase_timeline(p)
    offline = [t for t in fig.data if t.y[0] == "offline"]
    online = [t for t in fig.data if t.y[0] == "online"]
    end = lambda ts: max(t.base[0] + t.x[0] for t in ts)  # noqa: E731
    assert end(offline) == pytest.approx(p.extraction.wall_hours + p.transfer_hours + p.training.offline_wall_hours)
    assert end(online) == pytest.approx(p.extraction.decode_hours + p.training.online_wall_hours)


def test_sensitivity_swings(p):
    swings = {s.assumption: s for s in sensitivity(p.scenario, p)}
    comp = swings["compression"]
    # storage on disk is raw / compression: from the default 1x, 2x halves it
    assert comp.high["storage_tb"] == pytest.approx(comp.base["storage_tb"] / 2)
    assert comp.low_label == "1.0x" and comp.high_label == "2.0x"
    tok = swings["tokens per sample"]
    assert tok.low["storage_tb"] < tok.base["storage_tb"] < tok.high["storage_tb"]
    link = swings["link efficiency"]
    assert link.low["wall_days"] > link.base["wall_days"] > link.high["wall_days"]
    for metric in ("storage_tb", "wall_days", "usd"):
        fig = sensitivity_chart(list(swings.values()), metric)
        assert len(fig.data) == 2 and list(fig.data[0].y) == list(swings)   # one panel: low and high bars
    # compression does not move the wall-clock days when capture is compute-bound: "no effect", not an empty row
    texts = dict(zip(fig.data[0].y, fig.data[0].text, strict=False))
    assert all(t for t in texts.values())


def test_storage_vs_rows_is_linear_and_marks_the_plan(p):
    fig = storage_vs_rows(p, budget_bytes=10e12)
    line, point = fig.data[0], fig.data[1]
    assert line.y[-1] == pytest.approx(p.storage_bytes_compressed / 1e12)
    assert line.y[10] == pytest.approx(line.y[-1] / 2)
    assert point.x[0] == sum(c.rows for c in p.components)


def test_timeline_shows_the_gather_of_a_multi_node_plan(p):
    # 4 extraction nodes gathered to 2 training nodes at the same site: the gather sits between
    # capture and training, and the offline bar ends at extraction + gather + training
    q = plan(p.scenario.with_changes(extraction_gpus=32, extraction_nodes=4, transfer={"method": "none"},
                                     training={"gpus": 16, "nodes": 2}))
    assert q.gather_hours > 0
    fig = phase_timeline(q)
    gather = next(t for t in fig.data if t.name.startswith("gather"))
    assert gather.x[0] == pytest.approx(q.gather_hours)
    assert gather.base[0] == pytest.approx(q.extraction.wall_hours)
    offline = [t for t in fig.data if t.y[0] == "offline"]
    assert max(t.base[0] + t.x[0] for t in offline) == pytest.approx(q.wall_days_offline * 24)
