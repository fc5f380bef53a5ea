"""What every command shares: CliError and the parser class (from _parser.py), number parsing, and the
one table of scenario flags (flag, scenario path, converter, help) that builds the argparse flags, the
Scenario and the error messages.

Imports nothing from the other planner.cli modules but _parser, so that every command module can import
it without a cycle.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import os
import sys
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from pydantic import BaseModel, ValidationError

from planner.cli._parser import CliError, Parser  # noqa: F401  (Parser: re-exported, commands import it from here)
from planner.errors import describe_validation_error
from planner.ids import TRIM_STRATEGIES
from planner.safe_io import LIMITS, check_output, open_binary
from planner.scenario import Scenario, gpus_on_nodes
from planner.scenario.inputs import Declared, declared
from planner.scenario.model import PRESETS
from planner.text import printable, shown

MAX_NUMBER_CHARS = 40   # longer number text is refused before int()/float() sees it (4,300-digit limit)


# ---------------------------------------------------------------- converters: (flag, text) -> value
def _short(flag: str, text: str, what: str) -> str:
    if len(text) > MAX_NUMBER_CHARS:
        raise CliError(f"{flag}: {shown(text)} is not {what} (at most {MAX_NUMBER_CHARS} characters)")
    return text


def whole(flag: str, text: str) -> int:
    try:
        return int(_short(flag, text, "a whole number").replace("_", ""))
    except ValueError:
        raise CliError(f"{flag}: {shown(text)} is not a whole number") from None


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
        raise CliError(f"{flag}: {shown(text)} is not a number") from None
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
        raise CliError(f"{flag}: {shown(text)} must be comma-separated whole numbers") from None


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
                       "in USD per TB-month") from None
    if not math.isfinite(value) or value < 0:
        raise CliError(f"{flag}: {shown(text)} must be a finite price of at least 0 USD per TB-month")
    return "costs.storage_usd_per_tb_month", value


def quality_points(flag: str, text: str) -> list[dict]:
    """A CSV of your own runs (planner/scenario/quality_csv.py), read from the file `text` names."""
    from planner.errors import PlannerInputError
    from planner.safe_io import read_capped
    from planner.scenario.quality_csv import QualityPointsError, parse_quality_points
    try:
        raw = read_capped(text_value(flag, text), flag, "quality points file")
    except PlannerInputError as exc:
        raise CliError(str(exc)) from exc
    try:
        return parse_quality_points(raw, shown(text))
    except QualityPointsError as exc:
        raise CliError(f"{flag}: {exc}") from exc


def key_values(flag: str, text: str, shape: str, empty: str, value: Callable[[str, str, str], Any], *,
               keys: tuple[str, ...] | None = None, unique: bool = False) -> list[tuple[str, Any]]:
    """The one KEY=VALUE[,KEY=VALUE...] reader of the command line: (key, value) pairs in the order given.

    Each part is split at its first `=` (else `{flag}: <part> must be {shape}`); the key, stripped, must
    be one of `keys` where they are given (`... is not a family; use ...`) and, with `unique`, not given
    twice; `value(part, key, text)` converts the value's text and checks the caller's bounds. No part at
    all is `{flag}: <text> {empty}`.
    """
    out: list[tuple[str, Any]] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, raw = (x.strip() for x in part.partition("="))
        if not sep:
            raise CliError(f"{flag}: {shown(part)} must be {shape}")
        if keys is not None and key not in keys:
            raise CliError(f"{flag}: {shown(key)} is not a family; use {', '.join(keys)}")
        if unique and any(k == key for k, _ in out):
            raise CliError(f"{flag}: {key} is given twice")
        out.append((key, value(part, key, raw)))
    if not out:
        raise CliError(f"{flag}: {shown(text)} {empty}")
    return out


def family_shares(flag: str, text: str) -> dict[str, float]:
    """FAMILY=SHARE[,FAMILY=SHARE...] over the catalog's families."""
    from planner.ids import FAMILIES

    def share(part: str, fam: str, value: str) -> float:
        out = number(flag, value)
        if out < 0:
            raise CliError(f"{flag}: {fam}={value} must not be negative")
        return out
    nothing = "gives no positive share; e.g. general=0.5,code=0.3,tool=0.2"
    out = dict(key_values(flag, text, "FAMILY=SHARE", nothing, share, keys=FAMILIES, unique=True))
    if not sum(out.values()) > 0:
        raise CliError(f"{flag}: {shown(text)} {nothing}")
    return out


def family_floor(flag: str, text: str) -> dict[str, float]:
    """FAMILY=F[,...], each F from 0 to 1 (a share of the family's rows kept)."""
    from planner.ids import FAMILIES

    def floor(part: str, fam: str, value: str) -> float:
        out = number(flag, value)
        if not 0 <= out <= 1:
            raise CliError(f"{flag}: {fam}={value} must be a share from 0 to 1")
        return out
    return dict(key_values(flag, text, "FAMILY=F", "names no family; e.g. code=0.5", floor, keys=FAMILIES))


def components(flag: str, text: str) -> list[dict]:
    """ID=ROWS[,ID=ROWS...]."""
    def rows(part: str, cid: str, value: str) -> int:
        if not cid:
            raise CliError(f"{flag}: {shown(part)} has no component id")
        try:
            n = int(_short(flag, value, "a row count").replace("_", ""))
        except ValueError:
            raise CliError(f"{flag}: {shown(part)} has rows {shown(value)}, not a whole number") from None
        if n < 0:
            raise CliError(f"{flag}: {shown(part)} has a negative row count")
        return n
    pairs = key_values(flag, text, "ID=ROWS", "names nothing; give at least one ID=ROWS", rows)
    return [{"id": cid, "rows": n} for cid, n in pairs]


# ---------------------------------------------------------------- the flag table
@dataclass(frozen=True)
class Flag:
    """One command-line flag and the Scenario field it sets.

    `convert` turns the text into the value (None: a switch that sets `const`); `also` are further
    fields the flag sets (a fixed-mode rate switches the throughput mode); `special` flags are
    assembled by scenario_from_args (the base, the mix, uniform samples) instead of set at `path`.
    `alias_of` names the derived flag an older spelling stands for (listed in --help beside it).
    Validation errors at `path` name `flag`.
    """

    flag: str
    path: str
    convert: Callable[[str, str], Any] | type[str] | None     # str: the text as it is
    help: str
    choices: tuple[str, ...] | None = None
    const: Any = None
    also: dict = field(default_factory=dict)
    special: bool = False
    alias_of: str | None = None

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    @property
    def is_switch(self) -> bool:
        return self.convert is None and self.choices is None

    def value(self, given: Any) -> Any:
        """What the flag sets at `path`: the converted text, or a switch's constant."""
        return self.const if self.is_switch else given


def json_object(flag: str, text: str) -> dict:
    """A JSON object (a custom model's or GPU's fields), at most a manifest's size; the Scenario checks its fields."""
    import json
    if len(text) > LIMITS["manifest"]:
        raise CliError(f"{flag}: {shown(text[:40])}... is longer than {LIMITS['manifest']:,} characters")
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise CliError(f"{flag}: {shown(text)} is not a JSON object; give its fields, e.g. '{{\"name\": ...}}'")
    return value


PARSERS: dict[str, Callable[[str, str], Any] | type[str]] = {
    "int": positive_int, "number": number, "text": text_value, "choice": str, "layers": layer_list,
    "seq_cap": seq_cap, "shares": family_shares, "points": quality_points, "json": json_object}


def derived_flag(path: str) -> str:
    """A field's flag, from its path (vLLM's EngineArgs style): `costs.training_usd_per_gpu_hour` ->
    `--costs-training-usd-per-gpu-hour`."""
    return "--" + path.replace(".", "-").replace("_", "-")


# Every flag a command line could give before flags were derived from the fields' paths (issue 32), with
# the field it sets (a switch: the field and the value it sets), so that no existing command line changes
# meaning. A flag whose derived name is the old one (--model, --regenerate/--no-regenerate...) needs no row.
ALIASES: dict[str, str | tuple[str, Any]] = {
    "--samples": "uniform.samples", "--tokens": "uniform.tokens", "--response-tokens": "uniform.response_tokens",
    "--roofline": ("throughput.mode", "roofline"), "--calibrated": ("throughput.mode", "calibrated"),
    "--tokens-per-s": "throughput.tokens_per_s", "--batching": "throughput.batching",
    "--mfu": "throughput.prefill_mfu", "--decode-mfu": "throughput.decode_mfu",
    "--max-num-seqs": "throughput.max_batch", "--max-batched-tokens": "throughput.max_batched_tokens",
    "--gpu": "extraction_gpu", "--gpus": "extraction_gpus", "--nodes": "extraction_nodes",
    "--disagg-capture-gpus": "disaggregated.capture_gpus", "--disagg-train-gpus": "disaggregated.train_gpus",
    "--stream-buffer-gb": "disaggregated.stream_buffer_gb",
    "--transfer": "transfer.method", "--link-gbps": "transfer.link_gbps", "--link-efficiency": "transfer.efficiency",
    "--train-gpu": "training.gpu", "--train-gpus": "training.gpus", "--epochs": "training.epochs",
    "--train-mfu": "training.mfu", "--train-nodes": "training.nodes", "--train-gpus-per-node": "training.gpus_per_node",
    "--train-disk-capacity-tb": "training.disk_capacity_tb", "--ttt-steps": "training.ttt_steps",
    "--num-anchors": "training.num_anchors", "--block-size": "training.block_size",
    "--storage-months": "costs.storage_months", "--keep-days": "costs.keep_days",
    "--workload": "quality.workload", "--domain-transfer": "quality.domain_transfer",
    "--serving-tokens-per-day": "quality.serving_tokens_per_day", "--serving-gpu": "quality.serving_gpu",
    "--eval-engine": "quality.eval_engine", "--temperature": "quality.temperature",
    "--num-speculative-tokens": "quality.num_speculative_tokens", "--topk": "quality.topk",
    "--num-draft-tokens": "quality.num_draft_tokens", "--serving-tp": "quality.serving_tp",
    "--serving-batch": "quality.serving_batch", "--fleet-batch": "quality.fleet_batch",
}


def _parser_name(d: Declared) -> str:
    """The converter of a declared input: its own `parse`, else from the field's type (a Literal:
    its choices; a model: a JSON object; an int: a positive whole number; a float: a finite number;
    an id: non-empty text)."""
    if d.input.parse:
        return d.input.parse
    if d.choices:
        return "choice"
    bases = _bases(d)
    if any(isinstance(b, type) and issubclass(b, BaseModel) for b in bases):
        return "json"
    return "int" if int in bases else "number" if float in bases else "text"


def _bases(d: Declared) -> set:
    """The types a field takes, Annotated and None set aside (`int | None` -> {int})."""
    ann = d.field.annotation
    args = typing.get_args(ann) if typing.get_origin(ann) in (typing.Union, types.UnionType) else (ann,)
    return {typing.get_args(a)[0] if typing.get_origin(a) is typing.Annotated else a for a in args} - {type(None)}


def _aliases_of(path: str, aliases: dict) -> list[tuple[str, Any]]:
    """(old flag, None for a value flag or the switch's constant) for the field at `path`."""
    return [(old, None if isinstance(to, str) else to[1]) for old, to in aliases.items()
            if (to if isinstance(to, str) else to[0]) == path]


def declared_flags(inputs, aliases: dict | None = None) -> tuple[Flag, ...]:
    """The flag table rows of declared inputs (planner.scenario.inputs): each field's flag derived from its path
    (a bool: a --x/--no-x pair), its help the field's docstring (else the page's help or label), then
    the older spellings of `aliases` that set it (hidden in --help, named in the flag's own help)."""
    aliases = ALIASES if aliases is None else aliases
    out = []
    for d in inputs:
        flag, old = derived_flag(d.path), _aliases_of(d.path, aliases)
        text = d.field.description or d.input.help or d.input.label or ""
        if old:
            text += f" (also: {', '.join(o for o, _ in old)})"
        if _bases(d) == {bool}:
            rows = [Flag(flag, d.path, None, text, const=True),
                    Flag("--no-" + flag[2:], d.path, None, f"the opposite of {flag}", const=False)]
        else:
            name = _parser_name(d)
            rows = [Flag(flag, d.path, PARSERS[name], text, choices=d.choices if name == "choice" else None,
                         also=dict(d.input.also), special=d.input.special)]
        for o, const in old:
            rows.append(dataclasses.replace(rows[0], flag=o, alias_of=flag) if const is None else
                        Flag(o, d.path, None, f"{flag} {const}", const=const, alias_of=flag))
        out += rows
    return tuple(out)


# Every flag that sets one Scenario field comes from the field's declaration (planner/scenario/model.py,
# planner/scenario/inputs.py); the rows here set no one field: a base, the mix, a storage preset or price.
BASE_FLAGS: tuple[Flag, ...] = (
    Flag("--preset", "preset", None, "start from a preset (default: default)", choices=tuple(sorted(PRESETS)),
         special=True),
    Flag("--manifest", "manifest", text_value, "start from the scenario stored in a manifest (YAML or JSON)",
         special=True),
    Flag("--components", "mix", components, "replace the mix: ID=ROWS[,ID=ROWS...]", special=True),
    Flag("--add", "mix", components, "add components to the mix, or set the rows of ones in it: ID=ROWS[,ID=ROWS...] "
         "(the rest of the mix stays)", special=True),
    Flag("--drop", "mix", id_list, "drop components from the mix (they stay in the scenario, unchecked): ID[,ID...]",
         special=True),
)
STORAGE_PRICE = Flag(
    "--storage-price", "costs.storage", storage_price, "where the states are paid for: a storage preset id "
    "(planner/presets/hardware.yaml storage_prices: local, a network volume, an object store) or a price in USD per "
    "TB-month (default: the price of where the placement puts them; local disks cost nothing beyond the nodes)",
    special=True)
SCENARIO_FLAGS: tuple[Flag, ...] = (*BASE_FLAGS, *declared_flags(declared(Scenario)), STORAGE_PRICE)

# Validation errors at these paths come from model-level checks, not from one field.
_EXTRA_PATHS = {"uniform": "--response-tokens", "costs.storage_usd_per_tb_month": "--storage-price"}


def flag_for(field_path: str, flags: tuple[Flag, ...] = SCENARIO_FLAGS, typed: tuple[Flag, ...] = ()) -> str | None:
    """The flag a user typed for a Scenario path (or a path below it: `mix.3.rows` -> --components): one of
    `typed` (the flags given) that sets it, else of `flags`, an older spelling (--gpus) before the derived
    one (--extraction-gpus) so that the messages scripts know stay as they were."""
    if field_path.startswith("-"):
        return field_path
    by_path = {f.path: f.flag for f in reversed(typed)}
    for path, flag in _EXTRA_PATHS.items():
        by_path.setdefault(path, flag)
    for f in sorted(flags, key=lambda f: f.alias_of is None):
        by_path.setdefault(f.path, f.flag)
    parts = field_path.replace("[", ".").replace("]", "").split(".")
    for n in range(len(parts), 0, -1):
        named = by_path.get(".".join(parts[:n]))
        if named:
            return named
    return None


def add_flags(parser: argparse.ArgumentParser, flags: tuple[Flag, ...]) -> None:
    """argparse flags from the table: values converted by the table's converter; flags not given are
    absent from the namespace (so 'none' for --max-seq-len and 'not given' stay apart)."""
    switches: dict[str, list[Flag]] = {}
    for f in flags:
        if f.is_switch:
            switches.setdefault(f.path, []).append(f)
    groups = {path: parser.add_mutually_exclusive_group() for path, fs in switches.items() if len(fs) > 1}
    for f in flags:
        if f.is_switch:
            groups.get(f.path, parser).add_argument(f.flag, dest=f.dest, action="store_const", const=f.const,
                                                    default=argparse.SUPPRESS, help=_help(f))
        else:
            convert = functools.partial(f.convert, f.flag) if f.convert not in (None, str) else None
            if convert is None:     # the text as it is: argparse's default
                parser.add_argument(f.flag, dest=f.dest, choices=f.choices, default=argparse.SUPPRESS, help=_help(f))
            else:
                parser.add_argument(f.flag, dest=f.dest, type=convert, choices=f.choices, default=argparse.SUPPRESS,
                                    help=_help(f))


def _help(f: Flag) -> str:
    """An older spelling of a value flag is named in its derived flag's help, not listed again (a switch is:
    argparse cannot draw the usage of an exclusive group with a hidden member); argparse's % escaped."""
    return argparse.SUPPRESS if f.alias_of and not f.is_switch else f.help.replace("%", "%%")


def given(args: argparse.Namespace, flags: tuple[Flag, ...]) -> dict[str, tuple[Flag, Any]]:
    """The flags of the table that were given: dest -> (flag, converted value)."""
    return {f.dest: (f, getattr(args, f.dest)) for f in flags if hasattr(args, f.dest)}


def add_scenario_flags(parser: argparse.ArgumentParser) -> None:
    add_flags(parser, SCENARIO_FLAGS)


def _set(data: dict, path: str, value) -> None:
    *parents, leaf = path.split(".")
    for part in parents:
        data = data[part]
    data[leaf] = value


def _refuse_conflicts(values: dict[str, tuple[Flag, Any]]) -> None:
    """Two given flags that set one field to different values (--gpus 8 --extraction-gpus 4, --storage-price
    local --costs-storage volume): refuse instead of dropping one."""
    setters: dict[str, tuple[Flag, str, Any]] = {}   # path -> (flag, its value as typed, what it sets)
    # valued flags first, so that a switch is the one refused and the message shows the value typed
    for f, v in sorted(values.values(), key=lambda fv: fv[0].is_switch):
        if f.flag in _BASE:
            continue
        sets = ((v[0], v[1]),) if f is STORAGE_PRICE else ((f.path, f.value(v)), *f.also.items())
        for path, value in sets:
            if path in setters and setters[path][2] != value:
                other, typed, set_to = setters[path]
                raise CliError(f"{f.flag}: cannot be combined with {other.flag}{typed}: they set {path} to "
                               f"{shown(value)} and {shown(set_to)}; give one of them")
            setters[path] = (f, "" if f.is_switch else f" {shown(v[1] if f is STORAGE_PRICE else v)}", value)
    if "preset" in values and "manifest" in values:
        raise CliError(f"--preset: {shown(values['preset'][1])} cannot be combined with --manifest "
                       f"{shown(values['manifest'][1])}: the manifest holds the whole scenario")


_BASE = {f.flag for f in BASE_FLAGS}


class _Given:
    """The scenario flags given on a command line, by dest and by the field path they set."""

    def __init__(self, a: argparse.Namespace):
        self.values = given(a, SCENARIO_FLAGS)
        self.by_path = {f.path: (f, v) for f, v in self.values.values() if f.flag not in _BASE}

    def __contains__(self, path: str) -> bool:
        return path in self.by_path

    def get(self, path: str, default=None):
        return self.by_path[path][1] if path in self.by_path else default

    def flag(self, path: str) -> str:
        """The flag given for `path`, else the one a user knows it by (its older spelling, else derived)."""
        if path in self.by_path:
            return self.by_path[path][0].flag
        return flag_for(path)  # type: ignore[return-value]  # None: a path no flag sets (callers name flagged ones)


def scenario_from_args(args: argparse.Namespace) -> Scenario:
    g = _Given(args)
    _refuse_conflicts(g.values)
    base = g.values.get
    if "manifest" in g.values:
        data = read_manifest(g.values["manifest"][1], "--manifest").scenario.model_dump()
    else:
        data = PRESETS[base("preset", (None, None))[1] or "default"]().model_dump()
    _uniform(data, g)
    if "components" in g.values:
        data["mix"] = g.values["components"][1]
        data["uniform"] = None
    if "add" in g.values:
        data["mix"] = _added(data, g.values["add"][1])
    if "drop" in g.values:
        data["mix"] = _dropped(data, g.values["drop"][1])
    if "storage_price" in g.values:
        path, value = g.values["storage_price"][1]
        _set(data, path, value)
    for f, v in g.values.values():
        if f.special:
            continue
        _set(data, f.path, f.value(v))
        for path, value in f.also.items():
            _set(data, path, value)
    _nodes(data, g, "extraction", ("extraction_gpus", "extraction_nodes", "gpus_per_node"))
    _nodes(data, g, "training", ("training.gpus", "training.nodes", "training.gpus_per_node"))
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise CliError(validation_message(exc, typed=tuple(f for f, _ in g.values.values()))) from exc


def _uniform(data: dict, g: _Given) -> None:
    """--samples N --tokens T [--response-tokens R] [--uniform-turns K]: the mix replaced by N uniform samples."""
    samples, tokens, resp, turns = "uniform.samples", "uniform.tokens", "uniform.response_tokens", "uniform.turns"
    if samples not in g and tokens not in g:
        for path in (resp, turns):
            if path in g:
                raise CliError(f"{g.flag(path)}: goes with {g.flag(samples)} and {g.flag(tokens)}")
        return
    if samples not in g or tokens not in g:
        raise CliError(f"{g.flag(samples)} and {g.flag(tokens)} go together")
    if "components" in g.values:
        raise CliError(f"--components: cannot be combined with {g.flag(samples)}/{g.flag(tokens)}")
    n, t, r = g.get(samples), g.get(tokens), g.get(resp) or 0.0
    if t <= 0:
        raise CliError(f"{g.flag(tokens)}: {t:g} must be positive")
    if r < 0:
        raise CliError(f"{g.flag(resp)}: {r:g} must not be negative")
    if r > t:
        raise CliError(f"{g.flag(resp)}: {r:g} cannot exceed {g.flag(tokens)} {t:g}")
    data["uniform"] = {"samples": n, "tokens": t, "response_tokens": r, "turns": g.get(turns, 1)}
    data["mix"] = None


def _nodes(data: dict, g: _Given, phase: Literal["extraction", "training"], paths: tuple[str, str, str]) -> None:
    """GPUs as nodes x GPUs per node (planner.scenario.model.gpus_on_nodes): --nodes without --gpus sets the
    total; both must match; --gpus alone (on a base that named its nodes) lets the nodes follow from it."""
    from planner.scenario.inputs import value_at
    gpus, nodes, per = paths
    if gpus not in g and value_at(data, nodes) is None:
        return
    if gpus in g and nodes not in g:
        _set(data, nodes, None)
        return
    try:
        total = gpus_on_nodes(phase, value_at(data, nodes), value_at(data, per))
    except ValueError as exc:
        raise CliError(f"{g.flag(nodes) if nodes in g else g.flag(per)}: {exc}") from exc
    if gpus in g and value_at(data, gpus) != total:
        raise CliError(f"{g.flag(gpus)}: {value_at(data, gpus):,} does not match {g.flag(nodes)} "
                       f"{value_at(data, nodes):,} x {g.flag(per)} {value_at(data, per):,} = {total:,} GPUs; give "
                       "matching values or one of them")
    _set(data, gpus, total)


def read_manifest(path: str, field: str):
    """The manifest at `path` (planner.export.manifest.load_manifest: a regular file, read up to the
    cap and no further), with the notes about replaced hub sources printed."""
    from planner.export.manifest import load_manifest
    return warn_sources(load_manifest(path, field))


def warn_sources(manifest):
    """Say on stderr where a received manifest's hub source was replaced by the catalog's."""
    from planner.export.manifest import source_notes
    for note in source_notes(manifest):
        print(f"planner: warning: {printable(note)}", file=sys.stderr)
    return manifest


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
    ids = [str(m["id"]) for m in mix]
    for name in names:
        if name not in ids:
            raise CliError(f"--drop: {shown(name)} is not in the mix ({', '.join(ids)})")
    # a dropped component stays in the scenario, unchecked (its manifest and link keep it)
    return [dict(m, include=False) if m["id"] in set(names) else m for m in mix]


def validation_message(exc: ValidationError, flags: tuple[Flag, ...] = SCENARIO_FLAGS, prefix: str = "",
                       typed: tuple[Flag, ...] = ()) -> str:
    """`--flag: <describe_validation_error>` for the first error (`prefix` is the model's path; the flag
    one of `typed`, the flags given, where one sets the field)."""
    first = exc.errors()[0]
    path = ".".join(str(x) for x in (prefix, *first["loc"]) if x != "")
    flag = flag_for(path, flags, typed)
    json_flag = next((f for f in (*typed, *flags) if f.flag == flag and f.convert is json_object), None)
    if json_flag and path.startswith(json_flag.path + "."):    # a field inside the JSON object given
        return f"{flag}: {path[len(json_flag.path) + 1:]}: {describe_validation_error(exc, name=lambda _: '')}"
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
    return dict(key_values(flag, text, "ID=WEIGHT", "names nothing; give ID=WEIGHT[,...]",
                           lambda part, key, value: number(flag, value)))


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


def emit_calibration(args, calibration, as_json: str, as_text: str) -> int:
    """The end of `calibrate` and `preflight`: the calibration file written to --out (atomically, never over
    the manifest it read), then the JSON or the text, and where the file went."""
    from planner.runs.calibration import dump
    from planner.safe_io import atomic_write
    from planner.text import printable
    if args.out:
        atomic_write(args.out, dump(calibration), field="--out", inputs=[args.manifest])
    if args.json:
        print(as_json, end="" if as_json.endswith("\n") else "\n")
    else:
        print(as_text)
        print(f"calibration written to {printable(args.out)}" if args.out else
              "(add --out FILE to keep it for estimate --calibration)")
    return 0
