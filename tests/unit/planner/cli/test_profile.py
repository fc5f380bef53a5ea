"""planner profile (planner/cli/profile.py): the default token counter is the target's own tokenizer where
one ships (issue 35 item 9); a bad --model is one line. Moved from catalog/test_profile_target_tokenizer.py."""
from __future__ import annotations


def _cli_profile(tmp_path, monkeypatch, capsys, name, *flags):
    import json

    from planner.cli.main import main
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    f = tmp_path / "d.jsonl"
    if not f.exists():
        f.write_text('{"instruction": "' + "abcd" * 10 + '", "output": "' + "abcd" * 20 + '"}\n' * 3)
    rc = main(["profile", str(f), "--name", name, "--quiet", "--json", *flags])
    out = capsys.readouterr().out
    assert rc == 0, out
    return json.loads(out)


def test_the_cli_counts_with_the_default_targets_tokenizer(tmp_path, monkeypatch, capsys):
    """planner profile without --tokenizer counts as the page does: the default scenario's target
    (qwen3.6-27b, Scenario.model) with its shipped tokenizer; the same count as --tokenizer qwen3.6."""
    from planner.catalog.profile import profile_file
    d = _cli_profile(tmp_path, monkeypatch, capsys, "own")
    assert d["tokenizer"].startswith("tokenizer qwen3.6") and d["template"].startswith("ChatML")
    ref = profile_file(tmp_path / "d.jsonl", "ref", tokenizer="qwen3.6", workers=1)
    assert d["mean_tokens"] == ref.component["mean_tokens"]
    # the approximation, by hand: 40 bytes -> 10 tokens, 80 -> 20, + 4 template tokens a message = 38;
    # "abcd" x 10 is not 10 Qwen tokens, so the two counts differ
    approx = _cli_profile(tmp_path, monkeypatch, capsys, "approx", "--tokenizer", "approximate")
    assert approx["mean_tokens"] == 38 and approx["tokenizer"].startswith("approximate")
    assert d["mean_tokens"] != 38


def test_a_target_without_a_shipped_tokenizer_counts_approximately(tmp_path, monkeypatch, capsys):
    d = _cli_profile(tmp_path, monkeypatch, capsys, "llama", "--model", "llama-3.1-8b")
    assert d["mean_tokens"] == 38 and d["tokenizer"].startswith("approximate")


def test_an_unknown_model_is_one_line(tmp_path, monkeypatch, capsys):
    from planner.cli.main import main
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    f = tmp_path / "d.jsonl"
    f.write_text('{"instruction": "a", "output": "b"}\n')
    assert main(["profile", str(f), "--name", "x", "--quiet", "--model", "no\nsuch"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("planner: error: --model: 'no\\nsuch' is not a known model")


def _result(**kw):
    from types import SimpleNamespace
    base = {"component": {"id": "mine", "mean_tokens": 1234.5, "median_tokens": 1000.4, "turns": 1.5,
                          "assistant_share": 0.625},
            "conversations": 12345, "tokenizer": "tokenizer qwen3.6", "template": "ChatML", "sampled": None,
            "template_fallbacks": 0, "fallback_reasons": {}, "bad_lines": 0, "row_word": "line", "bad_examples": []}
    return SimpleNamespace(**{**base, **kw})


def test_the_interval_is_two_numbers_or_says_why_not():
    from planner.cli.profile import _interval
    assert _interval((1.04, 2345.67)) == "1.0-2,345.7"
    assert _interval(None) == _interval(()) == "n/a (too few rows)"


def test_the_text_summary_hand_worked(capsys):
    from planner.cli.profile import _print_text
    # 1234.5 -> "1,234" (round half to even), 1000.4 -> "1,000", 0.625 -> "62%" (62.5 to even); the mix line
    # quotes mine=12345 as a shell word (nothing to quote)
    _print_text(_result())
    assert capsys.readouterr().out.splitlines() == [
        "mine: 12,345 conversations, mean 1,234 tokens (median 1,000), 1.50 assistant turns, assistant share 62% "
        "[tokenizer qwen3.6; template: ChatML]",
        "'mine' is now selectable; add it to the mix: planner estimate --add mine=12345"]


def test_the_text_names_the_sample_the_fallbacks_and_the_bad_rows(capsys):
    from planner.cli.profile import _print_text
    sampled = {"rows_sampled": 1000, "rows_total": 50000, "seed": 7, "mean_tokens_ci": (10.0, 12.5),
               "mean_turn_tokens_ci": None}
    _print_text(_result(sampled=sampled, template_fallbacks=3, fallback_reasons={"a": 1, "b\n": 2}, bad_lines=2,
                        row_word="sampled row", bad_examples=[(4, "not JSON"), (9, "no\x1bmessages")]))
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:8] == [
        "sampled 1,000 of 50,000 conversations (seed 7): 95% interval of mean tokens per conversation 10.0-12.5, "
        "per turn n/a (too few rows)",
        "2 conversation(s) counted with the 4-token estimate: b\\x0a",              # the most first
        "1 conversation(s) counted with the 4-token estimate: a",
        "skipped 2 bad row(s) in the sample:",                                       # the last word of "sampled row"
        "  sampled row 4: not JSON",
        "  sampled row 9: no\\x1bmessages",
        "'mine' is now selectable; add it to the mix: planner estimate --add mine=12345"]
