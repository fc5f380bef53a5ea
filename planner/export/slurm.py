"""Per-rank capture commands for N nodes, and the same as a Slurm array script (issue 15).

Each pipeline's own way of splitting the data, read in its code (pipeline_flags.yaml, `sharding`):

- vLLM speculators (c05b95b3): scripts/data_generation_offline.py `--world-size` / `--rank`
  (lines 174-192: "the number of nodes (not the number of gpus)" / "the node index"), passed to
  get_indices_to_process (src/speculators/data_generation/offline.py:76-123), a contiguous block of
  the *prepared* dataset, which prepare_data.py shuffled with --seed (preprocessing.py:791, 829)
  and fanned out to one row per assistant turn. Every node reads the same ./prepared (made once)
  and writes hs_{global index}.safetensors, so one output directory serves every rank. A rank's
  rows are a random draw of the mix: its bytes are predicted as its share of the whole.
- Model-Optimizer (a2fbac7b): compute_hidden_states_hf.py `--dp-rank` / `--dp-world-size` (lines
  84-95, "TASK_ID on SLURM" / "Number of tasks on SLURM"; examples/.../slurm_dump.sh:47 passes
  $SLURM_ARRAY_TASK_ID and $SLURM_ARRAY_TASK_COUNT) would take dataset.shard(num_shards, index)
  (line 123), a contiguous block of mix.jsonl: the rank holding the long-row components got twice
  the bytes of another (issue 35 item 11). So each rank reads its own planner shard instead
  (--input-data mix-0000R-of-0000N.jsonl, rows dealt in turn: sharding.rank_of) and leaves
  --dp-world-size at its default 1, with which the script shards nothing (lines 121-123). The
  files are {conversation_id}.pt (lines 128-133), unique over the mix, so every rank writes into
  one directory. One process per node (device_map="auto" spreads the model over its GPUs).
- SpecForge (a6b6b023): prepare_hidden_states.py has no rank flag. Its multi-node form is one
  torchrun world over every node (`torchrun --nnodes N --node_rank R`, torchrun's own flags): the
  data go to its DP ranks by DistributedSampler(shuffle=False) (specforge/data/utils.py:224-228,
  strided: DP rank d gets rows d, d+D, ...), the files are numbered from a contiguous start_idx
  per DP rank (prepare_hidden_states.py:887-901) into folders of --file-group-size (2,000) rows,
  rows_{a}-{b}/data_{idx} (lines 521-546, 592-594). That world needs every node at once, which a
  Slurm array does not promise (its tasks start when each gets a node), so here each node runs its
  own single-node torchrun on its planner shard (mix-0000R-of-0000N.jsonl, rows dealt in turn:
  sharding.rank_of) into its own directory (rank-0000R: the numbering restarts at 0 in every run).
"""
from __future__ import annotations

from planner.export import sharding
from planner.export.commands import (
    DRAFT_CONFIG,
    _model_path,
    _plan_values,
    _split_last,
    _target,
    draft_config_lines,
    node_gpus,
    pipeline_flags,
    quote,
    specforge_layout,
    specforge_strategy,
)
from planner.export.manifest import Manifest
from planner.text import count, dealt_note
from planner.units import fmt_bytes

SLURM_MARK = "#!/bin/bash\n# drafter planner: a Slurm array"
SPEC_SCRIPT = "scripts/prepare_hidden_states.py"
MODELOPT_SCRIPT = "examples/speculative_decoding/collect_hidden_states/compute_hidden_states_hf.py"


class Raw(str):
    """A shell fragment the planner wrote itself (a variable of the script): not quoted."""


def sh(argv) -> str:
    return " ".join(a if isinstance(a, Raw) else quote(a) for a in argv)


def _bytes(b: float) -> str:
    return f"{int(b):,} bytes ({fmt_bytes(b)})"


class Sharded:
    """The values of a sharded export of manifest `m` over `world` nodes for pipeline `fmt`."""

    def __init__(self, m: Manifest, fmt: str, world: int, manifest_path: str, catalog=None):
        self.m, self.fmt, self.world, self.manifest_path = m, fmt, world, manifest_path
        own = (specforge_layout(m) if fmt == "specforge"
               else {"speculators": "speculators", "modelopt": "modelopt-eagle3"}[fmt])
        self.spec, self.eff = _plan_values(m, own)
        self.model = _model_path(m)
        self.expected = fmt == "speculators"
        self.shards = fmt in ("specforge", "modelopt")     # each rank reads its planner shard
        self.predicted = sharding.rank_bytes(m, world, self.spec.id, expected=self.expected, catalog=catalog)
        self.need = [int(b * sharding.DISK_MARGIN) + 1 if b else 0 for b in self.predicted]
        self.rows = sharding.rows_by_rank(m.components, world)
        self.gpus = node_gpus(m)

    # ------------------------------------------------------------ the commands of one rank
    def shard_file(self, rank: int) -> str:
        return sharding.shard_path("mix.jsonl", rank, self.world)

    def rank_argv(self, rank, data: str, out: str) -> list[list[object]]:
        """The commands of rank `rank` (an int, or Raw('"$RANK"') in the script); `data`/`out` the
        data and output directories (Raw fragments in the script)."""
        m, eff, N = self.m, self.eff, self.world
        if self.fmt == "speculators":
            captured, last = _split_last(m)
            return [
                ["python", "scripts/launch_vllm.py", self.model, "--hidden-states-path",
                 _in(out, f"staging-{rank:05d}") if isinstance(rank, int) else Raw(f'"{out[1:-1]}/staging-$SHARD"'),
                 "--target-layer-ids", *captured, *([] if last else ["--no-include-last-layer"]),
                 "--", "--port", 8000],
                ["python", "scripts/data_generation_offline.py", "--endpoint", "http://localhost:8000/v1",
                 "--preprocessed-data", _in(data, "prepared"), "--output", out,
                 "--world-size", N, "--rank", rank],
            ]
        if self.fmt == "modelopt":
            aux = _split_last(m)[0]
            return [["python", MODELOPT_SCRIPT, "--model", self.model, "--input-data", self.rank_input(rank, data),
                     "--output-dir", out, "--max-seq-len", eff.max_seq_len or 3072,
                     "--aux-layers", ",".join(str(x) for x in aux)]]
        strategy = specforge_strategy(self.spec)
        shard = self.rank_input(rank, data)
        rank_out = _in(out, f"rank-{rank:05d}") if isinstance(rank, int) else Raw(f'"{out[1:-1]}/rank-$SHARD"')
        return [["torchrun", "--nnodes", 1, "--nproc_per_node", self.gpus, SPEC_SCRIPT,
                 "--target-model-path", self.model, "--strategy", strategy,
                 "--draft-model-config", DRAFT_CONFIG, "--data-path", shard,
                 "--max-length", eff.max_seq_len or 2048, "--batch-size", eff.capture_batch_size,
                 "--output-path", rank_out]]

    def rank_input(self, rank, data: str):
        """The file a rank reads (checked before it starts)."""
        if self.fmt == "speculators":
            return _in(data, "prepared")
        if isinstance(rank, int):
            return _in(data, self.shard_file(rank))
        return Raw(f'"{data[1:-1]}/mix-$SHARD-of-{self.world:05d}.jsonl"')

    # ------------------------------------------------------------ once, before the ranks
    def prepare(self) -> list[list[object]]:
        mp, N = self.manifest_path, self.world
        if self.shards:
            cmds = [["python", "-m", "planner", "materialize", mp, "--shards", N, "--out", "mix.jsonl",
                     "--hub-script", "materialize_hub.py"]]
            for r in range(min(N, 16)):
                cmds.append(["python", "materialize_hub.py", "--out", self.shard_file(r), "--append",
                             "--rank", r, "--world-size", N])
            return cmds
        cmds = [["python", "-m", "planner", "materialize", mp, "--out", "mix.jsonl",
                 "--hub-script", "materialize_hub.py"],
                ["python", "materialize_hub.py", "--out", "mix.jsonl", "--append"]]
        if self.fmt == "speculators":
            seq = ["--seq-length", self.eff.max_seq_len] if self.eff.max_seq_len else []
            cmds.append(["python", "scripts/prepare_data.py", "--model", self.model, "--data", "./mix.jsonl",
                         *seq, "--seed", 0, "--output", "./prepared"])
        return cmds

    def prepare_notes(self) -> list[str]:
        if self.shards:
            out = [f"# the planner's shards: {dealt_note(self.total_rows(), self.world)}"]
            if self.world > 16:
                out.append(f"# ... and materialize_hub.py likewise for every rank up to {self.world - 1}")
            return out
        if self.fmt == "speculators":
            return ["# prepare_data.py runs once, here, without a server (the tokenizer's chat template); every",
                    "# node reads the same ./prepared, so the ranks' blocks are the same rows everywhere"]
        return []

    def total_rows(self) -> int:
        return sum(c.rows_selected for c in self.m.components)

    def rank_comment(self, rank: int) -> str:
        if self.expected:
            a, b = sharding.block(self.total_rows(), self.world, rank)
            what = f"~{b - a:,} of the {self.total_rows():,} conversations' share (the pipeline's shuffled block)"
        else:
            what = ", ".join(f"{quote(cid)}={n:,}" for cid, n in self.rows[rank]) or "no rows"
        return f"# rank {rank} of {self.world} (node {rank}): {what}; predicted {_bytes(self.predicted[rank])}"

    def header(self) -> list[str]:
        key = {"speculators": "speculators", "specforge": "specforge", "modelopt": "model-optimizer"}[self.fmt]
        e = pipeline_flags()[key]
        how = {
            "speculators": "scripts/data_generation_offline.py --world-size N --rank R (lines 174-192): a contiguous "
                           "block of the shuffled prepared rows (offline.py:103-108)",
            "modelopt": "each rank reads its planner shard (--input-data mix-0000R-of-0000N.jsonl); "
                        "compute_hidden_states_hf.py shards nothing at its default --dp-world-size 1 (lines 121-123)",
            "specforge": "no rank flag in prepare_hidden_states.py; its torchrun --nnodes/--node_rank world needs "
                         "every node at once, so each node runs its own torchrun on its planner shard",
        }[self.fmt]
        return [f"# {count(self.world, 'rank')}, one per node, for {_target(key)}",
                f"# split: {how}",
                f"# ({e['repo']} at {e['commit']})",
                f"# target {quote(self.model)}; planned with the {quote(self.spec.id)} layout",
                *self.imbalance_note()]

    # the ranks' predicted bytes differing by more than this are said in the header
    IMBALANCE = 1.25

    def imbalance_note(self) -> list[str]:
        """Ranks whose predicted bytes still differ (a rank holds whole rows: with few rows per rank, a
        long row or two tips it): the slowest rank sets the capture's time."""
        busy = [b for b in self.predicted if b > 0]
        if self.world < 2 or not busy or max(busy) <= self.IMBALANCE * min(busy):
            return []
        hi = max(range(self.world), key=self.predicted.__getitem__)
        lo = min(range(self.world), key=self.predicted.__getitem__)
        return [f"# note: the ranks' bytes differ (each holds whole rows): rank {hi} {fmt_bytes(self.predicted[hi])}, "
                f"rank {lo} {fmt_bytes(self.predicted[lo])}; the slowest rank sets the capture's end"]


def _in(directory, name: str):
    if isinstance(directory, Raw):
        return Raw(f'"{directory[1:-1]}/{name}"')
    return f"{directory.rstrip('/')}/{name}"


def _command(argv: list[object]) -> str:
    """One command over several lines, a flag and its value on each (as commands.py writes them)."""
    parts: list[list] = []
    cur: list = []
    for a in argv:
        if isinstance(a, str) and a.startswith("--") and cur:
            parts.append(cur)
            cur = []
        cur.append(a)
    parts.append(cur)
    return " \\\n    ".join(sh(p) for p in parts)


def rank_commands(manifest: Manifest, fmt: str, world: int, manifest_path: str = "manifest.yaml", catalog=None) -> str:
    """The per-rank commands of `fmt` for `world` nodes, to run by hand (or with any launcher)."""
    x = Sharded(manifest, fmt, world, manifest_path, catalog)
    lines = [f"# {fmt}: capture on {world} nodes", *x.header(), "",
             "# once, on a filesystem every node sees:", *x.prepare_notes()]
    lines += [_command(c) for c in x.prepare()]
    if fmt == "specforge":
        lines += draft_config_lines(manifest)
    for r in range(world):
        lines += ["", x.rank_comment(r)]
        cmds = x.rank_argv(r, ".", "./hidden_states")
        if fmt == "speculators":
            lines.append("# on that node, in another shell: the vLLM server that writes the hidden states")
        lines += [_command(c) for c in cmds]
    return "\n".join(lines) + "\n"


SCRIPT_BODY = r'''
set -euo pipefail
OUT_DIR=${PLANNER_OUT_DIR:-./hidden_states}
DATA_DIR=${PLANNER_DATA_DIR:-.}
case ${PLANNER_DRY_RUN:-0} in
  0|false|False|FALSE|no|No|NO) DRY_RUN=0 ;;
  1|true|True|TRUE|yes|Yes|YES) DRY_RUN=1 ;;
  *) echo "PLANNER_DRY_RUN=${PLANNER_DRY_RUN}: give 1/true/yes (a dry run) or 0/false/no" >&2; exit 2 ;;
esac
if [ "${1-}" = --dry-run ]; then DRY_RUN=1; shift; fi
if [ "$#" -ne 0 ]; then
  echo "usage: sbatch THIS_SCRIPT [--dry-run]   (or: bash THIS_SCRIPT --dry-run)" >&2
  exit 2
fi

run() {   # the command, or in a dry run what it would be
  if [ "$DRY_RUN" = 1 ]; then
    printf 'rank %s would run:' "$RANK"; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}

check_disk() {   # the free space where OUT_DIR is (or would be) against this rank's shard
  local need=${NEED_BYTES[$RANK]} dir=$OUT_DIR avail free
  while [ ! -d "$dir" ]; do
    case $dir in */*) dir=${dir%/*}; dir=${dir:-/} ;; *) dir=. ;; esac
  done
  # GNU df's one column (a filesystem or mount point with a space in its name shifts df -P's fields)
  avail=$(df -k --output=avail -- "$dir" 2>/dev/null | { read -r _ || true; read -r a || true; printf '%s' "${a-}"; }) || avail=
  avail=${avail//[[:space:]]/}
  case $avail in   # digits only, and few enough that avail x 1024 stays far below 2^63
    ''|*[!0-9]*|??????????????*) echo "rank $RANK: cannot read the free space of $dir from df; nothing was started" >&2; return 1 ;;
  esac
  free=$((10#$avail * 1024))
  # the check passes only when the test itself succeeds: a test that errors stops the rank
  if [ "$free" -ge "$need" ]; then
    echo "rank $RANK: $need bytes needed (predicted ${PREDICTED_BYTES[$RANK]} x $MARGIN), $free free in $dir"
  else
    echo "rank $RANK: not enough disk in $dir: needs $need bytes (predicted ${PREDICTED_BYTES[$RANK]} x $MARGIN), $free free; nothing was started" >&2
    [ "$DRY_RUN" = 1 ] && echo "rank $RANK: (dry run) a real run would stop here"
    [ "$DRY_RUN" = 1 ] || return 1
  fi
}

check_input() {
  if [ ! -e "$1" ] && [ "$DRY_RUN" != 1 ]; then
    echo "rank $RANK: $1 is missing: make it first (the commands at the top of this script); nothing was started" >&2
    return 1
  fi
}
'''  # noqa: E501 (the script's own lines, as a user receives them)

SCRIPT_TAIL = r'''
if [ -n "${SLURM_ARRAY_TASK_ID-}" ]; then
  case $SLURM_ARRAY_TASK_ID in   # at most 9 digits: bash's arithmetic would wrap a longer one
    ''|*[!0-9]*|??????????*) printf 'SLURM_ARRAY_TASK_ID=%q is not a rank of this script (0 to %s)\n' "$SLURM_ARRAY_TASK_ID" "$((WORLD - 1))" >&2; exit 2 ;;
  esac
  if [ "$((10#$SLURM_ARRAY_TASK_ID))" -lt "$WORLD" ]; then
    rank_main "$((10#$SLURM_ARRAY_TASK_ID))"
  else
    echo "SLURM_ARRAY_TASK_ID=$SLURM_ARRAY_TASK_ID: this script has ranks 0 to $((WORLD - 1))" >&2; exit 2
  fi
elif [ "$DRY_RUN" = 1 ]; then
  for ((r = 0; r < WORLD; r++)); do rank_main "$r"; done
else
  echo "not a Slurm array task (SLURM_ARRAY_TASK_ID is unset): submit it with sbatch, run one rank with SLURM_ARRAY_TASK_ID=R bash THIS_SCRIPT, or add --dry-run" >&2
  exit 2
fi
'''  # noqa: E501 (the script's own lines, as a user receives them)


def _slurm_head(x: "Sharded", fmt: str, world: int, array: str, resuming: bool) -> list[str]:
    """The script's #SBATCH lines and the comments that say how to run it, rank by rank."""
    from planner._version import __version__
    lines = [SLURM_MARK + f" for {fmt}, one array task per node (drafter planner {__version__})",
             f"#SBATCH --job-name=drafter-{fmt}",
             f"#SBATCH --array={array}",
             "#SBATCH --nodes=1",
             "#SBATCH --exclusive",
             f"#SBATCH --gpus-per-node={x.gpus}",
             *x.header(),
             "#",
             "# Before sbatch, once, in PLANNER_DATA_DIR (default: the submit directory) on a filesystem every",
             "# node sees:", *x.prepare_notes(),
             *("#   " + sh(c) for c in x.prepare()),
             "#",
             "# sbatch THIS_SCRIPT [--dry-run]; bash THIS_SCRIPT --dry-run prints every rank's commands here.",
             "# PLANNER_OUT_DIR (default ./hidden_states) is where the hidden states go; PLANNER_DRY_RUN=1 (true, yes) "
             "is",
             f"# --dry-run. Each rank first checks df on it: predicted bytes x {sharding.DISK_MARGIN} (the plan is "
             "an estimate;",
             "# files, folders and staging take room it does not count).",
             *(x.rank_comment(r) for r in range(world)),
             *([f"# resuming: ranks {array} of {world} (the others are complete; each pipeline skips the rows "
                "whose files exist)"] if resuming else []),
             ]
    if fmt == "specforge":
        lines += ["# each rank writes its own vocab_mapping/ from its shard: train with one of them (rank 0's),",
                  "# or build the mapping from the whole mix.jsonl"]
    if fmt == "modelopt":
        lines += ["# files are {conversation_id}.pt (the row's conversation_id or uuid), one directory for every rank"]
    return lines


def _server_then_capture(server, capture) -> list[str]:
    """speculators: the rank's vLLM server started in the background and waited for, then its capture."""
    return ["  if [ \"$DRY_RUN\" = 1 ]; then",
            "    echo \"rank $RANK would start in the background, and wait for http://localhost:8000/v1/models:\"",
            "    run " + sh(server),
            "  else",
            "    " + sh(server) + " &",
            "    SERVER_PID=$!",
            "    trap 'kill \"$SERVER_PID\" 2>/dev/null || true' EXIT",
            "    for ((t = 0; ; t += 5)); do",
            "      curl -sf -o /dev/null http://localhost:8000/v1/models && break",
            "      kill -0 \"$SERVER_PID\" 2>/dev/null || { echo \"rank $RANK: the vLLM server exited\" >&2; exit 1; }",
            "      [ \"$t\" -lt \"${PLANNER_SERVER_WAIT:-3600}\" ] || "
            "{ echo \"rank $RANK: the vLLM server is not up after $t s\" >&2; exit 1; }",
            "      sleep 5",
            "    done",
            "  fi",
            "  run " + sh(capture)]


def slurm_script(manifest: Manifest, fmt: str, world: int, manifest_path: str = "manifest.yaml",
                 ranks: list[int] | None = None, catalog=None) -> str:
    """An sbatch array script: task R (SLURM_ARRAY_TASK_ID) is rank R, on a node of its own; only
    the tasks of `ranks` when given (export --resume: the unfinished ranks)."""
    x = Sharded(manifest, fmt, world, manifest_path, catalog)
    array = f"0-{world - 1}" if ranks is None else ",".join(str(r) for r in sorted(ranks))
    lines = _slurm_head(x, fmt, world, array, ranks is not None)
    lines.append(SCRIPT_BODY.rstrip("\n"))
    if fmt == "specforge":   # every rank reads the same draft config, written here (not in a dry run)
        lines += ['if [ "$DRY_RUN" != 1 ]; then', *draft_config_lines(manifest), "fi"]
    lines += [f"WORLD={world}",
              f"MARGIN={sharding.DISK_MARGIN}",
              "PREDICTED_BYTES=(" + " ".join(str(int(b)) for b in x.predicted) + ")",
              "NEED_BYTES=(" + " ".join(str(b) for b in x.need) + ")",
              "",
              "rank_main() {",
              '  RANK=$1',
              "  check_disk || exit 1"]
    body = len(lines)
    data, out = Raw('"$DATA_DIR"'), Raw('"$OUT_DIR"')
    lines.append("  check_input " + sh([x.rank_input(Raw('"$RANK"'), data)]) + " || exit 1")
    cmds = x.rank_argv(Raw('"$RANK"'), data, out)
    if fmt == "speculators":
        lines += _server_then_capture(*cmds)
    else:
        lines += ["  run " + sh(c) for c in cmds]
    if any("$SHARD" in line for line in lines[body:]):     # set only where used (shellcheck SC2034: Model-
        lines.insert(body - 1, "  printf -v SHARD '%05d' \"$RANK\"")  # Optimizer's ranks name no shard)
    lines += ["}", SCRIPT_TAIL.strip("\n")]
    return "\n".join(lines) + "\n"
