"""Planned against actual (issue 24): what a partial capture run wrote, row by row against the plan,
and the rest of the run forecast from it.

`measure()` scans the run directory (planner/runs/rundir.py), reads each file's metadata
(planner/runs/formats.py) and gives one Unit per file (a row, or a shard of rows) with its measured
size and tokens beside the plan's prediction for the same rows. `calibrate()` turns the units into
the calibration: the measured/planned ratios, the rate and the forecast. `RunCalibration` is the
versioned JSON file `estimate --calibration` reads back.

The forecast, worked in docs and tests:
- ratio r = bytes measured / bytes planned for the same rows (tokens likewise);
- remaining = the plan's bytes (tokens) of the rows not measured, each row its own component's
  prediction: storage = measured + r x remaining bytes; tokens to go = r_tokens x remaining tokens;
- the rate: rows and tokens per hour over the files' modification times (the first file marks the
  start: the rows after it over the span from it to the last; in a sharded run each rank's (DP
  process's) first file marks its own start), or over --elapsed-hours; none from no row;
- hours = tokens to go / tokens per hour;
- the band: r +/- 2 standard errors of a ratio estimator over the measured rows,
  se(r) = sqrt(sum (m_i - r p_i)^2 / (n - 1) / n) / mean(p) x sqrt(1 - n / N) (finite population:
  N rows in all), from the spread of the rows measured so far;
- the disk fills when the bytes still to write exceed the free space, short by the difference
  (with --disk-capacity-tb: by the forecast storage less the capacity, the run's other files
  counted); it fills after free / (bytes to write / hours) hours, at once when nothing is free, and
  at a time unknown when the rate is (disk_fills true, disk_full_hours null). Free space:
  --disk-capacity-tb less the run's bytes, or what the run directory's filesystem has free
  (statvfs); unknown free space: disk_fills null. The file keeps the free space no lower than 0:
  a run already over --disk-capacity-tb keeps its excess only in disk_short_bytes (bytes to write
  plus the excess); finished so, it is said to hold more than the disk, not to fill it.
  `disk_words()`/`disk_claim()` say the verdict in words and `forecast_claims()` the time, storage
  and disk lines, for the CLI text, `watch` and the dashboard alike.
"""
from __future__ import annotations

import datetime as dt
import math
import os
import statistics
import time
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from planner._version import __version__
from planner.errors import PlannerInputError
from planner.export.sharding import MAX_SHARDS
from planner.ids import check_no_control
from planner.runs import formats as run_formats
from planner.runs import rundir
from planner.runs.formats import FormatError, OutOfTime, read_file

KIND = "drafter-planner-calibration"
VERSION = 1
MAX_READ = 50_000            # files whose metadata is read; past it an even sample of them
READ_SECONDS = rundir.MAX_SECONDS    # wall-clock bound of the reading in all (each file's: run_formats')
_clock = time.monotonic
WORST_ROWS = 5
BAND_SE = 2.0                # the band: the ratio +/- this many standard errors
MAX_CALIBRATION_BYTES = 1_000_000
MAX_ELAPSED_HOURS = 100_000          # --elapsed-hours above this is refused
MAX_DISK_TB = 1_000_000              # --disk-capacity-tb likewise
MAX_GPUS = 100_000                   # --gpus likewise

# Every number of a calibration file has a sign and a bound (a file is input: issue 36). The three
# figures a plan takes from it (Measured) are bounded by what a capture can be; the rest by FIGURE_MAX,
# far past any run, so that no sum or product of two figures overflows a float. A figure the run
# itself gives outside them is not kept (`_kept`): the file then says so in its notes.
FIGURE_MAX = 1e30                     # bytes, tokens, rows, hours, ratios and rates of the run
COUNT_MAX = 10**15                    # whole counts: rows, files
# tensor bytes a token: 1e9 is 15x a 256-layer, 65,536-wide model's fp32 states (256 x 65,536 x 4 B)
BYTES_PER_TOKEN_MAX = 1e9
OVERHEAD_MAX = 1e9                    # bytes a file beside its tensors (headers, archive structure)
# capture tokens/s per GPU: 1e-3 is 3.6 tokens an hour (a plan's capture then stays finite); 1e9 is
# 35,000x the highest rate in planner/presets/throughput.yaml (28,312 tok/s/GPU), no hardware's
TPS_MIN, TPS_MAX = 1e-3, 1e9

Figure = Annotated[float, Field(ge=0, le=FIGURE_MAX)]
Line = Annotated[str, AfterValidator(check_no_control)]      # no newline, bidi or other control character
Count = Annotated[int, Field(ge=0, le=COUNT_MAX)]


@dataclass(frozen=True)
class Unit:
    """One measured file (or one row of a DeepSpec index): its rows, the plan for them, what it holds."""
    path: str
    rows: int
    planned_bytes: float
    planned_tokens: float
    size: float
    tokens: float | None       # None: the format does not say (sizes only)
    data_bytes: float | None
    mtime: float
    files: int = 1             # files this unit stands for (0: a row of a shared shard)
    writer: int = 0            # the process that wrote it (rundir.Naming.writer: processes write side by side)


# ---------------------------------------------------------------- the calibration file
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class RowRatio(_Strict):
    path: str = Field(max_length=1000)
    measured_bytes: Figure
    planned_bytes: Figure
    ratio: Figure


class Spread(_Strict):
    median: Figure
    p10: Figure
    p90: Figure
    worst: list[RowRatio] = Field(max_length=WORST_ROWS)


class Skipped(_Strict):
    count: Count
    reasons: dict[str, Count]
    examples: list[tuple[str, str]] = Field(max_length=200)


class Forecast(_Strict):
    rows_remaining: Figure
    tokens_remaining: Figure | None
    hours_remaining: Figure | None
    hours_low: Figure | None = None
    hours_high: Figure | None = None
    storage_bytes: Figure
    storage_bytes_low: Figure
    storage_bytes_high: Figure
    disk_free_bytes: Figure | None
    disk_free_from: str = Field(max_length=200)
    disk_full_hours: Figure | None          # null: the disk does not fill, or fills at a time unknown (no rate)
    # the disk's verdict (absent from files written before it: derived from the figures above on reading)
    bytes_to_write: Figure | None = None    # storage_bytes less the bytes written
    disk_fills: bool | None = None          # null: the free space is unknown
    disk_short_bytes: Figure | None = None    # when it fills: the bytes the run needs beyond the disk (null at 0
                                            # free in a file from before the verdict: at least bytes_to_write)


def _g(x: float | None) -> str:
    return "null" if x is None else f"{x:g}"


# The three below take the forecast's bytes to write and free space as known (`to_write`, `free`): its
# validator (RunCalibration._disk_verdict) sets the one and calls them only where the other is given.
def _fill_in_disk_verdict(f: "Forecast", to_write: float, free: float) -> None:
    """A file written before the disk's verdict was kept gets it from its own figures."""
    f.disk_fills, f.disk_short_bytes, f.disk_full_hours = disk_verdict(to_write, free, f.hours_remaining)
    if f.disk_fills and free == 0:
        f.disk_short_bytes = None        # at least the bytes to write; by how much more, the file does not say


def _check_disk_fills(f: "Forecast", to_write: float, free: float) -> bool:
    """Whether the disk fills, checked against the file's figures (ValueError where they disagree)."""
    over = free == 0 and (f.disk_short_bytes or 0) > 0     # the run may hold more than the disk
    fills = to_write > free or over
    if f.disk_fills != fills or (not fills and (f.disk_short_bytes is not None or f.disk_full_hours is not None)):
        raise ValueError(f"forecast.disk_fills {f.disk_fills} contradicts the file's bytes to write "
                         f"({_g(to_write)}), free space ({_g(free)}), bytes short "
                         f"({_g(f.disk_short_bytes)}) or hours to full ({_g(f.disk_full_hours)})")
    return fills


def _close(a: float | None, b: float | None, tol: float = 1.0) -> bool:
    """a and b both given and equal to `tol` (bytes to the byte, hours to 3.6 ms)."""
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-6, abs_tol=tol)


def _check_disk_figures(f: "Forecast", to_write: float, free: float) -> None:
    """A disk that fills: the bytes short and the hours to full agree with the bytes to write and the
    free space (ValueError where they do not)."""
    _, short, full = disk_verdict(to_write, free, f.hours_remaining)
    full = 0.0 if free == 0 else full       # no space free: full already, finished or not
    if free > 0 and not _close(f.disk_short_bytes, short):
        raise ValueError(f"forecast.disk_short_bytes {_g(f.disk_short_bytes)} is not the bytes to write less the "
                         f"free space ({short:g})")
    if free == 0 and f.disk_short_bytes is not None and f.disk_short_bytes < to_write - 1:
        raise ValueError(f"forecast.disk_short_bytes {_g(f.disk_short_bytes)} is under the bytes to write "
                         f"({to_write:g}) with no space free")
    if (full is None) != (f.disk_full_hours is None) or \
            (full is not None and not _close(f.disk_full_hours, full, 1e-6)):
        raise ValueError(f"forecast.disk_full_hours {_g(f.disk_full_hours)} is not the free space over the bytes "
                         f"to write an hour ({_g(full)})")


class RunCalibration(_Strict):
    kind: Literal[KIND] = KIND             # type: ignore[valid-type]  # Literal of a name
    version: Literal[VERSION] = VERSION    # type: ignore[valid-type]  # Literal of a name
    # the words a plan's report prints (its label "measured on your run: N rows, DATE"): one line each
    created_at: str = Field(max_length=40, pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+)?$")
    planner_version: Line = Field(max_length=32)
    layout: Line = Field(max_length=100)
    model: Line = Field(max_length=200)
    hidden_dtype: Line = Field(max_length=10)
    layers: list[Annotated[int, Field(ge=0, le=100_000)]] = Field(max_length=256)
    world: int = Field(1, ge=1, le=MAX_SHARDS)    # ranks, as many as an export shards into
    manifest_rows: Count                          # conversations in the manifest
    rows_planned: Figure                          # training rows the plan expects (files of a per-row layout)
    rows_measured: Count
    files_measured: Count
    files_read: Count                             # files whose metadata was read (tokens and data bytes)
    files_skipped: Skipped
    bytes_measured: Figure
    bytes_planned: Figure                         # the plan's bytes for the same rows
    tokens_measured: Figure | None
    tokens_planned: Figure
    bytes_ratio: Figure | None
    tokens_ratio: Figure | None
    # the three figures a plan takes (Measured), each bounded by what a capture can be (above)
    data_bytes_per_token: Annotated[float, Field(ge=1, le=BYTES_PER_TOKEN_MAX)] | None  # tensor bytes a token
    overhead_bytes_per_file: Annotated[float, Field(ge=0, le=OVERHEAD_MAX)] | None  # file less its tensors, mean
    sizes_only: bool                              # this layout's files give sizes, not tokens
    per_row: Spread | None
    elapsed_hours: Figure | None
    elapsed_from: str = Field(max_length=200)
    rows_per_hour: Figure | None
    tokens_per_hour: Figure | None
    gpus: int = Field(ge=1, le=MAX_GPUS)          # calibrate --gpus's own bound
    tokens_per_s_per_gpu: Annotated[float, Field(ge=TPS_MIN, le=TPS_MAX)] | None
    forecast: Forecast
    notes: list[Annotated[str, Field(max_length=1000)]] = Field(default_factory=list, max_length=50)
    # who measured it when not a run: "measured by preflight on HOST, DATE" (planner/runs/preflight.py); absent
    # (null) in a run's calibration and in files written before preflight. No control character: it is shown.
    measured_by: Line | None = Field(None, max_length=200)

    @model_validator(mode="after")
    def _disk_verdict(self):
        """The disk's verdict agrees with the file's own figures; a file written before it was kept
        gets it from them. The free space is stored never below 0: at 0 the run may already hold
        more than the disk, by a figure only `disk_short_bytes` keeps (the bytes to write plus the
        excess), so there it is checked to be at least the bytes to write; a file written before the
        verdict, at 0 free, says it is short by an amount unknown (null), not by a figure too small."""
        f = self.forecast
        to_write = max(0.0, f.storage_bytes - self.bytes_measured)
        if f.bytes_to_write is None:
            f.bytes_to_write = to_write
        elif not math.isclose(f.bytes_to_write, to_write, rel_tol=1e-9, abs_tol=1.0):
            raise ValueError(f"forecast.bytes_to_write {f.bytes_to_write:g} is not storage_bytes less bytes_measured "
                             f"({to_write:g})")
        file_to_write, free = f.bytes_to_write, f.disk_free_bytes    # the file's bytes to write, or set just above
        if free is None:
            if f.disk_fills is not None or f.disk_short_bytes is not None:
                raise ValueError("forecast.disk_fills or disk_short_bytes is given while disk_free_bytes is unknown")
        elif f.disk_fills is None:
            _fill_in_disk_verdict(f, file_to_write, free)
        elif _check_disk_fills(f, file_to_write, free):
            _check_disk_figures(f, file_to_write, free)
        return self

    def disk_words(self) -> tuple[str, str]:
        """(verdict, figures): the disk's verdict as a clause that reads right on its own (watch's
        bar) and the figures and reasons behind it. `disk_claim()` joins them into one sentence."""
        from planner.units import fmt_bytes, fmt_hours
        f = self.forecast
        if f.disk_fills is None:
            return "whether the disk fills is unknown", f"its free space is {f.disk_free_from}"
        to_write, free = f.bytes_to_write, f.disk_free_bytes
        # _disk_verdict (on reading) sets bytes_to_write, and disk_fills only where the free space is known
        assert to_write is not None and free is not None
        room = f"{fmt_bytes(to_write)} still to write, {fmt_bytes(free)} free ({f.disk_free_from})"
        if not f.disk_fills:
            high = f.storage_bytes_high - self.bytes_measured
            if high > free:
                return ("the disk does not fill at the forecast, only at the band's high end",
                        f"{room}; {fmt_bytes(high)} to write at the band's high end")
            return "the disk does not fill", room
        short = None if f.disk_short_bytes is None else fmt_bytes(f.disk_short_bytes)
        if f.disk_full_hours is None:
            # the reason the time is unknown is the time's own line (forecast_claims): said once, there
            return "the disk fills before the run ends, at a time unknown", f"{room}; {short} short; no rate yet"
        if f.disk_full_hours > 0:
            return f"the disk fills in {fmt_hours(f.disk_full_hours)}", f"{room}; {short} short"
        if f.disk_short_bytes is None:       # a file from before the verdict: its free space was kept at 0
            return ("the disk is full already",
                    f"{room}; short by at least {fmt_bytes(to_write)} (by how much more, this older "
                    "calibration file does not say: its free space was stored no lower than 0)")
        over = f.disk_short_bytes - to_write      # free 0: the bytes the run holds beyond the disk
        if over > 0 and not to_write:
            return ("the run is finished and already holds more than the disk",
                    f"nothing still to write; its files take {fmt_bytes(over)} more than the disk has "
                    f"({f.disk_free_from} is below 0)")
        if over > 0:
            return ("the run already holds more than the disk",
                    f"{fmt_bytes(over)} over ({f.disk_free_from} is below 0) with {fmt_bytes(to_write)} "
                    f"still to write; {short} short")
        return "the disk is full already", f"{room}; {short} short"

    def disk_claim(self) -> str:
        """The disk's verdict in one sentence, for the CLI, the JSON, `watch` and the dashboard alike."""
        return ": ".join(self.disk_words())

    def forecast_claims(self) -> list[tuple[str, str]]:
        """The forecast's time, storage and disk, each (label, words): the CLI text's lines and the
        dashboard's alike. The time unknown gives its reason here, and only here."""
        from planner.units import fmt_bytes, fmt_hours
        f = self.forecast
        if f.hours_remaining is None:
            time = self.elapsed_from if self.elapsed_from.startswith("unknown") else \
                "unknown: no rate; give --elapsed-hours"
        else:
            band = (f" ({fmt_hours(f.hours_low)} to {fmt_hours(f.hours_high)})"
                    if f.hours_low is not None and f.hours_high is not None and f.hours_low != f.hours_high else "")
            time = fmt_hours(f.hours_remaining) + band
        if self.rows_measured < 2 and f.rows_remaining:
            band = "no band: " + ("nothing measured yet, the plan's figure" if not self.rows_measured
                                  else "one row measured")
        else:
            band = f"{fmt_bytes(f.storage_bytes_low)} to {fmt_bytes(f.storage_bytes_high)}"
        return [("time", time), ("storage", f"{fmt_bytes(f.storage_bytes)} in all ({band})"),
                ("disk", self.disk_claim())]


def dump(calibration: RunCalibration) -> str:
    """The file's text: JSON in ASCII (json.dumps' default), so that a run's file name with a bidi control
    in it (a skipped file, a worst row) is written \\u202e, not sent to the terminal `calibrate --json` prints to."""
    import json
    return json.dumps(calibration.model_dump(mode="json"), indent=2) + "\n"


def parse(raw: bytes, name: str, field: str = "--calibration") -> RunCalibration:
    """A calibration file's bytes, read strictly (JSON without NaN, this kind and version, every field
    checked); PlannerInputError names the field and the first problem in one line."""
    import json

    from pydantic import ValidationError

    from planner.errors import describe_validation_error
    if len(raw) > MAX_CALIBRATION_BYTES:
        raise PlannerInputError(field, name, f"it is over the {MAX_CALIBRATION_BYTES:,}-byte limit for a calibration")
    try:
        obj = json.loads(raw.decode("utf-8"), parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise PlannerInputError(field, name, f"it is not a calibration file (JSON): {str(exc)[:80]}") from exc
    if not isinstance(obj, dict) or obj.get("kind") != KIND:
        raise PlannerInputError(field, name, f"it is not a calibration file (kind {KIND!r})")
    if obj.get("version") != VERSION:
        raise PlannerInputError(field, name, f"calibration version {str(obj.get('version'))[:20]!r}; this "
                                f"planner reads version {VERSION}")
    try:
        return RunCalibration.model_validate(obj)
    except ValidationError as exc:
        raise PlannerInputError(field, name, describe_validation_error(exc)) from exc


def load(path: str | os.PathLike, field: str = "--calibration") -> RunCalibration:
    """A calibration file: a regular file, read up to the cap and no further."""
    from planner.safe_io import read_capped
    return parse(read_capped(path, field, "calibration", MAX_CALIBRATION_BYTES), os.fspath(path), field)


# ---------------------------------------------------------------- a plan with the measured figures
@dataclass(frozen=True)
class Measured:
    """What `estimate --calibration` puts in place of the tables (planner.planning.plan(measured=...)):
    the tensor bytes per token in the run's files, their overhead per file (the half block of disk
    rounding stays the table's), and the capture tokens per second per GPU. Everything that follows
    from them (storage, capture hours, the costs of both) moves; nothing else does."""
    layout: str
    model: str
    hidden_dtype: str
    layers: tuple[int, ...]
    rows: int
    date: str
    data_bytes_per_token: float | None
    overhead_bytes_per_file: float | None
    tokens_per_s_per_gpu: float | None
    measured_by: str | None = None       # preflight's "measured by preflight on HOST, DATE"; None: a run

    @classmethod
    def of(cls, calibration: "RunCalibration") -> "Measured":
        return cls(layout=calibration.layout, model=calibration.model, hidden_dtype=calibration.hidden_dtype,
                   layers=tuple(calibration.layers), rows=calibration.rows_measured, date=calibration.created_at[:10],
                   data_bytes_per_token=calibration.data_bytes_per_token,
                   overhead_bytes_per_file=calibration.overhead_bytes_per_file,
                   tokens_per_s_per_gpu=calibration.tokens_per_s_per_gpu, measured_by=calibration.measured_by)

    @property
    def label(self) -> str:
        if self.measured_by:
            return self.measured_by
        return f"measured on your run: {self.rows:,} rows, {self.date}"

    def apply(self, scenario, layout, spec):
        """(layout, layout spec) with the measured bytes; refused for another model, layout or layers."""
        import dataclasses
        model = scenario.model if scenario.model != "custom" or scenario.custom_model is None \
            else f"custom:{scenario.custom_model.id}"
        for what, mine, theirs in (("layout", self.layout, layout.id), ("model", self.model, model),
                                   ("layers", list(self.layers), layout.layers),
                                   ("hidden dtype", self.hidden_dtype, layout.hidden_dtype)):
            if mine != theirs:
                raise PlannerInputError("--calibration", f"{what} {mine}", f"it was measured with {what} {mine}; "
                                        f"this plan has {theirs}: measure a run of this plan")
        if self.data_bytes_per_token is not None:
            layout = dataclasses.replace(layout, measured_file_bytes_per_token=round(self.data_bytes_per_token))
        if self.overhead_bytes_per_file is not None:
            header = max(0, round(self.overhead_bytes_per_file))
            spec = spec.model_copy(update={"file_header_bytes": header})
            layout = dataclasses.replace(layout, file_overhead_bytes=header + spec.block_bytes / 2, spec=spec)
        return layout, spec

    def summary(self) -> dict:
        """What the plan took from the run, for the JSON output."""
        return {"label": self.label, "layout": self.layout, "rows": self.rows, "date": self.date,
                "data_bytes_per_token": self.data_bytes_per_token,
                "overhead_bytes_per_file": self.overhead_bytes_per_file,
                "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu,
                "replaces": ["bytes_per_token", "file_overhead_bytes", "extraction.prefill_tokens_per_s_per_gpu"]}

    def assumptions(self) -> list:
        from planner.phases.assumptions import Assumption
        out = []
        if self.data_bytes_per_token is not None:
            out.append(Assumption(name="bytes per token in the files", value=f"{self.data_bytes_per_token:,.1f}",
                                  tag="measured", source=self.label))
        if self.overhead_bytes_per_file is not None:
            out.append(Assumption(name="overhead per file", value=f"{self.overhead_bytes_per_file:,.0f} bytes "
                                  "(+ half a disk block)", tag="measured", source=self.label))
        if self.tokens_per_s_per_gpu is not None:
            out.append(Assumption(name="capture rate", value=f"{self.tokens_per_s_per_gpu:,.1f} tokens/s per GPU",
                                  tag="measured", source=self.label))
        return out


# ---------------------------------------------------------------- measuring
def _read(scan: rundir.Scan, f: rundir.Found, deadline: float) -> run_formats.FileInfo | None:
    """f's metadata, or None once the reading's bound in all has passed (before or during the read)."""
    left = deadline - _clock()
    if left <= 0:
        return None
    try:
        return read_file(os.path.join(scan.root, *f.path.split("/")), expect_id=f.ident,
                         expect_size=None if f.expected.kind == "index" else f.size,
                         deadline=run_formats._clock() + left)
    except OutOfTime:
        return None


def _units_of(scan: rundir.Scan, names: rundir.Naming, max_read: int,
              seconds: float = READ_SECONDS) -> tuple[list[Unit], int, dict[str, str], int]:
    """One Unit per matched row file (or shard), with its metadata read; DeepSpec: one per index
    record. Returns the units, the files read, the files that could not be read with why, and the
    files left unread when `seconds` (the reading in all) passed: a row file left so is measured by
    its size, an index left so gives no unit."""
    found = sorted(scan.found.values(), key=lambda f: f.path)
    datafiles = [f for f in found if f.expected.kind in ("row", "shard")]
    step = max(1, math.ceil(len(datafiles) / max_read)) if datafiles else 1
    to_read = {f.path for f in datafiles[::step]}
    units: list[Unit] = []
    bad: dict[str, str] = {}
    read = unread = 0
    deadline = _clock() + seconds
    shard_bytes: dict[str, float] = {}      # DeepSpec: a folder's shard bytes, which its index's rows share
    for f in found:
        e = f.expected
        if e.kind == "meta":
            continue
        if e.kind == "shard" and e.positions is None:
            folder = os.path.dirname(f.path)
            shard_bytes[folder] = shard_bytes.get(folder, 0.0) + f.size
            continue
        info = None
        if f.path in to_read or e.kind == "index":
            try:
                info = _read(scan, f, deadline)
            except FormatError as exc:
                bad[f.path] = str(exc)
                continue
            read += info is not None
            unread += info is None
        if e.kind == "index":
            _index_units(units, f, e, info, names.plan)
        else:
            units.append(_file_unit(f, info, names))
    _share_shard_bytes(units, shard_bytes)
    return units, read, bad, unread


def _file_unit(f, info, names: rundir.Naming) -> Unit:
    """The Unit of a row file or a shard (`info`: its metadata, None when not read)."""
    e = f.expected
    rows, share = 1, 1.0
    if e.kind == "shard":
        rows = len(e.positions)
        if info is not None and info.rows is not None and info.rows < rows:
            # a shard holding fewer rows than the plan's (the run's own sample count differs):
            # the plan's bytes for as many rows
            rows, share = info.rows, info.rows / rows
    return Unit(f.path, rows, e.predicted_bytes * share, e.predicted_tokens * share, f.size,
                info.tokens if info else None,
                info.data_bytes if info and info.tokens is not None else None, f.mtime, writer=names.writer(e))


def _share_shard_bytes(units: list[Unit], shard_bytes: dict[str, float]) -> None:
    """DeepSpec: a folder's shard bytes spread over its index's rows by their tokens (in place)."""
    for folder, nbytes in shard_bytes.items():
        rows = [i for i, u in enumerate(units) if not u.files and os.path.dirname(u.path) == folder]
        tok = sum(units[i].tokens or 0 for i in rows)
        for i in rows:
            u = units[i]
            extra = nbytes * (u.tokens or 0) / tok if tok else 0.0
            units[i] = Unit(u.path, u.rows, u.planned_bytes, u.planned_tokens, u.size + extra, u.tokens, None,
                            u.mtime, 0)


def _kept(field: str, value: float | None, notes: list[str]) -> float | None:
    """`value` for RunCalibration's `field` when inside the field's bounds; None (not measured) and a
    note when the run gives one outside them (a file's metadata is input, and a plan would take it)."""
    from pydantic import TypeAdapter, ValidationError
    kind = RunCalibration.model_fields[field].annotation
    assert kind is not None          # every field of RunCalibration is annotated (pydantic: None for none)
    try:
        return TypeAdapter(kind).validate_python(value)
    except ValidationError as exc:
        notes.append(f"{field} {value:g} not kept: {exc.errors()[0]['msg']} (the run's files give it)")
        return None


def _index_units(units, f, e, info, plan) -> None:
    start = e.positions.start if isinstance(e.positions, range) else 0
    per_record = f.size / max(len(info.lengths), 1) if info else 0.0
    for k, t in enumerate(info.lengths if info else ()):
        pos = start + k
        if pos >= plan.total:
            break
        c = plan.component_at(pos)
        units.append(Unit(f"{f.path}#{k}", 1, plan.bytes_per_file[c], plan.tokens_per_file[c], per_record, float(t),
                          None, f.mtime, 0))


def _spread(units: list[Unit]) -> Spread | None:
    pairs = [(u.size / u.planned_bytes, u) for u in units if u.planned_bytes > 0 and u.files]
    if not pairs:
        return None
    ratios = sorted(r for r, _ in pairs)
    q = statistics.quantiles(ratios, n=10, method="inclusive") if len(ratios) > 1 else [ratios[0]] * 9
    worst = sorted(pairs, key=lambda p: abs(math.log(p[0])) if p[0] > 0 else math.inf, reverse=True)[:WORST_ROWS]
    return Spread(median=statistics.median(ratios), p10=q[0], p90=q[-1],
                  worst=[RowRatio(path=u.path, measured_bytes=u.size, planned_bytes=u.planned_bytes, ratio=r)
                         for r, u in worst])


def ratio_band(measured: list[float], planned: list[float], population: float) -> tuple[float, float, float]:
    """(ratio, low, high): the ratio estimator sum(m)/sum(p) and +/- BAND_SE standard errors
    (finite population of `population` rows)."""
    n, sm, sp = len(measured), sum(measured), sum(planned)
    if not n or sp <= 0:
        return math.nan, math.nan, math.nan
    r = sm / sp
    if n < 2:
        return r, r, r
    resid = sum((m - r * p) ** 2 for m, p in zip(measured, planned, strict=True)) / (n - 1)
    fpc = max(0.0, 1 - n / population) if population > 0 else 1.0
    se = math.sqrt(resid / n) / (sp / n) * math.sqrt(fpc)
    return r, max(0.0, r - BAND_SE * se), r + BAND_SE * se


def _rate(units: list[Unit], elapsed_hours: float | None) -> tuple[float | None, float | None, float | None, str]:
    """(elapsed hours, rows per hour, tokens per hour, where the time came from)."""
    rows = sum(u.rows for u in units)
    if not rows:
        return (elapsed_hours, None, None, "unknown: no row written yet" +
                (f" in the --elapsed-hours {elapsed_hours:g} given" if elapsed_hours is not None else
                 "; a rate needs rows, timed by their files or --elapsed-hours"))
    if elapsed_hours is not None:
        tokens = _tokens_of(units)
        return (elapsed_hours, rows / elapsed_hours,
                tokens / elapsed_hours if tokens is not None else None, "--elapsed-hours")
    return _rate_by_times(units, rows)


def _tokens(units: list[Unit]) -> list[float]:
    """The token counts of the units that have one, in order."""
    return [u.tokens for u in units if u.tokens is not None]


def _tokens_of(units: list[Unit]) -> float | None:
    """The units' tokens; None unless every one has its count."""
    tokens = _tokens(units)
    return sum(tokens) if len(tokens) == len(units) else None


def _rate_by_times(units: list[Unit], rows: int) -> tuple[float | None, float | None, float | None, str]:
    """_rate by the files' modification times: the first file (by time) marks the start, the rows
    written after it over the span to the last; each writer's first file marks its own start (ranks
    and SpecForge's DP processes write side by side: the first files of W writers are W rows written
    before the span, not in it)."""
    files = sorted((u for u in units if u.files), key=lambda u: u.mtime)
    if len(files) < 2 or files[-1].mtime <= files[0].mtime:
        return None, None, None, "unknown: fewer than two files with different times; give --elapsed-hours"
    span = (files[-1].mtime - files[0].mtime) / 3600
    first: dict[int, Unit] = {}
    for u in files:
        first.setdefault(u.writer, u)
    starts = {id(u) for u in first.values()}
    after = [u for u in files if id(u) not in starts]
    if not after:
        return None, None, None, "unknown: one file a writing process (rank) so far; give --elapsed-hours"
    r_rows = sum(u.rows for u in after) / span
    tokens = _tokens_of(after)
    # the whole run's elapsed time: the measured rows at that rate
    return rows / r_rows, r_rows, tokens / span if tokens is not None else None, "the files' modification times"


def disk_verdict(to_write: float, room: float, hours: float | None) -> tuple[bool, float | None, float | None]:
    """(fills, bytes short, hours until full) for `to_write` bytes still to write in `hours` (None:
    unknown) on a disk with `room` bytes left for them (below 0: the run already holds more than
    the disk). Fills when to_write > room, short by the difference; full at once when no room is
    left, after room / (to_write / hours) hours otherwise, at a time unknown (None) without hours."""
    if to_write <= room:
        return False, None, None
    if room <= 0:
        return True, to_write - room, 0.0
    return True, to_write - room, room / (to_write / hours) if hours else None


def disk_free(run_dir: str, capacity_tb: float | None, used: float) -> tuple[float | None, str]:
    """(bytes the run has left on its disk, where from): --disk-capacity-tb less the run's bytes
    (below 0 when the run holds more), or the free space of its filesystem; None when unknown."""
    if capacity_tb is not None:
        return capacity_tb * 1e12 - used, f"--disk-capacity-tb {capacity_tb:g} less the run's bytes"
    try:
        st = os.statvfs(run_dir)
    except (OSError, AttributeError):
        return None, "unknown (the run directory's filesystem does not say)"
    return float(st.f_bavail * st.f_frsize), "free space of the run directory's filesystem"


def calibrate(manifest, run_dir: str, *, layout: str | None = None, world: int = 1, data_parallel: int = 1,
              gpus: int | None = None, elapsed_hours: float | None = None, disk_capacity_tb: float | None = None,
              now: float | None = None, progress=None, max_entries: int = rundir.MAX_ENTRIES, max_read: int = MAX_READ,
              min_age: float = rundir.MIN_AGE_SECONDS, plan: rundir.RowPlan | None = None,
              read_seconds: float = READ_SECONDS) -> RunCalibration:
    """The calibration of `manifest` from what the run in `run_dir` wrote so far (`plan`: the
    per-row predictions, default the manifest's plan with `layout`). The files' metadata are read
    for at most `read_seconds` in all (and each file for at most run_formats.MAX_FILE_SECONDS)."""
    if elapsed_hours is not None and not (isinstance(elapsed_hours, (int, float)) and math.isfinite(elapsed_hours)
                                          and 0 < elapsed_hours <= MAX_ELAPSED_HOURS):
        raise PlannerInputError("--elapsed-hours", elapsed_hours,
                                f"a number of hours above 0, at most {MAX_ELAPSED_HOURS:,}")
    if disk_capacity_tb is not None and not (0 < disk_capacity_tb <= MAX_DISK_TB and math.isfinite(disk_capacity_tb)):
        raise PlannerInputError("--disk-capacity-tb", disk_capacity_tb,
                                f"a capacity in TB above 0, at most {MAX_DISK_TB:,}")
    s = manifest.scenario
    gpus = gpus if gpus is not None else s.extraction_gpus
    if isinstance(gpus, bool) or not isinstance(gpus, int) or not 1 <= gpus <= MAX_GPUS:
        raise PlannerInputError("--gpus", gpus, f"a whole number of GPUs from 1 to {MAX_GPUS:,}")
    names = rundir.naming(manifest, layout, world=world, data_parallel=data_parallel, plan=plan)
    scan = rundir.scan(run_dir, names, others=rundir.other_namings(names), now=now, progress=progress,
                       max_entries=max_entries, min_age=min_age)
    units, read, bad, unread = _units_of(scan, names, max_read, read_seconds)
    for path, why in bad.items():
        scan.skip(path, f"cannot be read: {why}")
    return _calibration(manifest, names, scan, units, read, gpus=gpus, elapsed_hours=elapsed_hours,
                        disk_capacity_tb=disk_capacity_tb, unreadable=set(bad), unread=(unread, read_seconds))


def _token_figures(units: list[Unit], names, rows_planned: float, notes: list[str]):
    """(the units with token counts, whether the files give sizes only, the tokens' ratio and its band
    (NaN when none is read), the tokens measured: from the files read; when only a sample was read,
    scaled to all by the plan)."""
    with_tokens = [u for u in units if u.tokens is not None]
    sizes_only = bool(units) and not with_tokens     # nothing measured says nothing of the format
    if sizes_only:
        notes.append(f"the {names.spec.id} layout's files give their sizes only: no token counts, no rate in "
                     "tokens")
    if not with_tokens:
        return with_tokens, sizes_only, (math.nan, math.nan, math.nan), None
    band = ratio_band(_tokens(with_tokens), [u.planned_tokens for u in with_tokens], rows_planned)
    if len(with_tokens) < len(units):
        notes.append(f"tokens read from {len(with_tokens):,} of {len(units):,} files (an even sample), "
                     "scaled to all by the plan")
        return with_tokens, sizes_only, band, band[0] * sum(u.planned_tokens for u in units)
    return with_tokens, sizes_only, band, sum(_tokens(with_tokens))


def _data_figures(with_tokens: list[Unit]) -> tuple[float | None, float | None]:
    """(data bytes per token, mean overhead bytes per file) of the files whose data bytes are read."""
    data = [(u.size, u.data_bytes, u.tokens) for u in with_tokens if u.data_bytes is not None and u.tokens]
    if not data:
        return None, None
    return sum(d for _, d, _ in data) / sum(t for _, _, t in data), statistics.fmean(s - d for s, d, _ in data)


def _rates(units: list[Unit], with_tokens: list[Unit], sizes_only: bool, tokens_measured, *, gpus: int,
           elapsed_hours, notes: list[str]):
    """(data bytes per token, overhead bytes per file, tokens/s per GPU, each kept only inside its
    field's bounds; elapsed hours, rows and tokens per hour, where the time came from)."""
    per_token, overhead = _data_figures(with_tokens)
    timed = units if not sizes_only else [Unit(u.path, u.rows, 0, 0, u.size, None, None, u.mtime, u.files, u.writer)
                                          for u in units]
    elapsed, rows_h, tok_h, elapsed_from = _rate(timed, elapsed_hours)
    if tok_h is None and tokens_measured is not None and elapsed:
        tok_h = tokens_measured / elapsed
    tps = tok_h / 3600 / gpus if tok_h else None
    per_token, overhead, tps = (_kept(name, v, notes) for name, v in (
        ("data_bytes_per_token", per_token), ("overhead_bytes_per_file", overhead), ("tokens_per_s_per_gpu", tps)))
    return per_token, overhead, tps, elapsed, rows_h, tok_h, elapsed_from


def _hours_left(rem_rows: float, tokens_left, tok_h, rows_h, token_band, rem_t: float):
    """(hours, low, high) to the run's end: by tokens where they are measured, else by rows."""
    if not rem_rows:
        return 0.0, 0.0, 0.0
    if tokens_left is not None and tok_h:
        _, lo_t, hi_t = token_band
        return tokens_left / tok_h, lo_t * rem_t / tok_h, hi_t * rem_t / tok_h
    if rows_h:
        hours = rem_rows / rows_h            # sizes only: by rows
        return hours, hours, hours
    return None, None, None


def _forecast(plan, scan, units: list[Unit], byte_band, token_band, rows_h, tok_h,
              disk_capacity_tb) -> Forecast:
    """The forecast: the remaining rows' own predictions, scaled by the measured ratios; the disk's
    verdict from its free space."""
    done_b = sum(u.size for u in units)
    rem_rows = max(0.0, plan.training_rows - sum(u.rows for u in units))
    # no row to go: nothing to write and no time to take, whatever the rate (the plan's sums of the
    # rows done can differ from its total in the last digits)
    rem_b = max(0.0, plan.bytes - sum(u.planned_bytes for u in units)) if rem_rows else 0.0
    rem_t = max(0.0, plan.tokens - sum(u.planned_tokens for u in units)) if rem_rows else 0.0
    r_b, lo_b, hi_b = byte_band
    storage = done_b + r_b * rem_b
    tokens_left = token_band[0] * rem_t if not math.isnan(token_band[0]) else None
    hours, hours_lo, hours_hi = _hours_left(rem_rows, tokens_left, tok_h, rows_h, token_band, rem_t)
    used = sum(f.size for f in scan.found.values())
    room, free_from = disk_free(scan.root, disk_capacity_tb, used)
    to_write = storage - done_b
    fills, short, full = disk_verdict(to_write, room, hours) if room is not None else (None, None, None)
    free = None if room is None else max(0.0, room)
    return Forecast(rows_remaining=rem_rows, tokens_remaining=tokens_left, hours_remaining=hours, hours_low=hours_lo,
                    hours_high=hours_hi, storage_bytes=storage, storage_bytes_low=done_b + lo_b * rem_b,
                    storage_bytes_high=done_b + hi_b * rem_b, disk_free_bytes=free, disk_free_from=free_from,
                    disk_full_hours=full, bytes_to_write=to_write, disk_fills=fills, disk_short_bytes=short)


def _model_name(s) -> str:
    return s.model if s.model != "custom" or s.custom_model is None else f"custom:{s.custom_model.id}"


def _files_measured(scan, unreadable) -> int:
    return sum(1 for f in scan.found.values()
               if f.expected.kind in ("row", "shard", "index") and f.path not in unreadable)


def _calibration(m, names, scan, units, read, *, gpus, elapsed_hours, disk_capacity_tb,
                 unreadable=frozenset(), unread=(0, READ_SECONDS)) -> RunCalibration:
    plan = names.plan
    notes = []
    if unread[0]:
        notes.append(f"{unread[0]:,} files not read: the reading stopped at its {unread[1]:g} s bound (a row file "
                     "left so is measured by its size, an index left so not at all)")
    measured_b = [u.size for u in units]
    planned_b = [u.planned_bytes for u in units]
    rows_planned = plan.training_rows
    r_b, lo_b, hi_b = ratio_band(measured_b, planned_b, rows_planned)
    with_tokens, sizes_only, token_band, tokens_measured = _token_figures(units, names, rows_planned, notes)
    per_token, overhead, tps, elapsed, rows_h, tok_h, elapsed_from = _rates(
        units, with_tokens, sizes_only, tokens_measured, gpus=gpus, elapsed_hours=elapsed_hours, notes=notes)
    if not units:
        notes.append("no file of this run could be measured yet: the forecast is the plan's")
    fc = _forecast(plan, scan, units, (1.0, 1.0, 1.0) if not units else (r_b, lo_b, hi_b), token_band, rows_h,
                   tok_h, disk_capacity_tb)
    if not scan.complete:
        notes.append(f"the scan stopped at its bound ({scan.entries:,} entries): the figures cover what it saw")
    s = m.scenario
    return RunCalibration(
        created_at=dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        planner_version=__version__, layout=names.spec.id, model=_model_name(s),
        hidden_dtype=s.hidden_dtype or names.spec.hidden_dtype,
        layers=list(m.layers), world=names.world, manifest_rows=plan.total, rows_planned=rows_planned,
        rows_measured=sum(u.rows for u in units), files_measured=_files_measured(scan, unreadable),
        files_read=read,
        files_skipped=Skipped(count=scan.files_skipped, reasons=dict(scan.skipped_counts),
                              examples=scan.skipped[:200]),
        bytes_measured=sum(measured_b), bytes_planned=sum(planned_b), tokens_measured=tokens_measured,
        tokens_planned=sum(u.planned_tokens for u in units), bytes_ratio=None if math.isnan(r_b) or not units else r_b,
        tokens_ratio=None if math.isnan(token_band[0]) else token_band[0], data_bytes_per_token=per_token,
        overhead_bytes_per_file=overhead, sizes_only=sizes_only, per_row=_spread(units), elapsed_hours=elapsed,
        elapsed_from=elapsed_from, rows_per_hour=rows_h, tokens_per_hour=tok_h, gpus=gpus, tokens_per_s_per_gpu=tps,
        forecast=fc, notes=notes)
