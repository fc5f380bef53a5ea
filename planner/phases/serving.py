"""The speculative cycle's cost as the target runs it (issue 34): the verify step of n tokens a
sequence against a one-token decode step, at the serving batch and tensor-parallel layout, for MoE
and dense targets, and the draft's own steps on the same layout. planner/phases/quality.py divides the
speedup fitted on dense paper pairs by the cycle's cost relative to the same cycle on the pairs' own
dense target at TP 1 on the same GPU (quality.yaml's speedup `target` of the drafter kind): the target
as a dense model of its active size, never below 1 (the pairs' target, and a dense target at least as large,
at TP 1 keep their figure exactly), times an MoE target's routed experts against that dense model at the
same batch and TP, never below 1. An ESTIMATE: a roofline of
each step.

A step over x tokens (the batch's sequences times the tokens each carries) takes
    t(x) = max(bytes(x) / (tp x BW x eff_bw), 2 P_active x / (tp x peak x mfu)) + comm(x) + overhead
bytes(x): the dense part (attention, shared experts, norms, head) once, plus the routed experts the
x tokens activate. With E routed experts per layer and top-k routing, x tokens routed independently
and uniformly activate in expectation
    D(x) = E (1 - (1 - k / E)^x)                                            distinct experts a layer
(the expected number of distinct experts hit by x tokens of top-k routing, as the MoESD paper, arXiv
2505.19645, models SD on MoE; MoE-Spec, arXiv 2602.16052, measures draft trees' verify steps reading most
experts; sgl-project/SpecForge issue #339, where users trace the MoE slowdown to it),
so the routed weights read are expert_params x D(x) / E against expert_params x k / E for one token.
Real routing is neither uniform nor independent (tokens of one sequence share experts), which reads
fewer experts: the band's high side counts only `routing_overlap`'s low end of the extra experts
(presets/serving.yaml).

comm(x), tensor parallelism (tp > 1): two all-reduces a layer (after attention and after the MLP, as
vLLM's and SGLang's RowParallelLinear reduce: vllm/model_executor/layers/linear.py RowParallelLinear,
sglang/srt/layers/linear.py), each a ring all-reduce of x x H x 2 bytes:
    comm(x) = 2 L (latency + 2 (tp - 1) / tp x x H 2 / link)
The draft runs on the same layout (vLLM and SGLang shard the draft with the target's TP), its
decoder layers and head read once a step, its own all-reduces each step.

A cycle: the draft's steps (EAGLE: K steps over topk tokens a sequence, plus the extend pass over the
accepted tokens; DFlash: one pass over the block) and one verify step over n = K + 1 tokens (a
chain) or num_draft_tokens (SGLang's tree); the cycle cost is cycle / t(B), B the serving batch.
"""
from __future__ import annotations

import functools
import re
from typing import Any

from pydantic import BaseModel

from planner.phases.assumption_rows import Assumption, changed_tag
from planner.presets.specs import GPUSpec, ModelSpec, efficiency, load_preset


def distinct_experts(experts: int, top_k: int, tokens: float) -> float:
    """E (1 - (1 - k / E)^x): the expected distinct experts `tokens` tokens activate in a layer
    (uniform, independent top-k routing); for a dense model (E = 0) 0."""
    if experts <= 0:
        return 0.0
    return experts * (1 - (1 - top_k / experts) ** tokens)


@functools.cache
def serving_presets() -> dict:
    return load_preset("serving.yaml")


def _link(gpu: GPUSpec) -> tuple[float, float]:
    """(all-reduce latency in s, link bandwidth in bytes/s) of the GPU's interconnect: NVLink or PCIe
    (presets/serving.yaml), the bandwidth read from the interconnect's name when it gives one."""
    p = serving_presets()["interconnect"]
    # "PCIe Gen5 x16 (64 GB/s), no NVLink" (rtx-pro-6000) names NVLink only to say it has none; a custom GPU's
    # free text may say so as "without NVLink", "non-NVLink" or "NVLink: none"
    text = re.sub(r"\b(?:no|without|non)[-\s]*nv-?link\b|\bnv-?link\s*:?\s*(?:none|no)\b", "",
                  gpu.interconnect.lower())
    kind = "nvlink" if re.search(r"\bnv-?link", text) else "pcie"
    m = re.search(r"(\d+(?:\.\d+)?)\s*GB/s", gpu.interconnect, re.IGNORECASE)
    bw = float(m.group(1)) if m else float(p[kind]["gb_s"])
    return float(p[kind]["allreduce_us"]) * 1e-6, bw * 1e9


class Target(BaseModel):
    """What a step reads and computes: the dense part's and the routed experts' parameters (bytes each),
    the experts (E, k), the active parameters' matmul FLOPs per token, the layers and width."""
    dense_params: float
    expert_params: float = 0.0
    experts: int = 0
    top_k: int = 0
    active_params: float
    layers: int
    hidden: int
    bytes_per_param: float = 2.0


def target_of(model: ModelSpec, weight_dtype: str, *, dense: bool = False) -> Target:
    """The target as a step runs it; `dense`: the same active size with every weight read each step
    (the dense reference the speedup pairs were measured on)."""
    fwd = model.forward_params()
    routed = model.expert_params * model.experts_per_token / model.num_experts if model.num_experts else 0.0
    b = 1.0 if weight_dtype == "fp8" else 2.0
    if dense or not model.num_experts:
        return Target(dense_params=fwd, active_params=fwd, layers=model.num_layers, hidden=model.hidden_size,
                      bytes_per_param=b)
    return Target(dense_params=max(fwd - routed, 0.0), expert_params=model.expert_params, experts=model.num_experts,
                  top_k=model.experts_per_token, active_params=fwd, layers=model.num_layers,
                  hidden=model.hidden_size, bytes_per_param=b)


def step_seconds(target: Target, gpu: GPUSpec, tokens: float, tensor_parallel: int, *, weight_dtype: str = "bf16",
                 overlap: float = 1.0) -> float:
    """One forward over `tokens` tokens (module docstring); `overlap` scales the routed experts the
    extra tokens activate beyond one token's k (1: uniform independent routing)."""
    s = serving_presets()
    routed = 0.0
    if target.experts:
        one = target.top_k
        routed = target.expert_params * (one + overlap * (distinct_experts(target.experts, target.top_k,
                                                                           tokens) - one)) / target.experts
    bandwidth = tensor_parallel * gpu.bandwidth_tb_s * 1e12 * efficiency("decode_bandwidth")
    read = (target.dense_params + routed) * target.bytes_per_param / bandwidth
    compute = 2 * target.active_params * tokens / (tensor_parallel * gpu.peak_flops(weight_dtype)
                                                   * efficiency("decode_mfu"))
    comm = 0.0
    if tensor_parallel > 1:
        latency, link = _link(gpu)
        comm = 2 * target.layers * (latency + 2 * (tensor_parallel - 1) / tensor_parallel * tokens * target.hidden * 2
                                    / link)
    return max(read, compute) + comm + float(s["forward_overhead_us"]["value"]) * 1e-6


class Cycle(BaseModel):
    """One speculative cycle's cost in one-token decode steps of the same target at the same batch."""
    verify: float              # the verify step of n tokens a sequence / t(B)
    draft: float               # the draft's steps / t(B)
    experts_one: float = 0.0   # distinct experts a layer at B tokens (MoE)
    experts_verify: float = 0.0  # ... at B x n tokens

    @property
    def cost(self) -> float:
        return self.verify + self.draft


def cycle(model: ModelSpec, gpu: GPUSpec, *, batch: float, n_verify: int, draft_steps: int, draft_tokens: int,
          draft_params: float, tensor_parallel: int, weight_dtype: str = "bf16", dense: bool = False,
          overlap: float = 1.0) -> Cycle:
    """The cycle of `draft_steps` draft forwards over `draft_tokens` tokens a sequence each (plus the
    extend pass over n_verify) and one verify over n_verify tokens a sequence, against t(batch)."""
    t = target_of(model, weight_dtype, dense=dense)
    one = step_seconds(t, gpu, batch, tensor_parallel, weight_dtype=weight_dtype, overlap=overlap)
    verify = step_seconds(t, gpu, batch * n_verify, tensor_parallel, weight_dtype=weight_dtype, overlap=overlap)
    # the draft: its decoder layers and head, a dense model of draft_params, 1 layer's all-reduces per layer
    d = Target(dense_params=draft_params, active_params=draft_params, layers=1, hidden=model.hidden_size,
               bytes_per_param=2.0)
    draft = draft_steps * step_seconds(d, gpu, batch * draft_tokens, tensor_parallel) + step_seconds(d, gpu,
                                                                                                     batch * n_verify,
                                                                                                     tensor_parallel)
    return Cycle(verify=verify / one, draft=draft / one,
                 experts_one=distinct_experts(t.experts, t.top_k, batch),
                 experts_verify=distinct_experts(t.experts, t.top_k, batch * n_verify))


class ServedCost(BaseModel):
    """The factor the pairs' speedup is divided by, with its band, and what it rests on."""
    factor: float = 1.0
    factor_low: float = 1.0        # the band's low end (the high speedup side)
    factor_high: float = 1.0
    basis: str = ""
    verify_cost: float = 1.0       # the served cycle's verify step in one-token steps
    draft_cost: float = 0.0
    experts_one: float = 0.0
    experts_verify: float = 0.0
    tp: int = 1


def served_cost(model: ModelSpec, gpu: GPUSpec, *, pairs_target: ModelSpec, batch: float, n_verify: int,
                draft_steps: int, draft_tokens: int, draft_layer_params: float, tensor_parallel: int,
                weight_dtype: str = "bf16") -> ServedCost:
    """cycle(as served) / cycle(the pairs' dense target at TP 1 on the same GPU, its draft as wide as it):
    the draft's decoder layers scale with the width squared, its head is width x vocabulary. 1 for the
    pairs' own target at TP 1; never below 1 (see below). `pairs_target`: the dense target the drafter
    kind's (tau, speedup) pairs were measured on (planner.phases.quality.pairs_target)."""
    ref_model = pairs_target
    kw: dict[str, Any] = dict(batch=batch, n_verify=n_verify, draft_steps=draft_steps, draft_tokens=draft_tokens)
    ref_draft = draft_layer_params * (ref_model.hidden_size / model.hidden_size) ** 2 \
        + ref_model.hidden_size * ref_model.vocab_size
    ref = cycle(ref_model, gpu, tensor_parallel=1, dense=True, draft_params=ref_draft, **kw).cost
    mine: dict[str, Any] = dict(draft_params=draft_layer_params + model.hidden_size * model.vocab_size,
                                weight_dtype=weight_dtype)
    served = cycle(model, gpu, tensor_parallel=tensor_parallel, **kw, **mine)
    low = cycle(model, gpu, tensor_parallel=tensor_parallel,
                overlap=float(serving_presets()["routing_overlap"]["range"][0]), **kw, **mine)
    # the target as a dense model of its active size on the same layout: never below 1 against the pairs'
    # (a target larger than the pairs' keeps their figure: its draft is relatively cheaper, but the pairs'
    # batch rule, planner/phases/harness.py, already prices a dense verify at the batch). An MoE target's routed
    # experts then come on top, against that dense model at the same batch and TP (never below 1: the
    # batch rule does not price a verify that reads more weights than the one-token step). Before issue 34's
    # second round the MoE cycle was set against the pairs' 8B directly and clamped at 1, so a 3B-active
    # MoE's smaller one-token step hid its experts' excess (0.93 x 1.61 = 1.49 instead of 1.61 on SpecForge
    # issue #339's chain) and at batch 8-64 the clamp hid it entirely.
    dense_cost = cycle(model, gpu, tensor_parallel=tensor_parallel, dense=True, **kw,
                       **mine).cost if model.num_experts else served.cost
    size = max(1.0, dense_cost / ref)
    f, f_low = size * max(1.0, served.cost / dense_cost), size * max(1.0, low.cost / dense_cost)
    figures = dict(verify_cost=served.verify, draft_cost=served.draft, experts_one=served.experts_one,
                   experts_verify=served.experts_verify, tp=tensor_parallel)
    if f == 1.0 and f_low == 1.0:
        return ServedCost(**figures)
    parts = []
    if model.num_experts:
        parts.append(f"{model.id}: {n_verify} tokens a sequence at batch {batch:g} activate "
                     f"{served.experts_verify:.1f} of {model.num_experts} experts a layer against "
                     f"{served.experts_one:.1f} for one token (E (1 - (1 - k/E)^n))")
    if tensor_parallel > 1:
        parts.append(f"TP {tensor_parallel}: two all-reduces a layer each step, the draft's too")
    basis = (f"the cycle costs {f:.2f}x the same cycle on {ref_model.id} (dense, TP 1), where the speedup pairs "
             f"were measured (verify {served.verify:.2f}, draft {served.draft:.2f} one-token steps, against "
             f"{ref:.2f}" + (f"; the routed experts x{f / size:.2f} against a dense model of its active size"
                              if model.num_experts else "") + ")" + ("; " if parts else "") + "; ".join(parts))
    return ServedCost(factor=f, factor_low=min(f, f_low), factor_high=max(f, f_low), basis=basis, **figures)


def served_assumption(quality, scenario_quality) -> Assumption:
    """The Assumptions row of the speculative cycle as served, for `quality` (the plan's QualityPlan) and
    `scenario_quality` (the scenario's quality) (planner/presets/serving.yaml)."""
    p = serving_presets()
    fields = type(scenario_quality).model_fields
    tree = f"SGLang tree topk {quality.topk}, {quality.num_draft_tokens} tokens verified" if quality.topk > 1 else \
        f"a chain, {quality.num_draft_tokens} tokens verified"
    return Assumption(name="the cycle as served", value=f"{tree}, TP {quality.serving_tp}: the cycle costs "
                      f"x{quality.served_cost:.2f} the speedup pairs' (dense 8B, TP 1)",
                      tag=changed_tag((scenario_quality.topk, scenario_quality.num_draft_tokens,
                                       scenario_quality.serving_tp), tuple(
                          fields[k].default for k in ("topk", "num_draft_tokens", "serving_tp"))),
                      source=f"planner/phases/serving.py, a roofline of each step; MoE experts E (1 - (1 - k/E)^n) "
                             f"(arXiv 2505.19645); estimates: {p['forward_overhead_us']['value']} us a forward, "
                             f"all-reduce {p['interconnect']['nvlink']['allreduce_us']} us on NVLink and "
                             f"{p['interconnect']['pcie']['allreduce_us']} us on PCIe, routing overlap "
                             f"{p['routing_overlap']['range'][0]}-{p['routing_overlap']['range'][1]} "
                             "(planner/presets/serving.yaml)")
