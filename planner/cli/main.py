"""python -m planner {estimate,components,profile,trim,export,materialize}: the command line.

Flag names are a contract (scripts depend on them). Bad input exits 2 with one line that names
the flag and the value; no traceback.
"""
from __future__ import annotations

import argparse
import json
import math
import sys

from pydantic import ValidationError

from planner.errors import PlannerInputError, describe_validation_error
from planner.export.manifest import ManifestError
from planner.scenario import PRESETS, Scenario

# Scenario field path -> the flag a user typed.
FLAG_FOR = {
    "model": "--model", "layout": "--layout", "extraction_gpu": "--gpu", "extraction_gpus": "--gpus",
    "training.gpu": "--train-gpu", "training.gpus": "--train-gpus", "training.epochs": "--epochs",
    "uniform.samples": "--samples", "uniform.tokens": "--tokens", "uniform.response_tokens": "--response-tokens",
    "uniform": "--response-tokens", "max_seq_len": "--max-seq-len", "unit": "--unit",
    "throughput.tokens_per_s": "--tokens-per-s", "throughput.batching": "--batching",
    "weight_dtype": "--weight-dtype", "hidden_dtype": "--hidden-dtype", "compression": "--compression",
    "transfer.link_gbps": "--link-gbps", "transfer.efficiency": "--link-efficiency", "layers": "--layers",
    "response_multiplier": "--response-multiplier", "transfer.method": "--transfer",
    "costs.storage_months": "--storage-months", "throughput.prefill_mfu": "--mfu",
}


class CliError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise CliError(message)


def _positive_int(flag: str, text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise CliError(f"{flag}: {text!r} is not a whole number")
    if value <= 0:
        raise CliError(f"{flag}: {value} must be positive")
    return value


def _number(flag: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise CliError(f"{flag}: {text!r} is not a number")
    if not math.isfinite(value):
        raise CliError(f"{flag}: {text!r} must be a finite number")
    return value


def parse_components(text: str) -> list[dict]:
    items = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" not in part:
            raise CliError(f"--components: {part!r} must be ID=ROWS")
        cid, rows = part.split("=", 1)
        try:
            n = int(rows.replace("_", ""))
        except ValueError:
            raise CliError(f"--components: {part!r} has rows {rows!r}, not a whole number")
        if n < 0:
            raise CliError(f"--components: {part!r} has a negative row count")
        items.append({"id": cid.strip(), "rows": n})
    if not items:
        raise CliError("--components: give at least one ID=ROWS")
    return items


def add_scenario_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--preset", choices=sorted(PRESETS), default="default")
    p.add_argument("--manifest", help="start from the scenario stored in a manifest (YAML or JSON)")
    p.add_argument("--model")
    p.add_argument("--layout")
    p.add_argument("--layers", help="comma-separated layer ids to capture (overrides the layout's rule)")
    p.add_argument("--gpu", help="extraction GPU id")
    p.add_argument("--gpus", help="extraction GPU count")
    p.add_argument("--train-gpu")
    p.add_argument("--train-gpus")
    p.add_argument("--epochs")
    p.add_argument("--components", help="replace the mix: ID=ROWS[,ID=ROWS...]")
    p.add_argument("--drop", help="drop components from the mix: ID[,ID...]")
    p.add_argument("--samples", help="replace the mix by N uniform samples (with --tokens)")
    p.add_argument("--tokens", help="tokens per uniform sample")
    p.add_argument("--response-tokens", help="generated (response) tokens per uniform sample")
    p.add_argument("--max-seq-len", help="sequence cap in tokens, or 'none'")
    p.add_argument("--unit", choices=["conversation", "turn"])
    g = p.add_mutually_exclusive_group()
    g.add_argument("--regenerate", dest="regenerate", action="store_true", default=None)
    g.add_argument("--no-regenerate", dest="regenerate", action="store_false")
    p.add_argument("--response-multiplier")
    p.add_argument("--tokens-per-s", help="fixed throughput mode: single-GPU tokens/s")
    p.add_argument("--batching", help="fixed throughput mode: batching factor")
    p.add_argument("--roofline", action="store_true", help="force the roofline throughput mode")
    p.add_argument("--mfu", help="prefill MFU (roofline)")
    p.add_argument("--weight-dtype", choices=["bf16", "fp8"])
    p.add_argument("--hidden-dtype", choices=["bf16", "fp16", "fp8"])
    p.add_argument("--compression")
    p.add_argument("--transfer", choices=["none", "link", "object_store", "drives"])
    p.add_argument("--link-gbps")
    p.add_argument("--link-efficiency")
    p.add_argument("--storage-months")


def scenario_from_args(a: argparse.Namespace) -> Scenario:
    if a.manifest:
        from planner.export.manifest import load_manifest
        base = load_manifest(a.manifest).scenario
    else:
        base = PRESETS[a.preset]()
    data = base.model_dump()
    put = lambda path, v: _set(data, path, v)  # noqa: E731
    if a.model:
        put("model", a.model)
    if a.layout:
        put("layout", a.layout)
    if a.layers:
        try:
            put("layers", [int(x) for x in a.layers.split(",") if x.strip()])
        except ValueError:
            raise CliError(f"--layers: {a.layers!r} must be comma-separated whole numbers")
    if a.gpu:
        put("extraction_gpu", a.gpu)
    if a.gpus is not None:
        put("extraction_gpus", _positive_int("--gpus", a.gpus))
    if a.train_gpu:
        put("training.gpu", a.train_gpu)
    if a.train_gpus is not None:
        put("training.gpus", _positive_int("--train-gpus", a.train_gpus))
    if a.epochs is not None:
        put("training.epochs", _number("--epochs", a.epochs))
    if a.samples is not None or a.tokens is not None:
        if a.samples is None or a.tokens is None:
            raise CliError("--samples and --tokens go together")
        if a.components:
            raise CliError("--components: cannot be combined with --samples/--tokens")
        tokens = _number("--tokens", a.tokens)
        resp = _number("--response-tokens", a.response_tokens) if a.response_tokens is not None else 0.0
        if tokens <= 0:
            raise CliError(f"--tokens: {a.tokens} must be positive")
        if resp < 0:
            raise CliError(f"--response-tokens: {a.response_tokens} must not be negative")
        if resp > tokens:
            raise CliError(f"--response-tokens: {a.response_tokens} cannot exceed --tokens {a.tokens}")
        data["uniform"] = {"samples": _positive_int("--samples", a.samples), "tokens": tokens,
                           "response_tokens": resp}
        data["mix"] = None
    elif a.response_tokens is not None:
        raise CliError("--response-tokens: goes with --samples and --tokens")
    if a.components:
        data["mix"] = parse_components(a.components)
        data["uniform"] = None
    if a.drop:
        from planner.catalog.stats import get_catalog
        if data.get("uniform"):
            raise CliError("--drop: the mix is uniform samples, there are no components to drop")
        cat = get_catalog()
        mix = data["mix"] if data["mix"] is not None else [{"id": i, "rows": r} for i, r in cat.default_mix()]
        ids = [m["id"] for m in mix]
        for d in filter(None, (x.strip() for x in a.drop.split(","))):
            if d not in ids:
                raise CliError(f"--drop: {d!r} is not in the mix ({', '.join(ids)})")
        drop = set(a.drop.split(","))
        data["mix"] = [m for m in mix if m["id"] not in drop]
    if a.max_seq_len is not None:
        put("max_seq_len", None if a.max_seq_len.lower() == "none" else _positive_int("--max-seq-len", a.max_seq_len))
    if a.unit:
        put("unit", a.unit)
    if a.regenerate is not None:
        put("regenerate", a.regenerate)
    if a.response_multiplier is not None:
        put("response_multiplier", _number("--response-multiplier", a.response_multiplier))
    if a.tokens_per_s is not None or a.batching is not None:
        put("throughput.mode", "fixed")
        if a.tokens_per_s is not None:
            put("throughput.tokens_per_s", _number("--tokens-per-s", a.tokens_per_s))
        if a.batching is not None:
            put("throughput.batching", _number("--batching", a.batching))
    if a.roofline:
        put("throughput.mode", "roofline")
    if a.mfu is not None:
        put("throughput.prefill_mfu", _number("--mfu", a.mfu))
    if a.weight_dtype:
        put("weight_dtype", a.weight_dtype)
    if a.hidden_dtype:
        put("hidden_dtype", a.hidden_dtype)
    if a.compression is not None:
        put("compression", _number("--compression", a.compression))
    if a.transfer:
        put("transfer.method", a.transfer)
    if a.link_gbps is not None:
        put("transfer.link_gbps", _number("--link-gbps", a.link_gbps))
    if a.link_efficiency is not None:
        put("transfer.efficiency", _number("--link-efficiency", a.link_efficiency))
    if a.storage_months is not None:
        put("costs.storage_months", _number("--storage-months", a.storage_months))
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise CliError(_flag_message(exc))


def _set(data: dict, path: str, value) -> None:
    *parents, leaf = path.split(".")
    for p in parents:
        data = data[p]
    data[leaf] = value


def _flag_message(exc: ValidationError) -> str:
    first = exc.errors()[0]
    loc = ".".join(str(x) for x in first["loc"])
    flag = FLAG_FOR.get(loc) or FLAG_FOR.get(str(first["loc"][0]) if first["loc"] else "")
    if loc.startswith("mix"):
        flag = "--components"
    msg = describe_validation_error(exc)
    return f"{flag}: {msg}" if flag else msg


def cmd_estimate(a: argparse.Namespace) -> int:
    from planner.plan import plan
    from planner.report import text_report
    p = plan(scenario_from_args(a))
    if a.json:
        print(json.dumps(p.to_json_dict(), indent=2))
    else:
        print(text_report(p, binary=a.binary))
    return 0


def cmd_components(a: argparse.Namespace) -> int:
    from planner.catalog.stats import get_catalog
    cat = get_catalog()
    rows = []
    for c in cat.components.values():
        rows.append({"id": c.id, "name": c.name, "family": c.family, "hf_repo": c.hf_repo, "subset": c.subset,
                     "split": c.split, "licence": c.licence, "licence_note": c.licence_note,
                     "rows_in_mix": c.rows_in_mix, "rows_available": c.rows_available, "turns": c.turns,
                     "mean_tokens": c.mean_tokens, "median_tokens": c.median_tokens,
                     "assistant_share": c.assistant_share, "in_default_mix": c.in_default_mix, "origin": c.origin,
                     "provenance": c.provenance})
    if a.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'id':<18}{'family':<9}{'rows in mix':>12}{'available':>12}{'mean tok':>10}  origin    hf repo")
    for r in rows:
        tag = (r["provenance"].get("mean_tokens") or {}).get("tag", "")
        print(f"{r['id']:<18}{r['family']:<9}{r['rows_in_mix']:>12,}{r['rows_available']:>12,}"
              f"{r['mean_tokens']:>10,.0f}  {r['origin']:<9} {r['hf_repo'] or ''} (tokens: {tag})")
    total = sum(r["rows_in_mix"] for r in rows if r["in_default_mix"])
    print(f"default mix: {total:,} rows")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="planner", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    est = sub.add_parser("estimate", help="plan storage, GPU time, transfer, training and cost")
    add_scenario_flags(est)
    est.add_argument("--json", action="store_true")
    est.add_argument("--binary", action="store_true", help="show TiB instead of TB")
    est.set_defaults(func=cmd_estimate)
    comp = sub.add_parser("components", help="the component catalog")
    comp.add_argument("--json", action="store_true")
    comp.set_defaults(func=cmd_components)
    # imported here: those modules import CliError and the scenario flags from this one
    from planner.cli.profile import register_profile
    from planner.cli.trim import register as register_trim_export
    register_profile(sub)
    register_trim_export(sub)
    from planner.cli.materialize import register as register_materialize
    register_materialize(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return args.func(args)
    except CliError as exc:
        print(f"planner: error: {exc}", file=sys.stderr)
        return 2
    except PlannerInputError as exc:
        flag = "--components" if exc.field.startswith("mix[") else FLAG_FOR.get(exc.field, exc.field)
        if exc.field.startswith("budget."):
            flag = "--budget-" + exc.field.split(".", 1)[1].replace("_", "-")
        print(f"planner: error: {flag}: {exc.value!r} is not allowed; {exc.allowed}", file=sys.stderr)
        return 2
    except ValidationError as exc:
        print(f"planner: error: {describe_validation_error(exc)}", file=sys.stderr)
        return 2
    except ManifestError as exc:
        print(f"planner: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"planner: error: {getattr(exc, 'filename', '') or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("planner: interrupted", file=sys.stderr)
        return 130
