"""Bounded rendering of a chat template (planner/catalog/template_render.py): the child process renders
request by request, and whichever bound stops a template (wall time, CPU time, memory, output) is named.
The protocol's own answers, in-process: test_template_worker.py. The profile's fallback: test_sampling.py."""
from __future__ import annotations

import time

import pytest

from planner.catalog import template_render as tr

TURNS = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
SPIN = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"  # 10^10 steps


@pytest.fixture(autouse=True)
def bounds(monkeypatch):
    for name in ("MEMORY_MB", "SECONDS", "CPU_SECONDS", "OUTPUT_CHARS"):
        monkeypatch.delenv(f"PLANNER_TEMPLATE_{name}", raising=False)
    return monkeypatch


def test_the_default_limits_and_their_overrides(bounds):
    assert tr.limits() == {"memory": 512 * 2**20, "seconds": 10, "cpu": 300, "chars": 65536}
    bounds.setenv("PLANNER_TEMPLATE_MEMORY_MB", "256")
    bounds.setenv("PLANNER_TEMPLATE_SECONDS", "1.5")
    bounds.setenv("PLANNER_TEMPLATE_CPU_SECONDS", "7.9")     # whole seconds for RLIMIT_CPU: 7
    bounds.setenv("PLANNER_TEMPLATE_OUTPUT_CHARS", "100")
    assert tr.limits() == {"memory": 256 * 2**20, "seconds": 1.5, "cpu": 7, "chars": 100}


@pytest.mark.parametrize("bad", ["abc", "0", "-5", "", "nan-ish"])
def test_a_bad_override_keeps_the_default(bounds, bad):
    bounds.setenv("PLANNER_TEMPLATE_SECONDS", bad)
    assert tr.limits()["seconds"] == 10


def test_a_template_renders_request_by_request_and_closes():
    r = tr.Renderer("{{ bos_token }}" + TURNS, {"bos_token": "<s>"})
    try:
        assert r.render(("user",)) == ["<s><user>\ue0000\ue001"]
        assert r.render(("system", "user")) == ["<s><system>\ue0000\ue001",
                                                "<s><system>\ue0000\ue001<user>\ue0001\ue001"]
    finally:
        r.close()
    assert r.proc.poll() is not None                 # the child is gone


def test_a_template_that_does_not_compile_or_refuses_is_named():
    with pytest.raises(tr.TemplateCompileError, match="endfor"):
        tr.Renderer("{% for m in messages %}", {})
    r = tr.Renderer("{{ raise_exception('only user turns') }}", {})
    try:
        with pytest.raises(tr.TemplateRefused, match=r"^it refused the roles \(only user turns\)$"):
            r.render(("assistant",))
        with pytest.raises(tr.TemplateRefused, match=r"^it failed to render \(SecurityError: "):
            tr.Renderer("{{ messages.append(1) }}", {}).render(("user",))
    finally:
        r.close()


def test_the_output_budget_is_named(bounds):
    bounds.setenv("PLANNER_TEMPLATE_OUTPUT_CHARS", "8")         # "<user>" + a 3-character marker is 9
    r = tr.Renderer(TURNS, {})
    with pytest.raises(tr.TemplateBound, match="^its output is over the 8-character budget$"):
        r.render(("user",))
    assert r.proc.poll() is not None                 # a bound ends the child


def test_the_wall_clock_limit_is_named(bounds):
    bounds.setenv("PLANNER_TEMPLATE_SECONDS", "0.5")
    r = tr.Renderer(SPIN, {})
    t0 = time.monotonic()
    with pytest.raises(tr.TemplateBound, match=r"^it took over 0\.5 s to render \(the time limit\)$"):
        r.render(("user",))
    # stopped at its 0.5 s, not when the 10^10 steps end (hours) nor at the 300 s CPU limit: 30 s is the
    # slack of a loaded machine
    assert time.monotonic() - t0 < 30
    assert r.proc.poll() is not None


def test_the_cpu_limit_is_named(bounds):
    bounds.setenv("PLANNER_TEMPLATE_CPU_SECONDS", "1")
    bounds.setenv("PLANNER_TEMPLATE_SECONDS", "60")
    r = tr.Renderer(SPIN, {})
    with pytest.raises(tr.TemplateBound, match=r"^it used over 1 s of CPU \(the CPU-time limit\)$"):
        r.render(("user",))


def test_the_memory_limit_is_named(bounds):
    # a 1 GB string (10**9 characters) and a list doubled 40 times (2^40 items): each over a 256 MiB address
    # space, answered by the child as its memory bound (the child lives on only to say so: it is ended)
    bounds.setenv("PLANNER_TEMPLATE_MEMORY_MB", "256")
    for source in ("{{ 'x' * 10**9 }}",
                   "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}"):
        r = tr.Renderer(source, {})
        with pytest.raises(tr.TemplateBound, match="^it ran out of its memory limit$"):
            r.render(("user",))
        assert r.proc.poll() is not None
