"""The chat-template renderer's child (planner/catalog/template_worker.py), run in this process: each prefix of
a conversation rendered with markers for contents, the output budget, and its one-JSON-line protocol's answers
(ok / texts / bound / refused / error). The child under its limits: test_template_render.py."""
from __future__ import annotations

import io
import json

import pytest

from planner.catalog import template_worker as tw

TURNS = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"


def compiled(source: str):
    return tw._environment().from_string(source)


def test_each_prefix_is_rendered_with_markers_for_contents():
    # prefix 1: one message, content MARK(0) = "\ue0000\ue001"; prefix 2 adds MARK(1)
    texts = tw._render(compiled("{{ bos_token }}" + TURNS), {"bos_token": "<s>"}, ["user", "assistant"], 1000)
    assert texts == ["<s><user>\ue0000\ue001", "<s><user>\ue0000\ue001<assistant>\ue0001\ue001"]


def test_the_output_budget_stops_a_rendering():
    # "<user>" + MARK(0) is 6 + 3 = 9 characters: a budget of 9 holds it, 8 does not
    assert tw._render(compiled(TURNS), {}, ["user"], 9) == ["<user>\ue0000\ue001"]
    with pytest.raises(tw.OutputBound, match="^its output is over the 8-character budget$"):
        tw._render(compiled(TURNS), {}, ["user"], 8)


def test_tojson_writes_unicode_as_is_and_sorts_nothing():
    assert tw._render(compiled("{{ {'b': 'é', 'a': 1} | tojson }}"), {}, ["user"], 100) == ['{"b": "é", "a": 1}']


def talk(monkeypatch, capsys, source: str, *roles: list, special=None, max_chars=1000) -> list[dict]:
    lines = [json.dumps({"source": source, "special": special or {}, "max_chars": max_chars})]
    lines += [json.dumps({"roles": r}) for r in roles]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    tw.main()
    return [json.loads(x) for x in capsys.readouterr().out.splitlines()]


def test_the_protocol_answers_each_request_on_one_line(monkeypatch, capsys):
    strict = "{% if messages[0].role != 'user' %}{{ raise_exception('Conversation roles must start with user') }}" \
             "{% endif %}" + TURNS
    answers = talk(monkeypatch, capsys, strict, ["user"], ["system"], ["user", "user", "user"], max_chars=20)
    assert answers[0] == {"ok": True}
    assert answers[1] == {"texts": ["<user>\ue0000\ue001"]}
    assert answers[2] == {"refused": "Conversation roles must start with user"}
    # 3 turns of 9 characters: 27 > 20 on the third prefix
    assert answers[3] == {"bound": "its output is over the 20-character budget"}


def test_a_template_that_does_not_compile_is_one_error(monkeypatch, capsys):
    answers = talk(monkeypatch, capsys, "{% for m in messages %}", ["user"])
    assert len(answers) == 1 and set(answers[0]) == {"error"} and "endfor" in answers[0]["error"]


def test_the_sandbox_refuses_a_mutation_and_recursion_is_bounded(monkeypatch, capsys):
    mutate = "{{ messages.append(1) }}"
    assert talk(monkeypatch, capsys, mutate, ["user"])[1]["error"].startswith("SecurityError: ")
    deep = "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"
    assert talk(monkeypatch, capsys, deep, ["user"])[1] == {"bound": "it recursed too deeply"}
