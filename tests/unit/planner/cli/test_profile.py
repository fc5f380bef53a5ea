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
