"""planner status's own parts (planner/cli/status.py): which format a run is read as, and the suspect files'
advice shared with `export --resume`. The status of a run end to end: runs/test_status*.py."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from planner.cli._common import CliError
from planner.cli.status import rank_status, suspect_lines
from planner.errors import PlannerInputError


def _st(suspect, examples, fmt="specforge", run_dir="out dir"):
    return SimpleNamespace(suspect=suspect, suspect_examples=examples, run_dir=run_dir, format=fmt)


def test_no_suspect_file_is_no_line():
    assert suspect_lines(_st(0, [])) == []


def test_suspect_lines_hand_worked():
    # 3 suspect, 2 listed: plural wording, one "... and 1 more" (3 - 2), paths shell-quoted (a space in
    # the folder's name), the rm line joins RUN_DIR and each listed path
    lines = suspect_lines(_st(3, [("a.ckpt", "empty (0 bytes)"), ("sub/b c.ckpt", "cut\nshort")]))
    assert lines == [
        "  suspect: 3 finished files look truncated (a capture killed mid-write?) and do not count as done:",
        "    a.ckpt: empty (0 bytes)",
        "    'sub/b c.ckpt': cut\\x0ashort",                # the reason's newline escaped (printable)
        "    ... and 1 more (not listed; run status again once these are removed)",
        "  the pipeline skips a row whose file exists, so a resumed rank would skip these rows again: remove "
        "the suspect files before resuming (planner deletes nothing in RUN_DIR):",
        "    rm -- 'out dir/a.ckpt' 'out dir/sub/b c.ckpt'"]


def test_one_suspect_file_is_singular_and_has_no_more_line():
    lines = suspect_lines(_st(1, [("a.ckpt", "empty (0 bytes)")], run_dir="out"))
    assert lines[0] == ("  suspect: 1 finished file looks truncated (a capture killed mid-write?) and does not "
                        "count as done:")
    assert not any("more" in x for x in lines) and lines[-1] == "    rm -- out/a.ckpt"


def test_a_format_that_is_not_sharded_is_refused_by_name():
    with pytest.raises(CliError, match="^--format: a sharded run is one of speculators, specforge, modelopt, "
                                       "not deepspec$"):
        rank_status(None, "deepspec", 2, "out", None)


@pytest.mark.parametrize("layout", ["deepspec", "seed-article", "no-such-layout"])
def test_the_default_format_needs_a_sharded_layout(layout):
    m = SimpleNamespace(scenario=SimpleNamespace(layout=layout, extraction_node_count=2))
    with pytest.raises(CliError, match=f"^--format: the manifest's layout {layout} is not a sharded pipeline's; "
                                       "give --format speculators\\|specforge\\|modelopt$"):
        rank_status(m, None, None, "out", None)


@pytest.mark.parametrize("nodes", [0, -1, True, 10**9])
def test_the_rank_count_is_checked_before_the_run_is_read(nodes):
    m = SimpleNamespace(scenario=SimpleNamespace(layout="specforge-eagle3", extraction_node_count=nodes))
    with pytest.raises(PlannerInputError, match="nodes"):
        rank_status(m, None, None, "/nonexistent/run", None)       # the default rank count: the manifest's
    with pytest.raises(PlannerInputError, match="--nodes"):
        rank_status(m, "specforge", nodes, "/nonexistent/run", None)


def test_the_resume_advice_claims_a_skip_only_for_the_formats_whose_source_skips():
    # SpecForge, speculators and Model-Optimizer skip a row whose file exists (cited in
    # planner/cli/status.py RESUME_SKIPS_EXISTING); DeepSpec refuses a non-empty output folder
    # (deepspec/data/target_cache_dataset.py:238-247): for it, or any format not read, the advice
    # says only to remove the files, claiming nothing of what the pipeline does
    for fmt, claims in (("specforge", True), ("speculators", True), ("modelopt", True), ("deepspec", False)):
        st = SimpleNamespace(suspect=1, suspect_examples=[("a.ckpt", "empty (0 bytes)")], run_dir="out", format=fmt)
        text = "\n".join(suspect_lines(st))
        assert ("skips a row whose file exists" in text) is claims, (fmt, text)
        assert "remove the suspect files before resuming" in text and "    rm -- out/a.ckpt" in text
