"""Your own runs as a CSV (`estimate --quality-points FILE`, the dashboard's "Your own runs" upload):
one header row naming exactly QUALITY_POINT_COLUMNS (planner.scenario.model.QualityPoint's fields, in their
order), at most MAX_QUALITY_POINTS rows, each validated here so that an error names its line and
column. The caller reads the bytes (bounded) and puts its own prefix (the flag, the upload) before a
message."""
from __future__ import annotations

import csv
import io

from pydantic import ValidationError

from planner.errors import describe_validation_error
from planner.scenario import QualityPoint
from planner.text import shown

QUALITY_POINT_COLUMNS = tuple(QualityPoint.model_fields)
MAX_QUALITY_POINTS = 1000


class QualityPointsError(ValueError):
    """One line naming what is wrong (the caller adds which file or flag)."""


def parse_quality_points(raw: bytes, shown_name: str) -> list[dict]:
    """The rows of a CSV of runs, each a QualityPoint's JSON dict. `shown_name`: the file as a message
    names it (already escaped for where it is shown)."""
    try:
        body = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise QualityPointsError(f"{shown_name} is not UTF-8 text") from None
    rows = csv.reader(io.StringIO(body, newline=""))
    try:
        header = [h.strip().lower() for h in next(rows, [])]
        if tuple(header) != QUALITY_POINT_COLUMNS:
            raise QualityPointsError(f"the header must be {','.join(QUALITY_POINT_COLUMNS)}, not "
                                     f"{shown(','.join(header))}")
        out: list[dict] = []
        for n, row in enumerate(rows, start=2):
            if not any(c.strip() for c in row):
                continue
            if len(out) == MAX_QUALITY_POINTS:
                raise QualityPointsError(f"more than {MAX_QUALITY_POINTS} rows")
            if len(row) != len(header):
                raise QualityPointsError(f"line {n} has {len(row)} columns, the header {len(header)}")
            values = dict(zip(header, (c.strip() for c in row), strict=True))
            try:
                out.append(QualityPoint(**values).model_dump(mode="json"))
            except ValidationError as exc:
                raise QualityPointsError(f"line {n}: {describe_validation_error(exc)}") from exc
    except csv.Error as exc:
        raise QualityPointsError(f"{shown_name} is not a CSV file ({exc})") from exc
    if not out:
        raise QualityPointsError(f"{shown_name} holds no rows after its header")
    return out
