"""Real clusters for the tests (issue 25): a one-node Slurm cluster (munged, slurmctld, slurmd from
Debian's slurm-wlm 22.05 and munge) and a local Ray cluster, each started once per test session
(per xdist worker: every port is picked free, every file is in the session's temporary folder), and
a stand-in checkout of each pipeline whose scripts accept exactly the flags of
planner/export/pipeline_flags.yaml and write the layout's files.

Without the daemons (or ray) the tests are skipped with a message, except under CI=true, where
they fail (.ci/run installs slurm-wlm, munge and the test extra's ray).
"""
from __future__ import annotations

import contextlib
import getpass
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from planner.export.commands import pipeline_flags

SLURM_BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo", "scontrol")
GPUS = 4            # the GPUs the test node declares (gres.conf: files standing for devices)


def unavailable(what: str) -> None:
    """Skip with `what`, or fail under CI (where .ci/run installs everything)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{what} (CI=true: .ci/run installs it)", pytrace=False)
    pytest.skip(what)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(pid: int | None, wait: float = 10.0) -> None:
    """SIGTERM the process `pid`, then SIGKILL it if it is still there after `wait` s."""
    if not pid:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + wait
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _pid(path: Path, wait: float = 10.0) -> int:
    end = time.monotonic() + wait
    while time.monotonic() < end:
        with contextlib.suppress(OSError, ValueError):
            return int(path.read_text().strip())
        time.sleep(0.05)
    raise RuntimeError(f"{path} was not written")


# ---------------------------------------------------------------- Slurm
class SlurmCluster:
    def __init__(self, root: Path):
        self.root = root
        self.conf = root / "slurm.conf"
        self.pids: dict[str, int] = {}

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *argv, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(list(argv), env={**self.env, **kw.pop("env", {})}, capture_output=True, text=True,
                              timeout=kw.pop("timeout", 120), **kw)

    def start(self) -> None:
        r, host = self.root, socket.gethostname().split(".")[0]
        for d in ("munge", "state", "spool", "log"):
            (r / d).mkdir(mode=0o700)
        key = r / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        sock = r / "munge" / "sock"
        # -f: munged checks that its folders belong to it and are not writable by others; the
        # session's temporary folder is root's /tmp/pytest-of-root/..., which it takes as unsafe
        subprocess.run(["munged", "-f", f"--key-file={key}", f"--socket={sock}", f"--pid-file={r / 'munge/pid'}",
                        f"--log-file={r / 'munge/log'}", f"--seed-file={r / 'munge/seed'}"], check=True,
                       capture_output=True, timeout=30)
        self.pids["munged"] = _pid(r / "munge" / "pid")
        for i in range(GPUS):
            (r / f"gpu{i}").touch()
        user = getpass.getuser()
        ctld, slurmd = free_port(), free_port()
        # a fast scheduler for a test (the defaults take ~3 s between the tasks of an array, and
        # sbatch --wait polls every 2 s only while MinJobAge allows it)
        self.conf.write_text(f"""ClusterName=planner-test
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={r / 'state'}
SlurmdSpoolDir={r / 'spool'}
SlurmctldPidFile={r / 'slurmctld.pid'}
SlurmdPidFile={r / 'slurmd.pid'}
SlurmctldLogFile={r / 'log/slurmctld.log'}
SlurmdLogFile={r / 'log/slurmd.log'}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SchedulerParameters=sched_min_interval=0,batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=4
KillWait=2
Waittime=0
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} RealMemory=1000 Gres=gpu:{GPUS} State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")
        # gres.conf beside slurm.conf: GPUs without a device file are dropped by slurmd
        (r / "gres.conf").write_text(f"NodeName={host} Name=gpu File={r}/gpu[0-{GPUS - 1}]\n")
        for daemon, pidfile in (("slurmctld", "slurmctld.pid"), ("slurmd", "slurmd.pid")):
            args = [daemon, "-f", str(self.conf)] + (["-c"] if daemon == "slurmctld" else [])
            p = self.run(*args, timeout=30)
            if p.returncode != 0:
                raise RuntimeError(f"{daemon} did not start: {p.stderr.strip()}")
            self.pids[daemon] = _pid(r / pidfile)
        end = time.monotonic() + 30
        state = ""
        while time.monotonic() < end:
            state = self.run("sinfo", "-h", "-N", "-o", "%T", timeout=10).stdout.strip()
            if state == "idle":
                return
            time.sleep(0.2)
        raise RuntimeError(f"the node is {state!r}, not idle, after 30 s: {self.log('slurmctld')[-2000:]}")

    def log(self, daemon: str) -> str:
        with contextlib.suppress(OSError):
            return (self.root / "log" / f"{daemon}.log").read_text(errors="replace")
        return ""

    def stop(self) -> None:
        pids = [self.pids.pop(d) for d in ("slurmd", "slurmctld", "munged") if d in self.pids]
        for pid in pids:                       # all three at once, then each waited for
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        for pid in pids:
            _stop(pid)

    def sbatch_wait(self, script: Path, *args: str, cwd: Path, env: dict[str, str] | None = None,
                    timeout: float = 120) -> subprocess.CompletedProcess:
        """sbatch --wait, each task's output to cwd/slurm-<task>.out (its stderr to .err)."""
        return self.run("sbatch", "--wait", "--output", str(cwd / "slurm-%a.out"), "--error",
                        str(cwd / "slurm-%a.err"), *args, str(script), cwd=cwd, env=env or {}, timeout=timeout)


def slurm_cluster_fixture(tmp_path_factory):
    missing = [b for b in SLURM_BINARIES if shutil.which(b) is None]
    if missing:
        unavailable(f"Slurm is not installed ({', '.join(missing)} missing): apt-get install slurm-wlm munge")
    cluster = SlurmCluster(tmp_path_factory.mktemp("slurm"))
    try:
        cluster.start()
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        cluster.stop()
        unavailable(f"the Slurm test cluster did not start: {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()


# ---------------------------------------------------------------- Ray
class RayCluster:
    def __init__(self, root: Path, address: str, proc: subprocess.Popen):
        self.root, self.address, self.proc = root, address, proc

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "RAY_ADDRESS": self.address, "RAY_USAGE_STATS_ENABLED": "0"}

    def stop(self) -> None:
        """`ray start --block` stops the processes it started when it gets SIGTERM; whatever of
        them is left (by the session folder in its command line, which no other cluster has) is
        then killed by its pid."""
        _stop(self.proc.pid, wait=15)
        with contextlib.suppress(ChildProcessError):
            self.proc.wait(timeout=5)
        for pid in _pids_mentioning(str(self.root)):
            _stop(pid, wait=2)
        shutil.rmtree(self.root, ignore_errors=True)


def _pids_mentioning(text: str) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and int(d.name) != os.getpid():
            with contextlib.suppress(OSError):
                if text.encode() in (d / "cmdline").read_bytes():
                    out.append(int(d.name))
    return out


def ray_cluster_fixture(tmp_path_factory):
    ray_bin = Path(sys.executable).with_name("ray")
    try:
        import ray  # noqa: F401  (the test extra's pinned version)
    except ImportError:
        unavailable("ray is not installed (pip install -e .[test])")
    # Ray's socket paths must stay under 107 bytes: a short folder of its own in /tmp
    root = Path(tempfile.mkdtemp(prefix="pr", dir="/tmp"))
    log = open(root / "ray-start.log", "w")
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.Popen([str(ray_bin), "start", "--head", "--num-cpus", "2", "--num-gpus", "4", "--port", "0",
                             "--include-dashboard", "false", "--disable-usage-stats", "--temp-dir", str(root),
                             "--block"], stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    address, end = None, time.monotonic() + 60
    while time.monotonic() < end and address is None and proc.poll() is None:
        m = re.search(r"ray start --address='([^']+)'", (root / "ray-start.log").read_text(errors="replace"))
        address = m.group(1) if m else None
        time.sleep(0.2)
    cluster = RayCluster(root, address or "", proc)
    if address is None:
        text = (root / "ray-start.log").read_text(errors="replace")[-1500:]
        cluster.stop()
        unavailable(f"the Ray test cluster did not start: {text}")
    try:
        yield cluster
    finally:
        log.close()
        cluster.stop()


# ---------------------------------------------------------------- the pipelines' stand-ins
# One program for every script of the checkout: it parses exactly the flags pipeline_flags.yaml
# lists for its own path (flags.json beside it), reads its input as the pipeline would, and writes
# the pipeline's files for its rows, each of its row's predicted size (a sparse file), skipping a
# row whose file exists as the real script does. STANDIN_FAIL makes ranks fail (see write_all). Each run appends {"script", "rank", "wrote", "skipped"}
# to STANDIN_LOG.
STANDIN = r'''#!/usr/bin/env python3
import argparse, json, os, sys, time
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.relpath(os.path.abspath(__file__), os.environ["STANDIN_ROOT"])
FLAGS = json.load(open(os.path.join(os.environ["STANDIN_ROOT"], "flags.json")))[SCRIPT]
SIZES = json.load(open(os.environ["STANDIN_SIZES"]))

argv = sys.argv[1:]
rest = argv[argv.index("--") + 1:] if "--" in argv else []
argv = argv[:argv.index("--")] if "--" in argv else argv
p = argparse.ArgumentParser(prog=SCRIPT, allow_abbrev=False)
for flag, default in FLAGS.items():
    if not flag.startswith("--"):
        p.add_argument(flag)
    elif isinstance(default, bool):
        p.add_argument(flag, action="store_true")
    else:
        p.add_argument(flag, nargs="+", required=default == "REQUIRED")
a = vars(p.parse_args(argv))
one = lambda flag: (a[flag.lstrip("-").replace("-", "_")] or [None])[0]

def rows(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(x) for x in fh if x.strip()]

def block(total, world, rank):
    div, mod = divmod(total, world)
    start = div * rank + min(rank, mod)
    return start, start + div + (1 if rank < mod else 0)

def write_all(items, rank):
    # STANDIN_FAIL: "RANK[:N[:once]],...": that rank exits 1 after writing N rows (default 1); with
    # "once" only its first attempt (a marker file in STANDIN_ROOT says a second one)
    after = None
    for spec in filter(None, os.environ.get("STANDIN_FAIL", "").split(",")):
        r, _, rest = spec.partition(":")
        n, _, once = rest.partition(":")
        if r == str(rank):
            marker = os.path.join(os.environ["STANDIN_ROOT"], f"failed-once-{rank}")
            if once and os.path.exists(marker):
                continue
            if once:
                open(marker, "w").close()
            after = int(n or 1)
    wrote = skipped = 0
    for path, row in items:
        if os.path.exists(path):
            skipped += 1
            continue
        if after is not None and wrote >= after:
            log(rank, wrote, skipped, failed=True)
            sys.exit(1)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".part", "wb") as fh:
            fh.truncate(int(SIZES[row["id"].rsplit("-", 1)[0]]))
        os.replace(path + ".part", path)
        wrote += 1
    log(rank, wrote, skipped)

def log(rank, wrote, skipped, failed=False):
    with open(os.environ["STANDIN_LOG"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"script": SCRIPT, "rank": rank, "wrote": wrote, "skipped": skipped, "failed": failed,
                             "task": os.environ.get("SLURM_ARRAY_TASK_ID"), "argv": sys.argv[1:]}) + "\n")

if SCRIPT == "scripts/launch_vllm.py":            # the vLLM server: serves until it is stopped
    while True:
        time.sleep(1)
elif SCRIPT == "scripts/prepare_hidden_states.py":  # SpecForge: its data file, numbered from 0
    out, data = one("--output-path"), rows(one("--data-path"))
    bs = int(one("--batch-size") or 32)
    data = data[:len(data) // bs * bs]              # DataLoader(drop_last=True)
    g = 2000
    items = [(os.path.join(out, f"rows_{i // g * g}-{i // g * g + g}", f"data_{i}.ckpt"), r) for i, r in enumerate(data)]
    base = os.path.basename(os.path.normpath(out))   # the export's rank-0000R folder
    write_all(items, int(base[5:]) if base.startswith("rank-") else 0)
elif SCRIPT.endswith("compute_hidden_states_hf.py"):  # Model-Optimizer: dataset.shard, {conversation_id}.pt
    data = rows(one("--input-data"))
    world, rank = int(one("--dp-world-size") or 1), int(one("--dp-rank") or 0)
    lo, hi = block(len(data), world, rank)           # (the whole file at --dp-world-size 1: lines 121-123)
    shard = os.path.basename(one("--input-data"))   # the export's planner shard, mix-0000R-of-0000N.jsonl
    if world == 1 and shard.startswith("mix-") and shard[4:9].isdigit():
        rank = int(shard[4:9])                       # the rank, for the log and STANDIN_FAIL
    write_all([(os.path.join(one("--output-dir"), f"{r['conversation_id']}.pt"), r) for r in data[lo:hi]], rank)
elif SCRIPT == "scripts/data_generation_offline.py":  # speculators: hs_{idx} over its block of the prepared rows
    data = rows(os.path.join(one("--preprocessed-data"), "rows.jsonl"))
    world, rank = int(one("--world-size") or 1), int(one("--rank") or 0)
    lo, hi = block(len(data), world, rank)
    write_all([(os.path.join(one("--output"), f"hs_{i}.safetensors"), data[i]) for i in range(lo, hi)], rank)
elif SCRIPT == "scripts/prepare_data.py":
    pass
'''

# torchrun's own flags that the export uses (torch.distributed.run); it runs the script once here
TORCHRUN = r'''#!/usr/bin/env python3
import argparse, os, sys
p = argparse.ArgumentParser(prog="torchrun", allow_abbrev=False)
p.add_argument("--nnodes", required=True)
p.add_argument("--nproc_per_node", required=True)
p.add_argument("script")
p.add_argument("args", nargs=argparse.REMAINDER)
a = p.parse_args()
os.execv(sys.executable, [sys.executable, a.script, *a.args])
'''


def scripts_of() -> dict[str, dict]:
    """{script path in its repository: {flag: default}} for the three sharded pipelines."""
    out = {}
    for key in ("speculators", "specforge", "model-optimizer"):
        for path, e in pipeline_flags()[key]["scripts"].items():
            out[path] = e["flags"]
    return out


def checkout(root: Path, sizes: dict[str, int]) -> dict[str, str]:
    """A stand-in checkout of the three pipelines at `root` (their scripts where the export runs
    them, relative to the submit folder), `python` and `torchrun` on a PATH of its own; the
    environment for a job there. sizes: bytes a row of each component."""
    root.mkdir(parents=True, exist_ok=True)
    flags = scripts_of()
    (root / "flags.json").write_text(json.dumps(flags))
    for path in flags:
        f = root / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(STANDIN.replace("#!/usr/bin/env python3", f"#!{sys.executable}"))
    bin_ = root / "bin"
    bin_.mkdir(exist_ok=True)
    (bin_ / "torchrun").write_text(TORCHRUN.replace("#!/usr/bin/env python3", f"#!{sys.executable}"))
    (bin_ / "torchrun").chmod(0o755)
    if not (bin_ / "python").is_symlink():
        (bin_ / "python").symlink_to(sys.executable)
    (bin_ / "curl").write_text("#!/bin/sh\nexit 0\n")      # the vLLM server's health check
    (bin_ / "curl").chmod(0o755)
    (root / "sizes.json").write_text(json.dumps(sizes))
    (root / "standin.log").write_text("")
    return {"PATH": f"{bin_}:{os.environ.get('PATH', '/usr/bin:/bin')}", "STANDIN_ROOT": str(root),
            "STANDIN_SIZES": str(root / "sizes.json"), "STANDIN_LOG": str(root / "standin.log"),
            "PYTHONDONTWRITEBYTECODE": "1"}


def standin_log(env: dict[str, str]) -> list[dict]:
    return [json.loads(x) for x in Path(env["STANDIN_LOG"]).read_text().splitlines() if x.strip()]
