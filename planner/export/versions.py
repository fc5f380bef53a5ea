"""Format versions of what the planner writes for later: manifests (`schema_version`) and shared
links (the `vN.` prefix), with one migration function per step.

A file or link made by an older planner loads with the values it meant when it was made: the
migration fills in *that* version's defaults (frozen in planner/schema/scenario-defaults-vN.json),
never today's. Every later change that adds a Scenario field or changes what an omitted field means
bumps CURRENT, freezes the old defaults and adds one step here.

Version history
- 1 (planner 0.1.0): manifest schema_version 1; links carry only the values that differ from the
  defaults (`v1.` + base64url(zlib(JSON))).
- 2: manifests name each measured component's content (`sha256`) and may omit `local_path` (a
  dashboard upload is never named by a server path); links carry the whole scenario (`v2.`), so a
  later change of a default can no longer change what a link means. Scenario defaults as in 1.
- 3: the layout's pipeline supplies the sample unit, the sequence cap and the capture batch: in the
  Scenario `unit`, `max_seq_len`, `capture_batch_size` and `sort_by_length` may be None ("the
  layout's value") and `max_seq_len` "none" means no cap. A version-2 scenario meant: its unit and
  cap as written (None = no cap), no batch padding, and for `speculators-dflash` five layers by the
  DFlash rule without the last layer (that layout then captured them).
- 4: the time model of issue 12. New fields: the throughput mode `calibrated` (now the default), the
  decode's own compute efficiency `throughput.decode_mfu`, the scheduler caps `throughput.max_batch`
  (max_num_seqs) and `throughput.max_batched_tokens` (None: the engine's default for the GPU),
  `kv_dtype`, the trainer's recipe `training.ttt_steps/num_anchors/block_size` (None: the layout's),
  the disaggregated mode and the node network, and the quality estimate's serving inputs
  (`quality`: workload, domain transfer, served tokens a day, serving GPU); the custom model gains
  its MLP width, the parameters a text forward skips and the Gated DeltaNet shape. A version-3 scenario meant: its
  throughput mode as written, decode at the prefill MFU (its own or the GPU preset's, which version 3 used for
  decode), no token cap on the decode batch, a bf16 KV cache. It had no recipe inputs: they take
  the layout's pipeline defaults, which is what a run of that pipeline does (version 3 counted one
  forward-backward per token instead, a model it no longer keeps).
- 5: nodes (issue 15). New fields: `extraction_nodes` and `gpus_per_node`, `training.nodes` and
  `training.gpus_per_node` (None nodes: as many nodes of 8 as the GPUs need, the rule every earlier
  version applied), `placement` (`local`, what earlier versions assumed), `shared_fs_gb_s`,
  `shared_capacity_tb`. `disk_capacity_tb` is now each node's disk: a version-4 scenario checked all
  its storage against it, so its value is divided by its nodes (ceil(extraction_gpus / 8)), which
  keeps the check it had (at least 0.01 TB, the field's bound). Where tensor parallelism leaves whole
  nodes idle, version 5 divides the storage over the nodes that write, so its check is the stricter.
- 6: storage as it is paid and one serving workload (issue 20). `costs.storage` may be None (where
  the placement puts the states: the nodes' own disks `local`, a shared filesystem's network volume,
  the transfer's object store), `costs.storage_months` may be None (the plan's own timeline from the
  first write to the last training epoch, plus the new `costs.keep_days`), and `quality.workload`
  None now means the full mix's family shares (fixed), "mix" the scenario's own training-token
  shares. A version-5 scenario meant: its storage preset as written (default `network-volume`),
  `storage_months` as written (default 1), and for a None workload the mix's own shares ("mix").
  Also new in 6 (issue 22): where tau is measured, `quality.eval_engine` (default `vllm`),
  `quality.temperature` (0) and `quality.num_speculative_tokens` (None: the engine's usual), and the
  batches `quality.serving_batch` (1) and `quality.fleet_batch` (32, the payback's). A version-5
  scenario meant the paper's harness and the batch-1 speedup for the payback: `eval_engine` "paper",
  `fleet_batch` 1.
  Added in 6 without a version (issue 33 item 1): `capture_path` (None: the layout's pipeline's own
  path, planner/presets/capture_paths.yaml). An older link or manifest has none and means that: the
  scenario said "this layout's pipeline", and how that pipeline captures is the model's fact, not an
  input, so a corrected capture model legitimately moves an old plan's hours (as issue 22's calibration
  did) while every input keeps its meaning. Its layouts' stored bytes do not change.
"""
from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable
from pathlib import Path

CURRENT = 6
OLDEST = 1
_SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schema"


class VersionError(ValueError):
    """A version this planner cannot read (newer than it, or unknown)."""


@functools.cache
def frozen_defaults(version: int) -> dict:
    """The defaults a version's links were written against (links of v2 and later omit nothing)."""
    with open(_SCHEMA_DIR / f"scenario-defaults-v{version}.json", encoding="utf-8") as fh:
        return json.load(fh)


def _fill(defaults: dict, given: dict) -> dict:
    """`given` over `defaults`, recursively for nested mappings (a link omits nested defaults too)."""
    out = copy.deepcopy(defaults)
    for key, value in given.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _fill(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def fill_scenario_defaults(scenario: dict, version: int) -> dict:
    """A scenario written by `version` with every omitted field set to that version's default."""
    d = frozen_defaults(version)
    out = _fill(d["scenario"], scenario)
    for key in ("custom_model", "custom_gpu", "uniform"):
        if isinstance(scenario.get(key), dict):
            out[key] = _fill(d[key], scenario[key])
    if isinstance(scenario.get("mix"), list):
        out["mix"] = [_fill(d["mix_item"], m) if isinstance(m, dict) else m for m in scenario["mix"]]
    return out


# ---------------------------------------------------------------- manifests
def _manifest_1_to_2(m: dict) -> dict:
    m = dict(m)
    if isinstance(m.get("scenario"), dict):
        m["scenario"] = fill_scenario_defaults(m["scenario"], 1)
    if isinstance(m.get("components"), list):
        m["components"] = [dict(c, sha256=None) if isinstance(c, dict) and "sha256" not in c else c
                           for c in m["components"]]
    m["schema_version"] = 2
    return m


# ---------------------------------------------------------------- what a migration reads, checked first
def _bounds(model: str, name: str) -> tuple[float | None, float | None]:
    """The ge/gt and le/lt bounds of a pydantic field (the model's own, not a copy)."""
    from pydantic import BaseModel

    from planner.presets.specs import ModelSpec
    from planner.scenario import Scenario
    cls: type[BaseModel] = Scenario if model == "Scenario" else ModelSpec
    lo = hi = None
    for meta in cls.model_fields[name].metadata:
        if getattr(meta, "ge", None) is not None:
            lo = meta.ge
        elif getattr(meta, "gt", None) is not None:
            lo = meta.gt + 1                   # integer fields: gt=0 is from 1
        hi = getattr(meta, "le", None) if getattr(meta, "le", None) is not None else hi
    return lo, hi


def _refuse(where: str, value, allowed: str) -> None:
    shown = repr(value)
    raise VersionError(f"{where}: {shown[:60] + '...' if len(shown) > 60 else shown} is not allowed; {allowed} "
                       f"(checked before the old version is migrated)")


def _check_kind(s: dict, key: str, kinds: tuple, what: str, where: str = "scenario") -> None:
    v = s.get(key)
    if v is not None and (isinstance(v, bool) or not isinstance(v, kinds)):
        _refuse(f"{where}.{key}", v, f"{what} or null")


def _check_int(s: dict, key: str, model: str, field: str, where: str = "scenario") -> None:
    """An integer within the pydantic field's bounds (checked before any migration computes with it)."""
    v = s.get(key)
    lo, hi = _bounds(model, field)
    if v is None:
        return
    if isinstance(v, bool) or not isinstance(v, int) or (lo is not None and v < lo) or (hi is not None and v > hi):
        _refuse(f"{where}.{key}", v, f"a whole number from {lo} to {hi}")


def check_migrated_fields(scenario: dict) -> None:
    """Type and bound of every field a migration step reads, before any step computes with it: a
    link's 75 characters must not build a list of 10^8 layers, nor a list stand where a name does."""
    for key in ("model", "layout", "extraction_gpu"):
        _check_kind(scenario, key, (str,), "a name")
    for key in ("custom_model", "custom_gpu", "throughput"):
        _check_kind(scenario, key, (dict,), "a mapping")
    _check_kind(scenario, "layers", (list,), "a list of layer numbers")
    _check_int(scenario, "layer_count", "Scenario", "layer_count")
    if isinstance(scenario.get("custom_model"), dict):
        _check_int(scenario["custom_model"], "num_layers", "ModelSpec", "num_layers", "scenario.custom_model")
    for key in ("custom_gpu", "throughput"):
        if isinstance(scenario.get(key), dict):
            for k in ("prefill_mfu", "decode_mfu"):
                _check_kind(scenario[key], k, (int, float), "a number", f"scenario.{key}")
    # extraction_gpus and disk_capacity_tb go through _as_number, which reads any value safely


def _checked(step: Callable[[dict], dict]) -> Callable[[dict], dict]:
    @functools.wraps(step)
    def run(scenario: dict) -> dict:
        check_migrated_fields(scenario)
        return step(scenario)
    return run


def _migrating(version: int, step: Callable, obj: dict) -> dict:
    """One step; whatever it raises is one VersionError (a RecursionError stays itself)."""
    try:
        return step(obj)
    except (VersionError, RecursionError):
        raise
    except Exception as exc:   # noqa: BLE001 - a migration of hostile JSON: any failure is a refusal
        raise VersionError(f"the version-{version} scenario cannot be read ({type(exc).__name__}: "
                           f"{str(exc).splitlines()[0][:100] if str(exc) else 'no detail'})") from exc


@_checked
def _scenario_2_to_3(s: dict) -> dict:
    s = fill_scenario_defaults(s, 1)        # version 2 kept version 1's defaults
    if s.get("max_seq_len") is None:
        s["max_seq_len"] = "none"
    s.setdefault("capture_batch_size", 1)
    s.setdefault("sort_by_length", False)
    if s.get("layout") == "speculators-dflash" and s.get("layers") is None:
        from planner.presets.specs import num_layers
        L = num_layers(s.get("model"), s.get("custom_model"))
        if L is not None:
            from planner.presets.layouts import dflash_layers
            s["layers"] = dflash_layers(L, s.get("layer_count") or 5)
            s["layer_count"] = None
    if s.get("layout") in ("speculators", "specforge-eagle3", "eagle1") and s.get("layers") is None:
        s["layer_count"] = None             # these layouts ignored a layer count in version 2
    return s


@_checked
def _scenario_3_to_4(s: dict) -> dict:
    s = fill_scenario_defaults(s, 3)
    t = s.get("throughput")
    if isinstance(t, dict):
        if t.get("decode_mfu") is None:
            mfu = t.get("prefill_mfu")
            if mfu is None:
                from planner.presets.specs import gpu_presets
                gpu = s.get("extraction_gpu")
                custom = s.get("custom_gpu")
                if gpu == "custom" and isinstance(custom, dict):
                    mfu = custom.get("prefill_mfu")
                elif gpu in gpu_presets():
                    mfu = gpu_presets()[gpu].prefill_mfu
            t["decode_mfu"] = mfu
        t.setdefault("max_batched_tokens", 10**7)      # version 3 had no token cap on the decode batch
    return s


@_checked
def _scenario_4_to_5(s: dict) -> dict:
    s = fill_scenario_defaults(s, 4)
    gpus, cap = _as_number(s.get("extraction_gpus")), _as_number(s.get("disk_capacity_tb"))
    if gpus is not None and cap is not None and gpus > 8:
        # at least the field's bound: a v4 value that small still refuses everything it refused
        s["disk_capacity_tb"] = max(0.01, cap / -(-int(gpus) // 8))
    return s


def _scenario_5_to_6(s: dict) -> dict:
    """Issue 20 (storage as paid, one serving workload): a version-5 scenario keeps the rent it had
    (its storage preset and months, filled from version 5's defaults) and scores tau on its own mix."""
    s = fill_scenario_defaults(s, 5)
    q = s.get("quality")
    if isinstance(q, dict) and q.get("workload") is None:
        q["workload"] = "mix"
    if isinstance(q, dict):
        # issue 22: version 5 gave tau on the paper's harness and paid back at the batch-1 speedup
        q.setdefault("eval_engine", "paper")
        q.setdefault("fleet_batch", 1)
    return s


def _as_number(v) -> float | None:
    """A value pydantic would read as a number (16, 16.0, "16"), else None (bool, None, text)."""
    if isinstance(v, bool) or v is None:
        return None
    try:
        x = float(v)
    except (TypeError, ValueError, OverflowError):
        return None
    return x if x == x and abs(x) != float("inf") else None


def _manifest_step(scenario_step: Callable[[dict], dict], to: int) -> Callable[[dict], dict]:
    """A manifest step that migrates its scenario with `scenario_step` and names version `to`."""
    def step(manifest: dict) -> dict:
        manifest = dict(manifest)
        if isinstance(manifest.get("scenario"), dict):
            manifest["scenario"] = scenario_step(manifest["scenario"])
        manifest["schema_version"] = to
        return manifest
    return step


MANIFEST_STEPS: dict[int, Callable[[dict], dict]] = {1: _manifest_1_to_2, 2: _manifest_step(_scenario_2_to_3, 3),
                                                     3: _manifest_step(_scenario_3_to_4, 4),
                                                     4: _manifest_step(_scenario_4_to_5, 5),
                                                     5: _manifest_step(_scenario_5_to_6, 6)}


def migrate_manifest(manifest: dict) -> dict:
    """A manifest mapping of any known schema_version, brought to CURRENT step by step."""
    v = manifest.get("schema_version")
    if isinstance(v, bool) or not isinstance(v, int) or not OLDEST <= v <= CURRENT:
        raise VersionError(f"schema_version: {v!r} is not allowed; this planner reads schema_version "
                           f"{OLDEST} to {CURRENT}" + (" (the manifest is newer than this planner: upgrade it)"
                                                        if isinstance(v, int) and not isinstance(v, bool)
                                                        and v > CURRENT else ""))
    while manifest["schema_version"] < CURRENT:
        manifest = _migrating(manifest["schema_version"], MANIFEST_STEPS[manifest["schema_version"]], manifest)
    return manifest


# ---------------------------------------------------------------- links
@_checked
def _link_1_to_2(s: dict) -> dict:
    return fill_scenario_defaults(s, 1)


LINK_STEPS: dict[int, Callable[[dict], dict]] = {1: _link_1_to_2, 2: _scenario_2_to_3, 3: _scenario_3_to_4,
                                                 4: _scenario_4_to_5, 5: _scenario_5_to_6}


def link_version(text: str) -> int:
    """The version named by a link's `vN.` prefix."""
    head, dot, _ = text.partition(".")
    if dot and head[:1] == "v" and head[1:].isascii() and head[1:].isdigit() and len(head) <= 4:
        v = int(head[1:])
        if OLDEST <= v <= CURRENT:
            return v
        if v > CURRENT:
            raise VersionError(f"the link was made by a newer planner (format v{v}; "
                               f"this one reads v{OLDEST}-v{CURRENT})")
    raise VersionError(f"the link's scenario is not in a format this planner knows (expected 'v{CURRENT}.')")


def migrate_link(scenario: dict, version: int) -> dict:
    for v in range(version, CURRENT):
        scenario = _migrating(v, LINK_STEPS[v], scenario)
    return scenario
