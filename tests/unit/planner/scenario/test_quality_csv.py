"""planner/scenario/quality_csv.py: a CSV of one's own runs read into QualityPoints, every refusal one line
naming the line and the column (or the file)."""
from __future__ import annotations

import pytest

from planner.scenario.quality_csv import (
    MAX_QUALITY_POINTS,
    QualityPointsError,
    parse_quality_points,
)

HEADER = "drafter,target,family,training_tokens,epochs,eval_engine,tau\n"
ROW = "eagle3,llama-3.1-8b,code,2e8,2,vllm,3.25\n"


def test_a_row_becomes_a_quality_point_with_its_numbers():
    # a BOM, an upper-case header with spaces and a blank line are all accepted
    raw = ("\ufeff" + HEADER.upper().replace(",", " , ") + ROW + "\n , ,\n").encode()
    (p,) = parse_quality_points(raw, "runs.csv")
    assert p == {"drafter": "eagle3", "target": "llama-3.1-8b", "family": "code", "training_tokens": 2e8,
                 "epochs": 2.0, "eval_engine": "vllm", "tau": 3.25}


def test_the_header_must_be_the_fields_in_order():
    swapped = "target,drafter,family,training_tokens,epochs,eval_engine,tau\n"
    with pytest.raises(QualityPointsError, match="the header must be drafter,target,family"):
        parse_quality_points((swapped + ROW).encode(), "runs.csv")


def test_a_bad_value_names_its_line():
    # line 1 the header, line 2 a good row, line 3 tau = 1 (tau must be over 1)
    raw = (HEADER + ROW + ROW.replace("3.25", "1")).encode()
    with pytest.raises(QualityPointsError, match=r"^line 3: .*tau"):
        parse_quality_points(raw, "runs.csv")


def test_a_short_row_names_its_line_and_counts():
    with pytest.raises(QualityPointsError, match="^line 2 has 6 columns, the header 7$"):
        parse_quality_points((HEADER + "eagle3,llama-3.1-8b,code,2e8,2,vllm\n").encode(), "runs.csv")


def test_not_utf8_no_rows_and_too_many_rows_are_refused():
    with pytest.raises(QualityPointsError, match="^runs.csv is not UTF-8 text$"):
        parse_quality_points(b"\xff\xfe\x00", "runs.csv")
    with pytest.raises(QualityPointsError, match="^runs.csv holds no rows after its header$"):
        parse_quality_points(HEADER.encode(), "runs.csv")
    assert len(parse_quality_points((HEADER + ROW * MAX_QUALITY_POINTS).encode(), "f")) == 1000
    with pytest.raises(QualityPointsError, match="^more than 1000 rows$"):
        parse_quality_points((HEADER + ROW * (MAX_QUALITY_POINTS + 1)).encode(), "f")


def test_a_broken_csv_is_one_line():
    # a field over the csv module's limit (131,072 characters): csv.Error, said as "not a CSV file"
    with pytest.raises(QualityPointsError, match="^runs.csv is not a CSV file .*field larger than field limit"):
        parse_quality_points((HEADER + "x" * 200_000 + "\n").encode(), "runs.csv")
