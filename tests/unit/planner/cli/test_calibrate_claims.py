"""`planner calibrate`'s claims agree with each other and with its numbers, case by case: an empty
folder, one file, files with equal times, a finished run, a run over the planned bytes, a disk
smaller or larger than the forecast, --elapsed-hours given, and a sharded run (--world). Each case
is a real run folder (copies of the torch.save fixtures, as tests/unit/planner/runs/test_calibration.py
builds them) against the hand plan there: component a, rows 0-599 at 4,000 B and 12 tokens; b, rows
600-999 at 8,000 B and 24 tokens: 5,600,000 B and 16,800 tokens in all. The fixture files cycle
data_0, data_1, data_2: 3,224, 4,120, 5,528 B holding 7, 12, 20 tokens."""
import json
import os
import re
import shutil

import pytest

from drafter_dashboard.calibration_panel import forecast_lines
from planner.cli.calibrate import bar, snapshot, text
from planner.cli.main import main
from planner.runs import calibration as rc
from planner.units import fmt_bytes, fmt_hours
from tests.unit.planner.runs.test_calibration import CKPT, RUNS, T0, hand_plan, manifest, partial_run  # noqa: F401

MB = 1e6


def run_folder(root, idx, times, rank=None):
    """Files data_i (i in idx) of the hand plan's run, data_i a copy of fixture data_{i % 3}, modified at times."""
    group = root / (f"rank-{rank:05d}" if rank is not None else "") / "rows_0-2000"
    group.mkdir(parents=True, exist_ok=True)
    for i, t in zip(idx, times, strict=False):
        dst = group / f"data_{i}.ckpt"
        shutil.copyfile(RUNS / "specforge" / "rows_0-2000" / CKPT[i % 3][0], dst)
        os.utime(dst, (t, t))
    return root


def calibrate(run, **kw):
    kw.setdefault("gpus", 1)
    return rc.calibrate(manifest(), str(run), plan=hand_plan(), now=T0 + 86_400, **kw)


def lines(c) -> dict[str, str]:
    """The forecast's lines of the text, by their label."""
    out = {}
    for line in text(c).splitlines():
        m = re.match(r"^  (rate|time|storage|disk) +(.*)$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def agree(c):
    """Every claim of the text, the JSON and `watch` agrees with the others and with the numbers."""
    f, said = c.forecast, lines(c)
    # the JSON is the same object, field for field, and reads back to it
    d = json.loads(rc.dump(c))
    assert rc.parse(rc.dump(c).encode(), "x") == c
    assert {k: d["forecast"][k] for k in ("disk_fills", "disk_full_hours", "disk_short_bytes", "bytes_to_write",
                                          "disk_free_bytes", "storage_bytes", "hours_remaining")} == \
        {"disk_fills": f.disk_fills, "disk_full_hours": f.disk_full_hours, "disk_short_bytes": f.disk_short_bytes,
         "bytes_to_write": f.bytes_to_write, "disk_free_bytes": f.disk_free_bytes, "storage_bytes": f.storage_bytes,
         "hours_remaining": f.hours_remaining}
    # the bytes still to write are the forecast less what is written
    assert f.bytes_to_write == pytest.approx(f.storage_bytes - c.bytes_measured, abs=1e-6)
    # the rate: known, or unknown and pointing at the time line, which alone gives the reason
    if c.rows_per_hour is None:
        assert said["rate"] == "unknown (the time below says why)"
    else:
        assert said["rate"].startswith(f"{c.rows_per_hour:,.1f} rows/h")
    # the time: no row left takes none; otherwise given with a rate, unknown (naming the flag) without
    if not f.rows_remaining:
        assert f.hours_remaining == 0 and f.bytes_to_write == 0
    if f.hours_remaining is None:
        assert c.rows_per_hour is None and said["time"].startswith("unknown: ") and "--elapsed-hours" in said["time"]
        # the reason is given once in the whole text: on the time line
        assert text(c).count(said["time"].removeprefix("unknown: ")) == 1
    else:
        assert said["time"].startswith(fmt_hours(f.hours_remaining))
    # the storage and its band: none claimed from fewer than two rows
    assert said["storage"].startswith(f"{fmt_bytes(f.storage_bytes)} in all (")
    assert ("no band" in said["storage"]) == (c.rows_measured < 2 and f.rows_remaining > 0)
    # the dashboard shows the same time, storage and disk, word for word, each after its label
    assert forecast_lines(c)[1:4] == [f"time: {said['time']}", f"storage: {said['storage']}", f"disk: {said['disk']}"]
    # watch: the same figures, and its bar's verdict is the sentence's own opening clause, whole
    s = snapshot(c)
    assert (s["disk_fills"], s["disk_full_hours"], s["disk_short_bytes"]) == (f.disk_fills, f.disk_full_hours,
                                                                             f.disk_short_bytes)
    assert s["disk"] == said["disk"] and said["disk"].startswith(s["disk_verdict"] + ": ")
    assert bar(s).endswith("; " + s["disk_verdict"])
    # the disk: it fills exactly when the bytes to write exceed the free space, short by the difference
    disk, verdict = said["disk"], s["disk_verdict"]
    assert disk.startswith(("the disk ", "whether the disk ", "the run "))     # a sentence wherever it is shown
    if f.disk_free_bytes is None:
        assert f.disk_fills is None and verdict == "whether the disk fills is unknown"
        return
    over = f.disk_free_bytes == 0 and bool(f.disk_short_bytes)      # the run may already hold more than the disk
    assert f.disk_fills == (f.bytes_to_write > f.disk_free_bytes or over)
    if not f.disk_fills:
        assert f.disk_full_hours is None and f.disk_short_bytes is None and "short" not in disk
        assert f"{fmt_bytes(f.bytes_to_write)} still to write, {fmt_bytes(f.disk_free_bytes)} free" in disk
        # and whether it would at the band's high end: never "does not fill" alone then
        high = f.storage_bytes_high - c.bytes_measured > f.disk_free_bytes
        assert verdict == ("the disk does not fill at the forecast, only at the band's high end" if high
                           else "the disk does not fill")
        return
    assert f.disk_short_bytes > 0 and f.disk_short_bytes >= f.bytes_to_write - f.disk_free_bytes - 1e-6
    if f.disk_free_bytes > 0:
        assert f.disk_short_bytes == pytest.approx(f.bytes_to_write - f.disk_free_bytes)
    if f.disk_full_hours is None:                 # the time only with a rate
        assert f.hours_remaining is None and verdict == "the disk fills before the run ends, at a time unknown"
        assert disk.endswith(f"; {fmt_bytes(f.disk_short_bytes)} short; no rate yet")
    elif f.disk_full_hours == 0:
        beyond = f.disk_short_bytes - f.bytes_to_write            # bytes held beyond the disk
        assert f.disk_free_bytes == 0
        if beyond > 0 and not f.bytes_to_write:       # finished: nothing fills any more
            assert verdict == "the run is finished and already holds more than the disk" and "fills" not in disk
            assert f"its files take {fmt_bytes(beyond)} more than the disk has" in disk
        elif beyond > 0:
            assert verdict == "the run already holds more than the disk"
            assert disk.endswith(f"{fmt_bytes(f.bytes_to_write)} still to write; {fmt_bytes(f.disk_short_bytes)} short")
        else:
            assert verdict == "the disk is full already"
    else:
        assert f.disk_full_hours == pytest.approx(f.disk_free_bytes / (f.bytes_to_write / f.hours_remaining))
        assert f.disk_full_hours < f.hours_remaining
        assert verdict == f"the disk fills in {fmt_hours(f.disk_full_hours)}"
        assert disk.endswith(f"; {fmt_bytes(f.disk_short_bytes)} short")
    assert re.fullmatch(r"the disk (is full already|fills before the run ends, at a time unknown|fills in [0-9.,]+ "
                        r"(min|h|days))|the run (is finished and )?already holds more than the disk", verdict)


def test_empty_folder_the_plans_forecast_fills_a_small_disk_at_a_time_unknown(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    c = calibrate(run, disk_capacity_tb=1e-6)
    # nothing measured: the plan's 5,600,000 B all to write on 1,000,000 B: short by 4,600,000 B;
    # no row, no rate: when is unknown
    f = c.forecast
    assert (c.rows_measured, c.sizes_only, c.rows_per_hour, f.hours_remaining) == (0, False, None, None)
    assert (f.storage_bytes, f.bytes_to_write, f.disk_free_bytes) == (5.6 * MB, 5.6 * MB, 1 * MB)
    assert (f.disk_fills, f.disk_short_bytes, f.disk_full_hours) == (True, 4.6 * MB, None)
    assert "no band: nothing measured yet" in lines(c)["storage"]
    agree(c)
    # on 10,000,000 B it does not fill, though the time is unknown
    c = calibrate(run, disk_capacity_tb=1e-5)
    assert (c.forecast.disk_fills, c.forecast.disk_free_bytes) == (False, 10 * MB)
    agree(c)


def test_empty_folder_with_elapsed_hours_has_no_rate_from_no_rows(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    c = calibrate(run, disk_capacity_tb=1e-6, elapsed_hours=2)
    # 0 rows in 2 h is no rate to forecast with: unknown, and the reason says the flag was given
    assert (c.rows_per_hour, c.tokens_per_hour, c.tokens_per_s_per_gpu, c.elapsed_hours) == (None, None, None, 2)
    assert "--elapsed-hours 2 given" in lines(c)["time"]
    assert c.forecast.disk_fills is True and c.forecast.disk_full_hours is None
    agree(c)


def test_one_file(tmp_path):
    run = run_folder(tmp_path / "run", [0], [T0])
    c = calibrate(run, disk_capacity_tb=1e-6)
    # ratio 3,224 / 4,000 = 0.806; storage 3,224 + 0.806 x (5,600,000 - 4,000) = 3,224 + 4,510,376
    # = 4,513,600; free 1,000,000 - 3,224 = 996,776 < 4,510,376 to write: short by 3,513,600
    # (= the forecast less the 1,000,000 B disk); one file, no rate: when is unknown
    f = c.forecast
    assert c.bytes_ratio == pytest.approx(0.806)
    assert f.storage_bytes == pytest.approx(4_513_600) and f.disk_free_bytes == 996_776
    assert f.disk_fills and f.disk_short_bytes == pytest.approx(3_513_600) and f.disk_full_hours is None
    # one row: no band, not a band of zero width
    assert f.storage_bytes_low == f.storage_bytes_high and "no band: one row measured" in lines(c)["storage"]
    agree(c)


def test_equal_modification_times_leave_the_time_unknown_but_not_the_disk(tmp_path):
    run = run_folder(tmp_path / "run", range(5), [T0] * 5)
    c = calibrate(run, disk_capacity_tb=1e-5)
    # 5 rows of a: 3,224 + 4,120 + 5,528 + 3,224 + 4,120 = 20,216 B against 20,000: ratio 1.0108;
    # storage 20,216 + 1.0108 x 5,580,000 = 5,660,480; free 10,000,000 - 20,216 = 9,979,784 >
    # 5,640,264 to write: does not fill, whatever the rate
    f = c.forecast
    assert f.hours_remaining is None and "fewer than two files with different times" in c.elapsed_from
    assert f.storage_bytes == pytest.approx(5_660_480) and f.disk_free_bytes == 9_979_784
    assert (f.disk_fills, f.disk_full_hours) == (False, None)
    agree(c)
    c = calibrate(run, disk_capacity_tb=5e-6)
    # on 5,000,000 B: 4,979,784 free < 5,640,264: fills, short by 660,480, time unknown
    assert c.forecast.disk_fills and c.forecast.disk_short_bytes == pytest.approx(660_480)
    # the reason the time is unknown, once: on the time line, not on the rate's or the disk's
    said = lines(c)
    why = "fewer than two files with different times; give --elapsed-hours"
    assert said["time"] == "unknown: " + why and text(c).count(why) == 1
    assert said["rate"] == "unknown (the time below says why)" and why not in said["disk"]
    agree(c)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """All 1,000 rows, the i-th at T0 + 3.6 i s: 334 x 3,224 + 333 x 4,120 + 333 x 5,528 = 4,289,600 B."""
    return run_folder(tmp_path_factory.mktemp("fin") / "run", range(1000), [T0 + 3.6 * i for i in range(1000)])


def test_finished_run(finished):
    c = calibrate(finished, disk_capacity_tb=1e-5)
    # no row to go: no time, nothing to write; 10,000,000 - 4,289,600 = 5,710,400 B free
    f = c.forecast
    assert (c.rows_measured, f.rows_remaining, f.hours_remaining, f.bytes_to_write) == (1000, 0, 0, 0)
    assert f.storage_bytes == 4_289_600 and f.disk_free_bytes == 5_710_400 and f.disk_fills is False
    agree(c)


def test_finished_run_with_equal_times_takes_no_time_though_the_rate_is_unknown(tmp_path):
    run = run_folder(tmp_path / "run", range(1000), [T0] * 1000)
    c = calibrate(run, disk_capacity_tb=1e-5)
    assert c.rows_per_hour is None and c.forecast.hours_remaining == 0 and lines(c)["time"] == "0 min"
    agree(c)


def test_finished_run_on_a_disk_smaller_than_it(finished):
    c = calibrate(finished, disk_capacity_tb=1e-6)
    # 4,289,600 B written on a 1,000,000 B disk: full already, short by 3,289,600, nothing to write
    f = c.forecast
    assert (f.disk_fills, f.disk_full_hours, f.disk_free_bytes) == (True, 0, 0)
    assert f.disk_short_bytes == 3_289_600
    # the reported case: not "full already: 0 B still to write ... 3.3 MB short" but that the finished
    # run holds 3,289,600 B (3.3 MB) more than the 1 MB given, and no verdict that anything fills
    said = lines(c)["disk"]
    assert said == ("the run is finished and already holds more than the disk: nothing still to write; its files "
                    "take 3.3 MB more than the disk has (--disk-capacity-tb 1e-06 less the run's bytes is below 0)")
    assert bar(snapshot(c)).endswith("; the run is finished and already holds more than the disk")
    agree(c)


def test_run_over_the_planned_bytes(tmp_path):
    run = run_folder(tmp_path / "run", range(300), [T0 + i * 3600 / 299 for i in range(300)])
    # a plan of 1,000 B and 12 tokens a row (1,000,000 B in all); the run wrote 1,287,200 B in 300 rows
    small = rc.rundir.RowPlan(ids=("a",), starts=(0,), rows=(1000,), local=(False,), files_per_row=(1.0,),
                              bytes_per_file=(1000.0,), tokens_per_file=(12.0,), total=1000, planned=True)
    c = rc.calibrate(manifest(), str(run), plan=small, now=T0 + 86_400, gpus=1, elapsed_hours=1.0,
                     disk_capacity_tb=2e-6)
    # ratio 1,287,200 / 300,000 = 4.290667; storage 1,287,200 + 4.290667 x 700,000 = 4,290,666.7 B;
    # free 2,000,000 - 1,287,200 = 712,800 B < 3,003,466.7 to write: short by 2,290,666.7 B
    # (the forecast less the disk); tokens 3,900 / 3,600 x 8,400 to go = 9,100 at 3,900 an hour:
    # 2.3333 h; full after 712,800 / (3,003,466.7 / 2.3333) = 0.55376 h
    f = c.forecast
    assert c.bytes_measured > 1_000_000 and c.bytes_ratio == pytest.approx(4.290667, rel=1e-6)
    assert f.storage_bytes == pytest.approx(4_290_666.7, rel=1e-7)
    assert f.hours_remaining == pytest.approx(9100 / 3900)
    assert f.disk_free_bytes == 712_800 and f.disk_short_bytes == pytest.approx(2_290_666.7, rel=1e-7)
    assert f.disk_full_hours == pytest.approx(0.55376, rel=1e-4)
    agree(c)


def test_a_disk_the_forecast_fits_but_its_band_does_not(partial_run):
    # 6.05 MB: free 6,050,000 - 1,287,200 = 4,762,800 B; to write 4,719,733 at the ratio, but at its
    # high end (1.072667 + 2 x 0.011471 = 1.095609) 1.095609 x 4,400,000 = 4,820,679 B: does not fill, but
    # would at the band's high end
    c = calibrate(partial_run, disk_capacity_tb=6.05e-6)
    f = c.forecast
    assert f.disk_fills is False and f.disk_free_bytes == pytest.approx(4_762_800)
    assert f.storage_bytes_high - c.bytes_measured == pytest.approx(4_820_679, rel=1e-5)
    assert lines(c)["disk"].endswith("; 4.8 MB to write at the band's high end")
    # the reported case: watch's bar cut this at its first ": " into "disk does not fill"; its
    # verdict is now the sentence's opening clause, whole, and names the band's high end
    assert bar(snapshot(c)).endswith("; the disk does not fill at the forecast, only at the band's high end")
    agree(c)


@pytest.mark.parametrize("capacity_tb, fills", [(5e-6, True), (1e-5, False), (1e-6, True)])
def test_disk_smaller_or_larger_than_the_forecast(partial_run, capacity_tb, fills):
    c = calibrate(partial_run, disk_capacity_tb=capacity_tb)
    # 300 rows written, 1,287,200 B; storage 1,287,200 + 1.072667 x 4,400,000 = 6,006,933.3 B;
    # the rate from the times: 3,893 tokens an hour, 14,300 tokens to go: 3.6733 h
    #   5 MB: free 3,712,800 < 4,719,733.3 to write: fills, short 1,006,933.3, after
    #         3,712,800 / (4,719,733.3 / 3.6733) = 2.8896 h
    #  10 MB: free 8,712,800: does not fill
    #   1 MB: the run already holds more: full already, short 6,006,933.3 - 1,000,000 = 5,006,933.3
    f = c.forecast
    assert f.storage_bytes == pytest.approx(6_006_933.3, rel=1e-7)
    assert f.disk_fills is fills
    if capacity_tb == 5e-6:
        assert f.disk_short_bytes == pytest.approx(1_006_933.3, rel=1e-7)
        assert f.disk_full_hours == pytest.approx(3_712_800 / (4_719_733.3 / (14_300 / 3893)), rel=1e-6)
    elif capacity_tb == 1e-6:
        assert (f.disk_free_bytes, f.disk_full_hours) == (0, 0)
        assert f.disk_short_bytes == pytest.approx(5_006_933.3, rel=1e-7)
    agree(c)


def test_elapsed_hours_given(partial_run):
    c = calibrate(partial_run, disk_capacity_tb=5e-6, elapsed_hours=1.0)
    # 3,900 tokens in the hour: 14,300 to go take 3.6667 h; full after 3,712,800 / (4,719,733.3 / 3.6667)
    # = 2.8844 h (test_run_calibration's worked case)
    assert c.elapsed_from == "--elapsed-hours" and c.forecast.hours_remaining == pytest.approx(14_300 / 3900)
    assert c.forecast.disk_full_hours == pytest.approx(3_712_800 / 1_287_200)
    agree(c)


def test_sharded_run(tmp_path):
    # --world 2: rank 0 holds rows 0-499, rank 1 rows 500-999; each wrote its files 0-99 (rows 0-99 and
    # 500-599, all of a); per rank 34 x 3,224 + 33 x 4,120 + 33 x 5,528 = 428,000 B and
    # 34 x 7 + 33 x 12 + 33 x 20 = 1,294 tokens
    run = tmp_path / "run"
    for rank in (0, 1):
        run_folder(run, range(100), [T0 + 36 * i for i in range(100)], rank=rank)
    c = calibrate(run, world=2, elapsed_hours=0.5, disk_capacity_tb=5e-6)
    # 856,000 B against 800,000: ratio 1.07; storage 856,000 + 1.07 x 4,800,000 = 5,992,000 B
    # tokens 2,588 against 2,400; to go 2,588 / 2,400 x 14,400 = 15,528 at 5,176 an hour: 3.0 h
    # free 5,000,000 - 856,000 = 4,144,000 < 5,136,000 to write: short 992,000, full after
    # 4,144,000 / (5,136,000 / 3) = 2.4206 h
    f = c.forecast
    assert (c.world, c.rows_measured, c.rows_planned, c.bytes_measured) == (2, 200, 1000, 856_000)
    assert f.storage_bytes == pytest.approx(5_992_000) and f.hours_remaining == pytest.approx(3.0)
    assert f.disk_short_bytes == pytest.approx(992_000)
    assert f.disk_full_hours == pytest.approx(4_144_000 / (5_136_000 / 3))
    agree(c)
    # the rate from the times: the ranks wrote side by side, each its first file at T0 and its last
    # 99 x 36 s = 0.99 h later; each rank's first file marks its start: 2 x 99 = 198 rows and
    # 2 x (1,294 - 7) = 2,574 tokens in 0.99 h: 200 rows and 2,600 tokens an hour (counting the
    # other rank's first row in the span would say 201); 15,528 tokens to go take 5.9723 h
    c = calibrate(run, world=2, disk_capacity_tb=5e-6)
    assert c.rows_per_hour == pytest.approx(200) and c.tokens_per_hour == pytest.approx(2600)
    assert c.forecast.hours_remaining == pytest.approx(15_528 / 2600)
    agree(c)


def test_sharded_run_with_one_file_a_rank_has_no_rate(tmp_path):
    run = tmp_path / "run"
    run_folder(run, [0], [T0], rank=0)
    run_folder(run, [0], [T0 + 60], rank=1)
    # two files a minute apart, but each the first of its rank: no row written within a span
    c = calibrate(run, world=2, disk_capacity_tb=1e-6)
    assert c.rows_per_hour is None and "one file a writing process" in c.elapsed_from
    assert c.forecast.disk_fills and c.forecast.disk_full_hours is None
    agree(c)


def test_data_parallel_processes_each_start_the_rate_with_their_own_first_file(tmp_path):
    # --dp 2 (one rank): DP process 0 numbers its files from 0, process 1 from 500 (rows 2i and 2i + 1,
    # all of a); each wrote 100 files side by side, at T0 + 36 i: files 0-99 (428,000 B, 1,294 tokens)
    # and 500-599 (33 x 3,224 + 33 x 4,120 + 34 x 5,528 = 430,304 B; 33 x 7 + 33 x 12 + 34 x 20 = 1,307
    # tokens, the first, data_500, a copy of data_2: 20 tokens). After each one's first file:
    # 198 rows and 1,287 + 1,287 = 2,574 tokens in 0.99 h: 200 rows and 2,600 tokens an hour
    run = run_folder(tmp_path / "run", [*range(100), *range(500, 600)], [T0 + 36 * i for i in (*range(100),) * 2])
    c = calibrate(run, data_parallel=2, disk_capacity_tb=1e-5)
    assert (c.rows_measured, c.bytes_measured, c.tokens_measured) == (200, 858_304, 2_601)
    assert c.rows_per_hour == pytest.approx(200) and c.tokens_per_hour == pytest.approx(2600)
    agree(c)


def test_an_older_file_without_the_verdict_gets_it_from_its_own_figures(partial_run):
    c = calibrate(partial_run, disk_capacity_tb=5e-6, elapsed_hours=1.0)
    d = json.loads(rc.dump(c))
    for k in ("bytes_to_write", "disk_fills", "disk_short_bytes"):
        del d["forecast"][k]
    old = rc.parse(json.dumps(d).encode(), "old.json")
    assert old.forecast == c.forecast
    agree(old)


def test_an_older_file_over_its_disk_says_short_without_a_figure_too_small(partial_run):
    # 1 MB given for a run of 1,287,200 B: the room is 1,000,000 - 1,287,200 = -287,200, stored as
    # 0 free; short by 4,719,733.3 to write + 287,200 = 5,006,933.3. A file from before the verdict
    # keeps only the 0: from it the shortfall would read 4,719,733.3 (too small), so it says "at least"
    c = calibrate(partial_run, disk_capacity_tb=1e-6)
    f = c.forecast
    assert f.disk_free_bytes == 0 and f.disk_short_bytes == pytest.approx(4_719_733.3 + 287_200, rel=1e-7)
    assert lines(c)["disk"].startswith("the run already holds more than the disk: 287.2 kB over (")
    d = json.loads(rc.dump(c))
    for k in ("bytes_to_write", "disk_fills", "disk_short_bytes"):
        del d["forecast"][k]
    old = rc.parse(json.dumps(d).encode(), "old.json")
    assert (old.forecast.disk_fills, old.forecast.disk_short_bytes, old.forecast.disk_full_hours) == (True, None, 0)
    said = old.disk_claim()
    assert said.startswith("the disk is full already: 4.7 MB still to write, 0 B free (")
    assert "short by at least 4.7 MB" in said and "5.0 MB" not in said and f"{fmt_bytes(4_719_733.3)} short" not in said
    # a file of this version with that 0 free and a shortfall under the bytes to write is refused
    bad = json.loads(rc.dump(c))
    bad["forecast"]["disk_short_bytes"] = 4_000_000.0
    with pytest.raises(rc.PlannerInputError, match="disk_short_bytes 4e.06 is under the bytes to write"):
        rc.parse(json.dumps(bad).encode(), "cal.json")


def test_a_shortfall_other_than_the_files_own_figures_is_refused(partial_run):
    # 5 MB: 4,719,733.3 to write on 3,712,800 free: short by exactly 1,006,933.3 B; a file claiming
    # 1,000,000 is refused; so are hours to full other than 3,712,800 / (4,719,733.3 / 3.6667 h) = 2.8844 h
    # (14,300 tokens to go at 3,900 an hour: 3.6667 h)
    c = calibrate(partial_run, disk_capacity_tb=5e-6, elapsed_hours=1.0)
    assert c.forecast.disk_short_bytes == pytest.approx(1_006_933.3, rel=1e-7)
    assert c.forecast.disk_full_hours == pytest.approx(3_712_800 / (4_719_733.3 / (14_300 / 3_900)), rel=1e-6)
    for key, value, says in (("disk_short_bytes", 1_000_000.0, "disk_short_bytes 1e.06 is not the bytes to write"),
                             ("disk_full_hours", 2.0, "disk_full_hours 2 is not")):
        bad = json.loads(rc.dump(c))
        bad["forecast"][key] = value
        with pytest.raises(rc.PlannerInputError, match=says) as exc:
            rc.parse(json.dumps(bad).encode(), "cal.json")
        assert "\n" not in str(exc.value)


def test_a_file_whose_verdict_contradicts_its_figures_is_refused(partial_run):
    c = calibrate(partial_run, disk_capacity_tb=5e-6, elapsed_hours=1.0)
    d = json.loads(rc.dump(c))
    # 4,719,733 B to write on 3,712,800 free: "does not fill" (the reported contradiction) is refused,
    # as is a verdict without the free space, or bytes to write that are not the forecast's
    for key, value, field in (("disk_fills", False, "disk_fills"), ("disk_short_bytes", None, "disk_short_bytes"),
                              ("disk_free_bytes", None, "disk_free_bytes"), ("bytes_to_write", 1.0, "bytes_to_write")):
        bad = json.loads(json.dumps(d))
        bad["forecast"][key] = value
        with pytest.raises(rc.PlannerInputError, match=f"--calibration.*{field}") as exc:
            rc.parse(json.dumps(bad).encode(), "cal.json")
        assert "\n" not in str(exc.value)


def test_the_command_line_says_what_its_json_says(capsys, tmp_path):
    # the reported case: an empty run folder, nothing measured, the plan's storage on a disk of
    # 1 MB and on the run directory's own filesystem
    run = tmp_path / "run"
    run.mkdir()
    m = str(RUNS / "manifest.yaml")
    for extra in (["--disk-capacity-tb", "0.000001"], []):
        assert main(["calibrate", str(run), "--manifest", m, *extra, "--json"]) == 0
        c = rc.parse(capsys.readouterr().out.encode(), "stdout")
        f = c.forecast
        if extra:
            assert f.disk_free_bytes == 1e6 and f.disk_fills is (f.storage_bytes > 1e6)
        assert f.disk_fills is (f.storage_bytes > f.disk_free_bytes) and f.hours_remaining is None
        agree(c)
        assert main(["calibrate", str(run), "--manifest", m, *extra]) == 0
        shown = capsys.readouterr().out
        said = re.search(r"^  disk +(.*)$", shown, re.M).group(1)
        # the text's verdict and figures are the JSON's (the free space to the 0.1 GB the text shows)
        verdict = said.split(": ")[0]
        assert verdict == ("the disk does not fill" if not f.disk_fills else
                           "the disk fills before the run ends, at a time unknown")
        assert f"{fmt_bytes(f.bytes_to_write)} still to write" in said
        assert said.endswith(f"; {fmt_bytes(f.disk_short_bytes)} short; no rate yet" if f.disk_fills
                             else "(free space of the run directory's filesystem)")
        assert "the disk will fill" not in shown


@pytest.mark.parametrize("args, flag, value", [
    (("--disk-capacity-tb", "-1"), "--disk-capacity-tb", "-1"), (("--elapsed-hours", "inf"), "--elapsed-hours", "inf"),
    (("--world", "0"), "--world", "0"),
    # above the bounds: the message gives the bound, not a rule the value meets ("above 0")
    (("--disk-capacity-tb", "2e6"), "--disk-capacity-tb", "at most 1,000,000"),
    (("--elapsed-hours", "200000"), "--elapsed-hours", "at most 100,000"),
])
def test_bad_input_is_one_line_naming_the_flag_and_value(capsys, tmp_path, args, flag, value):
    run = tmp_path / "run"
    run.mkdir()
    assert main(["calibrate", str(run), "--manifest", str(RUNS / "manifest.yaml"), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"planner: error: {flag}") and value in err and err.count("\n") == 1
