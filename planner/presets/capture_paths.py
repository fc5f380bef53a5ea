"""Capture paths (issue 33 item 1): how each pipeline's code runs the target over the rows and writes the
states, each fact read from that code and cited in planner/presets/capture_paths.yaml.

A layout's default path is the first path that lists its pipeline; `Scenario.capture_path` overrides it
with another path of the same pipeline (a path the pipeline does not have is refused in one line naming
the ones it has). capture_time() is the path's capture: the compute at its efficiency and split, the
host copies and per-row work that hold up its loop, and its disk writes, overlapped or in the loop.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from planner.errors import PlannerInputError
from planner.ids import check_no_control

Text = Annotated[str, Field(max_length=2000), AfterValidator(check_no_control)]
PRESET = "capture_paths.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Fact(_Strict):
    source: Text


class Split(Fact):
    value: Literal["tensor", "layers"]


class Efficiency(Fact):
    value: float = Field(gt=0, le=1)
    low: float = Field(gt=0, le=1)
    high: float = Field(gt=0, le=1)


class Held(Fact):
    value: Literal[0, "captured", "all"]


class HostCopy(Fact):
    value: Literal["async", "sync"]
    gb_s: float | None = Field(None, gt=0, le=10_000)


class Seconds(Fact):
    value: float = Field(ge=0, le=3600)


class Startup(Fact):
    """Seconds a capture run spends before its first row (model load, compilation, CUDA graph capture), once per
    run: the replicas start together. low / high: the ends the band takes."""
    value: float = Field(ge=0, le=3600)
    low: float = Field(ge=0, le=3600)
    high: float = Field(ge=0, le=3600)


class Flag(Fact):
    value: bool


class Count(Fact):
    value: int = Field(ge=1, le=100_000)


class CapturePath(_Strict):
    id: Text
    name: Text
    pipelines: list[Text] = Field(min_length=1)
    split: Split
    efficiency: Efficiency
    held_layers: Held
    host_copy: HostCopy
    request_overhead_s: Seconds
    write_overlap: Flag
    write_passes: Count
    concurrency: Count | None = None
    startup_s: Startup = Startup(value=0.0, low=0.0, high=0.0, source="not modelled")
    no_hf_backend: Text | None = None
    other_paths: Text | None = None


@functools.cache
def capture_paths() -> dict[str, CapturePath]:
    """The paths of presets/capture_paths.yaml by id (parsed once)."""
    from planner.presets.specs import load_preset
    out: dict[str, CapturePath] = {}
    for row in load_preset(PRESET)["paths"]:
        path = CapturePath(**row)
        if path.id in out:
            raise ValueError(f"{PRESET}: capture path {path.id!r} is listed twice")
        if path.host_copy.value == "sync" and path.host_copy.gb_s is None:
            raise ValueError(f"{PRESET}: {path.id}'s synchronous host copy needs gb_s")
        if not path.efficiency.low <= path.efficiency.value <= path.efficiency.high:
            raise ValueError(f"{PRESET}: {path.id}'s efficiency is outside its own low-high")
        if not path.startup_s.low <= path.startup_s.value <= path.startup_s.high:
            raise ValueError(f"{PRESET}: {path.id}'s startup_s is outside its own low-high")
        out[path.id] = path
    return out


def paths_of(pipeline: str) -> list[str]:
    """The paths a pipeline's code has, its default first."""
    return [p.id for p in capture_paths().values() if pipeline in p.pipelines]


def resolve_path(chosen: str | None, layout_id: str, pipeline: str) -> CapturePath:
    """The path in force: the scenario's `chosen`, or (None) the layout's pipeline's default."""
    have = paths_of(pipeline)
    if not have:
        raise PlannerInputError("layout", layout_id, f"its pipeline {pipeline!r} has no capture path in {PRESET}")
    if chosen is None:
        return capture_paths()[have[0]]
    if chosen not in have:
        raise PlannerInputError("--capture-path", chosen, f"the {pipeline} pipeline (layout {layout_id}) captures "
                                f"with {', '.join(have)}")
    return capture_paths()[chosen]


def held_bytes_per_token(path: CapturePath, *, num_layers: int, hidden_size: int, captured_bytes: float) -> float:
    """Bytes a row holds on the replica per token besides its KV cache while it is captured: the captured
    layers (vLLM's cache-only layer), every layer's output (HF output_hidden_states=True, L + 1 of them in
    bf16) or nothing."""
    held = path.held_layers.value
    if held == "captured":
        return float(captured_bytes)
    if held == "all":
        return float((num_layers + 1) * hidden_size * 2)
    return 0.0


@dataclass(frozen=True)
class CaptureTime:
    compute_hours: float
    host_copy_hours: float
    request_hours: float
    disk_hours: float
    startup_hours: float        # the run's fixed start (model load, compilation, graph capture), before any row
    hours: float
    bound: str                  # the largest part: compute, host copy, requests or disk write
    tokens_per_s_per_gpu: float  # the capture's tokens over its GPUs, the disk included


def capture_time(path: CapturePath, *, tokens: float, rows: float, stored_bytes: float, write_bytes: float,
                 prefill_per_gpu: float, tensor_parallel: int, tp_efficiency: float, replicas: int,
                 write_bytes_per_s: float, efficiency: float | None = None, measured: bool = False,
                 startup_s: float | None = None) -> CaptureTime:
    """Hours to capture `tokens` in `rows` on `replicas` groups of `tensor_parallel` GPUs, each GPU prefilling at
    `prefill_per_gpu` (its tensor-parallel efficiency `tp_efficiency` included), writing `write_bytes`
    (`stored_bytes` of states, staging included) at `write_bytes_per_s` across all nodes.
    A tensor split runs a replica's GPUs together; a layer split (device_map) runs one at a time, at one
    GPU's rate without the tensor-parallel loss. `efficiency`: another than the path's (its band's ends).
    measured: `prefill_per_gpu` is a capture rate a run of the user's measured (planner calibrate): it holds
    the path's efficiency, host copies and per-row work already; the split and the disk writes stay.
    startup_s: another fixed start than the path's (its band's ends); added once, the replicas start together,
    measured or not (a measured rate is a steady-state rate); none where there is nothing to capture."""
    eff = 1.0 if measured else path.efficiency.value if efficiency is None else efficiency
    replicas = max(replicas, 1)
    per_replica = _replica_rate(path, prefill_per_gpu, tensor_parallel, tp_efficiency) * eff
    compute = tokens / (per_replica * replicas) / 3600 if tokens else 0.0
    host = 0.0
    if path.host_copy.value == "sync" and not measured:
        gb_s = path.host_copy.gb_s
        assert gb_s is not None       # a synchronous host copy without gb_s is refused at load (capture_paths() above)
        host = stored_bytes / (gb_s * 1e9 * replicas) / 3600
    requests = 0.0 if measured else rows * path.request_overhead_s.value / replicas / 3600
    disk = write_bytes * path.write_passes.value / write_bytes_per_s / 3600 if write_bytes else 0.0
    loop = compute + host + requests
    startup = (path.startup_s.value if startup_s is None else startup_s) / 3600 if tokens else 0.0
    hours = (max(loop, disk) if path.write_overlap.value else loop + disk) + startup
    bound = _bound({"compute": compute, "host copy": host, "requests": requests}, disk, bool(path.write_overlap.value))
    rate = tokens / (hours * 3600 * replicas * tensor_parallel) if hours else 0.0
    return CaptureTime(compute, host, requests, disk, startup, hours, bound, rate)


def _replica_rate(path: CapturePath, prefill_per_gpu: float, tp: int, tp_efficiency: float) -> float:
    """Tokens/s of one replica before the path's efficiency: a tensor split runs its `tp` GPUs together; a layer
    split (device_map) runs one at a time, at one GPU's rate without the tensor-parallel loss."""
    if path.split.value == "tensor":
        return prefill_per_gpu * tp
    return prefill_per_gpu / (tp_efficiency if tp > 1 else 1.0)


def _bound(parts: dict[str, float], disk: float, overlap: bool) -> str:
    """The term that sets the capture's time: the largest of the loop's parts, or the disk writes where they take
    longer than the whole loop (overlapped) or than its largest part (not overlapped)."""
    bound = max(parts, key=lambda k: parts[k])
    if disk > (sum(parts.values()) if overlap else parts[bound]):
        return "disk write"
    return bound
