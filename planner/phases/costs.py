"""Phase 5: dollars per phase, offline against online, and the epoch count where offline pays off.

Storage is paid as it is paid: at the price of where the states are (the nodes' own disks cost
nothing beyond the node price; a network volume or an object store is rented per TB-month), for the
time they are held: from the first write (the capture pass) to the last training epoch, plus
`keep_days`, unless `storage_months` is given."""
from __future__ import annotations

from pydantic import BaseModel, Field

from planner.findings import Finding, finding
from planner.phases.assumption_rows import Assumption, RowContext
from planner.phases.extraction import ExtractionPlan
from planner.phases.training import TrainingPlan
from planner.phases.transfer import TransferPlan
from planner.presets.specs import GPUSpec
from planner.scenario import Costs, Scenario


class CostPlan(BaseModel):
    extraction: float
    regeneration: float
    transfer: float
    storage: float
    training_offline: float
    training_online: float
    total_offline: float
    total_online: float
    training_disaggregated: float = 0.0     # capture and trainer GPUs streaming every epoch
    total_disaggregated: float = 0.0        # + the regeneration on the capture GPUs
    extraction_usd_per_gpu_hour: float
    training_usd_per_gpu_hour: float
    storage_usd_per_tb_month: float
    storage_preset: str = "network-volume"  # where the states are paid for (presets/hardware.yaml storage_prices)
    storage_days_held: float = 0.0          # first write to the last training epoch (+ keep_days), or as given
    storage_months_held: float = 1.0        # storage_days_held / DAYS_PER_MONTH
    breakeven_epochs: float | None = None   # offline is cheaper from this many epochs on; None: never
    breakeven_epochs_disaggregated: float | None = None   # offline cheaper than disaggregated from here on
    warnings: list[Finding] = Field(default_factory=list, exclude=True)   # also in Plan.findings


DAYS_PER_MONTH = 365.25 / 12   # a billing month, 30.4375 days


def storage_preset_id(s: Scenario) -> str:
    """Where the states are paid for: the scenario's choice, else where the placement puts them: an
    object store when they travel through one (its egress is the transfer's), a network volume for a
    shared filesystem, the nodes' own disks (included in the node price) for local placement."""
    if s.costs.storage is not None:
        return s.costs.storage
    if s.transfer.method == "object_store":
        return "s3"
    return "network-volume" if s.placement == "shared" else "local"


def held_days(c: Costs, timeline_days: float) -> float:
    """Days the states are held (and rented): `storage_months` when given, else the plan's own
    timeline from the first write to the last training epoch, plus `keep_days`."""
    return c.storage_months * DAYS_PER_MONTH if c.storage_months is not None else timeline_days + c.keep_days


def _price(given: float | None, gpu: GPUSpec, phase: str, warnings: list[Finding]) -> float:
    if given is not None:
        return given
    price = gpu.default_price()
    if price is None:
        warnings.append(finding("no-price", f"{gpu.id} has no public price: set the {phase} $/GPU-hour to cost it"))
        return 0.0
    return price


def costs(c: Costs, ex: ExtractionPlan, trn: TrainingPlan, tr: TransferPlan, *, ex_gpu: GPUSpec, tr_gpu: GPUSpec,
          store: dict, stored_bytes: float, timeline_days: float) -> CostPlan:
    """Offline pays extraction (regeneration + capture), egress, storage and training; online pays the
    regeneration and training with the target forward; disaggregated pays the regeneration and, every
    epoch, its capture and trainer GPUs. Break-even: the capture, egress and storage that only offline
    pays, over what the other mode costs more per epoch (the rent of an epoch's wall-clock counted on
    offline's side when the states are held for the timeline). `timeline_days`: first write to last epoch."""
    warnings: list[Finding] = []
    ex_price = _price(c.extraction_usd_per_gpu_hour, ex_gpu, "extraction", warnings)
    tr_price = _price(c.training_usd_per_gpu_hour, tr_gpu, "training", warnings)
    tb_month = c.storage_usd_per_tb_month if c.storage_usd_per_tb_month is not None else store["usd_per_tb_month"]
    extraction_usd = ex.gpu_hours * ex_price
    regeneration_usd = ex.decode_hours * ex.gpus_used * ex_price
    capture_usd = extraction_usd - regeneration_usd
    days = held_days(c, timeline_days)
    storage_usd = stored_bytes / 1e12 * tb_month * days / DAYS_PER_MONTH
    train_off_usd = trn.offline_gpu_hours * tr_price
    train_on_usd = trn.online_gpu_hours * tr_price
    # held for the plan's timeline, the rent grows with every epoch's training wall-clock too
    rent_per_epoch = (stored_bytes / 1e12 * tb_month / DAYS_PER_MONTH * trn.offline_wall_hours / trn.epochs / 24
                      if c.storage_months is None else 0.0)
    per_epoch_off = train_off_usd / trn.epochs + rent_per_epoch
    per_epoch_on = train_on_usd / trn.epochs
    fixed_off = capture_usd + tr.egress_usd + storage_usd - trn.epochs * rent_per_epoch
    breakeven = fixed_off / (per_epoch_on - per_epoch_off) if per_epoch_on > per_epoch_off else None
    # disaggregated: the capture GPUs (extraction price) and the trainers (training price) both run
    # every epoch; the responses are regenerated once on the capture GPUs
    per_epoch_dis = trn.disaggregated_hours_per_epoch * (trn.disaggregated_capture_gpus * ex_price
                                                         + trn.disaggregated_train_gpus * tr_price)
    regen_dis = trn.disaggregated_regeneration_hours * trn.disaggregated_capture_gpus * ex_price
    train_dis_usd = trn.epochs * per_epoch_dis
    breakeven_dis = fixed_off / (per_epoch_dis - per_epoch_off) if per_epoch_dis > per_epoch_off else None
    return CostPlan(extraction=extraction_usd, regeneration=regeneration_usd, transfer=tr.egress_usd,
                    storage=storage_usd, training_offline=train_off_usd, training_online=train_on_usd,
                    total_offline=extraction_usd + tr.egress_usd + storage_usd + train_off_usd,
                    total_online=regeneration_usd + train_on_usd, training_disaggregated=train_dis_usd,
                    total_disaggregated=regen_dis + train_dis_usd, extraction_usd_per_gpu_hour=ex_price,
                    training_usd_per_gpu_hour=tr_price, storage_usd_per_tb_month=tb_month,
                    storage_preset=store["id"], storage_days_held=days, storage_months_held=days / DAYS_PER_MONTH,
                    breakeven_epochs=breakeven, breakeven_epochs_disaggregated=breakeven_dis, warnings=warnings)


def _storage_price(s: Scenario, c: RowContext) -> float:
    """The storage price in use: the scenario's, else its store preset's."""
    price = s.costs.storage_usd_per_tb_month
    return price if price is not None else c.store["usd_per_tb_month"]


def storage_assumptions(c: RowContext) -> list[Assumption]:
    """The Assumptions rows of the storage bill: the price and how long the states are held."""
    s, mine = c.scenario, "yours"
    A = Assumption
    return [
        A(name="storage price", value=f"{c.store['name']} ({c.store['id']}): "
          f"${_storage_price(s, c):g}/TB-month",
          tag=mine if s.costs.storage_usd_per_tb_month is not None or s.costs.storage else "estimate",
          source=c.store["source"] + ("" if s.costs.storage else "; unset: where the placement puts the states "
                                      "(local disks, a shared filesystem's network volume, "
                                      "the transfer's object store)")),
        A(name="storage time held", value=f"{s.costs.storage_months:g} months" if s.costs.storage_months is not None
          else f"the plan's timeline + {s.costs.keep_days:g} days kept", tag=mine,
          source="as given" if s.costs.storage_months is not None else "from the capture pass's first write to the "
          "last training epoch (extraction capture, gather, transfer, offline training), plus keep_days; "
          "a billing month is 30.44 days"),
    ]
