"""What every command shares: CliError, the parser class, number parsing, and the one table of
scenario flags (flag, scenario path, converter, help) that builds the argparse flags, the Scenario
and the error messages.

Imports nothing from the other planner.cli modules, so that every command module can import it
without a cycle.
"""
from __future__ import annotations

import argparse
import functools
import math
import os
import sys
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import ValidationError

from planner.errors import describe_validation_error
from planner.safe_io import LIMITS, check_output, open_binary
from planner.scenario.inputs import Declared, declared
from planner.scenario.model import PRESETS
from planner.scenario import Scenario, gpus_on_nodes
from planner.ids import TRIM_STRATEGIES
from planner.text import printable, shown

MAX_NUMBER_CHARS = 40   # longer number text is refused before int()/float() sees it (4,300-digit limit)


class CliError(Exception):
    """A bad command line: main() prints `planner: error: <message>` on one line and exits 2."""


class Parser(argparse.ArgumentParser):
    """No abbreviations (a new flag must never change what an old command line means) and errors
    raised as CliError, so main() prints them on one line."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        raise CliError(message)


# ---------------------------------------------------------------- converters: (flag, text) -> value
def _short(flag: str, text: str, what: str) -> str:
    if len(text) > MAX_NUMBER_CHARS:
        raise CliError(f"{flag}: {shown(text)} is not {what} (at most {MAX_NUMBER_CHARS} characters)")
    return text


def whole(flag: str, text: str) -> int:
    try:
        return int(_short(flag, text, "a whole number").replace("_", ""))
    except ValueError:
        raise CliError(f"{flag}: {shown(text)} is not a whole number")


def _positive(name: str, convert, shown_as):
    """`convert`, refusing a value at or below zero (the message shows it as `shown_as` does)."""
    def check(flag: str, text: str):
        value = convert(flag, text)
        if value <= 0:
            raise CliError(f"{flag}: {shown_as(value)} must be positive")
        return value
    check.__name__ = check.__qualname__ = name
    return check


positive_int = _positive("positive_int", whole, str)


def number(flag: str, text: str) -> float:
    try:
        value = float(_short(flag, text, "a number"))
    except ValueError:
        raise CliError(f"{flag}: {shown(text)} is not a number")
    if not math.isfinite(value):
        raise CliError(f"{flag}: {shown(text)} must be a finite number")
    return value


def text_value(flag: str, text: str) -> str:
    """An id or a path: an empty value is refused rather than silently ignored."""
    if not text.strip():
        raise CliError(f"{flag}: {shown(text)} is empty; give a value or leave the flag out")
    return text


def layer_list(flag: str, text: str) -> list[int]:
    parts = [x for x in (y.strip() for y in text.split(",")) if x]
    if not parts:
        raise CliError(f"{flag}: {shown(text)} names no layer; give comma-separated whole numbers")
    try:
        return [int(_short(flag, x, "a layer id")) for x in parts]
    except ValueError:
        raise CliError(f"{flag}: {shown(text)} must be comma-separated whole numbers")


def seq_cap(flag: str, text: str) -> int | str:
    """A cap in tokens, or "none" (no cap); leaving the flag out keeps the layout's cap."""
    return "none" if text.strip().lower() == "none" else positive_int(flag, text)


def id_list(flag: str, text: str) -> list[str]:
    """ID[,ID...]: each name stripped (for the check and for the use alike)."""
    names = [x for x in (y.strip() for y in text.split(",")) if x]
    if not names:
        raise CliError(f"{flag}: {shown(text)} names nothing; give ID[,ID...]")
    return names


def storage_price(flag: str, text: str) -> tuple[str, str | float]:
    """A storage preset id ("costs.storage", id) or a price per TB-month ("costs.storage_usd_per_tb_month", USD)."""
    from planner.presets.specs import storage_price_presets
    presets = storage_price_presets()
    name = text.strip()
    if name in presets:
        return "costs.storage", name
    try:
        value = float(_short(flag, name, "a preset id or a price"))
    except ValueError:
        raise CliError(f"{flag}: {shown(text)} is neither a storage preset ({', '.join(presets)}) nor a price "
                       "in USD per TB-month")
    if not math.isfinite(value) or value < 0:
        raise CliError(f"{flag}: {shown(text)} must be a finite price of at least 0 USD per TB-month")
    return "costs.storage_usd_per_tb_month", value


def quality_points(flag: str, text: str) -> list[dict]:
    """A CSV of your own runs (planner/scenario/quality_csv.py), read from the file `text` names."""
    from planner.errors import PlannerInputError
    from planner.scenario.quality_csv import QualityPointsError, parse_quality_points
    from planner.safe_io import read_capped
    try:
        raw = read_capped(text_value(flag, text), flag, "quality points file")
    except PlannerInputError as exc:
        raise CliError(str(exc))
    try:
        return parse_quality_points(raw, shown(text))
    except QualityPointsError as exc:
        raise CliError(f"{flag}: {exc}")


def family_shares(flag: str, text: str) -> dict[str, float]:
    """FAMILY=SHARE[,FAMILY=SHARE...] over the catalog's families."""
    from planner.ids import FAMILIES
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" not in part:
            raise CliError(f"{flag}: {shown(part)} must be FAMILY=SHARE")
        fam, value = (x.strip() for x in part.split("=", 1))
        if fam not in FAMILIES:
            raise CliError(f"{flag}: {shown(fam)} is not a family; use {', '.join(FAMILIES)}")
        if fam in out:
            raise CliError(f"{flag}: {fam} is given twice")
        share = number(flag, value)
        if share < 0:
            raise CliError(f"{flag}: {fam}={value} must not be negative")
        out[fam] = share
    if not out or not sum(out.values()) > 0:
        raise CliError(f"{flag}: {shown(text)} gives no positive share; e.g. general=0.5,code=0.3,tool=0.2")
    return out


def family_floor(flag: str, text: str) -> dict[str, float]:
    """FAMILY=F[,...], each F from 0 to 1 (a share of the family's rows kept)."""
    from planner.ids import FAMILIES
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        fam, sep, value = (x.strip() for x in part.partition("="))
        if not sep:
            raise CliError(f"{flag}: {shown(part)} must be FAMILY=F")
        if fam not in FAMILIES:
            raise CliError(f"{flag}: {shown(fam)} is not a family; use {', '.join(FAMILIES)}")
        share = number(flag, value)
        if not 0 <= share <= 1:
            raise CliError(f"{flag}: {fam}={value} must be a share from 0 to 1")
        out[fam] = share
    if not out:
        raise CliError(f"{flag}: {shown(text)} names no family; e.g. code=0.5")
    return out


def components(flag: str, text: str) -> list[dict]:
    """ID=ROWS[,ID=ROWS...]."""
    items = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" not in part:
            raise CliError(f"{flag}: {shown(part)} must be ID=ROWS")
        cid, rows = (x.strip() for x in part.split("=", 1))
        if not cid:
            raise CliError(f"{flag}: {shown(part)} has no component id")
        try:
            n = int(_short(flag, rows, "a row count").replace("_", ""))
        except ValueError:
            raise CliError(f"{flag}: {shown(part)} has rows {shown(rows)}, not a whole number")
        if n < 0:
            raise CliError(f"{flag}: {shown(part)} has a negative row count")
        items.append({"id": cid, "rows": n})
    if not items:
        raise CliError(f"{flag}: {shown(text)} names nothing; give at least one ID=ROWS")
    return items


# ---------------------------------------------------------------- the flag table
@dataclass(frozen=True)
class Flag:
    """One command-line flag and the Scenario field it sets.

    `convert` turns the text into the value (None: a switch that sets `const`); `also` are further
    fields the flag sets (a fixed-mode rate switches the throughput mode); `special` flags are
    assembled by scenario_from_args (the base, the mix, uniform samples) instead of set at `path`.
    Validation errors at `path` name `flag`.
    """

    flag: str
    path: str
    convert: Callable[[str, str], Any] | None
    help: str
    choices: tuple[str, ...] | None = None
    const: Any = None
    also: dict = field(default_factory=dict)
    special: bool = False

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    @property
    def is_switch(self) -> bool:
        return self.convert is None and self.choices is None

    def value(self, given: Any) -> Any:
        """What the flag sets at `path`: the converted text, or a switch's constant."""
        return self.const if self.is_switch else given


PARSERS: dict[str, Callable[[str, str], Any]] = {
    "int": positive_int, "number": number, "text": text_value, "choice": str, "layers": layer_list,
    "seq_cap": seq_cap, "shares": family_shares, "points": quality_points}


def _parser_name(d: Declared) -> str:
    """The converter of a declared input: its own `parse`, else from the field's type (a Literal:
    its choices; an int: a positive whole number; a float: a finite number; an id: non-empty text)."""
    if d.input.parse:
        return d.input.parse
    if d.choices:
        return "choice"
    ann = d.field.annotation
    args = typing.get_args(ann) if typing.get_origin(ann) in (typing.Union, types.UnionType) else (ann,)
    bases = {typing.get_args(a)[0] if typing.get_origin(a) is typing.Annotated else a for a in args} - {type(None)}
    return "int" if int in bases else "number" if float in bases else "text"


def declared_flags(inputs) -> tuple[Flag, ...]:
    """The flag table rows of declared inputs (planner.scenario.inputs): a value flag and its switches each."""
    out = []
    for d in inputs:
        i = d.input
        if i.flag:
            name = _parser_name(d)
            out.append(Flag(i.flag, d.path, PARSERS[name], i.flag_help, choices=d.choices if name == "choice" else None,
                            also=dict(i.also), special=i.special))
        out += [Flag(flag, d.path, None, text, const=value) for flag, value, text in i.switches]
    return tuple(out)


# Every flag that sets one Scenario field comes from the field's declaration (planner/scenario/model.py,
# planner/scenario/inputs.py); the rows here set no one field: a base, the mix, a storage preset or price.
SCENARIO_FLAGS: tuple[Flag, ...] = (
    Flag("--preset", "preset", None, "start from a preset (default: default)", choices=tuple(sorted(PRESETS)),
         special=True),
    Flag("--manifest", "manifest", text_value, "start from the scenario stored in a manifest (YAML or JSON)",
         special=True),
    Flag("--components", "mix", components, "replace the mix: ID=ROWS[,ID=ROWS...]", special=True),
    Flag("--add", "mix", components, "add components to the mix, or set the rows of ones in it: ID=ROWS[,ID=ROWS...] "
         "(the rest of the mix stays)", special=True),
    Flag("--drop", "mix", id_list, "drop components from the mix (they stay in the scenario, unchecked): ID[,ID...]",
         special=True),
    *declared_flags(declared(Scenario)),
    Flag("--storage-price", "costs.storage", storage_price, "where the states are paid for: a storage preset id "
         "(planner/presets/hardware.yaml storage_prices: local, a network volume, an object store) or a price "
         "in USD per TB-month "
         "(default: the price of where the placement puts them; local disks cost nothing beyond the nodes)",
         special=True),
)

# Validation errors at these paths come from model-level checks, not from one field.
_EXTRA_PATHS = {"uniform": "--response-tokens", "costs.storage_usd_per_tb_month": "--storage-price"}


def flag_for(field_path: str, flags: tuple[Flag, ...] = SCENARIO_FLAGS) -> str | None:
    """The flag a user typed for a Scenario path (or a path below it: `mix.3.rows` -> --components)."""
    if field_path.startswith("-"):
        return field_path
    by_path: dict[str, str] = {}
    for f in flags:
        by_path.setdefault(f.path, f.flag)
    by_path.update(_EXTRA_PATHS)
    parts = field_path.replace("[", ".").replace("]", "").split(".")
    for n in range(len(parts), 0, -1):
        flag = by_path.get(".".join(parts[:n]))
        if flag:
            return flag
    return None


def add_flags(p: argparse.ArgumentParser, flags: tuple[Flag, ...]) -> None:
    """argparse flags from the table: values converted by the table's converter; flags not given are
    absent from the namespace (so 'none' for --max-seq-len and 'not given' stay apart)."""
    switches: dict[str, list[Flag]] = {}
    for f in flags:
        if f.is_switch:
            switches.setdefault(f.path, []).append(f)
    groups = {path: p.add_mutually_exclusive_group() for path, fs in switches.items() if len(fs) > 1}
    for f in flags:
        if f.is_switch:
            groups.get(f.path, p).add_argument(f.flag, dest=f.dest, action="store_const", const=f.const,
                                               default=argparse.SUPPRESS, help=f.help)
        else:
            convert = functools.partial(f.convert, f.flag) if f.convert not in (None, str) else None
            p.add_argument(f.flag, dest=f.dest, type=convert, choices=f.choices, default=argparse.SUPPRESS,
                           help=f.help)


def given(a: argparse.Namespace, flags: tuple[Flag, ...]) -> dict[str, tuple[Flag, Any]]:
    """The flags of the table that were given: dest -> (flag, converted value)."""
    return {f.dest: (f, getattr(a, f.dest)) for f in flags if hasattr(a, f.dest)}


def add_scenario_flags(p: argparse.ArgumentParser) -> None:
    add_flags(p, SCENARIO_FLAGS)


def _set(data: dict, path: str, value) -> None:
    *parents, leaf = path.split(".")
    for part in parents:
        data = data[part]
    data[leaf] = value


def _refuse_conflicts(values: dict[str, tuple[Flag, Any]]) -> None:
    """Two given flags that set one field to different values: refuse instead of dropping one."""
    setters: dict[str, tuple[Flag, str, Any]] = {}   # path -> (flag, its value as typed, what it sets)
    # valued flags first, so that a switch is the one refused and the message shows the value typed
    for f, v in sorted(values.values(), key=lambda fv: fv[0].is_switch):
        if f.special:
            continue
        for path, value in ((f.path, f.value(v)), *f.also.items()):
            if path in setters and setters[path][2] != value:
                other, typed, set_to = setters[path]
                raise CliError(f"{f.flag}: cannot be combined with {other.flag}{typed}: they set {path} to "
                               f"{shown(value)} and {shown(set_to)}; give one of them")
            setters[path] = (f, "" if f.is_switch else f" {shown(v)}", value)
    if "preset" in values and "manifest" in values:
        raise CliError(f"--preset: {shown(values['preset'][1])} cannot be combined with --manifest "
                       f"{shown(values['manifest'][1])}: the manifest holds the whole scenario")


def scenario_from_args(a: argparse.Namespace) -> Scenario:
    values = given(a, SCENARIO_FLAGS)
    _refuse_conflicts(values)
    get = lambda dest: values[dest][1] if dest in values else None  # noqa: E731
    if "manifest" in values:
        base = read_manifest(get("manifest"), "--manifest").scenario
    else:
        base = PRESETS[get("preset") or "default"]()
    data = base.model_dump()
    if "samples" in values or "tokens" in values:
        if "samples" not in values or "tokens" not in values:
            raise CliError("--samples and --tokens go together")
        if "components" in values:
            raise CliError("--components: cannot be combined with --samples/--tokens")
        tokens, resp = get("tokens"), get("response_tokens") or 0.0
        if tokens <= 0:
            raise CliError(f"--tokens: {tokens:g} must be positive")
        if resp < 0:
            raise CliError(f"--response-tokens: {resp:g} must not be negative")
        if resp > tokens:
            raise CliError(f"--response-tokens: {resp:g} cannot exceed --tokens {tokens:g}")
        data["uniform"] = {"samples": get("samples"), "tokens": tokens, "response_tokens": resp}
        data["mix"] = None
    elif "response_tokens" in values:
        raise CliError("--response-tokens: goes with --samples and --tokens")
    if "components" in values:
        data["mix"] = get("components")
        data["uniform"] = None
    if "add" in values:
        data["mix"] = _added(data, get("add"))
    if "drop" in values:
        data["mix"] = _dropped(data, get("drop"))
    if "storage_price" in values:
        path, value = get("storage_price")
        _set(data, path, value)
    for f, v in values.values():
        if f.special:
            continue
        _set(data, f.path, f.value(v))
        for path, value in f.also.items():
            _set(data, path, value)
    _nodes(data, values, "extraction", ("gpus", "nodes", "gpus_per_node"),
           ("extraction_gpus", "extraction_nodes", "gpus_per_node"))
    _nodes(data["training"], values, "training", ("train_gpus", "train_nodes", "train_gpus_per_node"),
           ("gpus", "nodes", "gpus_per_node"))
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise CliError(validation_message(exc))


def _nodes(data: dict, values: dict, phase: str, dests: tuple[str, str, str], keys: tuple[str, str, str]) -> None:
    """GPUs as nodes x GPUs per node (planner.scenario.model.gpus_on_nodes): --nodes without --gpus sets the
    total; both must match; --gpus alone (on a base that named its nodes) lets the nodes follow from it."""
    g_dest, n_dest, p_dest = dests
    g_key, n_key, p_key = keys
    flag = lambda dest: "--" + dest.replace("_", "-")  # noqa: E731
    if g_dest not in values and data.get(n_key) is None:
        return
    if g_dest in values and n_dest not in values:
        data[n_key] = None
        return
    try:
        total = gpus_on_nodes(phase, data[n_key], data[p_key])
    except ValueError as exc:
        raise CliError(f"{flag(n_dest) if n_dest in values else flag(p_dest)}: {exc}")
    if g_dest in values and data[g_key] != total:
        raise CliError(f"{flag(g_dest)}: {data[g_key]:,} does not match {flag(n_dest)} {data[n_key]:,} x "
                       f"{flag(p_dest)} {data[p_key]:,} = {total:,} GPUs; give matching values or one of them")
    data[g_key] = total


def read_manifest(path: str, field: str):
    """The manifest at `path` (planner.export.manifest.load_manifest: a regular file, read up to the
    cap and no further), with the notes about replaced hub sources printed."""
    from planner.export.manifest import load_manifest
    return warn_sources(load_manifest(path, field))


def warn_sources(m):
    """Say on stderr where a received manifest's hub source was replaced by the catalog's."""
    from planner.export.manifest import source_notes
    for note in source_notes(m):
        print(f"planner: warning: {printable(note)}", file=sys.stderr)
    return m


def _base_mix(data: dict, flag: str) -> list[dict]:
    from planner.catalog.stats import get_catalog
    if data.get("uniform"):
        raise CliError(f"{flag}: the mix is uniform samples, there are no components to change")
    return data["mix"] if data["mix"] is not None else [{"id": i, "rows": r} for i, r in get_catalog().default_mix()]


def _added(data: dict, items: list[dict]) -> list[dict]:
    """The mix with `items` added at the end, or their rows set (and ticked) where the id is in it already."""
    mix, new = _base_mix(data, "--add"), {m["id"]: m["rows"] for m in items}
    out = [dict(m, rows=new[m["id"]], include=True) if m["id"] in new else m for m in mix]
    have = {m["id"] for m in mix}
    return out + [m for m in items if m["id"] not in have]


def _dropped(data: dict, names: list[str]) -> list[dict]:
    from planner.catalog.stats import get_catalog
    if data.get("uniform"):
        raise CliError("--drop: the mix is uniform samples, there are no components to drop")
    mix = data["mix"] if data["mix"] is not None else [{"id": i, "rows": r} for i, r in get_catalog().default_mix()]
    ids = [m["id"] for m in mix]
    for name in names:
        if name not in ids:
            raise CliError(f"--drop: {shown(name)} is not in the mix ({', '.join(ids)})")
    # a dropped component stays in the scenario, unchecked (its manifest and link keep it)
    return [dict(m, include=False) if m["id"] in set(names) else m for m in mix]


def validation_message(exc: ValidationError, flags: tuple[Flag, ...] = SCENARIO_FLAGS, prefix: str = "") -> str:
    """`--flag: <describe_validation_error>` for the first error (`prefix` is the model's path)."""
    first = exc.errors()[0]
    flag = flag_for(".".join(str(x) for x in (prefix, *first["loc"]) if x != ""), flags)
    if flag:    # the flag names the input: not its field's path a second time (issue 35)
        return f"{flag}: {describe_validation_error(exc, name=lambda _: '')}"
    return describe_validation_error(exc)


# ---------------------------------------------------------------- trim's flags
positive_number = _positive("positive_number", number, lambda v: f"{v:g}")


def truncated_int(flag: str, text: str) -> int:
    """A number taken to its whole part (`--min-cap 1e3` is 1000)."""
    return int(number(flag, text))


def weights(flag: str, text: str) -> dict[str, float]:
    """ID=WEIGHT[,ID=WEIGHT...]."""
    out = {}
    for part in filter(None, (x.strip() for x in text.split(","))):
        if "=" not in part:
            raise CliError(f"{flag}: {shown(part)} must be ID=WEIGHT")
        k, v = part.split("=", 1)
        out[k.strip()] = number(flag, v)
    if not out:
        raise CliError(f"{flag}: {shown(text)} names nothing; give ID=WEIGHT[,...]")
    return out


BUDGET_FLAGS: tuple[Flag, ...] = (
    Flag("--budget-storage-tb", "budget.storage_tb", positive_number, "storage budget in TB (10^12 bytes)"),
    Flag("--budget-storage-tib", "budget.storage_tib", positive_number, "storage budget in TiB (2^40 bytes)"),
    Flag("--budget-gpu-days", "budget.gpu_days", positive_number, "extraction GPU-days"),
    Flag("--budget-transfer-hours", "budget.transfer_hours", positive_number, "transfer hours"),
    Flag("--budget-usd", "budget.usd", positive_number, "dollars, offline total"),
    Flag("--budget-days", "budget.days", positive_number, "offline wall-clock days"),
)

TRIM_FLAGS: tuple[Flag, ...] = BUDGET_FLAGS + (
    Flag("--strategy", "strategy", str, "how to trim (default: proportional): proportional, protect (--protect "
         "kept whole), quality (the most expected acceptance length, an estimate), cap (the largest sequence cap), "
         "value (0.1's sum w log(1 + rows) heuristic, kept as it was for scripts; not tied to any measurement: "
         "prefer quality)", choices=TRIM_STRATEGIES),
    Flag("--protect", "protect", id_list, "components or families kept whole: ID_OR_FAMILY[,...]"),
    Flag("--weights", "weights", weights, "value strategy: ID=WEIGHT[,...] (default 1 each)"),
    Flag("--min-cap", "min_cap", truncated_int,
         "cap strategy: the smallest sequence length to accept before scaling rows"),
    Flag("--min-family-share", "min_family_share", family_floor,
         "every component of a family keeps at least this share of its rows: FAMILY=F[,...] (F from 0 to 1)"),
)

ALL_FLAGS = SCENARIO_FLAGS + TRIM_FLAGS


# ---------------------------------------------------------------- outputs
def check_replaceable(path: str, field: str, inputs: list[str], force: bool, ours: Callable[[bytes], bool],
                      what: str) -> None:
    """An output the planner may write: safe_io.check_output's rules (no device, symlink, directory
    or input of the command), and an existing file only if it is empty or `ours(its first bytes)`
    says the planner wrote it, unless --force: the planner never overwrites what it did not create."""
    target = check_output(path, field, inputs)
    if force or not os.path.lexists(target):
        return
    with open_binary(target, field) as fh:
        head = fh.read(LIMITS["manifest"] + 1)
    if head and not ours(head):
        raise CliError(f"{field}: {shown(path)} exists and is not {what}; choose another path, or add --force "
                       "to replace it")


def emit_calibration(a, calibration, as_json: str, as_text: str) -> int:
    """The end of `calibrate` and `preflight`: the calibration file written to --out (atomically, never over
    the manifest it read), then the JSON or the text, and where the file went."""
    from planner.runs.calibration import dump
    from planner.safe_io import atomic_write
    from planner.text import printable
    if a.out:
        atomic_write(a.out, dump(calibration), field="--out", inputs=[a.manifest])
    if a.json:
        print(as_json, end="" if as_json.endswith("\n") else "\n")
    else:
        print(as_text)
        print(f"calibration written to {printable(a.out)}" if a.out else
              "(add --out FILE to keep it for estimate --calibration)")
    return 0
