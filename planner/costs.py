"""Phase 5: dollars per phase, offline against online, and the epoch count where offline pays off."""
from __future__ import annotations

from pydantic import BaseModel, Field

from planner.extraction import ExtractionPlan
from planner.findings import Finding, finding
from planner.scenario import Costs
from planner.specs import GPUSpec
from planner.training import TrainingPlan
from planner.transfer import TransferPlan


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
    breakeven_epochs: float | None = None   # offline is cheaper from this many epochs on; None: never
    breakeven_epochs_disaggregated: float | None = None   # offline cheaper than disaggregated from here on
    warnings: list[Finding] = Field(default_factory=list, exclude=True)   # also in Plan.findings


def _price(given: float | None, gpu: GPUSpec, phase: str, warnings: list[Finding]) -> float:
    if given is not None:
        return given
    price = gpu.default_price()
    if price is None:
        warnings.append(finding("no-price", f"{gpu.id} has no public price: set the {phase} $/GPU-hour to cost it"))
        return 0.0
    return price


def costs(c: Costs, ex: ExtractionPlan, trn: TrainingPlan, tr: TransferPlan, *, ex_gpu: GPUSpec, tr_gpu: GPUSpec,
          store: dict, stored_bytes: float) -> CostPlan:
    """Offline pays extraction (regeneration + capture), egress, storage and training; online pays the
    regeneration and training with the target forward; disaggregated pays the regeneration and, every
    epoch, its capture and trainer GPUs. Break-even: the capture, egress and storage that only offline
    pays, over what the other mode costs more per epoch."""
    warnings: list[Finding] = []
    ex_price = _price(c.extraction_usd_per_gpu_hour, ex_gpu, "extraction", warnings)
    tr_price = _price(c.training_usd_per_gpu_hour, tr_gpu, "training", warnings)
    tb_month = c.storage_usd_per_tb_month if c.storage_usd_per_tb_month is not None else store["usd_per_tb_month"]
    extraction_usd = ex.gpu_hours * ex_price
    regeneration_usd = ex.decode_hours * ex.gpus_used * ex_price
    capture_usd = extraction_usd - regeneration_usd
    storage_usd = stored_bytes / 1e12 * tb_month * c.storage_months
    train_off_usd = trn.offline_gpu_hours * tr_price
    train_on_usd = trn.online_gpu_hours * tr_price
    per_epoch_off = train_off_usd / trn.epochs
    per_epoch_on = train_on_usd / trn.epochs
    fixed_off = capture_usd + tr.egress_usd + storage_usd
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
                    breakeven_epochs=breakeven, breakeven_epochs_disaggregated=breakeven_dis, warnings=warnings)
