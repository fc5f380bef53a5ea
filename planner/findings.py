"""What a plan warns about, each with a severity and a code (one table, here): the page shows blocking
findings as a banner naming the fix, the CLI JSON lists them as `findings`, manifests pick their
notes by code, and `warnings` stays the list of their texts.

Severities:
- blocks: the plan as given cannot run (it does not fit the disk, the weights do not fit the GPUs
  given, more rows are selected than exist);
- costs: it runs, but pays for it in time or money (I/O-bound phases, idle GPUs, padding);
- note: worth knowing (licences, overlaps, where an estimate is weak).
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

Severity = Literal["blocks", "costs", "note"]
SEVERITIES: tuple[str, ...] = ("blocks", "costs", "note")

# code -> (severity, the fix to name)
CODES: dict[str, tuple[str, str]] = {
    "disk-capacity": ("blocks", "trim the mix in Budget, store fp8 or fewer layers, spread it over more nodes, or "
                                "give the real disk size"),
    "training-disk-capacity": ("blocks", "more training nodes, larger training disks, or a shared filesystem"),
    "training-disk-unchecked": ("note", "give the training nodes' disk (--train-disk-capacity-tb) to check it, or "
                                        "more training nodes"),
    "shared-capacity": ("blocks", "trim the mix in Budget, store fp8 or fewer layers, or free space on the shared "
                                  "filesystem"),
    "tp-raised": ("blocks", "give at least as many extraction GPUs as the tensor-parallel degree, or fp8 weights"),
    "rows-over-available": ("blocks", "select at most the rows that exist: extracting a row twice stores its "
                                      "hidden states twice; weight the component in training instead"),
    "idle-gpus": ("costs", "give GPUs per node (and nodes) in multiples of the tensor-parallel degree"),
    "capture-io-bound": ("costs", "a faster disk (RAID-0), more nodes, or fewer stored bytes per token"),
    "shared-fs-bound": ("costs", "local placement (each node's disks), or a faster filesystem"),
    "tp-spans-nodes": ("costs", "fp8 weights or GPUs with more memory, so one tensor-parallel group fits in a node"),
    "capture-layer-split": ("costs", "fp8 weights or GPUs with more memory (one GPU a replica), or another of the "
                                     "pipeline's capture scripts (Model-Optimizer: compute_hidden_states_trtllm.py)"),
    "training-floor": ("note", ""),
    "training-io-bound": ("costs", "a faster training disk, or train online / disaggregated"),
    "online-does-not-fit": ("costs", "train offline (the stored states), more or larger training GPUs, or a shorter "
                                     "cap"),
    "training-memory": ("blocks", "a shorter sequence cap, fewer TTT steps or anchors, more or larger training GPUs "
                                  "(the finding names which fit)"),
    "padding": ("costs", "a capture batch of 1 or length-sorted batches"),
    "drop-last": ("note", ""),
    "many-files": ("costs", "a layout that shards files, or a filesystem sized for the inodes"),
    "cap-truncates": ("note", "a longer sequence cap keeps those tokens"),
    "component-empty": ("costs", "untick it, or a longer sequence cap (another layout) keeps its rows"),
    "buffer-small": ("costs", "a larger stream buffer"),
    "compression": ("note", ""),
    "fixed-rate": ("note", "use the calibrated or roofline throughput mode"),
    "no-price": ("note", "set the $/GPU-hour"),
    "calibration": ("note", ""),
    "quality-extrapolated": ("note", ""),
    "workload-scaled": ("note", ""),
    "payback": ("note", ""),
    "quality-served": ("note", ""),
    "speedup-slowdown": ("costs", "fewer draft tokens, a smaller tree, a larger batch, another engine, or no drafter"),
    "overlap": ("note", "drop one of the overlapping components or deduplicate"),
    "licence": ("note", ""),
}


class Finding(BaseModel):
    severity: Severity
    code: str
    text: str
    components: list[str] = []
    fix: str = ""


def finding(code: str, text: str, components: tuple[str, ...] | list[str] = ()) -> Finding:
    severity, fix = CODES[code]
    return Finding(severity=severity, code=code, text=text, components=list(components), fix=fix)
