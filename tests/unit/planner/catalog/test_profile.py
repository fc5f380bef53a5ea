"""Profiling a user's dataset: every format, a real (tiny, trained here) tokenizer, bad lines."""
import contextlib
import io
import json
import os

import duckdb
import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from planner import plan
from planner.catalog.profile import ProfileError, profile_file
from planner.catalog.stats import get_catalog
from planner.cli.main import main
from planner.errors import PlannerInputError
from planner.scenario import Scenario
from tests.helpers import run_cli


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.fixture()
def tokenizer_json(tmp_path):
    """A word-level tokenizer trained here: one token per word or punctuation run."""
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(["alpha beta gamma delta epsilon zeta eta theta ? !"],
                            trainers.WordLevelTrainer(special_tokens=["[UNK]"]))
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    return str(path)


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
    return path


def test_sharegpt_jsonl_with_real_tokenizer(home, tokenizer_json):
    f = write_jsonl(home / "s.jsonl", [
        # user 3 words, assistant 5 words -> conversation 3+5 + 2x4 template = 16 tokens
        {"conversations": [{"from": "human", "value": "alpha beta gamma"},
                           {"from": "gpt", "value": "delta epsilon zeta eta theta"}]},
        # 2 turns: user 1, assistant 2, user 1, assistant 4 (+4 each): 5, 6, 5, 8 -> 24 tokens;
        # per-turn rows: prefix through turn 1 = 11, through turn 2 = 24
        {"conversations": [{"from": "human", "value": "alpha"}, {"from": "gpt", "value": "beta gamma"},
                           {"from": "human", "value": "delta"}, {"from": "gpt", "value": "alpha beta gamma delta"}]},
    ])
    r = profile_file(f, "mine", tokenizer=tokenizer_json)
    c = r.component
    assert r.conversations == 2 and r.bad_lines == 0
    assert c["mean_tokens"] == pytest.approx((16 + 24) / 2)
    assert c["turns"] == pytest.approx(1.5)
    # assistant tokens: (5+4) + (6+8) = 23 of 40
    assert c["assistant_share"] == pytest.approx(23 / 40)
    turn = c["turn"]
    # rows per conversation: 3 per-turn rows over 2 conversations; their tokens 16, 11, 24
    assert sum(turn["rows"]) == pytest.approx(1.5)
    assert sorted(turn["tokens"]) == pytest.approx([11, 16, 24])
    assert c["provenance"]["mean_tokens"]["tag"] == "measured"
    assert "tokenizer.json" in c["tokenizer"]
    # selectable in the planner with its own statistics
    comp = get_catalog().components["mine"]
    assert comp.origin == "measured"
    p = plan(Scenario(mix=[{"id": "mine", "rows": 2}], max_seq_len="none", capture_batch_size=1, regenerate=False))
    assert p.tokens == pytest.approx(40)
    pt = plan(Scenario(mix=[{"id": "mine", "rows": 2}], max_seq_len="none", capture_batch_size=1, regenerate=False,
                       unit="turn"))
    assert pt.tokens == pytest.approx(16 + 11 + 24) and pt.samples == pytest.approx(3)


def test_openai_json_array_approximate(home):
    f = home / "o.json"
    # 8 bytes -> 2 tokens, 12 bytes -> 3 tokens (UTF-8 bytes / 4, rounded up), + 4 each
    f.write_text(json.dumps([{"messages": [{"role": "user", "content": "abcdefgh"},
                                           {"role": "assistant", "content": "abcdefghijkl"}]}]))
    r = profile_file(f, "oa")
    assert r.component["mean_tokens"] == pytest.approx(2 + 4 + 3 + 4)
    assert "approximate" in r.tokenizer


def test_alpaca_parquet_through_duckdb(home, tokenizer_json):
    f = home / "a.parquet"
    con = duckdb.connect()
    con.execute(f"""COPY (SELECT * FROM (VALUES ('alpha beta', '', 'gamma'), ('alpha', 'beta', 'gamma delta'))
                 t(instruction, input, output)) TO '{f}' (FORMAT parquet)""")
    r = profile_file(f, "alp", tokenizer=tokenizer_json)
    # row 1: prompt "alpha beta" (2) + output 1 -> 2+4 + 1+4 = 11; row 2: "alpha\nbeta" 2 + 2 -> 6 + 6 = 12
    assert r.conversations == 2
    assert r.component["mean_tokens"] == pytest.approx((11 + 12) / 2)


def test_a_bad_parquet_row_is_reported_as_a_row(home):
    # row 2 holds nothing (both fields null): a bad row, numbered as a row (not a "line")
    f = home / "b.parquet"
    duckdb.connect().execute(f"""COPY (SELECT * FROM (VALUES ('alpha', 'beta'), (NULL, NULL), ('gamma', 'delta'))
                             t(instruction, output)) TO '{f}' (FORMAT parquet)""")
    r = profile_file(f, "pq_bad")
    assert (r.conversations, r.bad_lines, r.row_word, [n for n, _ in r.bad_examples]) == (2, 1, "row", [2])
    out = run_cli("profile", str(f), "--name", "pq_bad2", "--quiet").stdout
    assert "skipped 1 bad row(s):" in out and "  row 2: " in out
    with pytest.raises(ProfileError, match=r"^b.parquet: row 2: "):
        profile_file(f, "pq_bad3", strict=True)


def test_glaive_format(home, tokenizer_json):
    f = write_jsonl(home / "g.jsonl", [{"system": "alpha beta", "chat": "USER: gamma ASSISTANT: delta eta "
                                        "FUNCTION RESPONSE: theta ASSISTANT: zeta"}])
    r = profile_file(f, "gl", fmt="glaive", tokenizer=tokenizer_json)
    # system 2, user 1, assistant 2, tool 1, assistant 1 -> 7 words + 5 x 4 template = 27
    assert r.component["mean_tokens"] == pytest.approx(27)
    assert r.component["turns"] == pytest.approx(2)


def test_bad_lines_are_counted_and_named(home):
    good = {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]}
    f = home / "b.jsonl"
    with open(f, "wb") as fh:
        fh.write((json.dumps(good) + "\n").encode())
        fh.write(b"{not json\n")
        fh.write(b'{"conversations": [{"from": "human", "value": "\xff\xfe"}]}\n')
        fh.write((json.dumps({"text": "no conversation"}) + "\n").encode())
        fh.write((json.dumps(good) + "\n").encode())
    r = profile_file(f, "bad")
    assert r.conversations == 2 and r.bad_lines == 3
    lines = dict(r.bad_examples)
    assert "invalid JSON" in lines[2]
    assert "UTF-8" in lines[3]
    assert "no conversation fields" in lines[4]
    with pytest.raises(ProfileError, match="line 2"):
        profile_file(f, "bad2", strict=True)


def test_enormous_line_is_skipped_not_loaded(home, monkeypatch):
    import planner.catalog.formats as formats
    monkeypatch.setattr(formats, "MAX_LINE_BYTES", 1000)
    good = json.dumps({"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]})
    huge = json.dumps({"conversations": [{"from": "human", "value": "x" * 5000}, {"from": "gpt", "value": "y"}]})
    f = write_jsonl(home / "h.jsonl", [good, huge, good])
    r = profile_file(f, "huge")
    assert r.conversations == 2 and r.bad_examples[0][0] == 2 and "longer than" in r.bad_examples[0][1]


def test_binary_file_and_bad_names(home, monkeypatch, capsys):
    f = home / "bin.jsonl"
    f.write_bytes(os.urandom(4096).replace(b"\n", b"x"))
    with pytest.raises(ProfileError, match="no valid conversations"):
        profile_file(f, "binary")
    # the CLI's refusals through main() in this process (a Python start less each)
    monkeypatch.setenv("PLANNER_HOME", str(home / "h2"))
    assert main(["profile", str(f), "--name", "Bad Name!"]) == 2
    err = capsys.readouterr().err
    assert "--name" in err and "Traceback" not in err
    assert main(["profile", str(f), "--name", "openorca"]) == 2
    assert "shipped component" in capsys.readouterr().err
    assert main(["profile", str(home / "missing.jsonl"), "--name", "x"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_profile_cli_then_estimate(home):
    f = write_jsonl(home / "c.jsonl", [{"instruction": "abcd" * 10, "output": "abcd" * 20}] * 3)
    env = {"PLANNER_HOME": str(home / "h3")}
    r = run_cli("profile", str(f), "--name", "cli_set", "--json", "--quiet", "--tokenizer", "approximate", env=env)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    # 40 bytes -> 10 tokens, 80 -> 20, + 4 each = 38 per conversation
    assert d["conversations"] == 3 and d["mean_tokens"] == pytest.approx(38)
    r = run_cli("estimate", "--components", "cli_set=3", "--max-seq-len", "none", "--capture-batch-size", "1",
                "--no-regenerate", "--json",
                env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["tokens"] == 3 * 38


def test_concurrent_profiles_lose_nothing(home):
    import threading

    from planner.catalog import user_catalog
    from planner.catalog.paths import user_catalog_path
    files = []
    for i in range(6):
        f = write_jsonl(home / f"p{i}.jsonl", [{"instruction": "abcd" * (i + 1), "output": "x"}] * 3)
        files.append(f)
    threads = [threading.Thread(target=profile_file, args=(f, f"set{i}")) for i, f in enumerate(files)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cat, warning = user_catalog.load(user_catalog_path())
    assert sorted(c.id for c in cat.components) == [f"set{i}" for i in range(6)] and warning is None


def _openai(content):
    return json.dumps({"messages": [{"role": "user", "content": content}, {"role": "assistant", "content": "ok"}]})


def test_hostile_lines_are_bad_lines_with_a_message(home):
    good = _openai("abcd")
    f = home / "hostile.jsonl"
    f.write_text("\n".join([
        good,
        _openai([{"type": "text", "text": None}]),
        _openai([{"type": "text", "text": 7}]),
        '{"messages": [{"role": "user", "content": "\\ud800"}, {"role": "assistant", "content": "x"}]}',
        "[" * 100_000,
        _openai([{"type": "image_url", "image_url": {"url": "x"}}, {"type": "text", "text": "abcd"}]),
    ]) + "\n")
    r = profile_file(f, "hostile")
    # lines 1 and 6 are conversations (an image part adds no text): 1 + 4 and 1 + 4 tokens each
    assert r.conversations == 2 and r.component["mean_tokens"] == pytest.approx(10)
    lines = dict(r.bad_examples)
    assert lines[2] == "content part 0: text is null, not a string"
    assert lines[3] == "content part 0: text is int, not a string"
    assert "lone surrogate \\ud800" in lines[4]
    assert "nested too deeply" in lines[5]
    before = (home / "home" / "user_catalog.json").read_bytes()
    strict = run_cli("profile", str(f), "--name", "strict", "--strict", "--quiet")
    assert strict.returncode == 2 and "Traceback" not in strict.stderr
    assert strict.stderr.strip().splitlines() == [
        "planner: error: hostile.jsonl: line 2: content part 0: text is null, not a string"]
    assert (home / "home" / "user_catalog.json").read_bytes() == before


def _refused(args, field, home, may_hang=False):
    """The CLI refuses `args`: exit 2, one line naming `field`, no traceback, the user catalog unchanged. In
    this process (main(), a Python start less a call) unless the input `may_hang` (a FIFO, /dev/zero):
    then a subprocess under a timeout, so a read that hangs fails the test instead of stopping the suite."""
    cat = home / "home" / "user_catalog.json"
    before = cat.read_bytes() if cat.exists() else None
    if may_hang:
        r = run_cli(*args, timeout=20)      # a FIFO that hangs fails here with TimeoutExpired
        code, err = r.returncode, r.stderr
    else:
        with contextlib.redirect_stderr(io.StringIO()) as buf, contextlib.redirect_stdout(io.StringIO()):
            code = main(list(args))
        err = buf.getvalue()
    assert code == 2 and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"planner: error: {field}: "), err
    assert (cat.read_bytes() if cat.exists() else None) == before
    return lines[0]


def test_only_regular_files_are_read(home, tokenizer_json):
    fifo = home / "pipe.jsonl"
    os.mkfifo(fifo)
    assert "FIFO" in _refused(["profile", str(fifo), "--name", "p", "--quiet"], "PATH", home, may_hang=True)
    assert "character device" in _refused(["profile", "/dev/zero", "--name", "z", "--quiet"], "PATH", home,
                                          may_hang=True)
    data = write_jsonl(home / "d.jsonl", [{"instruction": "a", "output": "b"}])
    assert "character device" in _refused(["profile", str(data), "--name", "t", "--tokenizer", "/dev/zero",
                                           "--quiet"], "--tokenizer", home, may_hang=True)
    assert "FIFO" in _refused(["profile", str(data), "--name", "t", "--tokenizer", str(fifo), "--quiet"],
                              "--tokenizer", home, may_hang=True)
    junk = home / "junk.json"
    junk.write_text("{}")
    assert "not a readable tokenizer.json" in _refused(
        ["profile", str(data), "--name", "t", "--tokenizer", str(junk), "--quiet"], "--tokenizer", home)


def test_a_name_with_a_trailing_newline_is_refused(home):
    data = write_jsonl(home / "d.jsonl", [{"instruction": "a", "output": "b"}])
    line = _refused(["profile", str(data), "--name", "abc\n", "--quiet"], "--name", home)
    assert "'abc\\n'" in line
    with pytest.raises(PlannerInputError):
        profile_file(data, "abc\n")


def test_the_histogram_bins_with_the_fit_formula():
    from planner.catalog.profile import Histogram
    from planner.distributions import bin_index
    # floor(32 log2 t): 1 -> 0, 2 -> 32, 3 -> floor(50.72) = 50, 16 -> 128, 17 -> floor(130.80) = 130
    assert bin_index([0.5, 1, 2, 3, 16, 17]).tolist() == [0, 0, 32, 50, 128, 130]
    h = Histogram()
    h.add_many([16, 16, 17], [4, 6, 8], [1, 1, 2])
    h.add_many([17], [2], [1])
    assert h.rows == {128: [2, 32.0, 10.0, 2.0], 130: [2, 34.0, 10.0, 3.0]}


def test_a_symlink_loop_is_one_line_naming_the_path(tmp_path, monkeypatch):
    # profile resolved the path before any check: a loop raised RuntimeError (a traceback) where every
    # other command refuses it in one line
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(PlannerInputError) as e:
        profile_file(str(tmp_path / "a"), "loopy")
    assert "PATH" in str(e.value) and "loop" in str(e.value).lower()
