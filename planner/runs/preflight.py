"""`planner preflight` (issue 37): the capture measured on the machine where it will run, before the
fleet is rented, written as a calibration file (planner/runs/calibration.py) that `estimate
--calibration` and the page's calibration upload read like a run's.

Four steps, each bounded in time (--max-minutes) and in disk (everything is written under one
temporary folder in --dir, removed at the end, on an error, on Ctrl-C and on SIGTERM: the CLI turns
SIGTERM into an exception, planner/cli/main.py):

1. disk: the free bytes of --dir against the plan's bytes per extraction node; the sustained write
   rate, every file fsync'd, of files the size of the plan's mean row file; the read-back rate of
   the same files after their pages are dropped from the page cache (posix_fadvise DONTNEED), the
   trainer's loader reading them cold.
2. GPUs: count, name and memory (torch.cuda, else nvidia-smi), against the plan's GPUs per node and
   whether one replica's weights (the plan's tensor parallelism) fit one GPU.
3. the capture through the HF transformers loop (what Model-Optimizer's
   collect_hidden_states/compute_hidden_states_hf.py runs: a forward with output_hidden_states, the
   chosen layers copied to the host, torch.save per conversation): the target's config fields from
   the model presets, random weights (no download: the FLOPs and bytes do not depend on their
   values), `--layers-run N` of its layers at full width, the forward time scaled by L/N (said in
   the output); rows of lengths drawn from the mix's own length distribution (the plan's atoms, the
   layout's cap), one at a time, unpadded; the states written in the layout's file format under
   the layout's file names, so that planner/runs/calibration.py measures them as it measures a run.
4. the calibration: `run_calibration.calibrate` over those files, the elapsed time being the
   measured capture time (forward scaled, host copy and write as measured), each figure labelled
   "measured by preflight on HOST, DATE", and what was not measured named in its notes.

torch and transformers (the `[preflight]` extra) are imported inside the functions that run the
capture only: `planner --help` and the dashboard never load them.
"""
from __future__ import annotations

import datetime as dt
import math
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable

from planner.errors import PlannerInputError
from planner.runs import calibration as rc
from planner.runs import rundir
from planner.text import printable

MAX_MINUTES = 24 * 60
MAX_TEST_MB = 1_000_000
MAX_ROWS = 10_000
MAX_LAYERS_RUN = 1024
CHUNK = 4 * 2**20                 # the disk test writes and reads in 4 MiB pieces
MIN_TEST_FILE = 4096
HEADROOM = 64 * 2**20             # left free beyond what the test writes
PREFIX = ".planner-preflight-"    # the temporary folder in --dir (removed at the end)
# the files each pipeline writes per row: (format, naming) read in the pipeline's code, see
# planner/runs/formats.py and docs/research/pipelines-research.md
#   speculators: hs_{idx}.safetensors {token_ids [T] int64, hidden_states [T, n, H]}
#                (speculators src/speculators/train/data.py:281-302)
#   specforge:   rows_{g}-{g+2000}/data_{idx}.ckpt, torch.save {input_ids [T], loss_mask [T],
#                aux_hidden_state [1, T, (n-1)H], hidden_state [1, T, H]} (EAGLE-3) or
#                {input_ids, loss_mask, hidden_states [1, T, nH]} (DFlash)
#                (SpecForge specforge/algorithms/eagle3/providers.py:200-208, dflash/providers.py:200-208)
#   modelopt:    {conversation_id}.pt, torch.save {input_ids [T], hidden_states [T, H],
#                aux_hidden_states [T, (n-1)H], loss_mask [T], conversation_id}
#                (Model-Optimizer collect_hidden_states/compute_hidden_states_hf.py:186-199)
#   eagle:       data_{idx}.ckpt, torch.save {input_ids, hidden_state [T, nH], loss_mask} (EAGLE ge_data;
#                the layout's own note: not re-read)
PER_ROW_PIPELINES = ("speculators", "specforge", "modelopt", "eagle")
DENSE_ARCH = {"qwen3-": "qwen3", "llama-": "llama"}     # preset id prefix -> transformers model_type
# Gated DeltaNet + full attention: Qwen3.5 and Qwen3.6 share transformers' model_type qwen3_5
HYBRID_ARCH = {"qwen3.6-": "qwen3_5_text", "qwen3.5-": "qwen3_5_text"}


@dataclass
class Options:
    layout: str | None = None
    device: str | None = None            # None: cuda when torch sees one, else cpu
    layers_run: int | None = None        # None: min(L, 2)
    max_minutes: float = 10.0
    dir: str = "."
    test_mb: float = 1024.0              # the disk test's bytes (the capture's files come on top, bounded too)
    rows: int = 16                       # rows captured at most
    seed: int = 0
    statvfs: Callable = os.statvfs       # injectable: a test simulates a small disk
    progress: Callable[[str], None] | None = None
    host: str | None = None              # None: this machine's name


@dataclass
class Result:
    """What preflight found: the calibration and the lines about the steps it does not hold."""
    calibration: rc.RunCalibration
    disk: dict
    gpus: dict
    capture: dict
    not_measured: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"disk": self.disk, "gpus": self.gpus, "capture": self.capture, "not_measured": self.not_measured,
                "calibration": self.calibration.model_dump(mode="json")}


class _Clock:
    """The --max-minutes bound and the progress lines (at most one a second per step)."""

    def __init__(self, minutes: float, progress):
        self.start, self.limit, self.progress, self.last = time.monotonic(), minutes * 60, progress, 0.0

    def left(self) -> float:
        return self.limit - (time.monotonic() - self.start)

    def say(self, text: str, force: bool = False) -> None:
        now = time.monotonic()
        if self.progress is not None and (force or now - self.last >= 1.0):
            self.last = now
            self.progress(text)


def host_name(given: str | None = None) -> str:
    """This machine's name as a label shows it: printable, at most 60 characters."""
    name = given if given is not None else socket.gethostname()
    return printable(name)[:60] or "unnamed host"


# ---------------------------------------------------------------- checks
def check_options(options: Options) -> None:
    """Every option in range, or one PlannerInputError naming the flag and the value."""
    def whole(flag, value, high):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high):
            raise PlannerInputError(flag, value, f"a whole number from 1 to {high:,}")
    whole("--layers-run", options.layers_run, MAX_LAYERS_RUN)
    whole("--rows", options.rows, MAX_ROWS)
    for flag, v, hi in (("--max-minutes", options.max_minutes, MAX_MINUTES),
                        ("--test-mb", options.test_mb, MAX_TEST_MB)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 < v <= hi:
            raise PlannerInputError(flag, v, f"a number above 0, at most {hi:,}")
    if options.device not in (None, "cpu", "cuda"):
        raise PlannerInputError("--device", options.device, "cuda or cpu")
    if not os.path.isdir(options.dir):
        raise PlannerInputError("--dir", options.dir, "an existing folder (where the capture will write)")


def _scenario_of(m, layout: str | None):
    s = m.scenario
    return s if layout is None or layout == s.layout else s.with_changes(layout=layout)


def _architecture(model) -> tuple[str, str]:
    """(transformers model_type, what is said of it) for a model spec, or a one-line refusal."""
    if model.active_params < model.params:
        raise PlannerInputError("--manifest", model.id, "a dense or hybrid target: the presets hold no expert "
                                "counts for an MoE model's exact shape, so preflight does not build it")
    if model.kv_latent_dim:
        raise PlannerInputError("--manifest", model.id, "a target without latent attention (MLA is not built)")
    if model.intermediate_size is None:
        raise PlannerInputError("--manifest", model.id, "a model with its intermediate_size (the MLP width)")
    for table in (HYBRID_ARCH, DENSE_ARCH):
        for prefix, arch in table.items():
            if model.id.startswith(prefix):
                return arch, f"{arch} (transformers), the preset's shape"
    if model.linear_attention_layers:
        raise PlannerInputError("--manifest", model.id, "a custom model without linear-attention layers "
                                "(preflight builds a custom shape as a Llama-shaped dense model)")
    return "llama", "llama (transformers): a custom model's fields in a Llama-shaped dense model"


def _layout_spec(s):
    from planner.presets.layouts import layout_presets
    spec = layout_presets().get(s.layout)
    if spec is None:
        raise PlannerInputError("--layout", s.layout, f"one of {', '.join(layout_presets())}")
    if spec.pipeline not in PER_ROW_PIPELINES or spec.grouping != "per_row" or spec.other_bytes_per_token:
        raise PlannerInputError("--layout", s.layout, "a layout of one file per row (" + ", ".join(
            k for k, v in layout_presets().items() if v.pipeline in PER_ROW_PIPELINES and v.grouping == "per_row")
            + "); shard layouts are not written by preflight yet")
    if (s.hidden_dtype or spec.hidden_dtype) == "fp8":
        raise PlannerInputError("--hidden-dtype", "fp8", "bf16 or fp16: preflight does not write fp8 scales")
    return spec


# ---------------------------------------------------------------- the plan's figures
def plan_figures(manifest, layout: str | None) -> dict:
    """The plan's numbers preflight checks against: bytes per node, GPUs, the weights per GPU."""
    from planner.phases.compose import resolve
    from planner.planning import plan
    s = _scenario_of(manifest, layout)
    p = plan(s)
    r = resolve(s)
    per_node = p.nodes.storage_per_node_bytes or p.storage_bytes_compressed
    tp = max(1, p.extraction.tensor_parallel)
    return {"scenario": s, "plan": p, "model": r.model, "layout": r.layout, "spec": r.spec,
            "bytes_per_node": per_node, "shared_disk": not p.nodes.storage_per_node_bytes,
            "gpus": s.extraction_gpus, "gpus_per_node": s.gpus_per_node, "gpu": r.ex_gpu.name,
            "tensor_parallel": tp, "weight_bytes_per_gpu": r.model.weight_bytes(s.weight_dtype) / tp,
            "tokens_per_s_per_gpu": p.extraction.prefill_tokens_per_s_per_gpu}


# ---------------------------------------------------------------- 1. disk
def _free(o: Options) -> float:
    st = o.statvfs(o.dir)
    return float(st.f_bavail * st.f_frsize)


def check_room(options: Options, test_bytes: float) -> float:
    """The free bytes of --dir; a one-line refusal when the test itself does not fit."""
    free = _free(options)
    need = test_bytes + HEADROOM
    if free < need:
        from planner.units import fmt_bytes
        raise PlannerInputError("--dir", options.dir,
                                f"a folder with room for the test itself: it has {fmt_bytes(free)} "
                                f"free, the test writes up to {fmt_bytes(test_bytes)} and leaves "
                                f"{fmt_bytes(HEADROOM)} free (lower --test-mb or --rows)")
    return free


def _drop_cache(fd: int) -> None:
    if hasattr(os, "posix_fadvise"):
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


def disk_test(folder: str, total: int, file_bytes: int, clock: _Clock, budget_s: float) -> dict:
    """Files of `file_bytes` (the plan's mean row file) written with fsync each, up to `total` bytes or
    `budget_s` seconds, then read back cold. Random bytes: nothing compresses them."""
    file_bytes = max(MIN_TEST_FILE, min(int(file_bytes), total))
    piece = os.urandom(min(CHUNK, file_bytes))
    files: list[str] = []
    written, t0 = 0, time.monotonic()
    while written + file_bytes <= total and time.monotonic() - t0 < budget_s:
        path = os.path.join(folder, f"disk-{len(files):06d}.bin")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            left = file_bytes
            while left:
                left -= os.write(fd, piece[:min(left, len(piece))])
            os.fsync(fd)
            _drop_cache(fd)
        finally:
            os.close(fd)
        files.append(path)
        written += file_bytes
        clock.say(f"disk: {written / 1e6:,.0f} of {total / 1e6:,.0f} MB written (fsync'd)")
    w_s = time.monotonic() - t0
    read, t1 = 0, time.monotonic()
    for path in files:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        try:
            while chunk := os.read(fd, CHUNK):
                read += len(chunk)
        finally:
            os.close(fd)
        clock.say(f"disk: {read / 1e6:,.0f} MB read back")
    r_s = time.monotonic() - t1
    for path in files:
        os.unlink(path)
    return {"file_bytes": file_bytes, "files": len(files), "bytes_written": written,
            "write_bytes_per_s": written / w_s if files and w_s > 0 else None,
            "read_bytes_per_s": read / r_s if files and r_s > 0 else None,
            "cache_dropped": hasattr(os, "posix_fadvise")}


# ---------------------------------------------------------------- 2. GPUs
def gpu_inventory(torch_mod=None) -> dict:
    """{count, names, memory_bytes, from}: torch.cuda when it sees a GPU, else nvidia-smi, else none."""
    if torch_mod is not None and torch_mod.cuda.is_available():
        props = [torch_mod.cuda.get_device_properties(i) for i in range(torch_mod.cuda.device_count())]
        return {"count": len(props), "names": [printable(p.name)[:80] for p in props],
                "memory_bytes": [float(p.total_memory) for p in props], "from": "torch.cuda"}
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True, timeout=20, check=True).stdout
            rows = [line.rsplit(",", 1) for line in out.strip().splitlines()[:64] if "," in line]
            return {"count": len(rows), "names": [printable(n.strip())[:80] for n, _ in rows],
                    "memory_bytes": [float(mb) * 2**20 for _, mb in rows], "from": "nvidia-smi"}
        except (OSError, subprocess.SubprocessError, ValueError):
            pass
    return {"count": 0, "names": [], "memory_bytes": [], "from": "torch.cuda and nvidia-smi see none"}


def gpu_verdict(inv: dict, figs: dict) -> list[str]:
    """The inventory against the plan: GPUs per node, and one replica's weights per GPU."""
    from planner.units import fmt_bytes
    lines = []
    if inv["count"] < figs["gpus_per_node"]:
        lines.append(f"this machine has {inv['count']} GPU(s); the plan puts {figs['gpus_per_node']} on each "
                     f"extraction node ({figs['gpus']} in all, {figs['gpu']})")
    else:
        lines.append(f"{inv['count']} GPU(s) here, the plan's {figs['gpus_per_node']} per node fit")
    if inv["memory_bytes"]:
        mem = min(inv["memory_bytes"])
        fits = figs["weight_bytes_per_gpu"] < mem
        lines.append(f"the weights per GPU at tensor parallelism {figs['tensor_parallel']} "
                     f"({fmt_bytes(figs['weight_bytes_per_gpu'])}) {'fit' if fits else 'do not fit'} "
                     f"in {fmt_bytes(mem)}")
    return lines


# ---------------------------------------------------------------- 3. the capture
def _layer_types(model, n_run: int) -> list[str] | None:
    """The hybrid model's own pattern ([linear x (k-1), full] repeated, k = L / full layers: Qwen3.6's
    config.json layer_types) cut to the first `n_run` layers; None for a dense model."""
    if not model.linear_attention_layers:
        return None
    k = max(1, round(model.num_layers / max(model.full_attention_layers, 1)))
    return ["full_attention" if (i + 1) % k == 0 else "linear_attention" for i in range(n_run)]


def build_model(model, arch: str, n_run: int, dtype, device: str):
    """The target's shape with `n_run` layers and random weights (transformers' own initialisation),
    its base model only: the LM head's forward is not part of the states a capture stores."""
    import torch
    from transformers import AutoConfig, AutoModel
    kw = dict(hidden_size=model.hidden_size, num_hidden_layers=n_run, num_attention_heads=model.num_q_heads,
              num_key_value_heads=model.num_kv_heads, head_dim=model.head_dim,
              intermediate_size=model.intermediate_size, vocab_size=model.vocab_size,
              tie_word_embeddings=model.tied_embeddings)
    if arch == "qwen3_5_text":
        kw.update(layer_types=_layer_types(model, n_run), linear_num_key_heads=model.linear_key_heads,
                  linear_num_value_heads=model.linear_value_heads, linear_key_head_dim=model.linear_key_head_dim,
                  linear_value_head_dim=model.linear_value_head_dim, linear_conv_kernel_dim=model.linear_conv_kernel)
    config = AutoConfig.for_model(arch, **kw)
    with torch.device(device):
        net = AutoModel.from_config(config, dtype=dtype)
    return net.eval()


def _reservoir(names: rundir.Naming, k: int, rng: random.Random) -> list[rundir.ExpectedFile]:
    """`size` of the layout's files, a reservoir sample by `rng` over its first rundir.MAX_ENTRIES names."""
    chosen: list[rundir.ExpectedFile] = []
    for i, e in enumerate(names.expected()):
        if i >= rundir.MAX_ENTRIES:
            break
        if len(chosen) < k:
            chosen.append(e)
        elif (j := rng.randrange(i + 1)) < k:
            chosen[j] = e
    return chosen


def sample_rows(figs: dict, names: rundir.Naming, size: int, seed: int) -> list[tuple[rundir.ExpectedFile, int]]:
    """`size` of the layout's files (a seeded reservoir over its names) and a length for each, drawn from
    its component's length distribution (the plan's atoms, in the unit and under the cap in force)."""
    import numpy as np

    from planner.catalog.stats import get_catalog
    from planner.phases.mix_storage import mix_rows
    from planner.presets.layouts import effective
    s, spec = figs["scenario"], figs["spec"]
    eff = effective(spec, unit=s.unit, max_seq_len=s.max_seq_len, capture_batch_size=s.capture_batch_size,
                    sort_by_length=s.sort_by_length)
    atoms = {r.id: (r.turn if eff.unit == "turn" else r.conv)
             for r in mix_rows(s, get_catalog() if s.uniform is None else None)}
    rng = random.Random(seed)
    chosen = _reservoir(names, size, rng)
    plan = names.plan
    weights = [n * f for n, f in zip(plan.rows, plan.files_per_row, strict=True)]
    gen = np.random.default_rng(seed)
    out = []
    for e in chosen:
        cid = e.component or (plan.ids[plan.component_at(e.positions[0])] if e.positions and not e.draw
                              else rng.choices(plan.ids, weights)[0])
        a = atoms.get(cid) or next(iter(atoms.values()))
        p = a.rows / a.rows.sum()
        draws = 1 if eff.padding != "batch" or eff.sort_by_length else eff.capture_batch_size
        out.append((e, stored_length([float(x) for x in a.tokens[gen.choice(len(p), size=draws, p=p)]], eff)))
    return out


def stored_length(draws: list[float], eff) -> int:
    """The tokens a row's file stores, from its own length (draws[0]) and, for a layout that pads to
    its batch's longest row ("batch", unsorted: SpecForge's DataCollatorWithPadding over consecutive
    rows), the other rows of its batch (draws[1:]); "max_length" stores the cap; never past the cap."""
    t = round(max(draws) if eff.padding == "batch" and not eff.sort_by_length else draws[0])
    cap = eff.max_seq_len or t
    return max(1, cap if eff.padding == "max_length" else min(t, cap))


def _row_tensors(spec, ids, states: list, name: str) -> dict:
    """The tensors one row's file holds in `spec`'s pipeline (the table at the top of this module);
    ids and the loss mask at the layout's widths (token_id_bytes, loss_mask_bytes)."""
    import torch
    width = {8: torch.int64, 4: torch.int32, 2: torch.int16, 1: torch.uint8}
    ids = ids.to(width[spec.token_id_bytes])
    mask = torch.ones_like(ids, dtype=width[spec.loss_mask_bytes]) if spec.loss_mask_bytes else None
    if spec.pipeline == "speculators":
        return {"token_ids": ids, "hidden_states": torch.stack(states, dim=1)}
    if spec.pipeline == "specforge" and spec.append_last_layer:
        return {"input_ids": ids, "loss_mask": mask, "aux_hidden_state": torch.cat(states[:-1], -1)[None],
                "hidden_state": states[-1][None]}
    if spec.pipeline == "specforge":
        return {"input_ids": ids, "loss_mask": mask, "hidden_states": torch.cat(states, -1)[None]}
    if spec.pipeline == "modelopt":
        aux = torch.cat(states[:-1], -1) if len(states) > 1 else states[0][:, :0]
        return {"input_ids": ids, "hidden_states": states[-1], "aux_hidden_states": aux, "loss_mask": mask,
                "conversation_id": name}
    return {"input_ids": ids, "hidden_state": torch.cat(states, -1), "loss_mask": mask}


def write_row(path: str, spec, ids, states: list, name: str) -> None:
    """One row's file in the layout's format: safetensors (speculators) or torch.save (the others)."""
    import torch
    tensors = {k: v for k, v in _row_tensors(spec, ids, states, name).items() if v is not None}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if spec.pipeline == "speculators":
        from safetensors.torch import save_file
        save_file({k: v.contiguous() for k, v in tensors.items()}, path)
    else:
        torch.save(tensors, path)


def _sync(torch, device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _inside(folder: str, rel: str) -> str:
    """The path of a layout's file name under `folder`; a name that would leave it (names come from
    the manifest's component ids) is refused."""
    path = os.path.join(folder, *rel.split("/"))
    root = os.path.realpath(folder)
    if os.path.commonpath([os.path.realpath(path), root]) != root or rel.startswith("/"):
        raise PlannerInputError("--manifest", rel, "file names inside the capture's folder")
    return path


def capture(folder: str, figs: dict, rows: list, arch: str, n_run: int, device: str, clock: _Clock,
            budget_s: float) -> dict:
    """Rows through the model, timed per part: forward (of n_run layers), host copy, write. Stops at
    the time budget; at least the first row runs once the model is built."""
    import torch
    model, layers = figs["model"], figs["layout"].layers
    dtype = torch.float16 if figs["layout"].hidden_dtype == "fp16" else torch.bfloat16
    clock.say(f"capture: building {n_run} of {model.num_layers} layers of {model.name} ({arch}, random "
              "weights)", force=True)
    t0 = time.monotonic()
    net = build_model(model, arch, n_run, dtype, device)
    built = time.monotonic() - t0
    gen = torch.Generator().manual_seed(len(rows))
    fwd = copy = write = 0.0
    done, tokens, t_start = 0, 0, time.monotonic()
    for e, t in rows:
        if done and time.monotonic() - t_start > budget_s:
            break
        path = _inside(folder, e.path)
        ids = torch.randint(0, model.vocab_size, (1, t), generator=gen)
        _sync(torch, device)
        a = time.perf_counter()
        with torch.inference_mode():
            hs = net(input_ids=ids.to(device), output_hidden_states=True).hidden_states
        _sync(torch, device)
        b = time.perf_counter()
        # the plan's layer ids onto the n_run layers built: the same count and shape of states
        host = [(hs[min(x, n_run)][0].to("cpu") if device == "cuda" else hs[min(x, n_run)][0].clone())
                for x in layers]
        _sync(torch, device)
        c = time.perf_counter()
        write_row(path, figs["spec"], ids[0], host, os.path.basename(path).rsplit(".", 1)[0])
        d = time.perf_counter()
        fwd, copy, write = fwd + (b - a), copy + (c - b), write + (d - c)
        done, tokens = done + 1, tokens + t
        clock.say(f"capture: {done} of {len(rows)} rows, {tokens:,} tokens", force=done == 1)
        del hs, host
    scale = model.num_layers / n_run
    return {"rows": done, "tokens": tokens, "layers_run": n_run, "layers": model.num_layers, "scale": scale,
            "layer_types_run": _layer_types(model, n_run), "device": device, "build_s": built,
            "forward_s": fwd, "forward_scaled_s": fwd * scale, "host_copy_s": copy, "write_s": write,
            "capture_s": fwd * scale + copy + write, "dtype": str(dtype).removeprefix("torch.")}


def engine_paths() -> str:
    """Whether vLLM and SGLang are installed: their dummy-weight paths (load_format="dummy") are not
    run by preflight either way; it says which."""
    import importlib.util
    have = [n for n in ("vllm", "sglang") if importlib.util.find_spec(n) is not None]
    return (f"{' and '.join(have)} installed, not run by preflight" if have else "neither vllm nor sglang is "
            "installed here")


# ---------------------------------------------------------------- 4. the calibration
def _label(host: str, when: dt.datetime) -> str:
    return f"measured by preflight on {host}, {when.date().isoformat()}"


def _notes(cap: dict, figs: dict, arch_note: str, gpus: dict, disk: dict, shared: bool) -> list[str]:
    from planner.units import fmt_bytes
    model, spec = figs["model"], figs["spec"]
    types = cap["layer_types_run"]
    engines = engine_paths()
    notes = [f"shape: {arch_note}; {cap['layers_run']} of its {cap['layers']} layers built at full width "
             f"({model.hidden_size} wide), their forward time x {cap['scale']:.3g} for all layers"
             + (f"; the layers run: {', '.join(types)} (the model's own pattern, cut)" if types else ""),
             f"rows: {cap['rows']} rows, {cap['tokens']:,} tokens, lengths drawn from the mix's distribution, one "
             f"row at a time (batch 1), each at the length the layout stores (its padding) on {cap['device']} "
             f"in {cap['dtype']}",
             "not measured: the LM head's forward (the base model runs: a capture stores hidden states), the "
             "real weights' values (random: the FLOPs and bytes are the same), vLLM and SGLang dummy-weight "
             f"paths ({engines}), the throughput a batch of rows gains over one row at a time"]
    if cap["device"] == "cpu":
        notes.append("the capture ran on the CPU: its rate is no GPU's; on CPU the host copy is a copy in memory")
    if spec.sidecar_bytes_per_token:
        notes.append(f"the {spec.sidecar_bytes_per_token} bytes per token the pipeline keeps in another file "
                     "(its dataset) are not written; the plan counts them")
    if shared:
        notes.append("the plan stores on a shared filesystem: the disk figures are this folder's")
    elif figs["plan"].nodes.extraction_nodes > 1:
        notes.append(f"the forecast's disk line counts the whole plan against this one disk; the plan puts "
                     f"{fmt_bytes(figs['bytes_per_node'])} on each of its {figs['plan'].nodes.extraction_nodes} nodes")
    if disk.get("write_bytes_per_s"):
        notes.append(f"disk: {fmt_bytes(disk['write_bytes_per_s'])}/s written with fsync, "
                     f"{fmt_bytes(disk['read_bytes_per_s'] or 0)}/s read back cold, files of "
                     f"{fmt_bytes(disk['file_bytes'])}")
    if not gpus["count"]:
        notes.append("no GPU here: the GPU inventory against the plan is not measured")
    return notes


def calibration_of(manifest, figs: dict, folder: str, cap: dict, label: str, notes: list[str]) -> rc.RunCalibration:
    """run_calibration.calibrate over the files the capture wrote: the measured capture time spread
    over the plan's GPUs (each at the rate measured here), so that the per-GPU rate is this one's."""
    g = figs["gpus"]
    c = rc.calibrate(manifest, folder, layout=figs["scenario"].layout, gpus=g, min_age=0,
                     elapsed_hours=max(cap["capture_s"], 1e-9) / 3600 / g)
    c = c.model_copy(update={
        "layers": list(figs["layout"].layers), "measured_by": label,
        "elapsed_from": f"{label}: {cap['capture_s']:,.3g} s of capture on one {cap['device']} device, as if "
                        f"each of the plan's {g} GPUs ran at that rate",
        "notes": (notes + c.notes)[:50]})
    return rc.RunCalibration.model_validate(c.model_dump())


# ---------------------------------------------------------------- the whole
def _capture_bytes(figs: dict, rows: list) -> float:
    lay = figs["layout"]
    per_token = lay.hidden_state_bytes_per_token + lay.token_id_bytes + lay.loss_mask_bytes
    return sum(t * per_token + 1_000_000 for _, t in rows)


def _cuda_or_refuse() -> None:
    import torch
    if not torch.cuda.is_available():
        raise PlannerInputError("--device", "cuda", "cpu: torch sees no CUDA device here")


def run(manifest, options: Options) -> Result:
    """Preflight of `manifest` on this machine (see the module docstring)."""
    check_options(options)
    figs = plan_figures(manifest, options.layout)
    arch, arch_note = _architecture(figs["model"])
    _layout_spec(figs["scenario"])
    clock = _Clock(options.max_minutes, options.progress)
    names = rundir.naming(manifest, figs["scenario"].layout)
    rows = sample_rows(figs, names, options.rows, options.seed)
    if not rows:
        raise PlannerInputError("--manifest", "rows", "a manifest with rows to capture")
    test_bytes = options.test_mb * 1e6
    check_room(options, test_bytes + _capture_bytes(figs, rows))
    if options.device == "cuda":
        _cuda_or_refuse()
    n_run = min(options.layers_run or 2, figs["model"].num_layers)
    host, when = host_name(options.host), dt.datetime.now(dt.timezone.utc)
    top = tempfile.mkdtemp(prefix=PREFIX, dir=options.dir)
    try:
        free = _free(options)
        os.mkdir(os.path.join(top, "disk"))
        disk = disk_test(os.path.join(top, "disk"), int(test_bytes), int(names.plan.mean_file()[0]), clock,
                         clock.left() * 0.3)
        disk.update(free_bytes=free, bytes_per_node=figs["bytes_per_node"], fits=free >= figs["bytes_per_node"])
        clock.say("loading torch and transformers", force=True)
        import torch
        device = options.device or ("cuda" if torch.cuda.is_available() else "cpu")
        gpus = gpu_inventory(torch)
        gpus["against_plan"] = gpu_verdict(gpus, figs)
        os.mkdir(os.path.join(top, "run"))
        cap = capture(os.path.join(top, "run"), figs, rows, arch, n_run, device, clock, clock.left() * 0.8)
        clock.say("calibrating: reading the files written", force=True)
        label = _label(host, when)
        c = calibration_of(manifest, figs, os.path.join(top, "run"), cap, label,
                           _notes(cap, figs, arch_note, gpus, disk, figs["shared_disk"]))
    finally:
        shutil.rmtree(top, ignore_errors=True)
    cap["tokens_per_s_per_gpu"] = c.tokens_per_s_per_gpu
    cap["tabled_tokens_per_s_per_gpu"] = figs["tokens_per_s_per_gpu"]
    missing = [f"vLLM and SGLang dummy-weight capture ({engine_paths()})", "the LM head's forward"]
    if not gpus["count"]:
        missing.append("GPUs (none here)")
    return Result(c, disk, gpus, cap, missing)
