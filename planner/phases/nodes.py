"""Where the hidden states live across nodes: each node's disk and network, the shared filesystem,
and the gather that brings local shards to the training nodes.

The pipelines shard capture by node or by rank (speculators, SpecForge's torchrun data parallel,
Model-Optimizer's --dp-rank; see planner/export/sharding.py for their flags), so with `local`
placement every extraction node writes its shard, about 1/N of the bytes, to its own disk:

- capture writes at nodes x the disk's write rate;
- a gather then moves the shards to the training nodes over the node network, unless training runs
  on the extraction nodes themselves (same site, same GPU, same nodes) or the states cross to another
  site (the transfer phase moves them);
- each training node holds and reads its own 1/M of the bytes: a fixed per-node split that a
  per-node shuffle samples from. A global shuffle every epoch would need each node to hold every
  byte (or a shared filesystem);
- training reads at training nodes x the training disk's read rate.

With `shared` placement the states go to a network filesystem instead: nothing stays on the
nodes' disks, no gather, and the filesystem's aggregate bandwidth (and each node's network) caps
capture writes and training reads.
"""
from __future__ import annotations

from typing import NamedTuple

from pydantic import BaseModel, Field

from planner.findings import Finding, finding
from planner.phases.assumption_rows import Assumption, RowContext, take
from planner.presets.specs import network_efficiency
from planner.scenario import Scenario, gpus_on_nodes
from planner.units import hours_at


class NodePlan(BaseModel):
    placement: str
    extraction_nodes: int
    extraction_gpus_per_node: int
    training_nodes: int
    training_gpus_per_node: int
    storage_per_node_bytes: float            # on each extraction node's disk (local), 0 (shared)
    training_storage_per_node_bytes: float   # on each training node's disk after the gather (local), 0 (shared)
    writing_nodes: int = 1                   # extraction nodes that hold a TP group (the others idle, empty)
    capture_write_bytes_per_s: float         # all extraction nodes together
    capture_write_bound: str                 # local disks | shared filesystem | node network
    training_read_bytes_per_s: float         # all training nodes together
    training_read_bound: str
    node_network_bytes_per_s: float          # one node, at the transport's efficiency
    gather_bytes: float
    gather_bytes_per_s: float
    gather_hours: float
    gather_bound: str                        # "" when there is no gather
    gather_note: str
    warnings: list[Finding] = Field(default_factory=list, exclude=True)   # also in Plan.findings


def writing_nodes(nodes: int, gpus_per_node: int, tp: int, replicas: int) -> int:
    """The nodes that hold a tensor-parallel group (extraction.replicas_on_nodes places them: each node
    fills with whole groups, a group larger than a node spans tp / gpus_per_node whole nodes)."""
    if tp > gpus_per_node:
        return min(nodes, -(-replicas * tp // gpus_per_node))
    return min(nodes, -(-replicas // (gpus_per_node // tp)))


def nodes_text(nodes: int, per_node: int, gpus: int) -> str:
    """'2 x 8 GPUs', '1 node (4 of its 8 GPUs)', '2 nodes of 8 (12 GPUs)': what a node count means when
    the GPUs do not fill the nodes (issue 35: --gpus 4 said "1 x 8 GPUs")."""
    if gpus >= gpus_on_nodes("extraction", nodes, per_node):
        return f"{nodes} x {per_node} GPUs"
    if nodes == 1:
        return f"1 node ({gpus} of its {per_node} GPUs)"
    return f"{nodes} nodes of {per_node} ({gpus} GPUs)"


class _Placement(NamedTuple):
    """Where the states sit, and the rates capture writes and training reads them at."""
    per_node: float
    per_training_node: float
    write: float
    write_bound: str
    read: float
    read_bound: str
    note: str
    gather_bytes: float = 0.0
    gather_rate: float = 0.0
    gather_hours: float = 0.0
    gather_bound: str = ""


def _shared(s: Scenario, stored_bytes: float, writers: int, tr_nodes: int, net: float, disk: dict,
            warnings: list[Finding]) -> _Placement:
    """A shared filesystem: capture writes to it and training reads from it, each at the slower of the
    filesystem and the nodes' network; no gather."""
    write, write_bound = _slowest(("shared filesystem", s.shared_fs_gb_s * 1e9), ("node network", writers * net))
    read, read_bound = _slowest(("shared filesystem", s.shared_fs_gb_s * 1e9), ("node network", tr_nodes * net))
    if s.shared_capacity_tb and stored_bytes > s.shared_capacity_tb * 1e12:
        warnings.append(finding("shared-capacity", f"storage ({stored_bytes / 1e12:,.1f} TB) exceeds the shared "
                                f"filesystem's {s.shared_capacity_tb:g} TB"))
    if write_bound == "shared filesystem" and s.shared_fs_gb_s * 1e9 < writers * disk["write_gb_s"] * 1e9:
        warnings.append(finding("shared-fs-bound", f"the shared filesystem's {s.shared_fs_gb_s:g} GB/s is slower "
                                f"than the {writers} capture nodes' own disks "
                                f"({writers * disk['write_gb_s']:,.1f} GB/s together)"))
    return _Placement(0.0, 0.0, write, write_bound, read, read_bound,
                      "shared filesystem: capture writes to it and training reads from it; no gather")


def _disk_findings(s: Scenario, stored_bytes: float, writers: int, tr_nodes: int, per_node: float,
                   per_training_node: float, in_place: bool, warnings: list[Finding]) -> None:
    """Each capture node's disk against its shard, and each training node's against what it receives."""
    if s.disk_capacity_tb and per_node > s.disk_capacity_tb * 1e12:
        text = (f"storage ({stored_bytes / 1e12:,.2f} TB) exceeds the {s.disk_capacity_tb:g} TB disk of its one node"
                if writers == 1 else f"storage per node ({per_node / 1e12:,.2f} TB of {stored_bytes / 1e12:,.2f} TB "
                f"over {writers} nodes) exceeds the {s.disk_capacity_tb:g} TB disk of each node")
        warnings.append(finding("disk-capacity", text))
    # each training node's share, whether a gather or a transfer brought it there
    cap = s.training.disk_capacity_tb
    how = "the gather" if s.transfer.method == "none" else f"the transfer ({s.transfer.method})"
    share = (f"after {how} each of the {tr_nodes} training node{'s' * (tr_nodes > 1)} holds "
             f"{per_training_node / 1e12:,.2f} TB")
    if cap and not in_place and per_training_node > cap * 1e12:
        warnings.append(finding("training-disk-capacity", f"{share}, over its {cap:g} TB disk"))
    elif not cap and not in_place and s.disk_capacity_tb and per_training_node > s.disk_capacity_tb * 1e12:
        warnings.append(finding("training-disk-unchecked", f"{share}, more than an extraction node's "
                                f"{s.disk_capacity_tb:g} TB disk; the training disks are not checked"))


def _local(s: Scenario, stored_bytes: float, writers: int, tr_nodes: int, net: float, disk: dict,
           training_disk: dict, warnings: list[Finding]) -> _Placement:
    """Each node's local disk: a shard per capture node, read in place, moved by the transfer, or
    gathered to the training nodes at the slowest of the senders' and receivers' networks and disks."""
    per_node = stored_bytes / writers
    in_place = s.transfer.method == "none" and s.trains_on_extraction_nodes
    per_training_node = per_node if in_place else stored_bytes / tr_nodes
    write, write_bound = writers * disk["write_gb_s"] * 1e9, "local disks"
    # training on the capture nodes reads their own disks; otherwise the training nodes' disks
    read_disk = disk if in_place else training_disk
    read, read_bound = min(writers, tr_nodes) * read_disk["read_gb_s"] * 1e9 if in_place else \
        tr_nodes * read_disk["read_gb_s"] * 1e9, "local disks"
    _disk_findings(s, stored_bytes, writers, tr_nodes, per_node, per_training_node, in_place, warnings)
    rates = (per_node, per_training_node, write, write_bound, read, read_bound)
    if s.transfer.method != "none":
        return _Placement(*rates, f"local disks; the transfer ({s.transfer.method}) moves the shards to the training "
                                  "site, so no gather is counted beside it")
    if s.trains_on_extraction_nodes:
        return _Placement(*rates, "local disks; training runs on the extraction nodes and reads each shard where it "
                                  "was written")
    gather_rate, gather_bound = _slowest(
        ("sending nodes' network", writers * net), ("sending disks", writers * disk["read_gb_s"] * 1e9),
        ("receiving nodes' network", tr_nodes * net),
        ("receiving disks", tr_nodes * training_disk["write_gb_s"] * 1e9))
    note = (f"local disks; a gather moves the shards of {writers} extraction node{'s' * (writers > 1)} to "
            f"{tr_nodes} training node{'s' * (tr_nodes > 1)}, each keeping 1/{tr_nodes} (a fixed per-node split)")
    return _Placement(*rates, note, stored_bytes, gather_rate, hours_at(stored_bytes, gather_rate), gather_bound)


def node_plan(s: Scenario, *, stored_bytes: float, writers: int, disk: dict, training_disk: dict,
              extraction_nodes: int | None = None) -> NodePlan:
    """The node-level figures of scenario `s` for `stored_bytes` on disk, captured by `writers` of the
    extraction nodes (tensor parallelism may leave whole nodes idle: they hold nothing).
    `extraction_nodes`: the nodes the run takes when a tensor-parallel group needs more than given."""
    warnings: list[Finding] = []
    ex_nodes, ex_per = max(extraction_nodes or 0, s.extraction_node_count), s.gpus_per_node
    tr_nodes, tr_per = s.training_node_count, s.training.gpus_per_node
    writers = max(1, min(ex_nodes, writers))
    net = s.node_network_gbps * 1e9 / 8 * network_efficiency(s.node_network)
    pl = _shared(s, stored_bytes, writers, tr_nodes, net, disk, warnings) if s.placement == "shared" else \
        _local(s, stored_bytes, writers, tr_nodes, net, disk, training_disk, warnings)
    return NodePlan(
        placement=s.placement, extraction_nodes=ex_nodes, extraction_gpus_per_node=ex_per, training_nodes=tr_nodes,
        training_gpus_per_node=tr_per, storage_per_node_bytes=pl.per_node, writing_nodes=writers,
        training_storage_per_node_bytes=pl.per_training_node, capture_write_bytes_per_s=pl.write,
        capture_write_bound=pl.write_bound, training_read_bytes_per_s=pl.read, training_read_bound=pl.read_bound,
        node_network_bytes_per_s=net, gather_bytes=pl.gather_bytes, gather_bytes_per_s=pl.gather_rate,
        gather_hours=pl.gather_hours, gather_bound=pl.gather_bound, gather_note=pl.note, warnings=warnings)


def _slowest(*rates: tuple[str, float]) -> tuple[float, str]:
    name, rate = min(rates, key=lambda nr: nr[1])
    return rate, name


def hardware_assumptions(c: RowContext, plain: dict[str, Assumption]) -> list[Assumption]:
    """The Assumptions rows of the hardware: the GPUs, nodes, placement, weights' dtype and the extraction disk,
    with the declared rows of the compression and the shared filesystem (`plain`, taken from it)."""
    s, ex_gpu, tr_gpu, mine = c.scenario, c.extraction_gpu, c.training_gpu, "yours"
    A = Assumption
    return [
        *take(plain, "compression"),
        A(name="extraction GPU", value=f"{s.extraction_gpus} x {ex_gpu.id} ({ex_gpu.memory_gb:g} GB, "
          f"{ex_gpu.bandwidth_tb_s:g} TB/s, {ex_gpu.bf16_tflops:g} BF16 TFLOPS)", tag="published",
          source=ex_gpu.source),
        A(name="training GPU", value=f"{s.training.gpus} x {tr_gpu.id}", tag="published", source=tr_gpu.source),
        A(name="nodes", value=f"extraction {nodes_text(s.extraction_node_count, s.gpus_per_node, s.extraction_gpus)}, "
          f"training {nodes_text(s.training_node_count, s.training.gpus_per_node, s.training.gpus)}",
          tag=mine if s.extraction_nodes or
          s.training.nodes else "estimate",
          source="as given; unset, as many nodes of the GPUs per node (8, a typical GPU server) as the GPUs need"),
        A(name="placement", value=("each node's local disk, a fixed per-node split gathered to the training nodes"
                                   if s.placement == "local" else "a shared filesystem"), tag=mine,
          source="planner/phases/nodes.py: a global shuffle every epoch would need each training node to hold "
                 "every byte"),
        *take(plain, "shared_fs_gb_s"),
        A(name="weights", value=s.weight_dtype, tag=mine, source="fp8 halves the weight bytes and uses FP8 peak"),
        A(name="extraction disk", value=f"{c.disk['name']}: write {c.disk['write_gb_s']:g} GB/s", tag="estimate",
          source=c.disk["source"]),
    ]
