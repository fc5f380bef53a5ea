"""The storage phase: what the mix puts on disk, component by component.

From the scenario's mix (or its uniform samples) and the pipeline's values in force (planner/presets/layouts.py
Effective: unit, cap, capture batch, padding): each component's rows and length distributions, its
token counts (planner/phases/stored_bytes.py workload), the rows as captured (batch padding, drop_last), the
files and their overhead, and the bytes per component. A pure function of its inputs: plan.py
composes it with the later phases, and runs it again at the ends of a sampled profile's band.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

from pydantic import BaseModel

from planner.catalog.stats import StatsCatalog, length_band_settings
from planner.distributions import Atoms, fan_out, point_mass, shortest
from planner.errors import PlannerInputError
from planner.findings import Finding, finding
from planner.phases.assumption_rows import Assumption, RowContext
from planner.phases.padding import captured_rows, padded
from planner.phases.reuse import Reuse, reused
from planner.phases.stored_bytes import CaptureLayout, RowLengths, Workload, total_of, workload
from planner.presets.layouts import Effective, LayoutSpec, files_and_overhead
from planner.scenario import MixItem, Scenario


class ComponentPlan(BaseModel):
    id: str
    name: str
    family: str
    origin: str
    rows: int                   # conversations selected
    training_rows: float        # rows after fan-out (files written)
    tokens: float               # stored tokens
    training_tokens: float = 0.0   # each conversation's tokens once, after the cap (the quality model's data)
    truncated_share: float      # share of tokens cut by the sequence cap
    output_tokens: float
    storage_bytes: float
    share_of_rows: float
    share_of_bytes: float
    mean_tokens: float
    tokens_tag: str
    notes: list[str] = []       # the warnings that concern this component (overlap, licence, cap, rows)


# Per open catalog (read-only, kept for its lifetime): the catalog's own data as the plan reads it,
# worked out once and keyed by the catalog alone: its default mix as items, every component as a MixRow
# (identity, lengths and bands; rows 0) and the default mix's family tokens.
_BY_CATALOG: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _of_catalog(cat: StatsCatalog) -> dict:
    got = _BY_CATALOG.get(cat)
    if got is None:
        got = _BY_CATALOG[cat] = {"default_mix": tuple(MixItem(id=i, rows=r) for i, r in cat.default_mix()),
                                  "rows": {cid: _catalog_row(cid, comp) for cid, comp in cat.components.items()}}
    return got


def default_family_tokens(cat: StatsCatalog) -> dict[str, float]:
    """The catalog's default mix in tokens per family (each component's rows x its measured mean tokens)."""
    got = _of_catalog(cat)
    if "family_tokens" not in got:
        shares: dict[str, float] = {}
        for cid, rows in cat.default_mix():
            comp = cat.components[cid]
            conv = comp.conversation
            assert conv is not None     # StatsCatalog reads each component's lengths in both units (length_bins)
            shares[comp.family] = shares.get(comp.family, 0.0) + rows * conv.mean_tokens()
        got["family_tokens"] = shares
    return dict(got["family_tokens"])


def resolved_mix(s: Scenario, cat: StatsCatalog | None) -> list[MixItem]:
    """The scenario's components: its own list, or the catalog's default mix when it gives none
    (unchecked ones included; the catalog is needed only then)."""
    if s.mix is not None:
        return list(s.mix)
    assert cat is not None   # callers open a catalog for a scenario without its own mix (unless uniform)
    return [m.model_copy() for m in _of_catalog(cat)["default_mix"]]


def included_mix(s: Scenario, cat: StatsCatalog) -> list[MixItem]:
    """The components the plan counts: the checked ones."""
    return [m for m in resolved_mix(s, cat) if m.include]


@dataclass(frozen=True)
class MixRow:
    """One component of the mix as the plan needs it: identity, rows and length distributions."""

    id: str
    name: str
    family: str
    origin: str
    tokens_tag: str
    rows: int
    conv: Atoms        # per-conversation lengths
    turn: Atoms        # per-turn fan-out of the same
    # a sampled profile: (low, high) of its mean tokens per row over the mean, per unit (the 95% interval)
    band: dict[str, tuple[float, float]] | None = None
    # the storage band's factors on its lengths, per unit (length_band): the sampled interval, or the
    # catalog's spread widened by the tag of its mean; None: exact (a full profile, a uniform mix)
    lengths_band: dict[str, tuple[float, float]] | None = None


def mix_rows(s: Scenario, cat: StatsCatalog | None) -> list[MixRow]:
    if s.uniform is not None:
        u = s.uniform
        conv = point_mass(u.tokens, u.response_tokens, u.turns)
        return [MixRow("uniform", f"{u.samples:,} x {u.tokens:g} tokens", "uniform", "yours", "yours", u.samples,
                       conv, fan_out(conv))]
    assert cat is not None   # a mix is counted from a catalog: callers pass one unless the scenario is uniform
    out = []
    known = _of_catalog(cat)["rows"]
    for i, item in enumerate(s.mix if s.mix is not None else _of_catalog(cat)["default_mix"]):
        if not item.include:
            continue
        row = known.get(item.id)
        if row is None:
            raise PlannerInputError(f"mix[{i}].id", item.id, f"known components: {', '.join(cat.components)}")
        conv, turn = row.conv, row.turn
        if item.selection == "shortest" and item.rows:
            # the n shortest rows of all that exist: a truncated distribution, fanned out again
            conv = shortest(conv, min(1.0, item.rows / max(cat.components[item.id].rows_available, 1)))
            turn = fan_out(conv)
        out.append(MixRow(row.id, row.name, row.family, row.origin, row.tokens_tag, item.rows, conv, turn, row.band,
                          row.lengths_band))
    return out


def _catalog_row(cid: str, comp) -> MixRow:
    """A catalog component as a MixRow of no rows: its identity, lengths, sampled band and storage band."""
    sampled = band_of(comp.sampled, comp.conversation, comp.turn)
    tag = comp.value_tag("mean_tokens")
    return MixRow(cid, comp.name, comp.family, comp.origin, tag, 0, comp.conversation, comp.turn, sampled,
                  sampled or length_band(comp.origin, tag, comp.conversation))


def length_band(origin: str, tag: str, conv: Atoms) -> dict[str, tuple[float, float]] | None:
    """A shipped component's storage band, as factors on its lengths (both units alike): (1 -+ t) x
    (mean / median) ** -+share, t the tokenizer's share and share that of its mean's tag
    (datasets_meta/components.yaml length_band). A profiled (measured) component: None, exact."""
    if origin != "shipped":
        return None
    tokenizer, shares = length_band_settings()
    ratio = conv.mean_tokens() / max(conv.median_tokens(), 1e-9)
    w = shares.get(tag, shares["estimate"])
    lo, hi = (1 - tokenizer) * ratio ** -w, (1 + tokenizer) * ratio ** w
    return {"conversation": (lo, hi), "turn": (lo, hi)}


def band_of(sampled: dict | None, conv: Atoms, turn: Atoms) -> dict[str, tuple[float, float]] | None:
    """A sampled component's 95% intervals of mean tokens per conversation and per turn row, as
    factors on its measured means (what the plan scales its lengths by for the low and high ends)."""
    if not sampled:
        return None
    out = {}
    for unit, atoms, key in (("conversation", conv, "mean_tokens_ci"), ("turn", turn, "mean_turn_tokens_ci")):
        ci, rows = sampled.get(key), float(atoms.rows.sum())
        mean = float((atoms.rows * atoms.tokens).sum()) / rows if rows else 0.0
        if ci and mean > 0:
            out[unit] = (min(1.0, ci[0] / mean), max(1.0, ci[1] / mean))
    return out or None


@dataclass(frozen=True)
class StoragePhase:
    """What the mix stores: per component (in the mix's order) and in total."""

    mix: list[MixRow]
    unpadded: list[Workload]        # each component's rows as they are
    row_lengths: list[RowLengths]
    works: list[Workload]           # as captured (padded, drop_last)
    total: Workload
    files: float
    overhead: float                 # the files' bytes beyond the per-token data
    sizes: list[float]              # bytes per component (its tokens, and its rows' share of the overhead)
    storage_bytes: float
    compressed: float
    unpadded_tokens: float
    eff: Effective
    spec: LayoutSpec
    cat: StatsCatalog | None

    def sampled(self, unit: str) -> list[str]:
        """The components whose lengths come from a sample (and have rows)."""
        return [m.id for m in self.mix if m.band and m.rows and unit in m.band]

    def findings(self) -> list[Finding]:
        """Rows over what exists, the cap's cuts, padding and drop_last (worked out when asked: a trim's
        steps do not read them)."""
        return _component_findings(self.eff, self.cat, self.mix, self.unpadded) + _padding_findings(
            self.spec, self.eff, self.total.tokens, self.unpadded_tokens, self.total.rows,
            sum(u.rows for u in self.unpadded))


def storage_phase(s: Scenario, cat: StatsCatalog | None, layout: CaptureLayout, spec: LayoutSpec, eff: Effective,
                  hidden_size: int, vocab_size: int, *, end: int | None = None,
                  same_rows: StoragePhase | None = None, lengths: bool = False,
                  reuse: Reuse | None = None) -> StoragePhase:
    """The storage of `s`'s mix in `layout`; `end` (0 low, 1 high) scales each sampled component's
    lengths to that end of its 95% interval (all at the same end together: a conservative band), or
    with `lengths` every component's to that end of its storage band (MixRow.lengths_band).
    `same_rows`: a storage phase of the same mix, unit, cap and lengths (only the capture batches
    differ), whose rows are taken as they are. `reuse`: a search's (planner/phases/reuse.py), for the figures
    that do not depend on the row counts."""
    if same_rows is not None:
        mix, unpadded, row_lengths = same_rows.mix, same_rows.unpadded, same_rows.row_lengths
    else:
        mix = mix_rows(s, cat)
        pairs = [workload(m.conv, m.turn, m.rows, cap=eff.max_seq_len, unit=eff.unit, regenerate=s.regenerate,
                          multiplier=s.response_multiplier, overflow=eff.overflow,
                          scale=s.length_scale * _factor(m, eff.unit, end, lengths), reuse=reuse) for m in mix]
        unpadded = [w for w, _ in pairs]
        row_lengths = [r for _, r in pairs]
    works = padded_works(unpadded, row_lengths, eff, reuse)
    total = total_of(works)
    per_token = layout.bytes_per_token
    data = total.tokens * per_token           # sum(w.tokens for w in works): the same additions
    files, overhead = files_and_overhead(spec, total.rows, data, hidden_size, vocab_size)
    rows = total.rows
    sizes = [w.tokens * per_token + (overhead * w.rows / rows if rows else 0.0) for w in works]
    storage_bytes = sum(sizes)
    unpadded_tokens = sum(u.tokens for u in unpadded)
    return StoragePhase(mix, unpadded, row_lengths, works, total, files, overhead, sizes, storage_bytes,
                        storage_bytes / s.compression, unpadded_tokens, eff, spec, cat)


def _factor(m: MixRow, unit: str, end: int | None, lengths: bool) -> float:
    """The scale on `m`'s lengths at `end` of its sampled interval or (`lengths`) of its storage band."""
    band = m.lengths_band if lengths else m.band
    return band[unit][end] if end is not None and band and unit in band else 1.0


def _truncated(u: Workload) -> float:
    return 1 - u.tokens / u.uncapped_tokens if u.uncapped_tokens else 0.0


def components(st: StoragePhase) -> list[ComponentPlan]:
    """Storage per component with its shares (ComponentPlan, the plan's rows). Validated: pydantic's
    validator in Rust builds one faster than model_construct does in Python (3.5 against 5.9 µs)."""
    tot_rows = sum(m.rows for m in st.mix) or 1
    return [ComponentPlan(
        id=m.id, name=m.name, family=m.family, origin=m.origin, rows=m.rows, training_rows=w.rows,
        tokens=w.tokens, training_tokens=w.conversation_tokens, truncated_share=max(0.0, _truncated(u)),
        output_tokens=w.output_tokens,
        storage_bytes=nbytes, share_of_rows=m.rows / tot_rows,
        share_of_bytes=nbytes / st.storage_bytes if st.storage_bytes else 0.0,
        mean_tokens=w.tokens / w.rows if w.rows else 0.0, tokens_tag=m.tokens_tag)
        for m, w, u, nbytes in zip(st.mix, st.works, st.unpadded, st.sizes, strict=True)]


EMPTY_SHARE = 0.05     # a component the cap leaves fewer than 5% of its rows is flagged as adding (almost) nothing


def _component_findings(eff: Effective, cat: StatsCatalog | None, mix: list[MixRow],
                        unpadded: list[Workload]) -> list[Finding]:
    """The warnings about a component's rows and the cap."""
    out = []
    for m, u in zip(mix, unpadded, strict=True):
        truncated = _truncated(u)
        if cat is not None and m.id in cat.components and m.rows > cat.components[m.id].rows_available:
            out.append(finding("rows-over-available", f"{m.id}: {m.rows:,} rows selected but only "
                               f"{cat.components[m.id].rows_available:,} exist", (m.id,)))
        if m.rows and eff.overflow == "skip" and u.rows < EMPTY_SHARE * m.rows:
            # issue 35: modelopt-eagle3's 3,072-token cap drops 14,334 of agentic's 15,000 rows; ticked, it
            # still costs its regeneration and says nothing at the level of a note
            out.append(finding("component-empty", f"{m.id}: the {eff.max_seq_len:,}-token cap drops "
                               f"{m.rows - u.rows:,.0f} of its {m.rows:,} rows ({truncated:.1%} of its tokens): it "
                               f"adds {'nothing' if u.rows < 0.5 else 'almost nothing'} to the training data", (m.id,)))
        elif truncated > 0.2 and m.rows:
            verb = "drops rows holding" if eff.overflow == "skip" else "cuts"
            out.append(finding("cap-truncates", f"{m.id}: the {eff.max_seq_len:,}-token cap {verb} {truncated:.0%} "
                               f"of its tokens", (m.id,)))
    return out


def padded_works(works: list[Workload], lengths: list[RowLengths], eff: Effective,
                 reuse: Reuse | None = None) -> list[Workload]:
    """Each component's rows as captured: padded to the batch's longest row, or to the cap;
    drop_last leaves out the last partial batch. A batch holds rows of one component: SpecForge reads
    the file in order (DistributedSampler(shuffle=False), specforge/data/utils.py:199-243) and
    materialize writes one component after another, so drop_last counts over the whole mix's rows.
    Padded tokens are stored and run through prefill."""
    if eff.padding == "none" or not works:
        return works
    if eff.padding == "max_length":
        if eff.max_seq_len is None:
            return works
        cap = float(eff.max_seq_len)
        return [Workload(w.conversations, w.rows, w.rows * cap, w.uncapped_tokens, w.output_tokens,
                         w.rows * cap * cap, w.decode_ctx_sum, w.conversation_tokens) for w in works]
    n = eff.capture_batch_size
    all_rows = sum(w.rows for w in works)
    kept = captured_rows(all_rows, n, eff.drop_last) / all_rows if all_rows else 1.0
    out = []
    for r, w in zip(lengths, works, strict=True):
        per = _padded_per_row(r, w.rows, n, eff.sort_by_length, reuse) if w.rows else None
        if per is None:     # no rows, or a distribution with no weight
            out.append(w)
            continue
        per_row, sq_per_row = per
        rows = w.rows * kept
        out.append(Workload(w.conversations, rows, rows * per_row, w.uncapped_tokens, w.output_tokens,
                            rows * sq_per_row, w.decode_ctx_sum, w.conversation_tokens * kept))
    return out


def _padded_per_row(r: RowLengths, rows: float, n: int, sort_by_length: bool,
                    reuse: Reuse | None = None) -> tuple[float, float] | None:
    """padded()'s tokens per row and their square (None: the distribution has no weight); a search's
    `reuse` keeps it per length distribution, batch size and, for sorted batches, row count."""
    def compute():
        if not r.weights.sum():
            return None
        p = padded(r.lengths, r.weights, rows, n, sort_by_length=sort_by_length, drop_last=False)
        return p.tokens_per_row, p.tokens_sq_per_row
    return reused(reuse, "padded_per_row", (r,), (n, sort_by_length, rows if sort_by_length else None), compute)


def _padding_findings(spec: LayoutSpec, eff: Effective, tokens: float, unpadded_tokens: float, rows: float,
                      rows_before: float) -> list[Finding]:
    out = []
    if eff.padding != "none" and unpadded_tokens and tokens > 1.05 * unpadded_tokens:
        why = (f"batches of {eff.capture_batch_size} padded to their longest row" if eff.padding == "batch"
               else f"every row padded to {eff.max_seq_len:,} tokens")
        out.append(finding("padding", f"{spec.name}: {why} store {tokens / unpadded_tokens:.2f}x the tokens of the "
                           f"rows themselves" + (" (a capture batch of 1, or length-sorted batches, avoid it)"
                                                 if eff.padding == "batch" else "")))
    dropped = rows_before - rows
    if dropped >= 0.5:
        out.append(finding("drop-last", f"{spec.name}: drop_last leaves out the last partial capture batch: "
                           f"{dropped:,.0f} of {rows_before:,.0f} rows are never captured"))
    return out


def _pipeline_values(c: RowContext) -> list[Assumption]:
    """Sample unit, cap, capture batch and padding: tagged published with the pipeline's code line
    when they come from the layout, yours when the scenario sets them."""
    e = c.effective
    if e is None:
        return []
    d = c.layout.spec.defaults
    shown = {
        "sample unit": ("unit", "one row per assistant turn (the prefix through it)" if e.unit == "turn"
                        else "one row per conversation", d.unit.source),
        "max sequence length": ("max_seq_len", (f"{e.max_seq_len:,} tokens" if e.max_seq_len else "none") +
                                (", longer rows skipped" if e.overflow == "skip" else ""), d.max_seq_len.source),
        "capture batch": ("capture_batch_size", f"{e.capture_batch_size} rows" + (
            {"batch": ", padded to the batch's longest row", "max_length": ", every row padded to the cap",
             "none": ", each row stored at its own length"}[e.padding]), d.capture_batch_size.source
            + ("; " + d.padding.source if e.padding != "none" else "")),
    }
    out = []
    for name, (key, value, source) in shown.items():
        if key in e.from_layout:
            out.append(Assumption(name=name, value=value, tag="published", source=f"{c.layout.name}: {source}"))
        else:
            out.append(Assumption(name=name, value=value, tag="yours", source=f"set in the scenario; the layout's "
                                  f"default: {source}"))
    return out


def layout_assumptions(c: RowContext) -> list[Assumption]:
    """The Assumptions rows of what is stored: the target model, the capture layout and the pipeline's values in
    force, the responses, the lengths."""
    s, model, layout = c.scenario, c.model, c.layout
    A = Assumption
    return [
        A(name="target model", value=f"{model.id}: hidden {model.hidden_size}, {model.num_layers} layers, "
          f"{model.params / 1e9:,.2f}B params", tag=model.tag, source=model.source),
        A(name="capture layout", value=f"{layout.name}; layers {layout.layers}; {layout.hidden_dtype}; "
          f"{layout.bytes_per_token:,} bytes/token + {layout.file_overhead_bytes:,.0f} bytes/file",
          tag="published", source=layout.source),
        *_pipeline_values(c),
        A(name="responses", value=(f"regenerated by the target, x{s.response_multiplier:g} length" if s.regenerate
                                   else "reused (prefill-only extraction)"), tag="yours",
          source="speculators' docs ask for on-policy (regenerated) responses"),
        A(name="tokens per sample", value=f"x{s.length_scale:g} the catalog's counts",
          tag="estimate" if s.length_scale == 1 else "yours",
          source="catalog lengths are ~cl100k tokens; a Qwen tokenizer differs by about +-10%"),
    ]
