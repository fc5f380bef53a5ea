"""`export --scheduler ray`: a Ray driver script that runs the ranks of a sharded capture on a running
Ray cluster (issue 25), the same ranks, commands and disk check as the Slurm array (slurm.py).

The driver connects with ray.init(address="auto") (RAY_ADDRESS, or the cluster `ray start` made on
this machine; `ray job submit` sets it) and runs one task per rank:
- the task asks for num_gpus = the rank's GPUs (one node's, as in the Slurm array) and one CPU;
- the ranks of a node are one placement group (STRICT_PACK: its bundles on one node); with the
  planner's one rank per node a group holds one rank;
- it checks the free space where PLANNER_OUT_DIR is against the rank's predicted bytes x margin,
  and that its input exists, then runs the pipeline's commands for its shard (subprocess, argv
  lists: no shell); a command that exits non-zero fails the task, which Ray retries (max_retries,
  retry_exceptions); a disk too small or a missing input is not retried;
- a retried rank reruns its commands: every pipeline skips the rows whose files exist (SpecForge
  scripts/prepare_hidden_states.py:548-576, 631-655; speculators offline.py:57-74, 110-113;
  Model-Optimizer compute_hidden_states_hf.py:128-140);
- at the end a summary: each rank ok or failed, its attempts, rows and predicted bytes; exit 1 if
  any rank failed.

The planner never imports ray; the driver does, where it runs. Every value from the manifest is in
the driver as JSON inside a Python string literal (repr), read back with json.loads: no value is
ever Python or shell code.
"""
from __future__ import annotations

import json
import secrets
from typing import Any

from planner.export import sharding
from planner.export.slurm import Sharded, quote

RAY_MARK = "#!/usr/bin/env python3\n# drafter planner: a Ray driver"
MAX_RETRIES = 2

DRIVER = r'''
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

PLAN = json.loads(__PLAN__)
WORLD = PLAN["world"]
ENV = {}            # in a task: the driver's variables its commands get (the worker's own stay as they are)


def getenv(name, default=None):
    return ENV.get(name, os.environ.get(name, default))


def out_dir():
    return getenv("PLANNER_OUT_DIR") or "./hidden_states"


def data_dir():
    return getenv("PLANNER_DATA_DIR") or "."


def resolve(arg):
    """A command argument: the export's tokens for the data and output folders become the folders."""
    for token, folder in ((PLAN["data_token"], data_dir()), (PLAN["out_token"], out_dir())):
        if arg == token:
            return folder
        if arg.startswith(token + "/"):
            return folder.rstrip("/") + arg[len(token):]
    return arg


def commands(rank):
    return [[resolve(a) for a in cmd] for cmd in PLAN["ranks"][str(rank)]["commands"]]


class RankFailed(Exception):
    """A command of the rank exited non-zero (retried)."""


class RankRefused(Exception):
    """The rank did not start: too little disk, or its input is missing (not retried)."""


def free_bytes(path):
    while not os.path.isdir(path):
        parent = os.path.dirname(path.rstrip("/")) or "."
        if parent == path:
            break
        path = parent
    return shutil.disk_usage(path).free, path


def run_rank(rank, workdir, env, counter=None):
    import ray
    if counter is not None:
        ray.get(counter.bump.remote(rank))
    ENV.clear()
    ENV.update(env)
    penv = {**os.environ, **env}
    r = PLAN["ranks"][str(rank)]
    free, where = free_bytes(out_dir() if os.path.isabs(out_dir()) else os.path.join(workdir, out_dir()))
    if free < r["need"]:
        raise RankRefused(f"rank {rank}: not enough disk in {where}: needs {r['need']} bytes (predicted "
                          f"{r['predicted']} x {PLAN['margin']}), {free} free; nothing was started")
    inp = resolve(r["input"])
    if not os.path.exists(inp if os.path.isabs(inp) else os.path.join(workdir, inp)):
        raise RankRefused(f"rank {rank}: {inp} is missing: make it first (the commands at the top of this "
                          f"driver); nothing was started")
    cmds = commands(rank)
    server = None
    try:
        if PLAN["server"]:                     # speculators: the vLLM server that writes the hidden states
            server = subprocess.Popen(cmds.pop(0), cwd=workdir, env=penv)
            waited = 0
            while True:
                try:
                    urllib.request.urlopen("http://localhost:8000/v1/models", timeout=5)
                    break
                except OSError:
                    if server.poll() is not None:
                        raise RankFailed(f"rank {rank}: the vLLM server exited")
                    if waited >= int(getenv("PLANNER_SERVER_WAIT", "3600")):
                        raise RankFailed(f"rank {rank}: the vLLM server is not up after {waited} s")
                    time.sleep(5)
                    waited += 5
        for cmd in cmds:
            rc = subprocess.run(cmd, cwd=workdir, env=penv).returncode
            if rc != 0:
                raise RankFailed(f"rank {rank}: {os.path.basename(cmd[0])} exited with {rc}")
    finally:
        if server is not None:
            server.terminate()
            server.wait()
    return rank


def main():
    p = argparse.ArgumentParser(description="Run the ranks of this capture on a Ray cluster.")
    p.add_argument("--dry-run", action="store_true", help="print each rank's commands; do not connect")
    p.add_argument("--max-retries", type=int, default=PLAN["max_retries"],
                   help="retries of a rank whose command fails (default %(default)s)")
    a = p.parse_args()
    if not 0 <= a.max_retries <= 100:
        p.error("--max-retries: give 0 to 100")
    if a.dry_run:
        for rank in PLAN["order"]:
            for cmd in commands(rank):
                print(f"rank {rank} would run: " + " ".join(quote(x) for x in cmd))
        return 0
    try:
        import ray
    except ImportError:
        print("this driver runs on a Ray cluster: install ray where it runs (pip install 'ray[default]')",
              file=sys.stderr)
        return 2
    from ray.util.placement_group import placement_group, remove_placement_group
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    # the variables the ranks' commands need, from this driver's environment: PLANNER_* and the
    # names listed in PLANNER_RAY_ENV (comma-separated; e.g. PATH,HF_HOME)
    # (given to each task, which sets them for its commands only: no runtime_env, so the cluster's
    # running workers take the tasks)
    names = {k for k in os.environ if k.startswith("PLANNER_")}
    names |= {x for x in os.environ.get("PLANNER_RAY_ENV", "").split(",") if x and x in os.environ}
    env = {k: os.environ[k] for k in sorted(names)}
    try:
        ray.init(address="auto", log_to_driver=True)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        print(f"no Ray cluster to connect to ({str(exc).strip().splitlines()[0][:200]}): start one (ray start "
              "--head) or submit this driver with ray job submit", file=sys.stderr)
        return 2

    @ray.remote(num_cpus=0)
    class Attempts:
        def __init__(self):
            self.n = {}

        def bump(self, rank):
            self.n[rank] = self.n.get(rank, 0) + 1

        def get(self):
            return self.n

    counter = Attempts.remote()
    task = ray.remote(run_rank)
    workdir = os.getcwd()
    most = max([n.get("Resources", {}).get("GPU", 0) for n in ray.nodes() if n.get("Alive")] or [0])
    results, pending, group_of, groups = {}, {}, {}, []
    for node in PLAN["nodes"]:               # the ranks of one node: one placement group (its bundles on one node)
        if PLAN["gpus"] * len(node) > most:
            for rank in node:
                results[rank] = f"not scheduled: no node of the cluster has {PLAN['gpus'] * len(node)} GPUs"
            continue
        pg = placement_group([{"GPU": PLAN["gpus"], "CPU": 1} for _ in node], strategy="STRICT_PACK")
        groups.append([pg, len(node)])
        for i, rank in enumerate(node):
            ref = task.options(
                num_gpus=PLAN["gpus"], num_cpus=1, max_retries=a.max_retries, retry_exceptions=[RankFailed],
                scheduling_strategy=PlacementGroupSchedulingStrategy(pg, placement_group_bundle_index=i),
            ).remote(rank, workdir, env, counter)
            pending[ref], group_of[ref] = rank, groups[-1]
    while pending:                           # as each rank ends: its result; a node's group freed when all are
        done, _ = ray.wait(list(pending), num_returns=1)
        ref = done[0]
        rank = pending.pop(ref)
        try:
            ray.get(ref)
            results[rank] = "ok"
        except Exception as exc:             # the task's own error, as Ray wraps it
            cause = getattr(exc, "cause", None) or exc
            results[rank] = "failed: " + (str(cause).strip().splitlines() or [type(cause).__name__])[-1][:300]
        group = group_of.pop(ref)
        group[1] -= 1
        if group[1] == 0:
            remove_placement_group(group[0])
    attempts = ray.get(counter.get.remote())
    print(f"summary: {sum(v == 'ok' for v in results.values())} of {len(results)} ranks ok "
          f"(of {WORLD} in this capture)")
    for rank in PLAN["order"]:
        r = PLAN["ranks"][str(rank)]
        print(f"  rank {rank}: {results[rank]}; {attempts.get(rank, 0)} attempt(s); {r['rows']} rows; "
              f"predicted {r['predicted']:,} bytes")
    return 0 if all(v == "ok" for v in results.values()) else 1


__QUOTE__

if __name__ == "__main__":
    sys.exit(main())
'''


def ray_driver(manifest, fmt: str, world: int, manifest_path: str = "manifest.yaml",
               ranks: list[int] | None = None) -> str:
    """A Python driver running ranks `ranks` (default: all) of the sharded capture on a Ray cluster."""
    from planner._version import __version__
    x = Sharded(manifest, fmt, world, manifest_path)
    order = list(range(world)) if ranks is None else sorted(ranks)
    data_token, out_token = f"\0data-{secrets.token_hex(8)}", f"\0out-{secrets.token_hex(8)}"
    plan: dict[str, Any] = {"world": world, "margin": sharding.DISK_MARGIN, "gpus": x.gpus, "max_retries": MAX_RETRIES,
            "data_token": data_token, "out_token": out_token, "server": fmt == "speculators",
            "order": order, "nodes": [[r] for r in order],   # one rank per node (as the Slurm array)
            "ranks": {}}
    for r in order:
        cmds = x.rank_argv(r, data_token, out_token)
        plan["ranks"][str(r)] = {
            "commands": [[str(a) for a in c] for c in cmds],
            "input": str(_input(x, r, data_token)),
            "predicted": int(x.predicted[r]), "need": x.need[r],
            "rows": sharding.shard_rows(x.total_rows(), world, r)}
    head = [RAY_MARK + f" for {fmt}, one task per rank (drafter planner {__version__})",
            *x.header(),
            "#",
            "# Before it, once, in PLANNER_DATA_DIR (default: the working directory) on a filesystem every",
            "# node sees:", *x.prepare_notes(),
            *("#   " + " ".join(quote(a) for a in c) for c in x.prepare()),
            "#",
            "# ray job submit --working-dir . -- python THIS_FILE   (or python THIS_FILE on a node of the cluster);",
            "# python THIS_FILE --dry-run prints each rank's commands. PLANNER_OUT_DIR (default ./hidden_states)",
            "# is where the hidden states go; PLANNER_RAY_ENV names other variables the ranks need (PATH,...).",
            *(x.rank_comment(r) for r in order)]
    if ranks is not None:
        head.append(f"# resuming: ranks {', '.join(str(r) for r in order)} of {world} (the others are complete)")
    return "\n".join(head) + "\n" + DRIVER.replace("__PLAN__", repr(json.dumps(plan))).replace(
        "__QUOTE__", _quote_source()).lstrip("\n")


def _quote_source() -> str:
    """The planner's own shell quoting (commands.quote, ids.has_unshown), copied into the driver from
    their source: the dry run prints what bash reads back as the argument, on one line."""
    import inspect

    from planner import ids
    from planner.export import commands
    return "\n\n".join([f"import re\nimport shlex\n_UNSHOWN = re.compile({ids._UNSHOWN.pattern!r})",
                          inspect.getsource(ids.has_unshown), inspect.getsource(commands.quote)])


def _input(x: Sharded, rank: int, data_token: str) -> str:
    if x.fmt == "speculators":
        return f"{data_token}/prepared"
    return f"{data_token}/{x.shard_file(rank)}"       # SpecForge's and Model-Optimizer's ranks read their shard
