"""Sharded exports (issue 15): `materialize --shards N` and the hub script's --rank/--world-size split
a manifest's rows into N disjoint shards whose union is exactly the plain materialize output, and
`export --scheduler slurm` writes an sbatch array whose task R runs rank R on its shard (SpecForge,
Model-Optimizer) or with the pipeline's own rank flags (speculators), checks the disk first, and in
a dry run only prints.

The planner's shards deal the rows in turn (issue 35 item 11): position p to shard p % N. The
pipelines' own split, read in their code (planner/export/pipeline_flags.yaml), is contiguous:
- speculators c05b95b3 src/speculators/data_generation/offline.py:103-108 (get_indices_to_process),
- Model-Optimizer a2fbac7b compute_hidden_states_hf.py:121-123 dataset.shard(num_shards, index) when
  --dp-world-size > 1 (the export leaves it at 1: each rank reads its planner shard),
- SpecForge a6b6b023 scripts/prepare_hidden_states.py:887-901 (start_idx, samples_per_dp);
rank r of W over T rows starts at r*(T//W) + min(r, T%W). The stand-ins below apply that rule to the
file they are given, as the real scripts would.

The small manifest: `mine` (7 rows, first) and `other` (3 rows, first), T = 10, N = 4:
  positions: mine 0..6, other 7..9; dealt p % 4:
  rank 0 = 0, 4, 8 = mine 0, mine 4, other 1;  rank 1 = 1, 5, 9 = mine 1, mine 5, other 2;
  rank 2 = 2, 6 = mine 2, mine 6;              rank 3 = 3, 7 = mine 3, other 0.
With 1,000,000 bytes a row of mine and 4,000,000 of other (monkeypatched, to count by hand):
  predicted 2e6 + 4e6 = 6,000,000 / 6,000,000 / 2,000,000 / 1e6 + 4e6 = 5,000,000 bytes,
  needed (x 1.25, + 1) 7,500,001 / 7,500,001 / 2,500,001 / 6,250,001 bytes.
  (Ten rows are few: a rank holds whole rows, so these differ; test_dealt_shards_balance_the_bytes
  works the balance out on more rows.)
A df stand-in with 7,000 KiB free (7,168,000 bytes) lets ranks 2 and 3 run and stops 0 and 1.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

from planner.catalog.profile import profile_file
from planner.cli.main import main as cli_main
from planner.export import sharding, slurm
from planner.export.commands import value as as_value
from planner.export.manifest import build_manifest, dump_manifest, load_manifest
from planner.scenario import Scenario
from tests.unit.planner.export.test_commands import HOSTILE, STUB, hostile_manifest, run_bash
from tests.unit.planner.export.test_commands_pipeline_flags import accepted, script_and_flags

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash runs the generated scripts")
N = 4
PER_ROW = {"mine": 1_000_000, "other": 4_000_000}

# A pipeline stand-in: records its argv, its rank (SLURM_ARRAY_TASK_ID) and the row ids it would
# process, by the pipeline's own rule on the file it was given.
PIPELINE = r'''#!{python}
import json, os, sys
argv = [os.path.basename(sys.argv[0]), *sys.argv[1:]]
def value(flag):
    return argv[argv.index(flag) + 1] if flag in argv else None
def ids(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(x)["id"] for x in fh if x.strip()]
def block(total, world, rank):   # offline.py:103-108, datasets' Dataset.shard(contiguous=True)
    div, mod = divmod(total, world)
    start = div * rank + min(rank, mod)
    return start, start + div + (1 if rank < mod else 0)
rows = None
script = next((a for a in argv if a.endswith(".py")), "")
if script.endswith("compute_hidden_states_hf.py"):
    rows = ids(value("--input-data"))
    world, rank = int(value("--dp-world-size") or 1), int(value("--dp-rank") or 0)
    if world > 1:                 # compute_hidden_states_hf.py:121-123
        a, b = block(len(rows), world, rank)
        rows = rows[a:b]
elif script.endswith("data_generation_offline.py"):
    rows = ids(os.path.join(value("--preprocessed-data"), "rows.jsonl"))
    a, b = block(len(rows), int(value("--world-size")), int(value("--rank")))
    rows = rows[a:b]
elif script.endswith("prepare_hidden_states.py"):
    rows = ids(value("--data-path"))
with open(os.environ["STUB_LOG"], "a", encoding="utf-8") as fh:
    fh.write(json.dumps({"argv": argv, "task": os.environ.get("SLURM_ARRAY_TASK_ID"), "rows": rows}) + "\n")
'''

# sbatch stand-in: runs the script once per index of its #SBATCH --array=0-K with bash, as Slurm
# would on K+1 nodes, each task's output to slurm-<task>.out; arguments after the script pass on.
SBATCH = r'''#!{python}
import os, re, subprocess, sys
script, args = sys.argv[1], sys.argv[2:]
text = open(script, encoding="utf-8").read()
lo, hi = map(int, re.search(r"^#SBATCH --array=(\d+)-(\d+)$", text, re.M).groups())
for i in range(lo, hi + 1):
    with open(f"slurm-{i}.out", "w") as out, open(f"slurm-{i}.err", "w") as err:
        rc = subprocess.call(["{bash}", script, *args], stdout=out, stderr=err,
                             env={**os.environ, "SLURM_ARRAY_TASK_ID": str(i)})
    with open(f"slurm-{i}.rc", "w") as fh:
        fh.write(str(rc))
'''

# GNU df's answer to `df -k --output=avail -- DIR` (what the script asks), $STUB_DF_KB KiB free
DF = """#!/bin/sh
[ "$1 $2" = "-k --output=avail" ] || { echo "df stand-in: unexpected $*" >&2; exit 1; }
echo '    Avail'
echo "$STUB_DF_KB"
"""


@pytest.fixture()
def small(tmp_path, monkeypatch):
    """Two profiled files (mine: 9 rows, other: 5), a manifest for 7 + 3 rows, the plain
    materialize output, and PER_ROW bytes a row."""
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    for name, n in (("mine", 9), ("other", 5)):
        f = tmp_path / f"{name}.jsonl"
        f.write_text("".join(json.dumps({"instruction": f"{name} q{i}", "output": "a"}) + "\n" for i in range(n)))
        profile_file(f, name)
    manifest = tmp_path / "m.yaml"
    manifest.write_text(dump_manifest(build_manifest(Scenario(mix=[
        {"id": "mine", "rows": 7, "selection": "first"}, {"id": "other", "rows": 3, "selection": "first"}]))))
    data = tmp_path / "data"
    data.mkdir()
    assert cli_main(["materialize", str(manifest), "--out", str(data / "mix.jsonl")]) == 0
    monkeypatch.setattr(sharding, "bytes_per_row", lambda m, layout,
                        catalog=None: [PER_ROW[c.id] for c in m.components])
    return tmp_path, manifest, data


def ids(path):
    return [json.loads(x)["id"] for x in path.read_text().splitlines()]


def stand_ins(tmp_path, shell_stub=False) -> dict:
    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    files = {"sbatch": SBATCH, "df": DF, "curl": "#!/bin/sh\nexit 0\n"}
    for name in ("python", "torchrun"):
        files[name] = STUB.replace("{name}", name) if shell_stub else PIPELINE
    for name, text in files.items():
        (bin_ / name).write_text(text.replace("{python}", sys.executable).replace("{bash}", BASH))
        (bin_ / name).chmod(0o755)
    log = tmp_path / "calls.log"
    log.write_bytes(b"")
    return {"PATH": str(bin_), "STUB_LOG": str(log), "STUB_DF_KB": "999999999", "LC_ALL": "C",
            "PLANNER_DATA_DIR": str(tmp_path / "data"), "PLANNER_OUT_DIR": str(tmp_path / "out" / "hs")}


def calls(env):
    return [json.loads(x) for x in open(env["STUB_LOG"], encoding="utf-8").read().splitlines()]


def sbatch(script, tmp_path, env, *args):
    path = tmp_path / "job.sh"
    path.write_text(script)
    subprocess.run([str(tmp_path / "bin" / "sbatch"), str(path), *args], cwd=tmp_path, env=env, check=True,
                   timeout=60)
    return {i: ((tmp_path / f"slurm-{i}.out").read_text(), (tmp_path / f"slurm-{i}.err").read_text(),
                int((tmp_path / f"slurm-{i}.rc").read_text())) for i in range(N)}


# ---------------------------------------------------------------- the split
def test_block_is_a_partition_and_the_pipelines_rule():
    for total in range(0, 25):
        for world in range(1, 9):
            spans = [sharding.block(total, world, r) for r in range(world)]
            assert [i for a, b in spans for i in range(a, b)] == list(range(total))   # each row once, in order
            assert max(b - a for a, b in spans) - min(b - a for a, b in spans) <= 1
    assert [sharding.block(10, 4, r) for r in range(4)] == [(0, 3), (3, 6), (6, 8), (8, 10)]
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_dict({"i": list(range(11))})
    for world in (1, 3, 4, 11):       # (more shards than rows: datasets raises IndexError on an empty one)
        for r in range(world):
            a, b = sharding.block(11, world, r)
            assert ds.shard(num_shards=world, index=r)["i"] == list(range(a, b))   # Model-Optimizer's split


def test_rows_and_bytes_by_rank_worked_by_hand(small):
    m = load_manifest(small[1])
    assert sharding.rows_by_rank(m.components, N) == [[("mine", 2), ("other", 1)], [("mine", 2), ("other", 1)],
                                                      [("mine", 2)], [("mine", 1), ("other", 1)]]
    assert sharding.rank_bytes(m, N, "modelopt-eagle3") == [6e6, 6e6, 2e6, 5e6]
    assert slurm.Sharded(m, "modelopt", N, "m.yaml").need == [7_500_001, 7_500_001, 2_500_001, 6_250_001]
    # ten rows are few: the 6 MB and 2 MB ranks differ by more than 1.25x, and the script says so
    assert slurm.Sharded(m, "modelopt", N, "m.yaml").imbalance_note() == [
        "# note: the ranks' bytes differ (each holds whole rows): rank 0 6.0 MB, rank 2 2.0 MB; the slowest rank "
        "sets the capture's end"]
    # speculators splits its own shuffled rows: each rank its block's share of 7 x 1e6 + 3 x 4e6 = 19e6
    assert sharding.rank_bytes(m, N, "speculators", expected=True) == [19e6 * 3 / 10] * 2 + [19e6 * 2 / 10] * 2


def _three(monkeypatch):
    """A manifest of three components (hub ones, so in manifest order): a 300 rows of 1 MB, b 200 of
    4 MB, c 100 of 10 MB (bytes a row monkeypatched), T = 600 rows, 2,100 MB."""
    from types import SimpleNamespace
    comps = [SimpleNamespace(id=i, rows_selected=n, local_path=None) for i, n in (("a", 300), ("b", 200), ("c", 100))]
    per = {"a": 1e6, "b": 4e6, "c": 10e6}
    monkeypatch.setattr(sharding, "bytes_per_row", lambda m, layout, catalog=None: [per[c.id] for c in m.components])
    return SimpleNamespace(components=comps), per


def _by_blocks(m, per, world):
    """Each rank's bytes had the shards been contiguous blocks of rows (the split before issue 35)."""
    order, total = sharding.placed(m.components)
    return [sum(max(0, min(b, p.start + p.rows) - max(a, p.start)) * per[p.id] for p in order)
            for a, b in (sharding.block(total, world, r) for r in range(world))]


def test_dealt_shards_balance_the_bytes(monkeypatch):
    m, per = _three(monkeypatch)
    # positions: a 0..299, b 300..499, c 500..599.
    # 2 ranks by blocks: [0,300) = all of a = 300 MB; [300,600) = b 800 + c 1,000 = 1,800 MB (6x).
    assert _by_blocks(m, per, 2) == [300e6, 1800e6]
    # dealt p % 2: a from 0, b from 300, c from 500 (all even starts): 150 / 100 / 50 rows each,
    # 150 x 1 + 100 x 4 + 50 x 10 = 1,050 MB each.
    assert sharding.rows_by_rank(m.components, 2) == [[("a", 150), ("b", 100), ("c", 50)]] * 2
    assert sharding.rank_bytes(m, 2, "modelopt-eagle3") == [1050e6, 1050e6]
    # 3 ranks by blocks: [0,200) a 200 MB; [200,400) a 100 + b 100 x 4 = 500 MB; [400,600) b 100 x 4 + c 100 x 10
    # = 1,400 MB.
    assert _by_blocks(m, per, 3) == [200e6, 500e6, 1400e6]
    # dealt p % 3: a 0..299: 100 each. b 300..499 (300 % 3 = 0): rank 0 300, 303, ..., 498 = 67 rows, rank 1
    # 301..499 = 67, rank 2 302..497 = 66. c 500..599 (500 % 3 = 2): rank 2 500, 503, ..., 599 = 34, rank 0
    # 501..597 = 33, rank 1 502..598 = 33. Bytes: rank 0 100 + 67 x 4 + 33 x 10 = 698 MB, rank 1 the same,
    # rank 2 100 + 66 x 4 + 34 x 10 = 704 MB: within 6 / 698 = 0.86% (blocks: 7x).
    assert sharding.rows_by_rank(m.components, 3) == [[("a", 100), ("b", 67), ("c", 33)],
                                                      [("a", 100), ("b", 67), ("c", 33)],
                                                      [("a", 100), ("b", 66), ("c", 34)]]
    got = sharding.rank_bytes(m, 3, "modelopt-eagle3")
    assert got == [698e6, 698e6, 704e6] and sum(got) == 2100e6
    assert max(got) / min(got) < 1.01
    # in general a rank holds each component's rows // N or one more: the ranks' bytes differ by at most
    # one row of each component (here 1 + 4 + 10 = 15 MB), whatever the order of the mix
    for world in range(1, 12):
        got = sharding.rank_bytes(m, world, "modelopt-eagle3")
        assert max(got) - min(got) <= 15e6 and abs(sum(got) - 2100e6) < 1


def test_the_export_says_each_ranks_bytes(monkeypatch):
    m, per = _three(monkeypatch)
    x = slurm.Sharded.__new__(slurm.Sharded)      # the values rank_comment reads, without planning
    x.m, x.fmt, x.world, x.expected = m, "modelopt", 3, False
    x.predicted = sharding.rank_bytes(m, 3, "modelopt-eagle3")
    x.rows = sharding.rows_by_rank(m.components, 3)
    assert x.rank_comment(2) == "# rank 2 of 3 (node 2): a=100, b=66, c=34; predicted 704,000,000 bytes (704.0 MB)"
    assert x.imbalance_note() == []               # 704 / 698: well inside the 1.25 the note is for


def test_materialize_shards_are_disjoint_and_their_union_is_the_plain_output(small):
    tmp_path, manifest, data = small
    assert cli_main(["materialize", str(manifest), "--shards", str(N), "--out", str(data / "mix.jsonl")]) == 0
    names = sorted(p.name for p in data.iterdir())
    assert names == ["mix-00000-of-00004.jsonl", "mix-00001-of-00004.jsonl", "mix-00002-of-00004.jsonl",
                     "mix-00003-of-00004.jsonl", "mix.jsonl"]
    shards = [(data / f"mix-{r:05d}-of-00004.jsonl").read_text().splitlines() for r in range(N)]
    assert [len(s) for s in shards] == [3, 3, 2, 2]
    mix = (data / "mix.jsonl").read_text().splitlines()
    assert all(shards[r] == mix[r::N] for r in range(N))           # dealt in turn: position p in shard p % 4
    assert sorted(sum(shards, [])) == sorted(mix)                  # each row once
    assert [[json.loads(x)["id"].split("-")[0] for x in s] for s in shards] == [
        ["mine", "mine", "other"], ["mine", "mine", "other"], ["mine", "mine"], ["mine", "other"]]
    # the rows come in turn to every shard: with at most 2 files open, each shard's is reopened to append
    # to it, and the shards are the same bytes
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sharding.ShardWriter, "OPEN", 2)
        assert cli_main(["materialize", str(manifest), "--shards", str(N), "--out", str(data / "few.jsonl")]) == 0
    assert [(data / f"few-{r:05d}-of-00004.jsonl").read_text().splitlines() for r in range(N)] == shards
    assert not [p.name for p in data.iterdir() if p.name.endswith(".tmp")]
    # again: its own shards are replaced; a file it did not write is not
    assert cli_main(["materialize", str(manifest), "--shards", str(N), "--out", str(data / "mix.jsonl")]) == 0
    (data / "mix-00003-of-00004.jsonl").write_text("my notes\n")
    before = {p.name: p.read_bytes() for p in data.iterdir()}
    assert cli_main(["materialize", str(manifest), "--shards", str(N), "--out", str(data / "mix.jsonl")]) == 2
    assert {p.name: p.read_bytes() for p in data.iterdir()} == before


@pytest.mark.parametrize("bad", ["0", "10001", "-3"])
def test_shards_out_of_range_names_the_flag(small, bad, capsys):
    tmp_path, manifest, data = small
    before = sorted(p.name for p in data.iterdir())
    assert cli_main(["materialize", str(manifest), "--shards", bad, "--out", str(data / "x.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"planner: error: --shards: {bad} is not allowed; a whole number of shards from 1 to 10,000"
    assert sorted(p.name for p in data.iterdir()) == before
    assert cli_main(["export", str(manifest), "--format", "modelopt", "--nodes", bad]) == 2
    assert capsys.readouterr().err.startswith(f"planner: error: --nodes: {bad} is not allowed")


FAKE_DATASETS = '''
import json, random
class Dataset:
    def __init__(self, rows): self.rows = list(rows)
    def __len__(self): return len(self.rows)
    def __iter__(self): return iter(self.rows)
    def shuffle(self, seed): rows = list(self.rows); random.Random(seed).shuffle(rows); return Dataset(rows)
    def select(self, idx): return Dataset(self.rows[i] for i in idx)
def load_dataset(repo, subset=None, split=None, **kw):
    return Dataset({"instruction": f"{repo} q{i}", "output": "a"} for i in range(8))
'''


def test_hub_rank_split_matches_materialize_shards(small, tmp_path):
    # a local component and a hub one: mine at positions 0..6, openorca (hub, 5 rows) at 7..11, T = 12;
    # N = 4, dealt p % 4: rank 0 = 0, 4, 8 = mine 0, mine 4, openorca 1; rank 1 = mine 1, mine 5, openorca 2;
    # rank 2 = mine 2, mine 6, openorca 3; rank 3 = 3, 7, 11 = mine 3, openorca 0, openorca 4
    _, _, data = small
    manifest = tmp_path / "h.yaml"
    manifest.write_text(dump_manifest(build_manifest(Scenario(mix=[
        {"id": "openorca", "rows": 5}, {"id": "mine", "rows": 7, "selection": "first"}]))))
    script = tmp_path / "materialize_hub.py"
    assert cli_main(["materialize", str(manifest), "--out", str(data / "all.jsonl"), "--hub-script", str(script)]) == 0
    assert cli_main(["materialize", str(manifest), "--shards", str(N), "--out", str(data / "part.jsonl")]) == 0
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "datasets.py").write_text(FAKE_DATASETS)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "fake")}
    hub = lambda *a: subprocess.run([sys.executable, str(script), *a], env=env, check=True, capture_output=True)  # noqa: E731
    hub("--out", str(data / "all.jsonl"), "--append")
    for r in range(N):
        hub("--out", str(data / f"part-{r:05d}-of-00004.jsonl"), "--append", "--rank", str(r), "--world-size", str(N))
    shards = [ids(data / f"part-{r:05d}-of-00004.jsonl") for r in range(N)]
    assert [len(s) for s in shards] == [3, 3, 3, 3]
    every = ids(data / "all.jsonl")
    assert [[x.split("-")[0] for x in s] for s in shards] == [["mine", "mine", "openorca"]] * 3 + [
        ["mine", "openorca", "openorca"]]
    assert shards[3][1:] == [every[7], every[11]]              # openorca's rows 0 and 4
    assert all(shards[r] == every[r::N] for r in range(N))    # exactly the manifest's selection, each row once
    bad = subprocess.run([sys.executable, str(script), "--out", str(data / "x.jsonl"), "--rank", "4",
                          "--world-size", "4"], env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and "--rank: 4 is not from 0 to 3" in bad.stderr


# ---------------------------------------------------------------- the Slurm array
def _inputs(fmt, data, manifest):
    if fmt in ("specforge", "modelopt"):
        assert cli_main(["materialize", str(manifest), "--shards", str(N), "--out", str(data / "mix.jsonl")]) == 0
    if fmt == "speculators":      # the prepared dataset, as the stand-in reads it (one row a conversation)
        (data / "prepared").mkdir()
        shutil.copy(data / "mix.jsonl", data / "prepared" / "rows.jsonl")


@pytest.mark.parametrize("fmt", ["speculators", "specforge", "modelopt"])
def test_every_rank_gets_a_disjoint_shard_and_together_the_selection(small, fmt):
    tmp_path, manifest, data = small
    m = load_manifest(manifest)
    _inputs(fmt, data, manifest)
    env = stand_ins(tmp_path)
    out = sbatch(slurm.slurm_script(m, fmt, N, str(manifest)), tmp_path, env)
    assert all(rc == 0 for _, _, rc in out.values()), out
    got = {}
    for c in calls(env):
        script, flags = script_and_flags(c["argv"])
        assert set(flags) <= accepted(script), (script, flags)       # only flags the script defines
        argv = c["argv"]
        if "--world-size" in argv:
            assert argv[argv.index("--world-size") + 1] == "4" and argv[argv.index("--rank") + 1] == c["task"]
        assert "--dp-rank" not in argv and "--dp-world-size" not in argv   # Model-Optimizer reads its shard whole
        if c["rows"] is not None:
            got[int(c["task"])] = c["rows"]
    assert sorted(got) == list(range(N))
    mix = ids(data / "mix.jsonl")
    assert sorted(sum(got.values(), [])) == sorted(mix) and len(sum(got.values(), [])) == 10   # disjoint, the mix
    assert [len(got[r]) for r in range(N)] == [3, 3, 2, 2]
    if fmt == "speculators":       # its own contiguous blocks of its (here unshuffled) prepared rows
        assert all(got[r] == mix[slice(*sharding.block(10, N, r))] for r in range(N))
    else:                          # the planner's shards, dealt in turn, are the very rows each rank got
        assert all(got[r] == mix[r::N] for r in range(N))
    # rank 0's check: exact for the planner's shard, its share of 19e6 for speculators (x 1.25, + 1)
    assert f"rank 0: {7_125_001 if fmt == 'speculators' else 7_500_001} bytes needed" in out[0][0]


def test_a_too_small_disk_stops_that_rank_and_runs_nothing(small):
    tmp_path, manifest, data = small
    _inputs("modelopt", data, manifest)
    env = {**stand_ins(tmp_path), "STUB_DF_KB": "7000"}          # 7,168,000 bytes free
    out = sbatch(slurm.slurm_script(load_manifest(manifest), "modelopt", N, str(manifest)), tmp_path, env)
    assert [out[r][2] for r in range(N)] == [1, 1, 0, 0]
    hs = env["PLANNER_OUT_DIR"].rsplit("/", 2)[0]                # out/hs does not exist: df asks its parent
    assert out[0][1] == (f"rank 0: not enough disk in {hs}: needs 7500001 bytes (predicted 6000000 x 1.25), "
                         "7168000 free; nothing was started\n")
    assert "rank 1: not enough disk" in out[1][1] and "needs 7500001 bytes" in out[1][1]
    assert sorted(c["task"] for c in calls(env)) == ["2", "3"]


def test_dry_run_prints_every_rank_and_runs_nothing(small):
    tmp_path, manifest, data = small
    env = stand_ins(tmp_path)
    text = slurm.slurm_script(load_manifest(manifest), "speculators", N, str(manifest))
    out = sbatch(text, tmp_path, env, "--dry-run")                # sbatch passes it to every task
    assert calls(env) == []
    for r in range(N):
        assert out[r][2] == 0 and f"rank {r} would run: python scripts/data_generation_offline.py" in out[r][0]
        assert f"--world-size 4 --rank {r}" in out[r][0]
    (tmp_path / "job.sh").write_text(text)
    r = subprocess.run([BASH, str(tmp_path / "job.sh"), "--dry-run"], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and calls(env) == []
    assert [line.split(" would run: ")[0] for line in r.stdout.splitlines() if "would run:" in line] == [
        f"rank {k}" for k in range(N) for _ in (0, 1)]             # the server and the capture of each rank
    r = subprocess.run([BASH, str(tmp_path / "job.sh")], env=env, capture_output=True, text=True)
    assert r.returncode == 2 and "SLURM_ARRAY_TASK_ID is unset" in r.stderr and calls(env) == []


def test_export_cli_writes_the_script_and_never_replaces_another_file(small, capsys):
    tmp_path, manifest, data = small
    job = tmp_path / "job.sbatch"
    assert cli_main(["export", str(manifest), "--format", "specforge", "--scheduler", "slurm", "--nodes", "4",
                     "--out", str(job)]) == 0
    assert job.read_text().startswith(slurm.SLURM_MARK) and "#SBATCH --array=0-3\n" in job.read_text()
    assert cli_main(["export", str(manifest), "--format", "specforge", "--scheduler", "slurm", "--out",
                     str(job)]) == 0                                 # its own: replaced (default: 1 node)
    assert "#SBATCH --array=0-0\n" in job.read_text()
    mine = tmp_path / "notes.txt"
    mine.write_text("keep me\n")
    capsys.readouterr()
    assert cli_main(["export", str(manifest), "--format", "modelopt", "--scheduler", "slurm", "--out",
                     str(mine)]) == 2
    assert mine.read_text() == "keep me\n" and "--out:" in capsys.readouterr().err
    assert cli_main(["export", str(manifest), "--format", "deepspec", "--nodes", "2"]) == 2
    text = slurm.rank_commands(load_manifest(manifest), "modelopt", N, str(manifest))
    assert [text.count(f"--input-data ./mix-{r:05d}-of-00004.jsonl") for r in range(N)] == [1] * N
    assert "--dp-world-size 4" not in text and "--dp-rank" not in text


# ---------------------------------------------------------------- hostile values
@pytest.mark.parametrize("fmt", ["speculators", "specforge", "modelopt"])
@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_never_run(fmt, value, tmp_path, monkeypatch):
    m = hostile_manifest(value)
    # (its scenario does not plan, which a sharded export refuses: bytes a row, to test the quoting)
    monkeypatch.setattr(sharding, "bytes_per_row", lambda m, layout, catalog=None: [1000] * len(m.components))
    manifest_path = f"{value}.yaml"
    # the per-rank commands, run with stubs: every value one intact argument
    r, argvs = run_bash(slurm.rank_commands(m, fmt, 2, manifest_path), tmp_path)
    assert r.returncode == 0 and r.stderr == b""
    models = [a[a.index(f) + 1] for a in argvs for f in ("--model", "--target-model-path") if f in a]
    models += [a[2] for a in argvs if a[1:2] == ["scripts/launch_vllm.py"]]
    assert models and set(models) == {as_value(value)}     # a value starting with '-' lands as ./value (issue 21)
    assert any(a[:5] == ["python", "-m", "planner", "materialize", manifest_path] for a in argvs)
    # the Slurm script, dry run and real run (sh stand-ins), in a folder holding its inputs
    env = stand_ins(tmp_path, shell_stub=True)
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    for name in ("mix.jsonl", "mix-00000-of-00002.jsonl", "mix-00001-of-00002.jsonl", "prepared"):
        (data / name).write_text("")
    script = tmp_path / "job.sh"
    script.write_text(slurm.slurm_script(m, fmt, 2, manifest_path))
    dry = subprocess.run([BASH, str(script), "--dry-run"], cwd=data, env=env, capture_output=True)
    assert dry.returncode == 0 and dry.stderr == b"" and open(env["STUB_LOG"], "rb").read() == b""
    real = subprocess.run([BASH, str(script)], cwd=data, env={**env, "SLURM_ARRAY_TASK_ID": "1"}, capture_output=True)
    assert real.returncode == 0, real.stderr
    recorded = [x.split(b"\0")[:-1] for x in open(env["STUB_LOG"], "rb").read().split(b"\x1e\0") if x]
    assert recorded                 # (the speculators server, in the background, may be stopped before it logs)
    if fmt != "speculators":
        assert any(as_value(value).encode("utf-8", "surrogateescape") in a for a in recorded)
    assert not (data / "PWNED").exists() and not (tmp_path / "PWNED").exists()
    # (and SpecForge's draft config, which the script writes for every rank, with bash's printf)
    assert sorted(p.name for p in data.iterdir()) == sorted(["mix-00000-of-00002.jsonl", "mix-00001-of-00002.jsonl",
                                                             "mix.jsonl", "prepared"]
                                                            + ["draft_config.json"] * (fmt == "specforge"))


def test_more_nodes_than_rows_is_refused_before_anything_is_written(small, capsys):
    # the manifest selects 7 + 3 = 10 rows: 10 nodes get one each, 11 would leave a rank empty
    tmp_path, manifest, data = small
    assert cli_main(["export", str(manifest), "--format", "modelopt", "--nodes", "10"]) == 0
    capsys.readouterr()
    out = tmp_path / "cap.sbatch"
    assert cli_main(["export", str(manifest), "--format", "modelopt", "--nodes", "11", "--scheduler", "slurm",
                     "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == ("planner: error: --nodes: 11 ranks but the manifest selects 10 rows; "
                                               "give at most 10 nodes so that every rank has a row")
    assert not out.exists()
